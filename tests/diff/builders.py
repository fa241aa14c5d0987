"""Hand-built sessions for the diff tests: messages in wire order -> a Cassette."""

from __future__ import annotations

from typing import Any

from mcptape.cassette import Cassette
from mcptape.cassette.model import Event, Header, Kind, Source, Transport

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def cassette(*wire: tuple[str, Any], name: str = "<memory>") -> Cassette:
    """`("c", msg)` is the client sending msg, `("s", msg)` the server."""
    events = [
        Event(
            i + 1, i * 0.01, Kind.MESSAGE, Source.CLIENT if who == "c" else Source.SERVER, msg=msg
        )
        for i, (who, msg) in enumerate(wire)
    ]
    events.append(Event(len(events) + 1, 1.0, Kind.END))
    header = Header(Transport.STDIO, {"command": ["server"]}, "2026-01-01T00:00:00Z", "0.1.0")
    return Cassette(header, events, None)


def req(i: Any, method: str, params: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        msg["params"] = params
    return ("c", msg)


def note(
    method: str, params: dict[str, Any] | None = None, who: str = "s"
) -> tuple[str, dict[str, Any]]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return (who, msg)


def res(i: Any, result: Any, who: str = "s") -> tuple[str, dict[str, Any]]:
    return (who, {"jsonrpc": "2.0", "id": i, "result": result})


def err(i: Any, code: int, message: str = "boom", data: Any = None) -> tuple[str, dict[str, Any]]:
    e: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        e["data"] = data
    return ("s", {"jsonrpc": "2.0", "id": i, "error": e})


def meta(
    level: str | None = None, caps: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    m: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": caps or {},
    }
    if level:
        m["io.modelcontextprotocol/logLevel"] = level
    m.update(extra)
    return m


SERVER_INFO = {"name": "demo", "version": "1.0.0"}
CAPS = {"tools": {"listChanged": False}}


def legacy_handshake(
    i: Any = 1, info: dict[str, Any] | None = None, instructions: str = "hi"
) -> list[tuple[str, Any]]:
    return [
        req(
            i,
            "initialize",
            {
                "protocolVersion": LEGACY,
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "t", "version": "1"},
            },
        ),
        res(
            i,
            {
                "protocolVersion": LEGACY,
                "capabilities": CAPS,
                "serverInfo": info or SERVER_INFO,
                "instructions": instructions,
            },
        ),
        note("notifications/initialized", who="c"),
    ]


def modern_handshake(
    i: Any = "d1", info: dict[str, Any] | None = None, instructions: str = "hi"
) -> list[tuple[str, Any]]:
    return [
        req(i, "server/discover", {"_meta": meta(caps={"elicitation": {}})}),
        res(
            i,
            {
                "resultType": "complete",
                "supportedVersions": [MODERN],
                "capabilities": {"tools": {"listChanged": True}},
                "instructions": instructions,
                "ttlMs": 0,
                "cacheScope": "private",
                "_meta": {"io.modelcontextprotocol/serverInfo": info or SERVER_INFO},
            },
        ),
    ]


def tool(
    name: str, props: dict[str, Any] | None = None, required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props or {}}
    if required is not None:
        schema["required"] = required
    return {"name": name, "inputSchema": schema, **extra}


def text_result(text: str, is_error: bool = False, **extra: Any) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": is_error, **extra}
