"""End to end over HTTP: `mcptape serve` fault rules as the official SDK client (and raw httpx) see them.

The golden Streamable HTTP cassettes of the Python SDK demo server: 2026-07-28 (stateless;
`add` answered as an event stream, `echo` as JSON) and 2025-11-25 (sessions; every answer
an event stream). The app runs under uvicorn on a loopback port in the test's event loop.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import httpx2
import orjson
import pytest
import uvicorn
from mcp import Client, MCPError
from mcp_types import CONNECTION_CLOSED, INTERNAL_ERROR, PARSE_ERROR, REQUEST_TIMEOUT

from mcptape.cassette import load
from mcptape.replay import ReplayConfig
from mcptape.replay.http.app import HttpReplayApp
from mcptape.replay.http.run import bind
from tests.conftest import ROOT, mcptape_cmd
from tests.sdk_helpers import accept_name

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
GOLDEN = ROOT / "cassettes" / "python-sdk"
ERAS = {
    "auto": GOLDEN / "2026-07-28" / "streamable-http.jsonl",
    "legacy": GOLDEN / "2025-11-25" / "streamable-http.jsonl",
}
"""SDK connect mode -> the golden cassette that era recorded."""


@asynccontextmanager
async def served(mode: str, *rules: dict[str, Any]) -> AsyncIterator[str]:
    """The era's cassette served with the fault rules on a free loopback port; yields its URL."""
    app = HttpReplayApp(
        load(ERAS[mode]), ReplayConfig(allow_repeats=True), on_note=None, faults=list(rules)
    )
    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(
        uvicorn.Config(app, lifespan="off", log_level="critical", access_log=False)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.serve, [sock])
        try:
            yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        finally:
            app.stopping.set()
            server.should_exit = True
    sock.close()


@asynccontextmanager
async def client(mode: str, *rules: dict[str, Any], **kw: Any) -> AsyncIterator[Client]:
    async with served(mode, *rules) as url:
        async with Client(
            url, mode=mode, elicitation_callback=accept_name, log_level="info", cache=None, **kw
        ) as c:
            yield c


@pytest.fixture(params=sorted(ERAS))
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def add(c: Client, **kw: Any) -> Any:
    return await c.call_tool("add", {"a": 1, "b": 2}, **kw)


async def mcp_error(call: Any) -> tuple[int, str]:
    with pytest.raises(MCPError) as info:
        await call
    return info.value.error.code, info.value.error.message


async def test_error_and_tool_error_replace_the_answer(mode: str) -> None:
    with anyio.fail_after(20):
        async with client(
            mode,
            {"tool": "add", "action": "error", "code": -32050, "message": "busy"},
            {"tool": "echo", "action": "tool_error", "text": "no"},
        ) as c:
            assert await mcp_error(add(c)) == (-32050, "busy")
            echoed = await c.call_tool("echo", {"message": "hello"})
            assert echoed.is_error and echoed.content[0].text == "no"


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_an_http_error_status_reaches_the_client_as_a_server_error(
    mode: str, status: int
) -> None:
    with anyio.fail_after(20):
        async with client(
            mode, {"tool": "add", "nth": 1, "action": "status", "status": status, "retry_after": 2}
        ) as c:
            assert await mcp_error(add(c)) == (INTERNAL_ERROR, "Server returned an error response")
            assert (await add(c)).content[0].text == "3"  # the next try gets through


async def test_a_status_carries_retry_after_and_its_body() -> None:
    rules = [
        {"tool": "add", "action": "status", "status": 429, "retry_after": 1.5},
        {"tool": "echo", "action": "status", "status": 503, "body": "down for maintenance"},
    ]
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}

    def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": meta},
        }

    def headers(name: str) -> dict[str, str]:
        return {"accept": "application/json, text/event-stream", "content-type": "application/json", "mcp-protocol-version": "2026-07-28",
                "mcp-method": "tools/call", "mcp-name": name}  # fmt: skip

    with anyio.fail_after(20):
        async with served("auto", *rules) as url, httpx.AsyncClient(timeout=5) as http:
            limited = await http.post(
                url, content=orjson.dumps(call("add", {"a": 1, "b": 2})), headers=headers("add")
            )
            down = await http.post(
                url,
                content=orjson.dumps(call("echo", {"message": "hello"})),
                headers=headers("echo"),
            )
    assert (limited.status_code, limited.headers["retry-after"], limited.text) == (
        429,
        "2",
        "Too Many Requests",
    )
    assert (down.status_code, down.text, "retry-after" in down.headers) == (
        503,
        "down for maintenance",
        False,
    )


