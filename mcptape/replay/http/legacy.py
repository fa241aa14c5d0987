"""The legacy HTTP+SSE transport (2024-11-05) for cassettes recorded on it. Part of the HTTP shell.

`GET <sse path>` (as recorded, usually `/sse`) opens a session: a fresh session id, its own
engine, and an event stream whose first event is `endpoint`, the URI to POST to (the
recorded endpoint path with the recorded session query parameter, e.g.
`/messages/?session_id=<new id>`). Each POST there is answered as recorded (202
`Accepted`) and everything the engine answers goes on that session's stream as
`event: message`. Closing the stream ends the session. Fault rules are not applied here. Statuses for bad POSTs are those of
the SDK's transport: 400 without a session id, 404 for an unknown one, 400 for a body that
is not JSON, 413 for one too large; a message that is not valid JSON-RPC (or an empty batch) is
answered 400 with its -32600 error as the body.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

from mcptape.wire import sse
from mcptape.wire.jsonrpc import (
    JSONRPC_INVALID_REQUEST,
    NOT_JSON,
    decode,
    invalid_payload,
    usable_id,
)

from .asgi import JSON, Receive, Scope, SendFn, read_body, respond, rpc_error, stream_sse
from .delivery import Router
from .sessions import SessionTable

TEXT = [("content-type", "text/plain; charset=utf-8")]


class LegacyServer:
    """The HTTP+SSE endpoints of one replay: its sessions' streams and their POSTs."""

    def __init__(self, router: Router, sessions: SessionTable, max_body: int) -> None:
        self.router = router
        self.plan = router.plan
        self.sessions = sessions
        self.max_body = max_body

    async def handle(
        self, scope: Scope, receive: Receive, send: SendFn, headers: dict[str, str]
    ) -> None:
        plan = self.plan
        path, method = scope["path"], scope["method"]
        if path == plan.sse_path and method == "GET":
            await self._open(receive, send)
        elif path == plan.endpoint and method == "POST":
            await self._post(scope, receive, send, headers)
        elif path in (plan.sse_path, plan.endpoint):
            await respond(
                send,
                405,
                b"Method Not Allowed",
                [*TEXT, ("allow", "GET" if path == plan.sse_path else "POST")],
            )
        else:
            await respond(send, 404, b"Not Found", TEXT)

    async def _open(self, receive: Receive, send: SendFn) -> None:
        session = self.sessions.new(faults=False, single_stream=True)
        sid = self.sessions.register(session)
        query = urlencode({self.plan.session_param: sid})
        session.get.put(sse.encode(f"{self.plan.endpoint}?{query}".encode(), "endpoint"))
        session.get_open = True
        try:
            await stream_sse(receive, send, session.get, [], self.router.stopping)
        finally:
            self.sessions.end(session)

    async def _post(
        self, scope: Scope, receive: Receive, send: SendFn, headers: dict[str, str]
    ) -> None:
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        sid = query.get(self.plan.session_param)
        if sid is None:
            return await respond(send, 400, f"{self.plan.session_param} is required".encode(), TEXT)
        session = self.sessions.get(sid)
        if session is None:
            return await respond(send, 404, b"Could not find session", TEXT)
        body = await read_body(receive, headers, self.max_body)
        if body is None:
            return await respond(send, 413, b"Payload Too Large", TEXT)
        value = decode(body)
        if value is NOT_JSON:
            return await respond(send, 400, b"Could not parse message", TEXT)
        problem = invalid_payload(value)
        if problem is not None:  # the -32600 error as the body: nothing goes on the stream
            error = rpc_error(JSONRPC_INVALID_REQUEST, problem, usable_id(value))
            return await respond(send, 400, error, [("content-type", JSON)])
        self.router.route(session.engine.receive(value), session)
        status, ctype, text = self.plan.accepted
        await respond(send, status, text, [("content-type", ctype)] if ctype else [])
