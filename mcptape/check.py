"""`mcptape check`: is a cassette sound, and is it safe to commit? Lines in, findings out.

A cassette is read one line at a time (`check_file`; `check_bytes` for bytes in memory), twice:
each line is checked as it is read, and pairing works on the messages' skeletons
(`mcptape.pairing.skeleton`) as they come (`PairingStream`: what is in flight is kept, not the
exchanges), planning the protocol check; that check then parses again the lines whose messages
it validates. Memory holds one line, what is in flight and the plan, not the cassette.

- **format**: every line is JSON; line 1 is a header of a format this mcptape reads; each line
  is valid against the shipped JSON Schema (with `jsonschema`, when installed);
- **pairing** (`mcptape.pairing`): every request has its response, unless the recording
  says why not (a cancel, a listen stream, the server exited: warnings), and every response
  answers a request;
- **protocol**: each message is JSON-RPC 2.0 and, where `mcp-types` describes the method and the
  session's revision, valid against its models (imported lazily; skipped when not installed);
- **secrets** that escaped redaction: token shapes, private keys, and random-looking values in
  places that hold secrets (members, headers, query parameters, `name=value` text).
A finding is `file:line: what`; a secret is never printed, only its kind and first characters.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import io
import os
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import UnionType
from typing import Any, get_args
from urllib.parse import parse_qsl, urlsplit

import orjson

from mcptape.cassette import metadata_ok
from mcptape.errors import CassetteVersionError
from mcptape.migrate import check_version
from mcptape.model import HEADER_MARKER, Event, Kind, Source
from mcptape.pairing import Exchange, Item, PairingStream, skeleton_event
from mcptape.pointer import escape
from mcptape.schema.plain import plain
from mcptape.secrets import MARKER, PEM_NAME, PemLines, Scanner, Strength
from mcptape.wire.jsonrpc import MessageType, classify

__all__ = ["CHECKS", "Finding", "Report", "check_bytes", "check_file", "check_lines"]

CHECKS: tuple[str, ...] = ("format", "pairing", "protocol", "secrets")
"""The checks `check_bytes` runs; `skip` leaves some out."""


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where (line 0 for the whole file) and what."""

    line: int
    check: str
    what: str

    def render(self, name: str) -> str:
        return f"{name}:{self.line}: {self.what}" if self.line else f"{name}: {self.what}"


@dataclass(slots=True)
class Report:
    """What `check_bytes` found: problems (exit 1) and warnings (printed, not failing)."""

    findings: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    def add(self, line: int, check: str, what: str) -> None:
        self.findings.append(Finding(line, check, what))

    def warn(self, line: int, check: str, what: str) -> None:
        self.warnings.append(Finding(line, check, what))


LineSource = Callable[[], Iterable[bytes]]
"""A fresh iteration over a cassette's lines (each with its newline, but a truncated last one):
`check_lines` reads them twice, once to check each line and pair skeletons of the messages,
once more for the lines whose messages the protocol check validates."""


def check_bytes(
    data: bytes, skip: frozenset[str] = frozenset(), detect_secrets: bool = False
) -> Report:
    """Checks one cassette's bytes; see the module docstring. With `detect_secrets`, the
    detect-secrets backend scans too (raises `DetectSecretsMissing` when it is not installed)."""
    return check_lines(lambda: io.BytesIO(data), skip, detect_secrets)


def check_file(
    path: str | os.PathLike[str], skip: frozenset[str] = frozenset(), detect_secrets: bool = False
) -> Report:
    """`check_bytes` of a file, read line by line: memory holds one line and what pairing
    needs of each message, not the cassette (raises OSError when it cannot be read)."""

    def lines() -> Iterator[bytes]:
        with open(path, "rb") as f:
            yield from f

    return check_lines(lines, skip, detect_secrets)


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
            from mcptape.check_detect_secrets import DetectSecrets

            lines.backend = stack.enter_context(DetectSecrets())
        for lineno, line in enumerate(source(), start=1):
            if not line.strip():
                continue
            seen = True
            obj = lines.parse(lineno, line)
            if obj is _CORRUPT:
                if lineno == 1:
                    return lines.reports[0]  # another tool's file: its other lines say nothing more
                continue
            if lineno == 1:
                header_bad = _header_problem(obj)
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
        validator = lines.exchanges.plan
        lines.exchanges = None  # (what the plan runs on is read again: memory holds the plan)
        if validator is not None:
            protocol.findings.extend(validator.validate(source))
    report = Report()
    for part in lines.reports:
        report.findings.extend(part.findings)
        report.warnings.extend(part.warnings)
    return report


