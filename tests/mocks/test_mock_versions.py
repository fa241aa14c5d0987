"""A mock answers each client in the protocol revision it asked for: `initialize` gets the
client's version back (mcptape knows it), and every message after it is one a server of that
revision sends (no member a later revision added, no request it lacks); `mcptape check` finds
every message valid for its version. Driven over `mock.command` (stdio): raw JSON-RPC for each
handshake revision, the SDK client for 2025-11-25 and 2026-07-28."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.types import ElicitResult

import mcptape
from mcptape.cassette import dumps
from mcptape.mocks.mock import Mock
from tests.mocks.tap import Tap, problems_of
from tests.replay.tape import LEGACY_INIT, ok, req, tape

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

INFO = {"name": "raw", "version": "1"}

OUTPUT = {
    "type": "object",
    "properties": {"temp": {"type": "number"}, "city": {"type": "string"}},
    "required": ["temp", "city"],
}
ASK = {
    "message": "Which unit?",
    "requestedSchema": {"type": "object", "properties": {"unit": {"type": "string"}}},
}


def declared() -> Mock:
    mock = mcptape.mock("versions", instructions="Ask about the weather.")
    mock.tool(
        "weather",
        lambda city: {"temp": 21.5, "city": city},
        title="Weather",
        description="The weather in a city.",
        output_schema=OUTPUT,
        progress=[(1, 2, "looking"), (2, 2, "found")],
        logs=[("info", "asked")],
        elicit=ASK,
    )
    mock.resource("demo://readme", "read me", description="The readme.")
    mock.resource("demo://users/{id}", lambda id: f"user {id}")
    mock.prompt("review", lambda code: f"Review this: {code}", description="A review.")
    return mock


class Raw:
    """A client of JSON-RPC lines over a stdio command, keeping every message both ways."""

    def __init__(self, proc: Process) -> None:
        self.proc = proc
        self.log: list[tuple[str, dict[str, Any]]] = []
        self._buffer = b""

    async def send(self, msg: dict[str, Any]) -> None:
        self.log.append(("client", msg))
        assert self.proc.stdin is not None
        await self.proc.stdin.send(json.dumps(msg).encode() + b"\n")

    async def _next(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while b"\n" not in self._buffer:
            self._buffer += await self.proc.stdout.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        msg: dict[str, Any] = json.loads(line)
        self.log.append(("server", msg))
        return msg

    async def request(self, msg_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The response to this request; the server's requests on the way answered (accepted)."""
        await self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        while True:
            msg = await self._next()
            if "method" in msg and "id" in msg:
                answer = {"action": "accept", "content": {"unit": "C"}}
                await self.send({"jsonrpc": "2.0", "id": msg["id"], "result": answer})
            elif msg.get("id") == msg_id:
                return msg

    def server_said(self, method: str) -> list[dict[str, Any]]:
        return [m for src, m in self.log if src == "server" and m.get("method") == method]


async def raw_session(mock: Mock, version: str) -> tuple[Raw, dict[str, dict[str, Any]]]:
    """A whole session of a client asking for `version`: each method's result."""
    results: dict[str, dict[str, Any]] = {}
    async with await anyio.open_process(mock.command) as proc:
        raw = Raw(proc)
        hello = {
            "protocolVersion": version,
            "capabilities": {"elicitation": {}},
            "clientInfo": INFO,
        }
        steps: list[tuple[str, dict[str, Any]]] = [
            ("initialize", hello),
            ("tools/list", {}),
            ("tools/call", {"name": "weather", "arguments": {"city": "Oslo"}, "_meta": {"progressToken": "p"}}),
            ("resources/list", {}),
            ("resources/templates/list", {}),
            ("resources/read", {"uri": "demo://users/7"}),
            ("prompts/list", {}),
            ("prompts/get", {"name": "review", "arguments": {"code": "x = 1"}}),
        ]  # fmt: skip
        for n, (method, params) in enumerate(steps, 1):
            answer = await raw.request(n, method, params)
            assert "result" in answer, answer
            results[method] = answer["result"]
            if method == "initialize":
                await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        assert proc.stdin is not None
        await proc.stdin.aclose()
    return raw, results


