"""Fault rules carried out over HTTP (`mcptape serve --faults`). Part of the HTTP shell.

`server_http` hands each request's fault steps (`faults.FaultPlan.apply`) here. Without a
fault on the request, the answer goes back through `HttpReplayApp._answer` untouched.
Otherwise:

- `status`: the request is answered with that status (and `Retry-After`) before anything
  else, as a rate limiter or a failing gateway does; the body is `body` (JSON if it parses,
  else text) or the status's reason phrase.
- `reset`: the TCP connection is reset (SO_LINGER 0, then abort) without an answer.
- `disconnect`: the answer is an event stream that carries what came before the response
  and then ends without it; `truncate` ends it in the middle of the response's event.
- `drop`: the answer's stream stays open and silent until the client gives up.
- `malformed`/`invalid`: the garbage is the JSON body, or an SSE event's data.
- `error`/`tool_error`/`delay`: the recorded framing (JSON or SSE) with the new answer, later.
"""

from __future__ import annotations

import math
import socket
import struct
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

import anyio
import orjson

from mcptape.wire.jsonrpc import NOT_JSON, decode, id_key

from .faults import Deliver, Hangup, Status, Step
from .http_asgi import JSON, Outbox, Receive, SendFn, respond, stream_sse
from .http_plan import json_status
from .outputs import Note, Output

if TYPE_CHECKING:
    from .http_sessions import Session
    from .server_http import HttpReplayApp

SESSION_HEADER = "mcp-session-id"


def _plain(step: Step) -> bool:
    return isinstance(step, Note) or (isinstance(step, Deliver) and step.raw is None and not step.delay and step.fault is None)


async def answer(
    app: HttpReplayApp, steps: list[Step], rid: Any, session: Session | None, receive: Receive, send: SendFn, *, modern: bool,
) -> None:  # fmt: skip
    """Answers one request from its fault steps (see the module docstring)."""
    if all(_plain(s) for s in steps):
        outputs: list[Output] = [s if isinstance(s, Note) else s.send for s in steps if isinstance(s, (Note, Deliver))]
        return await app._answer(outputs, rid, session, receive, send, modern=modern)
    key = id_key(rid)
    mine = [s for s in steps if not isinstance(s, Note) and _request_of(s) == key]
    route_steps(app, [s for s in steps if not any(s is m for m in mine)], session)
    extra = [(SESSION_HEADER, session.id)] if session is not None and session.id else []
    status = next((s for s in mine if isinstance(s, Status)), None)
    hangup = next((s for s in mine if isinstance(s, Hangup)), None)
    if status is not None:
        await anyio.sleep(status.delay)
        return await respond(send, status.status, *_status_body(status, extra))
    if hangup is not None and hangup.reset:
        await anyio.sleep(hangup.delay)
        return await reset(send)
    delivers = [s for s in mine if isinstance(s, Deliver)]
    head = app.plan.head(delivers[0].send) if delivers else None
    one = delivers[0] if len(delivers) == 1 else None
    if one is not None and one.send.final and hangup is None and not (head is not None and head.sse) and one.fault != "truncate":
        await anyio.sleep(_due(app, one, 0.0))
        body = one.raw if one.raw is not None else orjson.dumps(one.send.msg)
        return await respond(send, json_status(one.send, head, modern), body, [("content-type", JSON), *extra])
    outbox = Outbox()
    if session is not None:
        session.streams[key] = outbox
    now = anyio.current_time()
    for step in delivers:
        _put(app, outbox, step, now)
    if delivers and delivers[-1].send.final:
        outbox.close()  # the answer, or the garbage that stands for it, is the stream's last event
    if hangup is not None:
        outbox.put(b"", now + hangup.delay)  # nothing to write: only the time the stream ends at
        outbox.close()
    try:
        await stream_sse(receive, send, outbox, extra, app.stopping)
    finally:
        outbox.close()
        if session is not None and session.streams.get(key) is outbox:
            del session.streams[key]


def route_steps(app: HttpReplayApp, steps: list[Step], session: Session | None) -> None:
    """Like `HttpReplayApp.route` for steps: messages on their request's stream (or the GET stream)."""
    now = anyio.current_time()
    for step in steps:
        if _plain(step):
            app.route([step] if isinstance(step, Note) else [step.send], session)  # type: ignore[union-attr]
            continue
        if session is None:
            continue  # stateless: nothing outside the request's own stream
        key = _request_of(step)
        target = session.get if session.single_stream or key is None else session.streams.get(key)
        if target is None:
            continue
        if isinstance(step, Deliver):
            _put(app, target, step, now)
        else:  # too late for a status or a reset: the request's stream is already open, so end it
            if isinstance(step, Hangup) and step.delay:
                target.put(b"", now + step.delay)
            if target is not session.get:
                target.close()


def _request_of(step: Step) -> Any:
    if isinstance(step, Hangup):
        return id_key(step.request_id) if step.request_id is not None else None
    if isinstance(step, (Deliver, Status)):
        return id_key(step.send.request_id) if step.send.request_id is not None else None
    return None


def _due(app: HttpReplayApp, step: Deliver, now: float) -> float:
    recorded = step.send.after / app.speed if app.speed is not None else 0.0
    return now + recorded + step.delay


def _put(app: HttpReplayApp, outbox: Outbox, step: Deliver, now: float) -> None:
    data = step.raw if step.raw is not None else orjson.dumps(step.send.msg)
    due = _due(app, step, now)
    if step.fault == "truncate":
        outbox.put(b"event: message\ndata: " + data, due)  # no blank line: the event never completes
        outbox.close()
        return
    outbox.put(b"event: message\ndata: " + data + b"\n\n", due)
    if step.send.final and step.raw is None and not outbox.closed:
        outbox.close()


def _status_body(status: Status, extra: list[tuple[str, str]]) -> tuple[bytes, list[tuple[str, str]]]:
    headers = list(extra)
    if status.retry_after is not None:
        headers.append(("retry-after", str(math.ceil(status.retry_after))))
    if status.body is None:
        phrase = HTTPStatus(status.status).phrase if status.status in HTTPStatus._value2member_map_ else "Error"
        return phrase.encode(), [("content-type", "text/plain; charset=utf-8"), *headers]
    is_json = decode(status.body) is not NOT_JSON
    return status.body.encode(), [("content-type", JSON if is_json else "text/plain; charset=utf-8"), *headers]


async def reset(send: SendFn) -> None:
    """Resets the client's TCP connection (RST, no answer): uvicorn's send is bound to its request cycle."""
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        raise ConnectionResetError("mcptape fault: reset (the ASGI server does not expose its transport)")
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    for _ in range(10):  # let uvicorn see the connection lost, so it does not log a response never started
        if getattr(cycle, "disconnected", True):
            break
        await anyio.sleep(0)