_CORRUPT = object()
"""What `_Lines.parse` returns for a line that is not JSON."""


class _Lines:
    """The first pass of `check_lines`: each line's own checks, as it is read, and the skeleton
    of its event for pairing."""

    def __init__(self, skip: frozenset[str]) -> None:
        self.skip = skip
        self.reports = tuple(Report() for _ in range(6))
        """parse, schema, pairing, protocol, secrets, detect-secrets: merged in this order."""
        self.exchanges: _Exchanges | None = None
        """The pairing and protocol checks, told each event as it is read (once the header is
        known good; None when both are skipped)."""
        self.scan = SecretScan() if "secrets" not in skip else None
        self.backend: Any = None
        self.validators: dict[str, Any] | None = None

    def start(self) -> None:
        """The header is good: the checks of the other lines can start."""
        if "format" not in self.skip:
            self.validators = _schema_validators(self.reports[1])
        if "pairing" not in self.skip or "protocol" not in self.skip:
            plan = _validator(self.reports[3]) if "protocol" not in self.skip else None
            self.exchanges = _Exchanges(plan)

    def parse(self, lineno: int, line: bytes) -> Any:
        try:
            return orjson.loads(line)
        except orjson.JSONDecodeError:
            parse = self.reports[0]
            if lineno == 1:
                parse.add(1, "format", "not an mcptape cassette (line 1 is not JSON)")
            elif not line.endswith(b"\n"):
                parse.warn(
                    lineno, "format", "last line is truncated (the recorder was stopped mid-write)"
                )
            else:
                parse.add(lineno, "format", "corrupt line (not JSON)")
            return _CORRUPT

    def check(self, lineno: int, obj: Any) -> None:
        _, schema, _, protocol, secrets, detected = self.reports
        if self.validators is not None and (lineno == 1 or not plain(obj)):
            _schema(self.validators, lineno, obj, schema)
        if self.scan is not None:
            self.scan.one(lineno, obj, secrets)
            if self.backend is not None:
                _detect_secrets(self.backend, lineno, obj, secrets, detected)
        if lineno > 1:
            ev = _event(obj)
            if ev is not None:
                if "protocol" not in self.skip:
                    _envelopes(lineno, ev, protocol)
                if self.exchanges is not None:
                    self.exchanges.event(_skeleton(lineno, ev))


def _header_problem(obj: Any) -> str | None:
    """Why line 1 is not a header this mcptape reads (None: it is one)."""
    if not isinstance(obj, dict) or HEADER_MARKER not in obj:
        return f"not an mcptape cassette (no {HEADER_MARKER!r} header on line 1)"
    try:
        check_version(obj, "line 1")
    except CassetteVersionError as exc:
        return str(exc).removeprefix("line 1: ")
    return None


def _schema_validators(report: Report) -> dict[str, Any] | None:
    try:
        import jsonschema
    except ImportError:
        report.warn(
            0, "format", "JSON Schema not checked: install jsonschema (pip install jsonschema)"
        )
        return None
    from mcptape.schema import cassette_schema

    schema = cassette_schema()
    return {
        part: jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": f"#/$defs/{part}"})
        for part in ("header", "event")
    }


def _schema(validators: dict[str, Any], lineno: int, obj: Any, report: Report) -> None:
    import jsonschema

    error = jsonschema.exceptions.best_match(
        validators["header" if lineno == 1 else "event"].iter_errors(obj)
    )
    if error is not None:
        where = error.json_path.removeprefix("$").lstrip(".") or "the line"
        report.add(
            lineno,
            "format",
            f"not valid against the cassette schema: {where}: {_short(error.message)}",
        )


def _event(obj: Any) -> Event | None:
    try:  # (what is wrong with a line left out here, the schema check names)
        if isinstance(obj, dict) and metadata_ok(obj):
            return Event.from_json(obj)
    except (KeyError, ValueError, TypeError):
        pass
    return None


def _skeleton(lineno: int, ev: Event) -> Event:
    """`skeleton_event(ev)` with its file line for `seq`, and no time: the checks after the
    first pass report lines and read no time, and a big cassette has an event a line (the
    line's own `seq` and `t` were two more objects kept for each)."""
    out = skeleton_event(ev)
    out.seq, out.t = lineno, 0.0
    return out


