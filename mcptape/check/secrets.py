"""The secrets check: secrets that escaped redaction, found with the table redaction uses
(`mcptape.redaction.secrets`): token shapes, private keys, and random-looking values in places that hold
secrets (members, headers, query parameters, `name=value` text); with `--detect-secrets`,
detect-secrets' plugins too (`mcptape.check.detect_secrets`), where the table found nothing.
A secret is never printed, only its kind and first characters."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcptape.pointer import escape
from mcptape.redaction.secrets import MARKER, PEM_NAME, PemLines, Scanner, Strength

from .report import Report

__all__ = ["SecretScan", "detected"]


class SecretScan:
    """Looks for secrets that escaped redaction in every string of every line, with the table
    redaction uses (`mcptape.redaction.secrets`), in its strict mode: a value under a secret name counts
    when it looks random (`password: hunter2` in a fixture is not cried over)."""

    def __init__(self) -> None:
        # The header's own redaction patterns are not used: a cassette is untrusted input, and a
        # pattern in it could backtrack for hours (a pre-commit hook must not hang).
        self.scanner = Scanner(strict=True)
        self.pem = PemLines()

    def one(self, lineno: int, obj: Any, report: Report) -> None:
        """Scans one line (lines in order: a key's PEM lines are followed across stderr lines)."""
        seen: set[str] = set()
        for where, what in self.line(lineno, obj):
            if where not in seen:  # one finding per place
                seen.add(where)
                report.add(
                    lineno,
                    "secrets",
                    f"possible secret not redacted (mcptape): {what} at {where}",
                )

    def line(self, lineno: int, obj: Any) -> Iterator[tuple[str, str]]:
        if not isinstance(obj, dict):
            yield from self.walk(obj, "")
            return
        if lineno == 1:
            obj = {k: v for k, v in obj.items() if k != "redaction"}  # the rules themselves
        if isinstance(obj.get("b64"), str):
            try:
                text = base64.b64decode(obj["b64"]).decode("utf-8", "replace")
            except (binascii.Error, ValueError):
                text = ""
            yield from self.text(text, "/b64")
        if obj.get("kind") in ("stderr", "raw") and isinstance(obj.get("text"), str):
            yield from self.stream_line(obj)
        yield from self.walk(obj, "")

    def stream_line(self, obj: dict[str, Any]) -> Iterator[tuple[str, str]]:
        """The lines of a PEM private key begun on an earlier stderr (or raw) line."""
        # (str: a malformed `from`, a list, is the schema check's finding, not a crash here)
        stream, text = (str(obj.get("from")), str(obj.get("kind"))), obj["text"]
        was_open = self.pem.is_open(stream)
        self.pem.line(stream, text)
        if was_open and MARKER not in text and text.strip():
            yield (
                "/text",
                f"{PEM_NAME} (a line of a key begun on an earlier line: {_preview(text.strip())})",
            )

    def walk(self, value: Any, path: str) -> Iterator[tuple[str, str]]:
        if isinstance(value, dict):
            for k, v in value.items():
                sub = f"{path}/{escape(k)}"
                if isinstance(v, str) and self.scanner.secret_value(k, v):
                    yield sub, f"{_preview(v)} in a member named {k!r}"
                    continue
                if isinstance(v, (dict, list)) and self.scanner.strength(k) is Strength.STRONG:
                    leaf = next((x for x in _leaves(v) if self.scanner.secret_value(k, x)), None)
                    if leaf is not None:
                        yield sub, f"{_preview(leaf)} inside a member named {k!r}"
                        continue
                if k == "path" and isinstance(v, str) and "?" in v:
                    yield from self.query(v, sub)
                yield from self.walk(v, sub)
        elif isinstance(value, list):
            for i, v in enumerate(value):
                yield from self.walk(v, f"{path}/{i}")
        elif isinstance(value, str):
            yield from self.text(value, path)

    def text(self, value: str, path: str) -> Iterator[tuple[str, str]]:
        for span in self.scanner.spans(value):
            yield path, f"{span.rule} ({_preview(value[span.start : span.end])})"

    def query(self, url: str, path: str) -> Iterator[tuple[str, str]]:
        for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True):
            if self.scanner.secret_value(name, value):
                yield path, f"{_preview(value)} in query parameter {name!r}"


def detected(backend: Any, lineno: int, obj: Any, ours: Report, report: Report) -> None:
    """The detect-secrets backend on one line: its findings at places mcptape's table (`ours`,
    this line's findings already in it) found nothing."""
    already: set[str] = set()
    for f in reversed(ours.findings):  # (this line's are the last ones)
        if f.line != lineno:
            break
        already.add(f.what.rsplit(" at ", 1)[-1])
    if lineno == 1 and isinstance(obj, dict):
        obj = {k: v for k, v in obj.items() if k != "redaction"}
    for where, text in _strings(obj, ""):
        if where in already:
            continue
        found = next(backend.findings(text), None)
        if found is not None:
            plugin, secret = found
            report.add(
                lineno,
                "secrets",
                f"possible secret not redacted (detect-secrets): {plugin} ({_preview(secret)}) at {where}",
            )


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    """(JSON pointer, string) for every string in a value, member names as `name: value`."""
    if isinstance(value, dict):
        for k, v in value.items():
            sub = f"{path}/{escape(k)}"
            if isinstance(v, str):
                yield sub, f'"{k}": "{v}"'  # (its keyword detector looks at the name)
            else:
                yield from _strings(v, sub)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, f"{path}/{i}")
    elif isinstance(value, str):
        yield path, value


def _leaves(value: Any) -> Iterator[str]:
    """The strings inside a JSON value (iteratively: a deep value cannot overflow the stack)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _preview(secret: str) -> str:
    """Enough to find it, never the secret: the first characters and the length."""
    head = secret[:6] if len(secret) >= 24 else secret[:3]
    return f"{head}... ({len(secret)} chars)"