@pytest.mark.parametrize(
    ("asked", "answered"),
    [
        ("2024-11-05", "2024-11-05"),
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2099-01-01", "2025-11-25"),  # unknown: the latest handshake revision
        ("2026-07-28", "2025-11-25"),  # not a handshake revision
    ],
)
async def test_a_legacy_client_gets_the_revision_it_asked_for(asked: str, answered: str) -> None:
    with declared() as mock, anyio.fail_after(30):
        raw, results = await raw_session(mock, asked)
    assert results["initialize"]["protocolVersion"] == answered
    assert results["initialize"]["instructions"] == "Ask about the weather."
    assert problems_of(raw.log) == []
    tool = results["tools/list"]["tools"][0]
    call = results["tools/call"]
    assert json.loads(call["content"][0]["text"]) == {"temp": 21.5, "city": "Oslo"}
    assert results["resources/read"]["contents"][0]["text"] == "user 7"
    assert results["prompts/get"]["messages"][0]["content"]["text"] == "Review this: x = 1"
    assert [m["params"]["data"] for m in raw.server_said("notifications/message")] == ["asked"]
    progress = [m["params"] for m in raw.server_said("notifications/progress")]
    assert [p["progress"] for p in progress] == [1, 2]
    since_06 = answered >= "2025-06-18"  # (handshake revisions sort as dates)
    assert ("title" in tool, "outputSchema" in tool) == (since_06, since_06)
    assert ("structuredContent" in call) is since_06
    assert bool(raw.server_said("elicitation/create")) is since_06  # 2025-06-18 added it
    assert all(("message" in p) is (answered != "2024-11-05") for p in progress)


@pytest.mark.parametrize(("mode", "version"), [("legacy", "2025-11-25"), ("auto", "2026-07-28")])
async def test_the_sdk_client_over_mock_command_in_both_eras(mode: str, version: str) -> None:
    asked: list[str] = []

    async def accept(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"unit": "C"})

    with declared() as mock, anyio.fail_after(30):
        command = mock.command
        tap = Tap(stdio_client(StdioServerParameters(command=command[0], args=command[1:])))
        async with Client(tap, mode=mode, elicitation_callback=accept, log_level="info") as c:
            assert c.protocol_version == version
            (tool,) = (await c.list_tools()).tools
            assert (tool.title, tool.output_schema) == ("Weather", OUTPUT)
            call = await c.call_tool("weather", {"city": "Oslo"})
            assert call.structured_content == {"temp": 21.5, "city": "Oslo"}
            assert [r.uri for r in (await c.list_resources()).resources] == ["demo://readme"]
            read = await c.read_resource("demo://readme")
            assert read.contents[0].text == "read me"
            prompt = await c.get_prompt("review", {"code": "x = 1"})
            assert prompt.messages[0].content.text == "Review this: x = 1"
        assert mock["weather"].call_count == 1
    assert asked == ["Which unit?"]
    assert tap.problems() == []


async def test_an_overlay_answers_in_the_version_of_the_recorded_handshake(
    tmp_path: Path,
) -> None:
    init, answer, done = (msg for _, msg in LEGACY_INIT)
    older = {**answer, "result": {**answer["result"], "protocolVersion": "2025-03-26"}}
    listed = {"name": "weather", "inputSchema": {"type": "object"}}
    recording = tape(
        ("c", {**init, "params": {**init["params"], "protocolVersion": "2025-03-26"}}),
        ("s", older),
        ("c", done),
        ("c", req(2, "tools/list", {})),
        ("s", ok(2, {"tools": [listed]})),
    )
    path = tmp_path / "older.jsonl"
    path.write_bytes(dumps(recording))
    with mcptape.mock(cassette=path) as mock, anyio.fail_after(30):
        mock.tool("weather", {"temp": 3, "city": "Oslo"}, output_schema=OUTPUT)
        async with await anyio.open_process(mock.command) as proc:
            raw = Raw(proc)
            hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": INFO}
            assert (await raw.request(1, "initialize", hello))["result"]["protocolVersion"] == (
                "2025-03-26"  # as recorded
            )
            call = await raw.request(2, "tools/call", {"name": "weather", "arguments": {}})
            assert proc.stdin is not None
            await proc.stdin.aclose()
    assert "structuredContent" not in call["result"]  # (2025-06-18 added it)
    assert json.loads(call["result"]["content"][0]["text"]) == {"temp": 3, "city": "Oslo"}
    assert problems_of(raw.log) == []


async def test_over_http_a_legacy_client_gets_the_revision_it_asked_for() -> None:
    httpx = pytest.importorskip("httpx")
    pytest.importorskip("uvicorn")
    log: list[tuple[str, dict[str, Any]]] = []
    headers = {"accept": "application/json, text/event-stream"}
    with declared() as mock:
        async with httpx.AsyncClient(timeout=30) as http:

            async def post(msg: dict[str, Any]) -> dict[str, Any]:
                log.append(("client", msg))
                response = await http.post(mock.url, json=msg, headers=headers)
                assert response.status_code == 200, response.text
                got: dict[str, Any] = response.json()  # (no progress asked: one JSON answer)
                log.append(("server", got))
                if "mcp-session-id" in response.headers:  # (minted by the initialize answer)
                    headers["mcp-session-id"] = response.headers["mcp-session-id"]
                return got

            hello = {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": INFO}
            init = await post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
            headers["mcp-protocol-version"] = init["result"]["protocolVersion"]
            listed = await post({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
            read = {"uri": "demo://readme"}
            await post({"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": read})
    assert init["result"]["protocolVersion"] == "2025-03-26"
    assert sorted(listed["result"]["tools"][0]) == ["description", "inputSchema", "name"]
    assert problems_of(log) == []