# -- pairing ------------------------------------------------------------------------------


class _Exchanges:
    """The pairing and protocol checks, told by a `PairingStream` as the first pass pairs the
    skeletons: memory holds what is in flight and the protocol plan, not the exchanges.

    Pairing: an unanswered request is a finding, or a warning when the recording says why (a
    cancel, a listen stream, a refused or failed HTTP exchange, the server gone, the recording
    cut short); a response to no request is a finding. Protocol: `_McpValidator` plans each
    message's check when it is filed (an `initialize` exchange's when it is answered, since its
    answer names the revision), in the order of the exchanges, then of the server messages
    outside any request and the client's answers to them."""

    def __init__(self, validator: _McpValidator | None) -> None:
        self.stream = PairingStream(self)
        self.plan = validator
        self.open: dict[int, Exchange] = {}
        """Requests not answered yet, by index (in index order: they are opened in it)."""
        self.cancelled: set[int] = set()
        """Exchanges the client cancelled."""
        self.held: dict[int, tuple[Exchange, list[tuple[int, Item]]]] = {}
        """`initialize` exchanges not answered yet -> their messages, and when each came (in
        index order, as `open`)."""
        self.pending: dict[int, dict[bytes, str]] = {}
        """Exchange -> its server requests (their id) and their method, for the client's answers."""
        self.later: list[tuple[int, int, int, MessageType, Any]] = []
        """Server messages outside any request: (line, place in the batch, when, type, method)."""
        self.latest: tuple[int, str | None] = (-1, None)
        """The last exchange that has a protocol revision, and that revision."""
        self.filed = 0
        """Messages filed so far (which came first, for the plan's order)."""
        self.last: Event | None = None
        self.refused: set[Any] = set()
        self.failed: set[Any] = set()
        self.exits: list[int] = []

    def event(self, ev: Event) -> None:
        """Files one event (a `_skeleton`) of the first pass."""
        self.last = ev
        if _http_error(ev):
            self.refused.add(_exchange(ev))
        if ev.kind is not Kind.MESSAGE or ev.src is None:
            if _phase(ev) in ("disconnect", "error"):
                self.failed.add(_exchange(ev))
            if _server_gone(ev):
                self.exits.append(ev.seq)
            return
        self.stream.add(ev)

    def _version(self, ex: Exchange) -> None:
        if ex.protocol_version and ex.index >= self.latest[0]:
            self.latest = (ex.index, ex.protocol_version)

    def opened(self, ex: Exchange) -> None:
        self._version(ex)
        if not ex.is_notification:
            self.open[ex.index] = ex
        if self.plan is None:
            return
        if ex.method == "initialize":
            self.held[ex.index] = (ex, [])
        else:
            self.plan.request(ex)

    def added(self, ex: Exchange, item: Item) -> None:
        self.filed += 1
        if item.src is Source.CLIENT and item.msg.get("method") == "notifications/cancelled":
            self.cancelled.add(ex.index)
        held = self.held.get(ex.index)
        if held is not None:
            held[1].append((self.filed, item))
        elif self.plan is not None:
            self._item(ex, item, self.filed)

    def _item(self, ex: Exchange, item: Item, when: int) -> None:
        assert self.plan is not None
        at, v = (ex.index, when), ex.protocol_version
        if item.src is Source.SERVER:
            self.plan.server_message(item, v, at)
            if item.type is MessageType.REQUEST:
                asked = self.pending.setdefault(ex.index, {})
                asked[orjson.dumps(item.msg.get("id"))] = str(item.msg.get("method"))
        else:
            asked = self.pending.get(ex.index, {})
            self.plan.answer(item, asked.get(orjson.dumps(item.msg.get("id"))), v, at)

    def answered(self, ex: Exchange) -> None:
        self._version(ex)
        self.open.pop(ex.index, None)
        self._release(ex)
        if self.plan is not None:
            self.plan.response(ex)

    def _release(self, ex: Exchange) -> None:
        """An `initialize` exchange's checks, once its revision is known."""
        held = self.held.pop(ex.index, None)
        if held is not None and self.plan is not None:
            self.plan.request(ex)
            for when, item in held[1]:
                self._item(ex, item, when)

    def unsolicited(self, before: int, item: Item) -> None:
        self.filed += 1
        if self.plan is not None:
            place = _place(item)
            self.later.append(
                (item.event.seq, place, self.filed, item.type, item.msg.get("method"))
            )

    def end(self, pairing: Report | None) -> None:
        """The checks that need the whole file: unanswered requests; the plan of the messages
        outside any request, in the latest revision."""
        for ex, _ in list(self.held.values()):  # never answered: in the revision they were sent in
            self._release(ex)
        if self.plan is not None:
            latest = self.latest[1]
            for line, place, when, typ, method in self.later:
                self.plan.outside(line, place, typ, method, latest, (_OUTSIDE, when))
            for request, answer in self.stream.replies:
                self.plan.client_answer(request, answer, latest)
        if pairing is not None:
            self._pairing(pairing)

    def _pairing(self, report: Report) -> None:
        for item in self.stream.orphans:
            if (
                item.type in (MessageType.RESULT, MessageType.ERROR)
                and item.msg.get("id") is not None
            ):
                report.add(
                    item.event.seq,
                    "pairing",
                    f"a response (id {item.msg.get('id')!r}) that answers no request",
                )
        cut_short = self.last is None or self.last.kind is not Kind.END
        for ex in self.open.values():
            if self._excused(ex):
                continue
            line = ex.request.event.seq
            what = f"{ex.method} (id {ex.request.msg.get('id')!r}) was never answered"
            reason = self._reason(ex, line, cut_short)
            if reason is None:
                report.add(line, "pairing", what)
            else:
                report.warn(line, "pairing", f"{what}: {reason}")
        if cut_short:
            report.warn(
                0,
                "pairing",
                "the recording was cut short (no end marker; the recorder was killed?)",
            )

    def _excused(self, ex: Exchange) -> bool:
        """Needs no answer: a listen stream, refused, or cancelled."""
        if ex.method == "subscriptions/listen" or ex.index in self.cancelled:
            return True
        return ex.http_exchange is not None and ex.http_exchange in self.refused

    def _reason(self, ex: Exchange, line: int, cut_short: bool) -> str | None:
        """Why an unanswered request went unanswered, when the recording says so."""
        if ex.http_exchange is not None and ex.http_exchange in self.failed:
            return "its HTTP exchange failed or the client went away"
        if any(x > line for x in self.exits):
            return "the server exited first"
        return "the recording was cut short" if cut_short else None


