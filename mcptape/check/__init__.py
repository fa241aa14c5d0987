"""`mcptape check`: is a cassette sound, and is it safe to commit? Lines in, findings out.

A cassette is read one line at a time (`check_file`; `check_bytes` for bytes in memory), twice:
each line is checked as it is read, and pairing works on the messages' skeletons
(`mcptape.pairing.skeleton`) as they come (`PairingStream`: what is in flight is kept, not the
exchanges), planning the protocol check; that check then parses again the lines whose messages
it validates. Memory holds one line, what is in flight and the plan, not the cassette.

One module per check, composed by `check_lines`:

- **format** (`.format`): every line is JSON; line 1 is a header of a format this mcptape
  reads; each line is valid against the shipped JSON Schema (with `jsonschema`, when installed);
- **pairing** (`.pairing`, over `mcptape.pairing`): every request has its response, unless the
  recording says why not (a cancel, a listen stream, the server exited: warnings), and every
  response answers a request;
- **protocol** (`.protocol`): each message is JSON-RPC 2.0 and, where `mcp-types` describes the
  method and the session's revision, valid against its models (imported lazily; skipped when
  not installed);
- **secrets** (`.secrets`, `.detect_secrets`) that escaped redaction: token shapes, private keys,
  and random-looking values in places that hold secrets (members, headers, query parameters,
  `name=value` text).
A finding is `file:line: what`; a secret is never printed, only its kind and first characters.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from mcptape.cassette import NOT_JSON, read_lines
from mcptape.cassette.model import HEADER_MARKER

from . import format as fmt
from .format import LineSource
from .pairing import Exchanges, skeleton
from .protocol import envelopes, validator
from .report import Finding, Report
from .secrets import SecretScan, detected

__all__ = [
    "CHECKS",
    "Finding",
    "LineSource",
    "Report",
    "SecretScan",
    "check_bytes",
    "check_file",
    "check_lines",
]

CHECKS: tuple[str, ...] = ("format", "pairing", "protocol", "secrets")
"""The checks `check_bytes` runs; `skip` leaves some out."""


def check_bytes(
    data: bytes, skip: frozenset[str] = frozenset(), detect_secrets: bool = False
) -> Report:
    """Checks one cassette's bytes; see the module docstring. With `detect_secrets`, the
    detect-secrets backend scans too (raises `DetectSecretsMissing` when it is not installed)."""
    return check_lines(fmt.bytes_lines(data), skip, detect_secrets)


def check_file(
    path: str | os.PathLike[str], skip: frozenset[str] = frozenset(), detect_secrets: bool = False
) -> Report:
    """`check_bytes` of a file, read line by line: memory holds one line and what pairing
    needs of each message, not the cassette (raises OSError when it cannot be read)."""
    return check_lines(fmt.file_lines(path), skip, detect_secrets)


def check_lines(
    source: LineSource, skip: frozenset[str] = frozenset(), detect_secrets: bool = False
) -> Report:
    """`check_bytes` of the lines `source` gives; findings in the same order (format, pairing,
    protocol, secrets), whatever pass found them."""
    lines = _Lines(skip)
    header_bad: str | None = f"not an mcptape cassette (no {HEADER_MARKER!r} header on line 1)"
    seen = False
    with contextlib.ExitStack() as stack:
        if lines.scan is not None and detect_secrets:
            from .detect_secrets import DetectSecrets

            lines.backend = stack.enter_context(DetectSecrets())
        for lineno, _, raw, obj in read_lines(source()):
            seen = True
            if obj is NOT_JSON:
                fmt.not_json(lineno, raw, lines.reports[0])
                if lineno == 1:
                    return lines.reports[0]  # another tool's file: its other lines say nothing more
                continue
            if lineno == 1:
                header_bad = fmt.header_problem(obj)
                if header_bad is None:
                    lines.start()
            if header_bad is None:  # (else the other lines are only parsed: corrupt ones named)
                lines.check(lineno, obj)
    if not seen:
        empty = Report()
        empty.add(0, "format", "empty file, not an mcptape cassette")
        return empty
    parse, _, pairing, protocol, _, _ = lines.reports
    if header_bad is not None:
        parse.add(1, "format", header_bad)
        return parse
    if lines.exchanges is not None:
        lines.exchanges.end(pairing if "pairing" not in skip else None)
        plan = lines.exchanges.plan
        lines.exchanges = None  # (what the plan runs on is read again: memory holds the plan)
        if plan is not None:
            protocol.findings.extend(plan.validate(source))
    report = Report()
    for part in lines.reports:
        report.findings.extend(part.findings)
        report.warnings.extend(part.warnings)
    return report


class _Lines:
    """The first pass of `check_lines`: each line's own checks, as it is read, and the skeleton
    of its event for pairing."""

    def __init__(self, skip: frozenset[str]) -> None:
        self.skip = skip
        self.reports = tuple(Report() for _ in range(6))
        """parse, schema, pairing, protocol, secrets, detect-secrets: merged in this order."""
        self.exchanges: Exchanges | None = None
        """The pairing and protocol checks, told each event as it is read (once the header is
        known good; None when both are skipped)."""
        self.scan = SecretScan() if "secrets" not in skip else None
        self.backend: Any = None
        self.validators: dict[str, Any] | None = None

    def start(self) -> None:
        """The header is good: the checks of the other lines can start."""
        if "format" not in self.skip:
            self.validators = fmt.schema_validators(self.reports[1])
        if "pairing" not in self.skip or "protocol" not in self.skip:
            plan = validator(self.reports[3]) if "protocol" not in self.skip else None
            self.exchanges = Exchanges(plan)

    def check(self, lineno: int, obj: Any) -> None:
        _, schema, _, protocol, secrets, found = self.reports
        plain = fmt.plain(lineno, obj)  # (the event, when certainly valid: read once)
        if self.validators is not None and plain is None:
            fmt.schema(self.validators, lineno, obj, schema)
        if self.scan is not None:
            self.scan.one(lineno, obj, secrets)
            if self.backend is not None:
                detected(self.backend, lineno, obj, secrets, found)
        if lineno > 1:
            ev = plain or fmt.event(obj)
            if ev is not None:
                if "protocol" not in self.skip:
                    envelopes(lineno, ev, protocol)
                if self.exchanges is not None:
                    self.exchanges.event(skeleton(lineno, ev))
