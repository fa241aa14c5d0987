"""The protocol check: each message is JSON-RPC 2.0 (its envelope, checked as the lines are
read) and, where `mcp-types` describes the method and the session's revision, valid against
that revision's models (imported lazily; skipped when not installed). The second check is
planned as pairing files the messages (`mcptape.check.pairing`), then run on the lines it
needs, parsed again (`McpValidator.validate`)."""

from __future__ import annotations

from array import array
from types import UnionType
from typing import TYPE_CHECKING, Any, get_args

from mcptape.cassette import read_lines
from mcptape.cassette.model import Event, Kind
from mcptape.extras import missing_extra_message
from mcptape.pairing import Exchange, Item
from mcptape.wire.jsonrpc import MessageType, classify

from .report import Finding, Report, short

if TYPE_CHECKING:
    from .format import LineSource

__all__ = ["LAST", "OUTSIDE", "McpValidator", "batch_place", "envelope", "envelopes", "validator"]


def envelopes(lineno: int, ev: Event, report: Report) -> None:
    if ev.kind is not Kind.MESSAGE or ev.msg is None:
        return  # (a message event without `msg` is a schema finding)
    for msg in ev.msg if isinstance(ev.msg, list) else [ev.msg]:
        problem = envelope(msg)
        if problem:
            report.add(lineno, "protocol", problem)


def validator(report: Report) -> McpValidator | None:
    """The MCP schema check's planner (the JSON-RPC envelopes are checked as the lines are
    read); None when mcp-types is not installed."""
    try:
        from mcp_types import methods
        from pydantic import ValidationError
    except ImportError:
        report.warn(
            0,
            "protocol",
            "messages not checked against the MCP schema: "
            + missing_extra_message("check", "that check"),
        )
        return None
    return McpValidator(methods, ValidationError)


def envelope(msg: Any) -> str | None:
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

LAST = 1 << 62
"""The place of an exchange's response in the plan's order: after all its other messages."""

OUTSIDE = 1 << 62
"""Where the server messages outside any request come in the plan's order (the client's
answers to them after those): after every exchange."""


class McpValidator:
    """Validates messages of known methods with mcp-types' per-revision models: planned as the
    first pass files the messages (`mcptape.check.pairing.Exchanges`), then run on the messages `validate` parses
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
        for lineno, _, _, obj in read_lines(source()):
            if task is None:
                break
            if lines[task] != lineno:
                continue
            # (no message: the file changed since the first pass)
            msg = obj.get("msg") if isinstance(obj, dict) else None
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
                f"{what} is not valid MCP {version}: {loc}: {short(str(first['msg']))}{more}",
            )
        except (KeyError, ValueError, RuntimeError, TypeError):
            return  # a method or revision mcp-types does not describe: nothing to check against

    def request(self, ex: Exchange) -> None:
        v, req = ex.protocol_version, ex.request
        line, place, at = req.event.seq, batch_place(req), (ex.index, 0)
        if req.type is MessageType.REQUEST:
            what, fn = f"{ex.method} request", self.m.validate_client_request
        else:
            what, fn = f"{ex.method} notification", self.m.validate_client_notification
        self._run(line, place, what, v, fn, ex.method, v, part="params", at=at)

    def response(self, ex: Exchange) -> None:
        resp, v, at = ex.response, ex.protocol_version, (ex.index, LAST)
        if resp is None or resp.type is not MessageType.RESULT:
            return
        result = resp.msg.get("result")
        if not isinstance(result, dict):
            self._add(resp, f"{ex.method} result is not an object", at)
            return
        surface = self._result_surface(ex.method, v, result)
        fn = self.m.validate_server_result
        self._run(resp.event.seq, batch_place(resp), f"{ex.method} result", v, fn, ex.method, v,
                  part="result", at=at, surface=surface)  # fmt: skip

    def client_answer(self, request: Item, answer: Item, version: str | None) -> None:
        """The client's answer to a server request that belonged to no client request."""
        self._replies += 1
        self.answer(answer, str(request.msg.get("method")), version, (OUTSIDE + 1, self._replies))

    def answer(
        self, item: Item, method: str | None, version: str | None, at: tuple[int, int]
    ) -> None:
        """The client's answer `item` to a server request of `method`."""
        if method and item.type is MessageType.RESULT and isinstance(item.msg.get("result"), dict):
            self._run(item.event.seq, batch_place(item), f"client answer to {method}", version,
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
        self.outside(
            item.event.seq, batch_place(item), item.type, item.msg.get("method"), version, at
        )

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


def batch_place(item: Item) -> int:
    """Where the item's message is in its event's batch (-1: the event holds no batch)."""
    batch = item.event.msg
    return next(i for i, m in enumerate(batch) if m is item.msg) if isinstance(batch, list) else -1