def _place(item: Item) -> int:
    """Where the item's message is in its event's batch (-1: the event holds no batch)."""
    batch = item.event.msg
    return next(i for i, m in enumerate(batch) if m is item.msg) if isinstance(batch, list) else -1


def _phase(ev: Event) -> Any:
    return ev.http.get("phase") if ev.http else None


def _exchange(ev: Event) -> Any:
    return ev.http.get("exchange") if ev.http else None


def _http_error(ev: Event) -> bool:
    if ev.src is not Source.SERVER or _phase(ev) != "response":
        return False
    status = ev.http.get("status") if ev.http else None
    return isinstance(status, int) and status >= 400


def _server_gone(ev: Event) -> bool:
    return ev.kind is Kind.EXIT or (ev.kind is Kind.EOF and ev.src is Source.SERVER)


# -- protocol -----------------------------------------------------------------------------


def _envelopes(lineno: int, ev: Event, report: Report) -> None:
    if ev.kind is not Kind.MESSAGE or ev.msg is None:
        return  # (a message event without `msg` is a schema finding)
    for msg in ev.msg if isinstance(ev.msg, list) else [ev.msg]:
        problem = _envelope(msg)
        if problem:
            report.add(lineno, "protocol", problem)


def _validator(report: Report) -> _McpValidator | None:
    """The MCP schema check's planner (the JSON-RPC envelopes are checked as the lines are
    read); None when mcp-types is not installed."""
    try:
        from mcp_types import methods
        from pydantic import ValidationError
    except ImportError:
        report.warn(
            0,
            "protocol",
            "messages not checked against the MCP schema: install mcp-types (pip install mcp-types)",
        )
        return None
    return _McpValidator(methods, ValidationError)


