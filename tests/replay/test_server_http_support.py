"""Hand-built HTTP cassettes and an in-process server for the HTTP replay tests (no tests here)."""

from __future__ import annotations

import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import anyio
import httpx
import uvicorn

from mcptape.cassette import Cassette
from mcptape.cassette.model import Transport
from mcptape.replay.http.app import HttpReplayApp
from mcptape.replay.http.run import bind
from tests.replay.tape import LEGACY_INIT, call, meta, note, ok, req, tape

SID = "recorded-session"
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def h(exchange: int, phase: str, **more: Any) -> dict[str, Any]:
    return {"exchange": exchange, "phase": phase, **more}


def legacy_streamable() -> Cassette:
    """2025-11-25 over Streamable HTTP: initialize (SSE, mints the session), initialized (202),
    tools/list (JSON), add (SSE: progress then result), an unsolicited list_changed on the GET stream."""
    s = {"session": SID}
    steps = [
        *LEGACY_INIT,
        ("c", req(2, "tools/list")),
        ("s", ok(2, {"tools": [{"name": "add", "inputSchema": {"type": "object"}}]})),
        ("c", call(3, "add", {"a": 1}, _meta={"progressToken": 3})),
        ("s", note("notifications/progress", {"progressToken": 3, "progress": 1})),
        ("s", ok(3, {"content": [{"type": "text", "text": "2"}]})),
        ("s", note("notifications/tools/list_changed")),
    ]
    http = {
        0: h(1, "request", method="POST", path="/mcp"),
        1: h(1, "sse", stream="post", **s),
        2: h(2, "request", method="POST", path="/mcp", **s),
        3: h(3, "request", method="POST", path="/mcp", **s),
        4: h(3, "response", status=200, content_type="application/json", **s),
        5: h(4, "request", method="POST", path="/mcp", **s),
        6: h(4, "sse", stream="post", **s),
        7: h(4, "sse", stream="post", **s),
        8: h(5, "sse", stream="get", **s),
    }
    cas = tape(*steps, http=http)
    heads = [  # response heads and the 202 are HTTP events of their own
        (
            1,
            {
                "exchange": 1,
                "phase": "response",
                "status": 200,
                "stream": "post",
                "content_type": "text/event-stream",
                **s,
            },
        ),
        (
            3,
            {
                "exchange": 2,
                "phase": "response",
                "status": 202,
                "content_type": "application/json",
                **s,
            },
        ),
        (
            6,
            {
                "exchange": 4,
                "phase": "response",
                "status": 200,
                "stream": "post",
                "content_type": "text/event-stream",
                **s,
            },
        ),
        (
            8,
            {
                "exchange": 5,
                "phase": "response",
                "status": 200,
                "stream": "get",
                "content_type": "text/event-stream",
                **s,
            },
        ),
    ]
    return with_http_events(cas, heads)


def with_http_events(cas: Cassette, heads: list[tuple[int, dict[str, Any]]]) -> Cassette:
    """Inserts `kind: http` events before the events at the given positions, renumbered."""
    from mcptape.cassette.model import Event, Kind, Source

    events = list(cas.events)
    for pos, http in sorted(heads, reverse=True):
        events.insert(pos, Event(0, events[pos].t, Kind.HTTP, Source.SERVER, http=http))
    events = [e._replace(seq=i) for i, e in enumerate(events, start=1)]
    return Cassette(replace(cas.header, transport=Transport.STREAMABLE_HTTP), events)