async def test_a_json_rpc_error_body_with_a_status_is_the_error_the_client_sees(mode: str) -> None:
    body = json.dumps(
        {"jsonrpc": "2.0", "id": None, "error": {"code": -32029, "message": "rate limited"}}
    )
    with anyio.fail_after(20):
        async with client(
            mode, {"tool": "add", "action": "status", "status": 429, "body": body}
        ) as c:
            assert await mcp_error(add(c)) == (-32029, "rate limited")


async def test_reset_breaks_the_clients_transport(mode: str) -> None:
    with anyio.fail_after(20), pytest.raises(BaseExceptionGroup) as info:
        async with client(mode, {"tool": "add", "action": "reset"}) as c:
            await add(c)
    assert info.value.subgroup(httpx2.ReadError) is not None  # the SDK's HTTP client is httpx2


async def test_drop_times_out(mode: str) -> None:
    with anyio.fail_after(20):
        async with client(mode, {"tool": "add", "nth": 1, "action": "drop"}) as c:
            assert (await mcp_error(add(c, read_timeout_seconds=0.3)))[0] == REQUEST_TIMEOUT
            assert (await add(c)).content[0].text == "3"


@pytest.mark.parametrize("action", ["disconnect", "truncate"])
async def test_a_stream_closed_mid_exchange_is_a_closed_connection(mode: str, action: str) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(20):
        async with client(
            mode, {"tool": "add", "action": action}, {"tool": "echo", "action": action}
        ) as c:
            assert await mcp_error(add(c, progress_callback=on_progress)) == (
                CONNECTION_CLOSED,
                "SSE stream ended without a response",
            )
            echoed = c.call_tool(
                "echo", {"message": "hello"}
            )  # recorded as JSON in 2026: the fault answers with a stream
            assert await mcp_error(echoed) == (
                CONNECTION_CLOSED,
                "SSE stream ended without a response",
            )
            assert "add" in [
                t.name for t in (await c.list_tools()).tools
            ]  # only that stream ended: the session goes on
    assert progress == [1, 2]  # what the server sent before the response still arrived


@pytest.mark.parametrize("action", ["malformed", "invalid"])
async def test_garbage_is_a_parse_error(mode: str, action: str) -> None:
    with anyio.fail_after(20):
        async with client(mode, {"method": "tools/call", "action": action}) as c:
            code, message = await mcp_error(add(c))
            assert code == PARSE_ERROR and message.startswith("Failed to parse SSE message")
            code, message = await mcp_error(c.call_tool("echo", {"message": "hello"}))
    assert code == PARSE_ERROR and message.startswith(
        "Failed to parse JSON response" if mode == "auto" else "Failed to parse SSE message"
    )


async def test_a_delayed_answer_comes_after_a_later_prompt_one(mode: str) -> None:
    done: list[str] = []
    with anyio.fail_after(20):
        async with client(mode, {"tool": "add", "action": "delay", "seconds": 0.4}) as c:
            echoed = anyio.Event()

            async def slow() -> None:
                start = anyio.current_time()
                assert (await add(c)).content[0].text == "3"
                done.append("add")
                assert anyio.current_time() - start >= 0.4 and echoed.is_set()

            async def prompt() -> None:
                assert (await c.call_tool("echo", {"message": "hello"})).content[0].text == "hello"
                done.append("echo")
                echoed.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                tg.start_soon(prompt)
    assert done == ["echo", "add"]


async def test_mcptape_serve_takes_fault_options(tmp_path: Any) -> None:
    rules = tmp_path / "faults.toml"
    rules.write_text(
        '[[faults]]\ntool = "add"\naction = "error"\ncode = -32077\n', encoding="utf-8"
    )
    cmd = mcptape_cmd(
        "serve",
        "--port",
        "0",
        "--faults",
        str(rules),
        "--fault",
        '{"tool": "echo", "action": "status", "status": 503}',
        str(ERAS["auto"]),
    )
    proc = subprocess.Popen(
        cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stderr is not None
        line = await anyio.to_thread.run_sync(proc.stderr.readline)
        url = line.split(" at ")[1].split()[0]
        with anyio.fail_after(20):
            async with Client(
                url, mode="auto", elicitation_callback=accept_name, log_level="info", cache=None
            ) as c:
                assert (await mcp_error(add(c)))[0] == -32077
                assert (await mcp_error(c.call_tool("echo", {"message": "hello"})))[
                    0
                ] == INTERNAL_ERROR
    finally:
        proc.terminate()
        proc.wait(timeout=10)