def _envelope(msg: Any) -> str | None:
    if not isinstance(msg, dict):
        return f"not a JSON-RPC message (a JSON {type(msg).__name__})"
    if msg.get("jsonrpc") != "2.0":
        return f'not JSON-RPC 2.0 ("jsonrpc" is {msg.get("jsonrpc")!r})'
    typ = classify(msg)
    if typ is MessageType.INVALID:
        return "not a JSON-RPC request, notification or response"
    msg_id = msg.get("id")
    if (
        "id" in msg
        and (isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)))
        and not (typ is MessageType.ERROR and msg_id is None)
    ):
        return f"bad JSON-RPC id {msg_id!r} (a string or an integer)"
    if typ is MessageType.ERROR:
        err = msg.get("error")
        if (
            not isinstance(err, dict)
            or isinstance(err.get("code"), bool)
            or not isinstance(err.get("code"), int)
            or not isinstance(err.get("message"), str)
        ):
            return "bad JSON-RPC error object (needs an integer code and a string message)"
    return None


_Spec = tuple[str, str, str, Any, tuple[Any, ...], dict[str, Any]]
"""A check, shared by every message it applies to: ("params" or "result", what, version,
validating function, its arguments before the part, its keyword arguments)."""

_LAST = 1 << 62
"""The place of an exchange's response in the plan's order: after all its other messages."""

_OUTSIDE = 1 << 62
"""Where the server messages outside any request come in the plan's order (the client's
answers to them after those): after every exchange."""


