"""Declarations -> the replay engine's answers. Sans-IO.

`MockServer` is the engine's `ReplayConfig.answerer`: asked first for every request the
engine would match against its cassette, it answers what was declared with an `Answer`, an
exchange made up as if recorded from a legacy server, which the engine plays like any
recording: progress with the client's token, the server's own requests waiting for the
client's answers, and the bridge translating it all for a 2026-07-28 client. So era
bridging stays in one place (`mcptape.replay.bridge`).

A legacy client gets the revision it asks for in `initialize` when mcptape knows it, else
2025-11-25 (`eras.legacy_version`), and every exchange after it is made up in that revision
(`made`: without what later revisions added, `mcptape.revisions`); a 2026-07-28 client is
served from 2025-11-25 by the bridge.

A pure mock is served over `synthesized(...)`, a cassette holding only the handshake its
declarations make; `server/discover` comes from that handshake through the bridge. Over a
recorded cassette (an overlay) the declarations answer only the tools, resources and prompts
they name, and the recording answers the rest.
"""

from __future__ import annotations

import difflib
import itertools
import json
import re
from collections.abc import Sequence
from typing import Any

from mcptape._version import __version__
from mcptape.cassette import Cassette
from mcptape.cassette.model import Event, Header, Kind, Source, Transport
from mcptape.eras import legacy_version, strip_envelope
from mcptape.pairing import Exchange, Item
from mcptape.replay.bridge import STATE_PREFIX
from mcptape.replay.outputs import Answer, Note, Output, Send, Step
from mcptape.replay.overlay import OverlayRule
from mcptape.replay.prepared import paired
from mcptape.replay.report import NO_MATCH
from mcptape.revisions import as_of, sent_as_of
from mcptape.wire.jsonrpc import (
    JSONRPC_METHOD_NOT_FOUND,
    MessageType,
    error_response,
    request_params,
)

from .declare import Case, Prompt, Resource, RpcError, Sequence_, Tool, ToolError
from .journal import Journal
from .overlaid import list_rules, listings

VERSION = "2025-11-25"
"""The protocol version of a mock's synthesized handshake, and of the exchanges it makes up
for a client of 2025-11-25, of 2026-07-28 (the bridge serves it from them) or of no known
revision; an older client's are made up in its own."""

LABEL = "mcptape mock"

ENGINE_METHODS = frozenset(
    {
        "server/discover",
        "logging/setLevel",
        "subscriptions/listen",
        "resources/subscribe",
        "resources/unsubscribe",
    }
)
"""Methods whose handler asks the mock first but whose answer the engine makes (from the
synthesized handshake): the mock leaves them alone."""

_MADE = itertools.count(1 << 40)
"""Exchange numbers of made-up exchanges: never a recorded one's."""


