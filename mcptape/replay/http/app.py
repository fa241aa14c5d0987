"""The HTTP replay shell: a cassette served as an MCP server over HTTP (`mcptape serve`).

A plain ASGI app (`HttpReplayApp`) run by uvicorn (`run`); the replay engine decides what
to answer, the session's fault plan the steps that carry it out, `plan.HttpPlan` how the
recording answered it (JSON or SSE, status), `checks` what a real server rejects first, and
`delivery.Router` puts the steps on the wire. Streamable HTTP at the recorded path (default `/mcp`):

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

`sessions` holds the per-session state, `legacy` serves the 2024-11-05 HTTP+SSE transport
when the cassette was recorded on it, `run` runs the app under uvicorn.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import anyio
import orjson

from mcptape.cassette import Cassette
from mcptape.versions import HANDSHAKE_VERSIONS, META_PROTOCOL_VERSION, MODERN
from mcptape.wire.jsonrpc import (
    JSONRPC_INVALID_REQUEST,
    JSONRPC_PARSE_ERROR,
    MCP_HEADER_MISMATCH,
    MCP_UNSUPPORTED_PROTOCOL_VERSION,
    NOT_JSON,
    MessageType,
    classify,
    decode,
    invalid_payload,
    parse_error_message,
    request_meta,
    usable_id,
)

from ..engine import Note, ReplayConfig, ReplayEngine, Send
from ..faults import parse_rules
from ..housekeeping import Housekeeping
from ..index import ReplayIndex
from ..outputs import Status, Step
from ..report import UnplayedReport
from .asgi import (
    JSON,
    Disconnected,
    Receive,
    Scope,
    SendFn,
    header_dict,
    lifespan,
    read_body,
    reply_error,
    respond,
    rpc_error,
    stream_sse,
)
from .checks import Guard, ParamHeaders, accepts, header_mismatch, is_json
from .delivery import SESSION_HEADER, Router
from .legacy import LegacyServer
from .plan import HttpPlan
from .sessions import ClientSession, SessionTable, StatelessPass

DEFAULT_MAX_BODY = 4 * 1024 * 1024
"""Request bodies above this many bytes are answered 413 (the SDK servers' limit)."""
NoteHandler = Callable[[Note], None]


def _to_stderr(note: Note) -> None:
    text = (
        note.text
        if note.text.startswith("mcptape")
        else f"mcptape serve: {note.level}: {note.text}"
    )
    print(text, file=sys.stderr, flush=True)


class HttpReplayApp:
    """The ASGI application; see the module docstring."""

    def __init__(
        self, cassette: Cassette, config: ReplayConfig | None = None, *, host: str = "127.0.0.1", allowed_hosts: Iterable[str] = (),
        speed: float | None = None, max_body: int = DEFAULT_MAX_BODY, on_note: NoteHandler | None = _to_stderr,
        quiet: bool = False, faults: Any = (),
    ) -> None:  # fmt: skip
        self.faults = parse_rules(faults)
        """Fault rules (overlay rules): each session counts its own; 2026-07-28 stateless requests share one count."""
        self.cassette = cassette
        config = (config or ReplayConfig()).labelled("mcptape serve")
        self.config = replace(config.with_faults(self.faults), http=True)
        self.index = ReplayIndex(cassette, self.config.match)
        self.plan = HttpPlan(cassette)
        self.guard = Guard(host, allowed_hosts)
        self.params = ParamHeaders(
            [
                ex.result
                for ex, method in zip(self.index.session.exchanges, self.index.methods, strict=True)
                if method == "tools/list"
            ]
        )
        self.max_body = max_body
        self.on_note = on_note
        self.quiet = quiet
        self.router = Router(self.plan, speed, self.note)
        self.sessions = SessionTable(self.index, self.config)
        self.legacy = (
            LegacyServer(self.router, self.sessions, max_body) if self.plan.legacy_sse else None
        )
        self.stateless = StatelessPass(self.index, self.config.allow_repeats)
        self.stateless_overlay = ReplayEngine(self.index, self.config).overlay
        """The stateless requests' one overlay: one count of its rules' hits (None: no rules)."""
        self.stateless_housekeeping = Housekeeping()
        """The stateless requests' one session: its notes said once, its pings counted."""
        self.stateless_used = False
        self.modern_only = self.index.modern and not self.index.legacy
        self._mints = self.plan.sessions or self.modern_only
        """Handshake clients get session ids: as recorded, or on a 2026-07-28 cassette (whose
        handshake mcptape makes up: each legacy client then needs its own session, or two at
        once would share one engine and one client's initialize would reset the other's)."""

    @property
    def stopping(self) -> anyio.Event:
        """Set when the server shuts down: every open stream ends."""
        return self.router.stopping

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
            body = rpc_error(
                JSONRPC_INVALID_REQUEST,
                f"Forbidden: Origin {headers.get('origin')!r} is not allowed",
            )
            await respond(send, 403, body, [("content-type", JSON)])
            return
        try:
            if self.legacy is not None:
                await self.legacy.handle(scope, receive, send, headers)
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
                await respond(
                    send,
                    405,
                    rpc_error(JSONRPC_INVALID_REQUEST, "Method Not Allowed"),
                    [("content-type", JSON), ("allow", allow)],
                )
        except Disconnected:
            return

    # -- POST ----------------------------------------------------------------------------

    async def _post(self, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
        if not accepts(headers, json=True, sse=True):
            return await reply_error(
                send,
                406,
                "Not Acceptable: Client must accept both application/json and text/event-stream",
            )
        if not is_json(headers):
            return await reply_error(
                send, 415, "Unsupported Media Type: Content-Type must be application/json"
            )
        body = await read_body(receive, headers, self.max_body)
        if body is None:
            return await reply_error(
                send, 413, f"Payload Too Large: the request body is over {self.max_body} bytes"
            )
        value = decode(body)
        if value is NOT_JSON:
            return await reply_error(send, 400, parse_error_message(body), JSONRPC_PARSE_ERROR)
        problem = invalid_payload(value)
        if problem is not None:  # answered here, with a status that ends the exchange
            return await reply_error(send, 400, problem, msg_id=usable_id(value))
        kind = (
            classify(value) if isinstance(value, dict) else None
        )  # the one classification of this message
        if headers.get("mcp-protocol-version") in MODERN or (
            isinstance(value, dict) and _body_version(value) is not None
        ):
            return await self._stateless(value, kind, receive, send, headers)
        await self._in_session(value, kind, receive, send, headers)

    async def _stateless(
        self,
        value: Any,
        kind: MessageType | None,
        receive: Receive,
        send: SendFn,
        headers: dict[str, str],
    ) -> None:
        if kind is MessageType.NOTIFICATION:
            return await respond(send, 202)
        if kind is not MessageType.REQUEST:
            return await reply_error(
                send, 400, "Body must be a single JSON-RPC request or notification object"
            )
        reason = header_mismatch(value, headers, self.params)
        if reason is not None:
            return await reply_error(send, 400, reason, MCP_HEADER_MISMATCH, value["id"])
        asked = _body_version(value)
        if asked not in MODERN:
            data = {"supported": list(MODERN), "requested": asked}
            return await reply_error(
                send,
                400,
                "Unsupported protocol version",
                MCP_UNSUPPORTED_PROTOCOL_VERSION,
                value["id"],
                data,
            )
        engine = ReplayEngine(
            self.index,
            self.config,
            shared_pass=self.stateless,
            shared_housekeeping=self.stateless_housekeeping,
            shared_overlay=self.stateless_overlay,
        )
        self.stateless_used = True
        steps = engine.receive(value, kind)
        await self.router.answer(steps, value["id"], None, receive, send, modern=True)

    async def _in_session(
        self,
        value: Any,
        kind: MessageType | None,
        receive: Receive,
        send: SendFn,
        headers: dict[str, str],
    ) -> None:
        init = kind is MessageType.REQUEST and value.get("method") == "initialize"
        session = await self._session_for(init, send, headers)
        if session is None:
            return
        steps = session.engine.receive(value, kind)
        if init and session.id is None and self._mints and _succeeded(steps):
            self.sessions.register(session)
        if isinstance(
            value, list
        ):  # a 2025-03-26 batch: its answers as one JSON array, faults left out
            answers = [s for s in steps if isinstance(s, Send) and isinstance(s.msg, list)]
            self.router.route([s for s in steps if not any(s is a for a in answers)], session)
            if answers:
                return await respond(
                    send, 200, orjson.dumps(answers[0].msg), [("content-type", JSON)]
                )
            return await self._accepted(send)
        if kind is not MessageType.REQUEST:
            self.router.route(steps, session)
            return await self._accepted(send)
        modern = self.modern_only and not session.engine.legacy_client
        await self.router.answer(steps, value["id"], session, receive, send, modern=modern)

    async def _session_for(
        self, init: bool, send: SendFn, headers: dict[str, str]
    ) -> ClientSession | None:
        """The session a handshake-era POST belongs to, a new one for an `initialize`, else None (answered)."""
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_VERSIONS:
            supported = ", ".join(HANDSHAKE_VERSIONS)
            await reply_error(
                send,
                400,
                f"Bad Request: Unsupported protocol version: {version} (supported versions: {supported})",
            )
            return None
        sid = headers.get(SESSION_HEADER)
        if sid is not None:
            session = self.sessions.get(sid)
            if session is None:
                await reply_error(send, 404, "Not Found: Invalid or expired session ID")
            return session
        if not self._mints:  # the recorded server minted no session ids
            return self.sessions.shared_session()
        if init:
            return self.sessions.new()
        await reply_error(send, 400, "Bad Request: Missing session ID")
        return None

    async def _accepted(self, send: SendFn) -> None:
        status, ctype, body = self.plan.accepted
        await respond(send, status, body, [("content-type", ctype)] if ctype else [])

    # -- GET and DELETE ------------------------------------------------------------------

    async def _get(self, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
        if self.modern_only or self.plan.get_status == 405:
            return await respond(
                send, 405, b"", [("allow", "POST" if self.modern_only else "POST, DELETE")]
            )
        if not accepts(headers, json=False, sse=True):
            return await reply_error(
                send, 406, "Not Acceptable: Client must accept text/event-stream"
            )
        session = await self._session_of(send, headers)
        if session is None:
            return
        if session.get_open:
            return await reply_error(
                send, 409, "Conflict: Only one SSE stream is allowed per session"
            )
        session.get_open = True
        try:
            await stream_sse(
                receive, send, session.get, [(SESSION_HEADER, str(session.id))], self.stopping
            )
        finally:
            session.get_open = False

    async def _delete(self, send: SendFn, headers: dict[str, str]) -> None:
        if self.modern_only or self.plan.delete_status == 405:
            return await respond(
                send, 405, b"", [("allow", "POST" if self.modern_only else "GET, POST")]
            )
        session = await self._session_of(send, headers)
        if session is None:
            return
        self.sessions.end(session)
        await respond(send, self.plan.delete_status, b"", [("content-type", JSON)])

    async def _session_of(self, send: SendFn, headers: dict[str, str]) -> ClientSession | None:
        sid = headers.get(SESSION_HEADER)
        if sid is None:
            await reply_error(send, 400, "Bad Request: Missing session ID")
            return None
        session = self.sessions.get(sid)
        if session is None:
            await reply_error(send, 404, "Not Found: Invalid or expired session ID")
        return session

    # -- the end -------------------------------------------------------------------------

    def unplayed_report(self) -> str | None:
        """Strict mode: the recorded requests some session (or the stateless clients) never made."""
        reports = [
            UnplayedReport.of(self.cassette, left).text() for left in self.sessions.unplayed()
        ]
        if self.stateless_used and self.index.modern:
            left = [e.exchange for e in self.stateless.unplayed()]
            if left:
                reports.append(UnplayedReport.of(self.cassette, left).text())
        return "\n".join(reports) if reports else None


def _body_version(value: dict[str, Any]) -> str | None:
    version = request_meta(value).get(META_PROTOCOL_VERSION)
    return version if isinstance(version, str) else None


def _succeeded(steps: Sequence[Step]) -> bool:
    """The handshake succeeded: its recorded answer is a result (whatever an overlay rule did
    to its delivery, as long as a `Send` or `Status` still carries it)."""
    return any(
        isinstance(o, Send) and o.final and isinstance(o.msg, dict) and "result" in o.msg
        for o in (s.send if isinstance(s, Status) else s for s in steps)
    )
