"""Hand-built cassettes for replay unit tests: a script of (who, message) steps."""

from __future__ import annotations

from typing import Any

from mcptape.cassette import Cassette
from mcptape.cassette.model import Event, Header, Kind, Source, Transport

HANGUP = "hangup"
"""A step that records the client closing its input."""

LEGACY_INIT = [
    (
        "c",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "rec", "version": "1"},
            },
        },
    ),
    (
        "s",
        {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "srv", "version": "1"},
            },
        },
    ),
    ("c", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
]


def meta(**extra: Any) -> dict[str, Any]:
    """A 2026-07-28 request `_meta` as the recorded client sent it."""
    base: dict[str, Any] = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "rec", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    base.update(extra)
    return base


def req(msg_id: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        out["params"] = params
    return out


def note(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        out["params"] = params
    return out


def ok(msg_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def err(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def call(
    msg_id: Any, name: str, arguments: dict[str, Any] | None = None, **params: Any
) -> dict[str, Any]:
    return req(msg_id, "tools/call", {"name": name, "arguments": arguments or {}, **params})


def tape(
    *steps: Any,
    http: dict[int, dict[str, Any]] | None = None,
    redacted: dict[int, tuple[str, ...]] | None = None,
) -> Cassette:
    """A cassette from steps: ("c", msg) client, ("s", msg) server, or HANGUP; 0.1 s apart.

    `http` and `redacted` attach metadata to the event of the step at that position.
    """
    events: list[Event] = []
    for i, step in enumerate(steps):
        seq, t = len(events) + 1, 0.1 * (i + 1)
        if step == HANGUP:
            events.append(Event(seq, t, Kind.EOF, Source.CLIENT))
            continue
        who, msg = step
        src = Source.CLIENT if who == "c" else Source.SERVER
        events.append(
            Event(
                seq,
                t,
                Kind.MESSAGE,
                src,
                msg=msg,
                http=(http or {}).get(i),
                redacted=(redacted or {}).get(i, ()),
            )
        )
    events.append(Event(len(events) + 1, 0.1 * (len(steps) + 1), Kind.END))
    header = Header(
        transport=Transport.STDIO,
        target={"command": ["srv"]},
        recorded_at="2026-01-01T00:00:00Z",
        mcptape_version="0",
    )
    return Cassette(header, events)