class MockServer:
    """Declared tools, resources and prompts, answering requests; see the module docstring."""

    def __init__(self, name: str = "mcptape-mock", *, overlay: bool = False) -> None:
        self.name = name
        self.overlay = overlay
        """True over a recorded cassette: what is not declared is the recording's to answer."""
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.prompts: dict[str, Prompt] = {}
        self.journal = Journal()
        self.instructions: str | None = None
        self._asking: dict[int, Exchange] = {}
        """Made-up exchanges with requests to the client, by number, until resumed (2026-07-28)."""
        self.rules: list[OverlayRule] = []
        """Overlay rules declared with the mock: `recorded(...)`, a declared answer's `fault`,
        `mock.fault(...)`, a mock file's `[[faults]]` (`mcptape.mocks.overlaid`)."""
        self._listed: tuple[tuple[Any, ...], tuple[OverlayRule, ...]] | None = None
        """The declarations `list_rules` last saw, and the rules it made of them: the engine
        asks for `overlay_rules` before every request, and they change only with a declaration."""

    # -- the engine's hook ---------------------------------------------------------------------

    @property
    def delays(self) -> bool:
        return any(c.delay for t in self.tools.values() for c in t.cases)

    @property
    def overlay_rules(self) -> tuple[OverlayRule, ...]:
        """The declared rules, then (over a recording) the declarations in the recorded lists."""
        if not self.overlay:
            return tuple(self.rules)
        declared = (*self.tools.values(), *self.resources.values(), *self.prompts.values())
        if self._listed is None or self._listed[0] != declared:  # (the same objects: no copy)
            lists = list_rules(self.tools.values(), self.resources.values(), self.prompts.values())
            self._listed = (declared, tuple(lists))
        return (*self.rules, *self._listed[1])

    def saw(self, msg: dict[str, Any], outputs: Sequence[Step]) -> None:
        self.journal.saw(msg, outputs)

    def answer(self, msg: dict[str, Any], version: str | None) -> Answer | list[Output] | None:
        """The engine's question (`Answerer.answer`): the answer made up in the revision that
        serves the session's `version` (`legacy_version`: 2026-07-28 and unknown ones get
        2025-11-25, which the bridge translates)."""
        if msg["method"] == "initialize":
            return None if self.overlay else self._handshake(msg)
        return self._answer(msg, legacy_version(version))

    def _handshake(self, msg: dict[str, Any]) -> Answer:
        """`initialize`: the client's version when mcptape knows it, else 2025-11-25."""
        revision = legacy_version(request_params(msg).get("protocolVersion"))
        result = self.initialize_result(revision)
        return Answer(
            made(msg, {"jsonrpc": "2.0", "id": msg["id"], "result": result}, [], revision)
        )

    def _answer(self, msg: dict[str, Any], revision: str) -> Answer | list[Output] | None:
        """What was declared for `msg`, made up in `revision`."""
        method = msg["method"]
        if method in ENGINE_METHODS:
            return None
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        assert isinstance(params, dict)
        state = params.get("requestState")
        if isinstance(state, str) and state.startswith(STATE_PREFIX):
            resumed = self._resume(state)
            if resumed is not None:
                return resumed
        if method == "tools/call":
            return self._call(msg, params, revision)
        if method == "resources/read":
            return self._read(msg, params, revision)
        if method == "prompts/get":
            return self._prompt(msg, params, revision)
        if self.overlay:
            return None
        listed = listings(self.tools.values(), self.resources.values(), self.prompts.values())
        if method in listed:
            key, _, entries = listed[method]
            result = {key: entries}
            return Answer(
                made(msg, {"jsonrpc": "2.0", "id": msg["id"], "result": result}, [], revision)
            )
        text = f"{LABEL} {self.name}: method {method} is not declared (a mock answers tools, resources and prompts)"
        return _error(msg, JSONRPC_METHOD_NOT_FOUND, f"Method not found: {method}", text)

    def _resume(self, state: str) -> Answer | None:
        """The retry of an `input_required` the bridge made from a made-up exchange's request
        (its `requestState`: exchange, position): the rest of that exchange, made up again."""
        try:
            number, pos, _ = state[len(STATE_PREFIX) :].split(":", 2)
            ex = self._asking.pop(int(number))
        except (ValueError, KeyError):
            return None  # a recording's own: the engine resumes it
        rest = [i.msg for i in ex.items[int(pos) :]]
        assert ex.response is not None
        return Answer(self._made(ex.request.msg, ex.response.msg, rest))

    def _made(
        self,
        request: dict[str, Any],
        response: dict[str, Any],
        before: list[dict[str, Any]],
        revision: str = VERSION,
    ) -> Exchange:
        """`made`, kept while it has requests of its own to ask (a 2026-07-28 retry resumes it)."""
        ex = made(request, response, before, revision)
        if any("id" in m for m in before):
            self._asking[ex.index] = ex
        return ex

    # -- tools -----------------------------------------------------------------------------------

    def _call(
        self, msg: dict[str, Any], params: dict[str, Any], revision: str
    ) -> Answer | list[Output] | None:
        name = params.get("name")
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        assert isinstance(args, dict)
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:
            if self.overlay:
                return None
            near = difflib.get_close_matches(str(name), list(self.tools), n=3, cutoff=0.0)
            text = f"{LABEL} {self.name}: no tool {name!r} is declared; declared: {', '.join(self.tools) or 'none'}; declare it with mock.tool({name!r}, ...)"
            return _error(msg, NO_MATCH, text, text, {"reason": "undeclared", "nearest": near})
        case = next((c for c in tool.cases if c.args == args), None) or next(
            (c for c in tool.cases if c.args is None), None
        )  # the answer for these arguments, else the one for any
        if case is None:
            if self.overlay:
                return None
            return _error(msg, NO_MATCH, *_no_case(self.name, tool, args))
        case.calls += 1
        return self._play(msg, case, lambda value: tool_result(tool, value), args, revision)

    def _play(
        self, msg: dict[str, Any], case: Case, shape: Any, args: dict[str, Any], revision: str
    ) -> Answer | list[Output]:
        """The made-up exchange of `case` for request `msg`: what comes before, then the answer."""
        value = case.answer
        if isinstance(value, Sequence_):
            if case.calls > len(value.answers):
                text = f"{LABEL} {self.name}: all {len(value.answers)} declared answers were given ({case.source}); declare more with mcptape.mocks.answers(...)"
                return _error(msg, NO_MATCH, text, text, {"reason": "exhausted"})
            value = value.answers[case.calls - 1]
        try:
            if isinstance(value, (RpcError, ToolError)):
                raise value
            if callable(value) and not isinstance(value, type):
                value = value(**args)
            body: dict[str, Any] = {"result": shape(value)}
        except RpcError as exc:
            body = {"error": exc.to_json()}
        except ToolError as exc:
            body = {"result": shape(exc)}
        except Exception as exc:  # a server answers its function's failure, as real ones do
            body = {"result": shape(ToolError(f"{type(exc).__name__}: {exc}"))}
        before = [_progress(p) for p in case.progress] + [
            _log(level, data) for level, data in case.logs
        ]
        before += [
            {"jsonrpc": "2.0", "id": f"mock-{n}", "method": method, "params": p}
            for n, (method, p) in enumerate(case.asks)
        ]
        return Answer(
            self._made(msg, {"jsonrpc": "2.0", "id": msg["id"], **body}, before, revision),
            case.delay,
        )

    # -- resources and prompts ----------------------------------------------------------------------

    def _read(
        self, msg: dict[str, Any], params: dict[str, Any], revision: str
    ) -> Answer | list[Output] | None:
        uri = str(params.get("uri"))
        for res in self.resources.values():
            parts = _fits(res.uri, uri)
            if parts is None:
                continue
            res.calls += 1
            return self._play(
                msg,
                Case(res.answer, calls=1),
                lambda v, r=res: _contents(r, uri, v),
                parts,
                revision,
            )
        if self.overlay:
            return None
        text = f"{LABEL} {self.name}: no resource {uri} is declared; declared: {', '.join(self.resources) or 'none'}"
        return _error(msg, -32002, f"Resource not found: {uri}", text, {"uri": uri})

    def _prompt(
        self, msg: dict[str, Any], params: dict[str, Any], revision: str
    ) -> Answer | list[Output] | None:
        name = params.get("name")
        prompt = self.prompts.get(name) if isinstance(name, str) else None
        if prompt is None:
            if self.overlay:
                return None
            text = f"{LABEL} {self.name}: no prompt {name!r} is declared; declared: {', '.join(self.prompts) or 'none'}"
            return _error(msg, -32602, f"Unknown prompt: {name}", text)
        prompt.calls += 1
        args = params.get("arguments") if isinstance(params.get("arguments"), dict) else {}
        assert isinstance(args, dict)
        return self._play(
            msg, Case(prompt.answer, calls=1), lambda v: _messages(prompt, v), args, revision
        )

    # -- what the handshake says ---------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.tools:
            caps["tools"] = {"listChanged": False}
        if self.resources:
            caps["resources"] = {"listChanged": False, "subscribe": False}
        if self.prompts:
            caps["prompts"] = {"listChanged": False}
        if any(c.logs for t in self.tools.values() for c in t.cases):
            caps["logging"] = {}
        return caps

    def initialize_result(self, version: str = VERSION) -> dict[str, Any]:
        out: dict[str, Any] = {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": {"name": self.name, "version": __version__},
        }
        if self.instructions:
            out["instructions"] = self.instructions
        return out

    def adopt(self, cassette: Cassette) -> None:
        """Over a recording (an overlay): a declared tool keeps the schemas and description the
        recorded `tools/list` gave it where its declaration gives none (a client checks results
        against the output schema it listed)."""
        for ex in paired(cassette).exchanges:
            result = strip_envelope(ex.result)[0] if isinstance(ex.result, dict) else None
            if ex.method != "tools/list" or not isinstance(result, dict):
                continue
            for listed in result.get("tools") or []:
                tool = self.tools.get(str(listed.get("name"))) if isinstance(listed, dict) else None
                if tool is None:
                    continue
                if tool.output_schema is None and isinstance(listed.get("outputSchema"), dict):
                    tool.output_schema = listed["outputSchema"]
                if tool.input_schema == {"type": "object"} and isinstance(
                    listed.get("inputSchema"), dict
                ):
                    tool.input_schema = listed["inputSchema"]
                if tool.description is None and isinstance(listed.get("description"), str):
                    tool.description = listed["description"]

    def unused(self) -> list[str]:
        """Declarations no request used, each named as declared (`tool add {'a': 1}`)."""
        out = [
            f"tool {t.name}"
            + (f" {c.args}" if c.args is not None else "")
            + (f" ({c.source})" if c.source else "")
            for t in self.tools.values()
            for c in t.cases
            if not c.calls
        ]
        out += [f"resource {r.uri}" for r in self.resources.values() if not r.calls]
        out += [f"prompt {p.name}" for p in self.prompts.values() if not p.calls]
        return out