def modern_streamable() -> Cassette:
    """2026-07-28, stateless: tools/list (JSON, a tool with an x-mcp-header), a counter called
    twice (two answers), a read answered 400, a listen stream (ack, one change), a call with progress (SSE)."""
    m = meta()
    tool = {
        "name": "count",
        "inputSchema": {
            "type": "object",
            "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        },
    }
    steps = [
        ("c", req(1, "tools/list", {"_meta": m})),
        ("s", ok(1, {"tools": [tool], "resultType": "complete"})),
        ("c", call(2, "count", {"region": "eu"}, _meta=m)),
        ("s", ok(2, {"content": [{"type": "text", "text": "1"}]})),
        ("c", call(3, "count", {"region": "eu"}, _meta=m)),
        ("s", ok(3, {"content": [{"type": "text", "text": "2"}]})),
        ("c", req(4, "resources/read", {"uri": "demo://nope", "_meta": m})),
        (
            "s",
            {"jsonrpc": "2.0", "id": 4, "error": {"code": -32602, "message": "Unknown resource"}},
        ),
        (
            "c",
            req(
                5, "subscriptions/listen", {"notifications": {"toolsListChanged": True}, "_meta": m}
            ),
        ),
        (
            "s",
            note(
                "notifications/subscriptions/acknowledged",
                {
                    "notifications": {"toolsListChanged": True},
                    "_meta": {"io.modelcontextprotocol/subscriptionId": 5},
                },
            ),
        ),
        (
            "s",
            note(
                "notifications/tools/list_changed",
                {"_meta": {"io.modelcontextprotocol/subscriptionId": 5}},
            ),
        ),
        ("c", call(6, "slow", {}, _meta={**m, "progressToken": "p6"})),
        ("s", note("notifications/progress", {"progressToken": "p6", "progress": 1})),
        ("s", ok(6, {"content": []})),
    ]
    json_ = {"status": 200, "content_type": "application/json"}
    http = {
        0: h(1, "request", method="POST", path="/mcp"), 1: h(1, "response", **json_),
        2: h(2, "request", method="POST", path="/mcp"), 3: h(2, "response", **json_),
        4: h(3, "request", method="POST", path="/mcp"), 5: h(3, "response", **json_),
        6: h(4, "request", method="POST", path="/mcp"), 7: h(4, "response", status=400, content_type="application/json"),
        8: h(5, "request", method="POST", path="/mcp"), 9: h(5, "sse", stream="post"), 10: h(5, "sse", stream="post"),
        11: h(6, "request", method="POST", path="/mcp"), 12: h(6, "sse", stream="post"), 13: h(6, "sse", stream="post"),
    }  # fmt: skip
    sse_head = {
        "phase": "response",
        "status": 200,
        "stream": "post",
        "content_type": "text/event-stream",
    }
    return with_http_events(
        tape(*steps, http=http),
        [(9, {"exchange": 5, **sse_head}), (12, {"exchange": 6, **sse_head})],
    )


def legacy_sse() -> Cassette:
    """2025-11-25 over HTTP+SSE: every answer on the GET stream, POSTs answered 202 Accepted."""
    s = {"session": "abc", "legacy": True}
    steps = [*LEGACY_INIT, ("c", req(2, "tools/list")), ("s", ok(2, {"tools": []}))]
    http = {
        0: h(2, "request", method="POST", path="/messages/?session_id=abc", **s),
        1: h(1, "sse", stream="get", **s),
        2: h(3, "request", method="POST", path="/messages/?session_id=abc", **s),
        3: h(4, "request", method="POST", path="/messages/?session_id=abc", **s),
        4: h(1, "sse", stream="get", **s),
    }
    cas = tape(*steps, http=http)
    from mcptape.cassette.model import Event, Kind, Source

    first = [
        Event(0, 0.0, Kind.HTTP, Source.CLIENT, http=h(1, "request", method="GET", path="/sse")),
        Event(
            0,
            0.0,
            Kind.HTTP,
            Source.SERVER,
            http=h(1, "response", status=200, stream="get", content_type="text/event-stream"),
        ),
        Event(
            0,
            0.0,
            Kind.HTTP,
            Source.SERVER,
            http=h(
                1,
                "sse",
                stream="get",
                sse={"event": "endpoint", "data": "/messages/?session_id=abc"},
                **s,
            ),
        ),
    ]
    accepted = Event(
        0, 0.0, Kind.RAW, Source.SERVER, text="Accepted", http=h(2, "response", status=202, **s)
    )
    events = [*first, cas.events[0], accepted, *cas.events[1:]]
    events = [e._replace(seq=i) for i, e in enumerate(events, start=1)]
    return Cassette(
        replace(cas.header, transport=Transport.SSE, target={"url": "http://127.0.0.1:1/sse"}),
        events,
    )


def modern_headers(msg: dict[str, Any], **extra: str | None) -> dict[str, str]:
    """The headers a 2026-07-28 client sends with `msg` (`extra` overrides; None leaves one out)."""
    out = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": msg["method"]}
    params = msg.get("params") or {}
    if msg["method"] in ("tools/call", "prompts/get"):
        out["mcp-name"] = params["name"]
    if msg["method"] == "resources/read":
        out["mcp-name"] = params["uri"]
    out.update(extra)  # type: ignore[arg-type]
    return {k: v for k, v in out.items() if v is not None}


@asynccontextmanager
async def served(app: HttpReplayApp) -> AsyncIterator[httpx.AsyncClient]:
    """`app` under uvicorn on a free loopback port, in this event loop; a client pointed at it."""
    sock = bind("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(app, lifespan="off", log_level="warning", access_log=False)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(
            server.serve, [sock]
        )  # the socket already listens: clients may connect at once
        try:
            async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5) as client:
                yield client
        finally:
            app.stopping.set()
            server.should_exit = True
    sock.close()


_LINES: weakref.WeakKeyDictionary[httpx.Response, Any] = weakref.WeakKeyDictionary()
"""One line iterator per streamed response, so a test can read a stream in several goes."""


def lines_of(response: httpx.Response) -> Any:
    """The response's one line iterator (reading a stream in several goes needs the same one)."""
    return _LINES.setdefault(response, response.aiter_lines())


async def sse_messages(response: httpx.Response, count: int) -> list[Any]:
    """The first `count` JSON messages of an event stream (then stops reading)."""
    import orjson

    out: list[Any] = []
    lines = lines_of(response)
    async for line in lines:
        if line.startswith("data: "):
            out.append(orjson.loads(line[6:]) if line[6:].startswith("{") else line[6:])
            if len(out) == count:
                break
    return out


async def rest_of(response: httpx.Response) -> list[str]:
    """The remaining lines of a stream, once it ends."""
    lines = lines_of(response)
    return [line async for line in lines]
