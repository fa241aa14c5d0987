"""The legacy HTTP+SSE transport (2024-11-05) for cassettes recorded on it. Part of the HTTP shell.

`GET <sse path>` (as recorded, usually `/sse`) opens a session: a fresh session id, its own
engine, and an event stream whose first event is `endpoint`, the URI to POST to (the
recorded endpoint path with the recorded session query parameter, e.g.
`/messages/?session_id=<new id>`). Each POST there is answered as recorded (202
`Accepted`) and everything the engine answers goes on that session's stream as
`event: message`. Closing the stream ends the session. Statuses for bad POSTs are those of
the SDK's transport: 400 without a session id, 404 for an unknown one, 400 for a body that
is not JSON-RPC, 413 for one too large.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode

from mcptape.wire.jsonrpc import NOT_JSON, decode

from .engine import ReplayEngine
from .http_asgi import Receive, Scope, SendFn, read_body, respond, sse_event, stream_sse
from .http_sessions import Session

if TYPE_CHECKING:
    from .server_http import HttpReplayApp

TEXT = [("content-type", "text/plain; charset=utf-8")]


async def handle_legacy(app: HttpReplayApp, scope: Scope, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
    plan = app.plan
    path, method = scope["path"], scope["method"]
    if path == plan.sse_path and method == "GET":
        await _open(app, receive, send)
    elif path == plan.endpoint and method == "POST":
        await _post(app, scope, receive, send, headers)
    elif path in (plan.sse_path, plan.endpoint):
        await respond(send, 405, b"Method Not Allowed", [*TEXT, ("allow", "GET" if path == plan.sse_path else "POST")])
    else:
        await respond(send, 404, b"Not Found", TEXT)


async def _open(app: HttpReplayApp, receive: Receive, send: SendFn) -> None:
    session = Session(uuid.uuid4().hex, ReplayEngine(app.index, app.config))
    session.single_stream = True
    assert session.id is not None
    app.sessions[session.id] = session
    query = urlencode({app.plan.session_param: session.id})
    session.get.put(sse_event(f"{app.plan.endpoint}?{query}", "endpoint"))
    session.get_open = True
    try:
        await stream_sse(receive, send, session.get, [], app.stopping)
    finally:
        app.end_session(session)


async def _post(app: HttpReplayApp, scope: Scope, receive: Receive, send: SendFn, headers: dict[str, str]) -> None:
    query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
    sid = query.get(app.plan.session_param)
    if sid is None:
        return await respond(send, 400, f"{app.plan.session_param} is required".encode(), TEXT)
    session = app.sessions.get(sid)
    if session is None:
        return await respond(send, 404, b"Could not find session", TEXT)
    body = await read_body(receive, headers, app.max_body)
    if body is None:
        return await respond(send, 413, b"Payload Too Large", TEXT)
    value = decode(body)
    if value is NOT_JSON or not isinstance(value, (dict, list)):
        return await respond(send, 400, b"Could not parse message", TEXT)
    app.route(session.engine.receive(value), session)
    status, ctype, text = app.plan.accepted
    await respond(send, status, text, [("content-type", ctype)] if ctype else [])