# -- made-up exchanges -------------------------------------------------------------------------------


def _event(msg: dict[str, Any], src: Source) -> Event:
    return Event(-1, 0.0, Kind.MESSAGE, src, msg)


def made(
    request: dict[str, Any],
    response: dict[str, Any],
    before: list[dict[str, Any]] | None = None,
    version: str = VERSION,
) -> Exchange:
    """An exchange as a legacy server of `version` would have recorded it: `before`
    (notifications, the server's requests), then `response`; without the members revisions
    after `version` added, and without the requests it has not (`mcptape.revisions`)."""
    method = str(request.get("method"))
    if isinstance(response.get("result"), dict):
        response = {**response, "result": as_of(version, "result", method, response["result"])}
    before = [m for m in (sent_as_of(version, b) for b in before or []) if m is not None]
    items = [
        Item(
            Source.SERVER,
            m,
            _event(m, Source.SERVER),
            MessageType.REQUEST if "id" in m else MessageType.NOTIFICATION,
        )
        for m in before
    ]
    kind = MessageType.ERROR if "error" in response else MessageType.RESULT
    return Exchange(
        next(_MADE),
        Item(Source.CLIENT, request, _event(request, Source.CLIENT), MessageType.REQUEST),
        Item(Source.SERVER, response, _event(response, Source.SERVER), kind),
        items,
        protocol_version=version,
    )


