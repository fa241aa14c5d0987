"""ASGI plumbing for the HTTP replay server: read a bounded body, answer, stream SSE.

Plain ASGI (no framework): the replay decides every status, header and byte itself.
An `Outbox` is the queue of one event stream (a POST's SSE answer or a GET stream): the
server puts `(due, data)` pairs in as the engine produces them, `stream_sse` writes them at
their due time (anyio clock; 0 is "now") until the outbox is closed, the client goes away,
or the server shuts down.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

import anyio
import orjson
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcptape.wire.jsonrpc import JSONRPC_INVALID_REQUEST

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
SendFn = Callable[[dict[str, Any]], Awaitable[None]]

JSON = "application/json"
SSE = "text/event-stream"
KEEPALIVE = 15.0
"""Seconds of silence after which an open event stream gets a comment line."""
SSE_HEADERS = (("cache-control", "no-cache, no-transform"), ("x-accel-buffering", "no"))


class Disconnected(Exception):
    """The client went away before its request body was complete."""


def header_dict(scope: Scope) -> dict[str, str]:
    """Request headers with lowercase names; repeated fields joined with ", "."""
    out: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


async def read_body(receive: Receive, headers: dict[str, str], limit: int) -> bytes | None:
    """The whole request body, or None when it is larger than `limit` bytes.

    Raises:
        Disconnected: the client left mid-body.
    """
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        msg = await receive()
        if msg["type"] == "http.disconnect":
            raise Disconnected
        body = msg.get("body", b"")
        size += len(body)
        if size > limit:
            return None
        chunks.append(body)
        if not msg.get("more_body", False):
            return b"".join(chunks)


def _encode(headers: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    return [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers]


async def respond(
    send: SendFn, status: int, body: bytes = b"", headers: Iterable[tuple[str, str]] = ()
) -> None:
    await send({"type": "http.response.start", "status": status, "headers": _encode(headers)})
    await send({"type": "http.response.body", "body": body})


async def reply_error(
    send: SendFn,
    status: int,
    message: str,
    code: int = JSONRPC_INVALID_REQUEST,
    msg_id: Any = None,
    data: Any = None,
) -> None:
    """An HTTP error status with a JSON-RPC error body (code -32600 unless told otherwise)."""
    await respond(send, status, rpc_error(code, message, msg_id, data), [("content-type", JSON)])


async def lifespan(receive: Receive, send: SendFn, stopping: anyio.Event) -> None:
    """The ASGI lifespan protocol: nothing to start; shutting down sets `stopping`."""
    while True:
        msg = await receive()
        if msg["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif msg["type"] == "lifespan.shutdown":
            stopping.set()
            await send({"type": "lifespan.shutdown.complete"})
            return


def rpc_error(code: int, message: str, msg_id: Any = None, data: Any = None) -> bytes:
    """A JSON-RPC error response body (id null when the request's id is unknown)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return orjson.dumps({"jsonrpc": "2.0", "id": msg_id, "error": error})


class Outbox:
    """One event stream's queue: `(due, bytes)` in order; `close()` ends the stream."""

    def __init__(self) -> None:
        self._send: MemoryObjectSendStream[tuple[float, bytes]]
        self._recv: MemoryObjectReceiveStream[tuple[float, bytes]]
        self._send, self._recv = anyio.create_memory_object_stream[tuple[float, bytes]](math.inf)
        self.closed = False

    def put(self, data: bytes, due: float = 0.0) -> None:
        if not self.closed:
            self._send.send_nowait((due, data))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._send.close()

    async def drain(self, write: Callable[[bytes], Awaitable[None]]) -> None:
        """Writes each queued event at its due time until the outbox is closed.

        Cancelling it leaves what was not written queued, for the next reader (a GET stream
        the client reopens).
        """
        while True:
            item: tuple[float, bytes] | None = None
            with anyio.move_on_after(KEEPALIVE):
                try:
                    item = await self._recv.receive()
                except anyio.EndOfStream:
                    return
            if item is None:
                await write(b": keep-alive\n\n")  # an idle stream stays open through proxies
                continue
            delay = item[0] - anyio.current_time()
            if delay > 0:
                await anyio.sleep(delay)
            await write(item[1])


async def stream_sse(
    receive: Receive, send: SendFn, outbox: Outbox, headers: Iterable[tuple[str, str]], stopping: anyio.Event,
) -> bool:  # fmt: skip
    """Answers with an event stream fed by `outbox`. Returns False if the client closed it first."""
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": _encode([("content-type", SSE), *SSE_HEADERS, *headers]),
        }
    )

    async def write(data: bytes) -> None:
        await send({"type": "http.response.body", "body": data, "more_body": True})

    finished = False
    client_left = False
    async with anyio.create_task_group() as tg:

        async def watch_client() -> None:
            nonlocal client_left
            while (await receive())["type"] != "http.disconnect":
                pass
            client_left = not finished
            tg.cancel_scope.cancel()

        async def watch_server() -> None:
            await stopping.wait()
            tg.cancel_scope.cancel()

        tg.start_soon(watch_client)
        tg.start_soon(watch_server)
        await outbox.drain(write)
        finished = True
        tg.cancel_scope.cancel()
    with anyio.CancelScope(shield=True):
        await send({"type": "http.response.body", "body": b"", "more_body": False})
    return not client_left
