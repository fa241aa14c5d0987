"""The HTTP replay shell: a cassette served as an MCP server over HTTP (`mcptape serve`).

A plain ASGI app (`HttpReplayApp`) run by uvicorn; the replay engine decides what to
answer, `HttpPlan` how the recording answered it (JSON or SSE, status), `http_checks` what
a real server rejects first. Streamable HTTP at the recorded path (default `/mcp`):

- Handshake-era clients: every `initialize` without a session opens a session with a fresh
  `Mcp-Session-Id` and its own engine, i.e. its own pass through the cassette, so
  concurrent clients each get their own answers. Requests name their session (400 without
  one, 404 for an unknown or deleted one). A request's answer is JSON or an event stream as
  recorded (an event stream whenever there are notifications or server requests to carry);
  a server request waits on its stream for the client's answer, which is POSTed and answered
  202 like notifications. Unsolicited messages go on the session's GET stream (405 if the
  recording had 405); DELETE ends the session.
- 2026-07-28 clients (the version header or the body's `_meta` says so): no sessions. Each
  request gets its own engine (its progress tokens, its listen id) matched against one
  pass shared by all stateless requests, whose per-key queues start over once used up:
  several clients, or the same client run twice, all get answers, in recorded order per
  key. Headers are checked like a real server (400 with -32020). `subscriptions/listen`
  streams the acknowledgement and notifications and stays open until the client closes it.

`http_sessions` holds the per-session state, `http_legacy` serves the 2024-11-05 HTTP+SSE
transport when the cassette was recorded on it, `http_run` runs the app under uvicorn.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import anyio
import orjson

from mcptape.cassette import Cassette
from mcptape.pairing import Exchange
from mcptape.versions import HANDSHAKE_VERSIONS, META_PROTOCOL_VERSION, MODERN
from mcptape.wire.jsonrpc import (
    JSONRPC_INVALID_REQUEST,
    JSONRPC_PARSE_ERROR,
    NOT_JSON,
    MessageType,
    classify,
    decode,
    id_key,
    request_meta,
)

from . import http_faults
from .engine import Note, Output, ReplayConfig, ReplayEngine, Send
from .faults import FaultPlan, parse_rules
from .http_asgi import (
    JSON,
    Disconnected,
    Outbox,
    Receive,
    Scope,
    SendFn,
    header_dict,
    lifespan,
    read_body,
    reply_error,
    respond,
    rpc_error,
    sse_event,
    stream_sse,
)  # fmt: skip
from .http_checks import Guard, ParamHeaders, accepts, header_mismatch, is_json
from .http_plan import HEADER_MISMATCH, UNSUPPORTED_VERSION, HttpPlan, json_status
from .http_sessions import Session, StatelessPass, unplayed
from .index import ReplayIndex
from .report import unplayed_report

DEFAULT_MAX_BODY = 4 * 1024 * 1024
"""Request bodies above this many bytes are answered 413 (the SDK servers' limit)."""
SESSION_HEADER = "mcp-session-id"
NoteHandler = Callable[[Note], None]


def _to_stderr(note: Note) -> None:
    text = note.text if note.text.startswith("mcptape") else f"mcptape serve: {note.level}: {note.text}"
    print(text, file=sys.stderr, flush=True)


class HttpReplayApp:
    """The ASGI application; see the module docstring."""

    def __init__(
        self, cassette: Cassette, config: ReplayConfig | None = None, *, host: str = "127.0.0.1", allowed_hosts: Iterable[str] = (),
        speed: float | None = None, max_body: int = DEFAULT_MAX_BODY, on_note: NoteHandler | None = _to_stderr,
        quiet: bool = False, faults: Any = (),
    ) -> None:  # fmt: skip
        self.faults = parse_rules(faults)
        """Fault rules: each session counts its own; 2026-07-28 stateless requests share one count."""
        self.stateless_faults = FaultPlan(self.faults, http=True) if self.faults else None
        self.cassette = cassette
        self.config = config or ReplayConfig()
        self.index = ReplayIndex(cassette, self.config.match)
        self.plan = HttpPlan(cassette)
        self.guard = Guard(host, allowed_hosts)
        self.params = ParamHeaders([ex.result for ex in self.index.session.exchanges if ex.method == "tools/list"])
        self.speed = speed
        self.max_body = max_body
        self.on_note = on_note
        self.quiet = quiet
        self.sessions: dict[str, Session] = {}
        self.ended: list[list[Exchange]] = []
        """What each ended session left unplayed (for --strict)."""
        self.shared: Session | None = None
        """The session of a handshake-era server that minted no session ids."""
        self.stateless = StatelessPass(self.index, self.config.allow_repeats)
        self.stateless_used = False
        self.modern_only = self.index.modern and not self.index.legacy
        self._stopping: anyio.Event | None = None

    @property
    def stopping(self) -> anyio.Event:
        """Set when the server shuts down: every open stream ends."""
        if self._stopping is None:
            self._stopping = anyio.Event()
        return self._stopping

    def note(self, note: Note) -> None:
        if self.on_note is not None and (not self.quiet or note.level == "error"):
            self.on_note(note)

    # -- ASGI entry ----------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: SendFn) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send, self.stopping)
            return
        if scope["type"] != "http":
            return
        headers = header_dict(scope)
        if not self.guard.host_ok(headers):
            await respond(send, 421, b"Invalid Host header", [("content-type", "text/plain")])
            return
        if not self.guard.origin_ok(headers):
            body = rpc_error(JSONRPC_INVALID_REQUEST, f"Forbidden: Origin {headers.get('origin')!r} is not allowed")
            await respond(send, 403, body, [("content-type", JSON)])
            return
        try:
            if self.plan.legacy_sse:
                from .http_legacy import handle_legacy

                await handle_legacy(self, scope, receive, send, headers)
            elif scope["path"] != self.plan.path:
                await respond(send, 404, b"Not Found", [("content-type", "text/plain")])
            elif scope["method"] == "POST":
                await self._post(receive, send, headers)
            elif scope["method"] == "GET":
                await self._get(receive, send, headers)
            elif scope["method"] == "DELETE":
                await self._delete(send, headers)
            else:
                allow = "POST" if self.modern_only else "GET, POST, DELETE"
                await respond(send, 405, rpc_error(JSONRPC_INVALID_REQUEST, "Method Not Allowed"), [("content-type", JSON), ("allow", allow)])
        except Disconnected:
            return

    # -- POST ----------------------------------------------------------------------------

    async def _post(self, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
        if not accepts(headers, json=True, sse=True):
            return await reply_error(send, 406, "Not Acceptable: Client must accept both application/json and text/event-stream")
        if not is_json(headers):
            return await reply_error(send, 415, "Unsupported Media Type: Content-Type must be application/json")
        body = await read_body(receive, headers, self.max_body)
        if body is None:
            return await reply_error(send, 413, f"Payload Too Large: the request body is over {self.max_body} bytes")
        value = decode(body)
        if value is NOT_JSON:
            return await reply_error(send, 400, "Parse error", JSONRPC_PARSE_ERROR)
        if isinstance(value, dict) and classify(value) is MessageType.INVALID:
            return await reply_error(send, 400, "Invalid Request: not a JSON-RPC message")
        if headers.get("mcp-protocol-version") in MODERN or (isinstance(value, dict) and _body_version(value) is not None):
            return await self._stateless(value, receive, send, headers)
        await self._in_session(value, receive, send, headers)

    async def _stateless(self, value: Any, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
        typ = classify(value) if isinstance(value, dict) else MessageType.INVALID
        if typ is MessageType.NOTIFICATION:
            return await respond(send, 202)
        if typ is not MessageType.REQUEST:
            return await reply_error(send, 400, "Body must be a single JSON-RPC request or notification object")
        reason = header_mismatch(value, headers, self.params)
        if reason is not None:
            return await reply_error(send, 400, reason, HEADER_MISMATCH, value["id"])
        asked = _body_version(value)
        if asked not in MODERN:
            data = {"supported": list(MODERN), "requested": asked}
            return await reply_error(send, 400, "Unsupported protocol version", UNSUPPORTED_VERSION, value["id"], data)
        engine = ReplayEngine(self.index, self.config)
        engine.pass_ = self.stateless
        self.stateless_used = True
        if self.stateless_faults is not None:
            steps = self.stateless_faults.apply(value, engine.receive(value))
            return await http_faults.answer(self, steps, value["id"], None, receive, send, modern=True)
        await self._answer(engine.receive(value), value["id"], None, receive, send, modern=True)

    async def _in_session(self, value: Any, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_VERSIONS:
            supported = ", ".join(HANDSHAKE_VERSIONS)
            return await reply_error(send, 400, f"Bad Request: Unsupported protocol version: {version} (supported versions: {supported})")
        sid = headers.get(SESSION_HEADER)
        init = isinstance(value, dict) and value.get("method") == "initialize" and classify(value) is MessageType.REQUEST
        session = self.sessions.get(sid) if sid is not None else None
        if sid is not None and session is None:
            return await reply_error(send, 404, "Not Found: Invalid or expired session ID")
        if session is None and not self.plan.sessions:  # the recorded server minted no session ids
            session = self.shared = self.shared or Session(None, ReplayEngine(self.index, self.config))
        elif session is None and init:
            session = Session(None, ReplayEngine(self.index, self.config))
        elif session is None:
            return await reply_error(send, 400, "Bad Request: Missing session ID")
        assert session is not None
        if self.faults and session.faults is None:
            session.faults = FaultPlan(self.faults, http=True)
        outputs = session.engine.receive(value)
        steps = session.faults.apply(value, outputs) if session.faults is not None and not isinstance(value, list) else None
        if init and session.id is None and self.plan.sessions and _succeeded(outputs):
            session.id = uuid.uuid4().hex
            self.sessions[session.id] = session
        if isinstance(value, list):  # a 2025-03-26 batch: its answers as one JSON array
            answers = [o for o in outputs if isinstance(o, Send) and isinstance(o.msg, list)]
            self.route([o for o in outputs if o not in answers], session)
            if answers:
                return await respond(send, 200, orjson.dumps(answers[0].msg), [("content-type", JSON)])
        if not isinstance(value, dict) or classify(value) is not MessageType.REQUEST:
            if steps is not None:
                http_faults.route_steps(self, steps, session)
            else:
                self.route(outputs, session)
            status, ctype, body = self.plan.accepted
            return await respond(send, status, body, [("content-type", ctype)] if ctype else [])
        modern = self.modern_only and not session.engine.legacy_client
        if steps is not None:
            return await http_faults.answer(self, steps, value["id"], session, receive, send, modern=modern)
        await self._answer(outputs, value["id"], session, receive, send, modern=modern)

    async def _answer(
        self, outputs: list[Output], rid: Any, session: Session | None, receive: Receive, send: SendFn, *, modern: bool,
    ) -> None:  # fmt: skip
        """Answers a request: JSON when one recorded JSON response is all there is, else an event stream."""
        key = id_key(rid)
        mine = [o for o in outputs if isinstance(o, Send) and o.request_id is not None and id_key(o.request_id) == key]
        head = self.plan.head(mine[0]) if mine else None
        extra = [(SESSION_HEADER, session.id)] if session is not None and session.id else []
        if len(mine) == 1 and mine[0].final and not (head is not None and head.sse):
            self.route([o for o in outputs if o is not mine[0]], session)
            if self.speed is not None and mine[0].after > 0:
                await anyio.sleep(mine[0].after / self.speed)
            status = json_status(mine[0], head, modern)
            return await respond(send, status, orjson.dumps(mine[0].msg), [("content-type", JSON), *extra])
        outbox = Outbox()
        if session is not None:
            session.streams[key] = outbox
        self.route(outputs, session, (key, outbox))
        if (
            mine and not mine[-1].final and mine[-1].exchange is not None and mine[-1].exchange.response is None
            and head is not None and head.end == "end"
        ):
            outbox.close()  # recorded without an answer, and the server closed the stream
        try:
            await stream_sse(receive, send, outbox, extra, self.stopping)
        finally:
            outbox.close()
            if session is not None and session.streams.get(key) is outbox:
                del session.streams[key]

    def route(self, outputs: list[Output], session: Session | None, own: tuple[tuple[str, Any], Outbox] | None = None) -> None:
        """Puts each message on its stream: its request's, else the session's GET stream."""
        now = anyio.current_time()
        for out in outputs:
            if isinstance(out, Note):
                self.note(out)
                continue
            due = now + out.after / self.speed if self.speed is not None else 0.0
            key = id_key(out.request_id) if out.request_id is not None else None
            if own is not None and key == own[0]:
                target: Outbox | None = own[1]
            elif session is None:
                continue  # stateless: nothing outside the request's own stream
            elif session.single_stream or key is None:
                target = session.get
            else:
                target = session.streams.get(key)
            if target is None:
                continue  # its stream is gone (the client closed it)
            target.put(sse_event(orjson.dumps(out.msg)), due)
            if out.final and (session is None or target is not session.get):
                target.close()

    # -- GET and DELETE ------------------------------------------------------------------

    async def _get(self, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
        if self.modern_only or self.plan.get_status == 405:
            return await respond(send, 405, b"", [("allow", "POST" if self.modern_only else "POST, DELETE")])
        if not accepts(headers, json=False, sse=True):
            return await reply_error(send, 406, "Not Acceptable: Client must accept text/event-stream")
        session = await self._session_of(send, headers)
        if session is None:
            return
        if session.get_open:
            return await reply_error(send, 409, "Conflict: Only one SSE stream is allowed per session")
        session.get_open = True
        try:
            await stream_sse(receive, send, session.get, [(SESSION_HEADER, str(session.id))], self.stopping)
        finally:
            session.get_open = False

    async def _delete(self, send: SendFn, headers: dict[str, str]) -> None:
        if self.modern_only or self.plan.delete_status == 405:
            return await respond(send, 405, b"", [("allow", "POST" if self.modern_only else "GET, POST")])
        session = await self._session_of(send, headers)
        if session is None:
            return
        self.end_session(session)
        await respond(send, self.plan.delete_status, b"", [("content-type", JSON)])

    async def _session_of(self, send: SendFn, headers: dict[str, str]) -> Session | None:
        sid = headers.get(SESSION_HEADER)
        if sid is None:
            await reply_error(send, 400, "Bad Request: Missing session ID")
            return None
        session = self.sessions.get(sid)
        if session is None:
            await reply_error(send, 404, "Not Found: Invalid or expired session ID")
        return session

    def end_session(self, session: Session) -> None:
        if session.id is not None and self.sessions.pop(session.id, None) is session:
            session.end()
            left = unplayed(session)
            if left:
                self.ended.append(left)

    # -- the end -------------------------------------------------------------------------

    def unplayed_report(self) -> str | None:
        """Strict mode: the recorded requests some session (or the stateless clients) never made."""
        live = [unplayed(s) for s in [*self.sessions.values(), *([self.shared] if self.shared else [])]]
        reports = [unplayed_report(self.cassette.name, left) for left in [*self.ended, *live] if left]
        if self.stateless_used and self.index.modern:
            left = [e.exchange for e in self.stateless.unplayed()]
            if left:
                reports.append(unplayed_report(self.cassette.name, left))
        return "\n".join(reports) if reports else None


def _body_version(value: dict[str, Any]) -> str | None:
    version = request_meta(value).get(META_PROTOCOL_VERSION)
    return version if isinstance(version, str) else None


def _succeeded(outputs: list[Output]) -> bool:
    return any(isinstance(o, Send) and o.final and isinstance(o.msg, dict) and "result" in o.msg for o in outputs)
