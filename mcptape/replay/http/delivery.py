"""The HTTP shell's one delivery path: the steps an engine returns (its overlay's, `overlay.Overlay.apply`) on the wire.

`Router.answer` answers one request from its steps; `Router.route` puts every other step on
its stream (its request's event stream, else the session's GET stream). Without overlay rules the
steps are the engine's `Send`s as they are: JSON when one recorded JSON response is all there is, else an
event stream, as recorded. With the wire faults of overlay (fault) rules:

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
from collections.abc import Awaitable, Callable, Sequence
from http import HTTPStatus
from typing import Any

import anyio

from mcptape.wire import sse
from mcptape.wire.jsonrpc import NOT_JSON, decode, id_key

from ..faults import Hangup, Status, Step
from ..outputs import Note, Send
from .asgi import JSON, Outbox, Receive, SendFn, respond, stream_sse
from .plan import Head, HttpPlan, json_status
from .reset import reset as reset_connection
from .sessions import ClientSession

SESSION_HEADER = "mcp-session-id"
Reset = Callable[[SendFn], Awaitable[None]]
"""Resets the TCP connection of the request whose `send` it is given (`reset.reset` under uvicorn)."""


class Router:
    """Carries out steps over HTTP for the app: see the module docstring."""

    def __init__(
        self,
        plan: HttpPlan,
        speed: float | None,
        note: Callable[[Note], None],
        reset: Reset = reset_connection,
    ) -> None:
        self.plan = plan
        self.speed = speed
        """None: instant; else a speed factor on the recorded delays."""
        self.note = note
        self.reset = reset
        self._stopping: anyio.Event | None = None

    @property
    def stopping(self) -> anyio.Event:
        """Set when the server shuts down: every open stream ends."""
        if self._stopping is None:
            self._stopping = anyio.Event()
        return self._stopping

    async def answer(
        self, steps: Sequence[Step], rid: Any, session: ClientSession | None, receive: Receive, send: SendFn, *, modern: bool,
    ) -> None:  # fmt: skip
        """Answers request `rid` from its steps; the other steps go on their streams first."""
        key = id_key(rid)
        mine = [s for s in steps if not isinstance(s, Note) and _request_of(s) == key]
        self.route([s for s in steps if not any(s is m for m in mine)], session)
        extra = [(SESSION_HEADER, session.id)] if session is not None and session.id else []
        hangup = next((s for s in mine if isinstance(s, Hangup)), None)
        if await self._refuse(mine, hangup, send, extra):
            return
        delivers = [s for s in mine if isinstance(s, Send)]
        head = self.plan.head(delivers[0]) if delivers else None
        if _as_json(delivers, hangup, head):
            return await self._json(delivers[0], head, send, extra, modern=modern)
        outbox = Outbox()
        if session is not None:
            session.streams[key] = outbox
        self._fill(outbox, delivers, hangup, recorded_end=head.end if head is not None else None)
        try:
            await stream_sse(receive, send, outbox, extra, self.stopping)
        finally:
            outbox.close()
            if session is not None and session.streams.get(key) is outbox:
                del session.streams[key]

    async def _json(
        self,
        one: Send,
        head: Head | None,
        send: SendFn,
        extra: list[tuple[str, str]],
        *,
        modern: bool,
    ) -> None:
        due = self._due(one, 0.0)
        if due > 0:
            await anyio.sleep(due)
        await respond(
            send, json_status(one, head, modern), one.encoded(), [("content-type", JSON), *extra]
        )

    async def _refuse(
        self,
        mine: Sequence[Step],
        hangup: Hangup | None,
        send: SendFn,
        extra: list[tuple[str, str]],
    ) -> bool:
        """A `status` or `reset` fault: the request gets that instead of any answer. True if so."""
        status = next((s for s in mine if isinstance(s, Status)), None)
        if status is not None:
            await anyio.sleep(status.delay)
            await respond(send, status.status, *_status_body(status, extra))
            return True
        if hangup is not None and hangup.reset:
            await anyio.sleep(hangup.delay)
            await self.reset(send)
            return True
        return False

    def _fill(
        self,
        outbox: Outbox,
        delivers: list[Send],
        hangup: Hangup | None,
        recorded_end: str | None,
    ) -> None:
        """Queues a request's own event stream: its messages, then its end."""
        now = anyio.current_time()
        for step in delivers:
            self._put(outbox, step, now, end_on_final=True)
        last = delivers[-1] if delivers else None
        if last is not None and last.final:
            outbox.close()  # the answer, or the garbage that stands for it, is the stream's last event
        elif (
            last is not None
            and last.exchange is not None
            and last.exchange.response is None
            and recorded_end == "end"
        ):
            outbox.close()  # recorded without an answer, and the server closed the stream
        if hangup is not None:
            outbox.put(
                b"", now + hangup.delay
            )  # nothing to write: only the time the stream ends at
            outbox.close()

    def route(self, steps: Sequence[Step], session: ClientSession | None) -> None:
        """Puts each step on its stream: its request's, else the session's GET stream."""
        now = anyio.current_time()
        for step in steps:
            if isinstance(step, Note):
                self.note(step)
                continue
            if session is None:
                continue  # stateless: nothing outside the request's own stream
            key = _request_of(step)
            target = (
                session.get if session.single_stream or key is None else session.streams.get(key)
            )
            if target is None:
                continue  # its stream is gone (the client closed it)
            if isinstance(step, Send):
                self._put(target, step, now, end_on_final=target is not session.get)
                continue
            # too late for a status or a reset: the request's stream is already open, so end it
            if isinstance(step, Hangup) and step.delay:
                target.put(b"", now + step.delay)
            if target is not session.get:
                target.close()

    def _due(self, step: Send, now: float) -> float:
        recorded = step.after / self.speed if self.speed is not None else 0.0
        return now + recorded + step.delay

    def _put(self, outbox: Outbox, step: Send, now: float, *, end_on_final: bool) -> None:
        data = step.encoded()
        due = self._due(step, now)
        if step.fault == "truncate":
            outbox.put(
                sse.encode(data, "message", complete=False), due
            )  # the event never completes
            outbox.close()
            return
        outbox.put(sse.encode(data, "message"), due)
        if end_on_final and step.final and step.raw is None:
            outbox.close()


def _as_json(delivers: list[Send], hangup: Hangup | None, head: Head | None) -> bool:
    """A request is answered with a JSON body when one final answer is all there is and it was recorded so."""
    if len(delivers) != 1 or hangup is not None or (head is not None and head.sse):
        return False
    return delivers[0].final and delivers[0].fault != "truncate"


def _request_of(step: Step) -> Any:
    if isinstance(step, (Hangup, Send)):
        return id_key(step.request_id) if step.request_id is not None else None
    if isinstance(step, Status):
        return id_key(step.send.request_id) if step.send.request_id is not None else None
    return None


def _status_body(
    status: Status, extra: list[tuple[str, str]]
) -> tuple[bytes, list[tuple[str, str]]]:
    headers = list(extra)
    if status.retry_after is not None:
        headers.append(("retry-after", str(math.ceil(status.retry_after))))
    if status.body is None:
        phrase = (
            HTTPStatus(status.status).phrase
            if status.status in HTTPStatus._value2member_map_
            else "Error"
        )
        return phrase.encode(), [("content-type", "text/plain; charset=utf-8"), *headers]
    is_json = decode(status.body) is not NOT_JSON
    return status.body.encode(), [
        ("content-type", JSON if is_json else "text/plain; charset=utf-8"),
        *headers,
    ]