class _McpValidator:
    """Validates messages of known methods with mcp-types' per-revision models: planned as the
    first pass files the messages (`_Exchanges`), then run on the messages `validate` parses
    again. Each check has a place in the findings' order, (exchange, message): the request, its
    messages as they came, its response."""

    def __init__(self, methods: Any, error_type: type[Exception]) -> None:
        self.m, self.error_type = methods, error_type
        self.found: dict[int, Finding] = {}
        """Check (its place in `order`) -> what it found."""
        self.order: list[array[int]] = [array("q"), array("q")]
        """Each check's place in the findings' order (exchange, message)."""
        self.lines = array("q")
        """The file line of each check `validate` runs (the ones `_add` found are done)."""
        self.slots = array("q")
        """Which check it is."""
        self.places = array("q")
        """Where its message is in its line's batch (-1: the line holds no batch)."""
        self.specs: list[_Spec] = []
        """What each check runs (shared by the checks that run the same)."""
        self._specs: dict[tuple[Any, ...], _Spec] = {}
        self._surfaces: dict[tuple[str, str | None, bool], Any] = {}
        self._replies = 0

    def _slot(self, at: tuple[int, int]) -> int:
        self.order[0].append(at[0])
        self.order[1].append(at[1])
        return len(self.order[0]) - 1

    def _add(self, item: Item, what: str, at: tuple[int, int]) -> None:
        self.found[self._slot(at)] = Finding(item.event.seq, "protocol", what)

    def _run(
        self, line: int, place: int, what: str, version: str | None, fn: Any, *args: Any,
        part: str, at: tuple[int, int], **kw: Any,
    ) -> None:  # fmt: skip
        """Plans `fn(*args, <the message's part>, **kw)` on the message at `place` of `line`."""
        if version is None:
            return
        key = (part, what, version, fn, args, *(id(v) for v in kw.values()))
        spec = self._specs.get(key)
        if spec is None:
            spec = self._specs[key] = (part, what, version, fn, args, kw)
        self.lines.append(line)
        self.slots.append(self._slot(at))
        self.places.append(place)
        self.specs.append(spec)

    def validate(self, source: LineSource) -> list[Finding]:
        """Runs the planned checks on the lines `source` gives; the findings, in plan order."""
        lines, places, specs, slots = self.lines, self.places, self.specs, self.slots
        # by line, a line's checks in plan order (a stable sort)
        todo = iter(sorted(range(len(lines)), key=lines.__getitem__))
        task = next(todo, None)
        for lineno, line in enumerate(source(), start=1):
            if task is None:
                break
            if lines[task] != lineno:
                continue
            try:
                msg = orjson.loads(line)["msg"]
            except (orjson.JSONDecodeError, KeyError, TypeError):
                msg = None  # (the file changed since the first pass)
            while task is not None and lines[task] == lineno:
                if msg is not None:
                    place = places[task]
                    where = place if place >= 0 else None
                    self._one(lineno, msg, slots[task], where, *specs[task])
                task = next(todo, None)
        major, minor = self.order
        return [self.found[s] for s in sorted(self.found, key=lambda s: (major[s], minor[s], s))]

    def _one(
        self,
        lineno: int,
        msg: Any,
        slot: int,
        index: int | None,
        part: str,
        what: str,
        version: str,
        fn: Any,
        args: tuple[Any, ...],
        kw: dict[str, Any],
    ) -> None:
        try:
            value = (msg[index] if index is not None else msg).get(part)
        except (IndexError, KeyError, TypeError, AttributeError):
            return  # (the file changed since the first pass)
        try:
            fn(*args, value, **kw)
        except self.error_type as exc:
            errors = exc.errors()  # type: ignore[attr-defined]
            first = errors[0] if errors else {"loc": (), "msg": str(exc)}
            loc = ".".join(str(p) for p in first.get("loc", ())) or "(top)"
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            self.found[slot] = Finding(
                lineno,
                "protocol",
                f"{what} is not valid MCP {version}: {loc}: {_short(str(first['msg']))}{more}",
            )
        except (KeyError, ValueError, RuntimeError, TypeError):
            return  # a method or revision mcp-types does not describe: nothing to check against

    def request(self, ex: Exchange) -> None:
        v, req = ex.protocol_version, ex.request
        line, place, at = req.event.seq, _place(req), (ex.index, 0)
        if req.type is MessageType.REQUEST:
            what, fn = f"{ex.method} request", self.m.validate_client_request
        else:
            what, fn = f"{ex.method} notification", self.m.validate_client_notification
        self._run(line, place, what, v, fn, ex.method, v, part="params", at=at)

    def response(self, ex: Exchange) -> None:
        resp, v, at = ex.response, ex.protocol_version, (ex.index, _LAST)
        if resp is None or resp.type is not MessageType.RESULT:
            return
        result = resp.msg.get("result")
        if not isinstance(result, dict):
            self._add(resp, f"{ex.method} result is not an object", at)
            return
        surface = self._result_surface(ex.method, v, result)
        fn = self.m.validate_server_result
        self._run(resp.event.seq, _place(resp), f"{ex.method} result", v, fn, ex.method, v,
                  part="result", at=at, surface=surface)  # fmt: skip

    def client_answer(self, request: Item, answer: Item, version: str | None) -> None:
        """The client's answer to a server request that belonged to no client request."""
        self._replies += 1
        self.answer(answer, str(request.msg.get("method")), version, (_OUTSIDE + 1, self._replies))

    def answer(
        self, item: Item, method: str | None, version: str | None, at: tuple[int, int]
    ) -> None:
        """The client's answer `item` to a server request of `method`."""
        if method and item.type is MessageType.RESULT and isinstance(item.msg.get("result"), dict):
            self._run(item.event.seq, _place(item), f"client answer to {method}", version,
                      self.m.validate_client_result, method, version, part="result", at=at)  # fmt: skip

    def _result_surface(self, method: str, version: str | None, result: dict[str, Any]) -> Any:
        """A result that is not `input_required` is checked against the method's own type alone
        (in the union, `InputRequiredResult`, which takes any `resultType`, would accept it)."""
        key = (method, version, result.get("resultType") == "input_required")
        known = self._surfaces.get(key)
        if known is None:
            known = self._surfaces[key] = self._surface(method, version, key[2])
        return known

    def _surface(self, method: str, version: str | None, input_required: bool) -> Any:
        target = self.m.SERVER_RESULTS.get((method, version))
        if isinstance(target, UnionType) and not input_required:
            own = [
                t for t in get_args(target) if getattr(t, "__name__", "") != "InputRequiredResult"
            ]
            if len(own) == 1:
                target = own[0]
        return {(method, version): target} if target is not None else {}

    def server_message(self, item: Item, version: str | None, at: tuple[int, int]) -> None:
        self.outside(item.event.seq, _place(item), item.type, item.msg.get("method"), version, at)

    def outside(
        self, line: int, place: int, typ: MessageType, method: Any, version: str | None,
        at: tuple[int, int],
    ) -> None:  # fmt: skip
        """Plans the check of a server notification or request, at `line` (`place` in its batch)."""
        if typ is MessageType.NOTIFICATION:
            what, fn = f"{method} notification", self.m.parse_server_notification
        elif typ is MessageType.REQUEST:
            what, fn = f"{method} server request", self.m.parse_server_request
        else:
            return
        self._run(line, place, what, version, fn, method, version, part="params", at=at)


# -- secrets ------------------------------------------------------------------------------


class SecretScan:
    """Looks for secrets that escaped redaction in every string of every line, with the table
    redaction uses (`mcptape.secrets`), in its strict mode: a value under a secret name counts
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


def _detect_secrets(backend: Any, lineno: int, obj: Any, ours: Report, report: Report) -> None:
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


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
