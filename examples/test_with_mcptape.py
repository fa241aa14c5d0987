"""A complete pytest file to copy: tests of MCP client code against a cassette, not a live server.

    pytest examples/test_with_mcptape.py                              # replay (the default, and CI's)
    pytest examples/test_with_mcptape.py --mcptape-record-mode=once   # record missing cassettes
    pytest examples/test_with_mcptape.py --mcptape-record-mode=all    # re-record everything

Cassettes live in examples/cassettes/test_with_mcptape/<test name>.jsonl. In replay, the
server command below is never run: the `mcptape` fixture hands each test an `mcp.Client`
connected in process to a deterministic server answering from the cassette.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from mcp import MCPError
from mcp.types import ElicitResult

SERVER = [sys.executable, str(Path(__file__).with_name("demo_server.py"))]


async def answer_ada(_ctx: object, _params: object) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


pytestmark = [
    pytest.mark.anyio,
    # Every test here records from (or replays) this server, with this client configuration.
    pytest.mark.mcptape(server=SERVER, client={"elicitation_callback": answer_ada}),
]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_add_reports_progress(mcptape) -> None:  # type: ignore[no-untyped-def]
    steps = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append(message)

    result = await mcptape.client.call_tool(
        "add", {"a": 20, "b": 22}, progress_callback=on_progress
    )
    assert result.content[0].text == "42"
    assert steps == ["adding", "done"]


async def test_failing_tool_raises(mcptape) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(MCPError) as info:
        await mcptape.client.call_tool("fail", {"reason": "disk on fire"})
    assert info.value.error.message == "failed: disk on fire"


async def test_greet_asks_for_the_name(mcptape) -> None:  # type: ignore[no-untyped-def]
    result = await mcptape.client.call_tool("greet", {})
    assert result.content[0].text == "Hello, Ada!"


@pytest.mark.mcptape(client={"mode": "legacy", "elicitation_callback": answer_ada})
async def test_the_same_in_the_legacy_protocol(mcptape) -> None:  # type: ignore[no-untyped-def]
    assert mcptape.client.protocol_version == "2025-11-25"
    result = await mcptape.client.call_tool("greet", {})
    assert result.content[0].text == "Hello, Ada!"