def _error(
    msg: dict[str, Any], code: int, message: str, note: str, data: dict[str, Any] | None = None
) -> list[Output]:
    error = error_response(msg["id"], code, message, data)
    return [Send(error, request_id=msg["id"], final=True), Note(note, "error")]


def _progress(step: tuple[float, float | None, str | None]) -> dict[str, Any]:
    progress, total, message = step
    params: dict[str, Any] = {"progressToken": "mock", "progress": progress}
    if total is not None:
        params["total"] = total
    if message is not None:
        params["message"] = message
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}


def _log(level: str, data: Any) -> dict[str, Any]:
    params = {"level": level, "logger": "mcptape-mock", "data": data}
    return {"jsonrpc": "2.0", "method": "notifications/message", "params": params}


def _no_case(name: str, tool: Tool, args: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """The error for a call no declared case of `tool` fits: the nearest cases and what differs."""
    declared = [c.args for c in tool.cases if c.args is not None]

    def distance(want: dict[str, Any]) -> int:
        keys = set(want) | set(args)
        return sum(1 for k in keys if want.get(k, ...) != args.get(k, ...))

    nearest = sorted(declared, key=distance)[:3]
    diffs = [
        "; ".join(
            f"{k}: {args.get(k, '(absent)')!r} vs declared {want.get(k, '(absent)')!r}"
            for k in sorted(set(want) | set(args))
            if want.get(k, ...) != args.get(k, ...)
        )
        for want in nearest
    ]
    text = f"{LABEL} {name}: tools/call {tool.name} {json.dumps(args, sort_keys=True)} fits no declared arguments; nearest: {' | '.join(diffs)}"
    return text, text, {"reason": "arguments", "nearest": nearest, "differs": diffs}


# -- answers into results -------------------------------------------------------------------------------


def tool_result(tool: Tool, value: Any) -> dict[str, Any]:
    """A `tools/call` result for a declared answer: a dict with `content` as it is; else its
    text (a string as it is, another value as JSON), with structured content for an object,
    or `{"result": value}` when the tool has an output schema."""
    if isinstance(value, ToolError):
        return {"content": [{"type": "text", "text": value.text}], "isError": True}
    if isinstance(value, dict) and isinstance(value.get("content"), list):
        return value
    shown = value if isinstance(value, str) else json.dumps(value)
    out: dict[str, Any] = {"content": [{"type": "text", "text": shown}], "isError": False}
    if isinstance(value, dict):
        out["structuredContent"] = value
    elif tool.output_schema is not None:
        out["structuredContent"] = {"result": value}
    return out


def _contents(res: Resource, uri: str, value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and isinstance(value.get("contents"), list):
        return value
    item: dict[str, Any] = {"uri": uri}
    if res.mime_type is not None:
        item["mimeType"] = res.mime_type
    if isinstance(value, bytes):
        import base64

        item["blob"] = base64.b64encode(value).decode("ascii")
    else:
        item["text"] = value if isinstance(value, str) else json.dumps(value)
    return {"contents": [item]}


def _messages(prompt: Prompt, value: Any) -> dict[str, Any]:
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        return value
    if isinstance(value, str):
        value = [{"role": "user", "content": {"type": "text", "text": value}}]
    out: dict[str, Any] = {"messages": value}
    if prompt.description is not None:
        out["description"] = prompt.description
    return out


def _fits(template: str, uri: str) -> dict[str, str] | None:
    """The parts of `uri` for a URI template's `{name}` holes (None: it does not fit)."""
    if "{" not in template:
        return {} if template == uri else None
    pattern = "".join(
        f"(?P<{re.escape(p[1:-1])}>[^/]+)" if p.startswith("{") else re.escape(p)
        for p in re.split(r"(\{[^}]+\})", template)
    )
    m = re.fullmatch(pattern, uri)
    return m.groupdict() if m else None


def synthesized(server: MockServer) -> Cassette:
    """The cassette a pure mock is served over: the handshake its declarations make."""
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcptape-mock-client", "version": __version__},
        },
    }
    answer = {"jsonrpc": "2.0", "id": 0, "result": server.initialize_result()}
    done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    events = [
        Event(1, 0.0, Kind.MESSAGE, Source.CLIENT, init),
        Event(2, 0.0, Kind.MESSAGE, Source.SERVER, answer),
        Event(3, 0.0, Kind.MESSAGE, Source.CLIENT, done),
    ]
    header = Header(Transport.STDIO, {"mock": server.name}, "1970-01-01T00:00:00.000Z", __version__)
    return Cassette(header, events)
