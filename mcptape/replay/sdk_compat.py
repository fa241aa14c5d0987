"""The `mcp` SDK's two lines, 1.x and 2.x, behind one face: the only module that tells them apart.

What mcptape needs from the SDK is small: the `SessionMessage` its transports carry, the way
its transports turn a JSON-RPC message (a dict, or a raw line) into one, and a connected
client session. 2.x has `mcp.Client` (given a transport or a URL, it connects and, in `mode`
"legacy" or "auto", runs the handshake) and its message types in the separate `mcp_types`
package. 1.x has no `Client`: a transport's streams go to a `ClientSession`, whose
`initialize()` runs the handshake, and its types are `mcp.types` (one `JSONRPCMessage`
root model). `SessionMessage` (1.8 and later) is the oldest API this needs, hence the `sdk`
extra's floor.

Everything else mcptape does with the SDK (`mcp.StdioServerParameters`, `stdio_client`, a
session's `list_tools`/`call_tool`, the `error` data of the exception a JSON-RPC error becomes)
is the same in both lines.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import timedelta
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from mcptape.errors import ConfigError
from mcptape.extras import installed

if not installed("mcp"):  # pragma: no cover - the SDK is an optional extra
    raise ImportError(
        "the in-process replay transport needs the mcp SDK (1.8 or later): pip install 'mcptape[sdk]'"
    )
# (an SDK that is there but fails to import raises its own error, naming what it lacked)
from mcp.shared.message import SessionMessage

__all__ = ["SDK_LINE", "SessionMessage", "connect", "message_of", "parsed_line"]


def _installed_version() -> str:
    try:
        return version("mcp")
    except PackageNotFoundError:  # an SDK on the path but not installed: 2.x has `mcp.Client`
        return "2" if hasattr(importlib.import_module("mcp"), "Client") else "1"


SDK_LINE: int = 1 if _installed_version().startswith("1") else 2
"""The installed SDK's major line: 2 (`mcp.Client`) or 1 (`ClientSession` alone)."""

_ONE_X_MODES = ("legacy", "auto")
"""`mode` values a 1.x session honours: it always runs the initialize handshake, which is what
"legacy" asks for and what "auto" falls back to."""

if SDK_LINE == 2:
    from mcp_types import jsonrpc_message_adapter

    def message_of(value: Any) -> SessionMessage:
        """A JSON-RPC message (a dict) as the SDK's transports hand it to a session."""
        return SessionMessage(jsonrpc_message_adapter.validate_python(value, by_name=False))

    def _from_line(raw: bytes) -> SessionMessage:
        return SessionMessage(jsonrpc_message_adapter.validate_json(raw, by_name=False))

else:
    _JSONRPCMessage: Any = importlib.import_module("mcp.types").JSONRPCMessage

    def message_of(value: Any) -> SessionMessage:
        """A JSON-RPC message (a dict) as the SDK's transports hand it to a session."""
        return SessionMessage(_JSONRPCMessage.model_validate(value))

    def _from_line(raw: bytes) -> SessionMessage:
        return SessionMessage(_JSONRPCMessage.model_validate_json(raw))


def parsed_line(raw: bytes) -> SessionMessage | Exception:
    """A raw line as the SDK's stdio client reads it: a message, or the parse error as a value."""
    try:
        return _from_line(raw)
    except ValueError as exc:
        return exc


@asynccontextmanager
async def connect(transport: Any, options: Mapping[str, Any]) -> AsyncIterator[Any]:
    """A client session over `transport` (an async context manager yielding a read and a write
    stream, or an HTTP URL), connected and through the handshake.

    2.x: an `mcp.Client` with `options`. 1.x: an initialized `mcp.ClientSession` with `options`
    less those 1.x does not have: `mode` ("legacy" or "auto"; it always runs the handshake) and
    `log_level` (2.x applies it only after a modern handshake); `read_timeout_seconds` in seconds.

    Raises:
        ConfigError: under 1.x, a `mode` naming a modern protocol version (that needs 2.x).
    """
    import mcp

    if SDK_LINE == 2:
        async with mcp.Client(transport, **options) as client:
            yield client
        return
    kwargs = _one_x_options(options)
    async with AsyncExitStack() as stack:
        if isinstance(transport, str):
            http = importlib.import_module("mcp.client.streamable_http")
            opener = getattr(http, "streamable_http_client", None) or http.streamablehttp_client
            transport = opener(transport)
        streams = await stack.enter_async_context(transport)
        session = await stack.enter_async_context(
            mcp.ClientSession(streams[0], streams[1], **kwargs)
        )
        await session.initialize()
        yield session


def _one_x_options(options: Mapping[str, Any]) -> dict[str, Any]:
    kwargs = dict(options)
    mode = kwargs.pop("mode", "auto")
    if mode not in _ONE_X_MODES:
        raise ConfigError(
            f"client option mode={mode!r} needs the mcp SDK 2.x (installed: mcp {_installed_version()}); "
            "with 1.x use mode='legacy' or leave it out"
        )
    kwargs.pop("log_level", None)
    timeout = kwargs.get("read_timeout_seconds")
    if isinstance(timeout, int | float):
        kwargs["read_timeout_seconds"] = timedelta(seconds=timeout)
    return kwargs
