"""Resetting a request's TCP connection (the `reset` fault), the one place that knows uvicorn's insides.

ASGI has no message that resets a connection, and uvicorn hands an application no transport
or socket: there is no public way. uvicorn's `send` is a bound method of its per-request
cycle object, whose `transport` is the asyncio transport of the connection; this module
sets SO_LINGER 0 on its socket and aborts it, so the client sees an RST. If that shape
changes, the reset fails loudly (tests/e2e/test_faults_http.py
`test_reset_breaks_the_clients_transport` pins it, with the SDK's client).
"""

from __future__ import annotations

import socket
import struct

import anyio

from .asgi import SendFn


async def reset(send: SendFn) -> None:
    """Resets the client's TCP connection (RST, no answer).

    Raises:
        ConnectionResetError: the ASGI server is not one whose connection can be reached.
    """
    cycle = getattr(send, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        raise ConnectionResetError(
            "mcptape fault: reset (the ASGI server does not expose its transport)"
        )
    sock = transport.get_extra_info("socket")
    if sock is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()
    for _ in range(
        10
    ):  # let uvicorn see the connection lost, so it does not log a response never started
        if getattr(cycle, "disconnected", True):
            break
        await anyio.sleep(0)
