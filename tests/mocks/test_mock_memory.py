"""A mock declared in a few lines serves the official `mcp` SDK client in process, in both
protocol eras; every message it sent is valid for its version (`mcptape check`); the journal
holds what the client did."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.types import ElicitResult

import mcptape
from mcptape.mocks import RpcError, ToolError, answers
from mcptape.mocks.mock import Mock
from mcptape.replay.report import NO_MATCH
from tests.mocks.tap import Tap

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ERAS = {"legacy": "2025-11-25", "auto": "2026-07-28"}


def declared() -> Mock:
    mock = mcptape.mock("demo")
    mock.tool(
        "add",
        lambda a, b: a + b,
        description="Adds two numbers.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        },
        progress=[(1, 2, "half"), (2, 2, "done")],
        logs=[("info", "adding")],
    )

    @mock.tool()
    def greet(name: str, punctuation: str = "!") -> str:
        """Says hello."""
        return f"Hello, {name}{punctuation}"

    mock.tool("fail", ToolError("the tool broke"))
    mock.tool("refuse", RpcError(-32603, "internal trouble"))
    mock.tool("roll", answers(4, 6))
    mock.tool("weather", {"temp": 21}, args={"city": "Paris"})
    mock.tool("weather", {"temp": 9}, args={"city": "Oslo"})
    mock.tool(
        "ask",
        "thanks",
        elicit={
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    )
    mock.resource("demo://readme", "read me")
    mock.resource("demo://users/{id}", lambda id: f"user {id}")
    mock.prompt("review", lambda code: f"Review this: {code}", description="A review.")
    return mock


async def accept(_ctx: Any, _params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


def text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_declared_mock_serves_the_sdk_client_in_both_eras(mode: str) -> None:
    mock = declared()
    tap = Tap(mock.transport())
    progress: list[Any] = []
    logs: list[Any] = []

    async def on_progress(p: float, total: float | None, message: str | None) -> None:
        progress.append((p, total, message))

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with anyio.fail_after(10):
        async with Client(
            tap, mode=mode, elicitation_callback=accept, logging_callback=on_log, log_level="info"
        ) as c:
            assert c.protocol_version == ERAS[mode]
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert list(tools) == ["add", "greet", "fail", "refuse", "roll", "weather", "ask"]
            assert tools["greet"].description == "Says hello."
            assert tools["greet"].input_schema["required"] == ["name"]
            assert (
                text(await c.call_tool("add", {"a": 1, "b": 2}, progress_callback=on_progress))
                == "3"
            )
            assert text(await c.call_tool("greet", {"name": "Ada"})) == "Hello, Ada!"
            failed = await c.call_tool("fail", {})
            assert failed.is_error and text(failed) == "the tool broke"
            with pytest.raises(MCPError) as refused:
                await c.call_tool("refuse", {})
            assert refused.value.error.code == -32603
            assert [text(await c.call_tool("roll", {})) for _ in range(2)] == ["4", "6"]
            with pytest.raises(MCPError) as exhausted:
                await c.call_tool("roll", {})
            assert exhausted.value.error.code == NO_MATCH
            oslo = await c.call_tool("weather", {"city": "Oslo"})
            assert oslo.structured_content == {"temp": 9}
            with pytest.raises(MCPError) as miss:
                await c.call_tool("weather", {"city": "Rome"})
            assert "city: 'Rome' vs declared 'Paris'" in miss.value.error.message
            assert text(await c.call_tool("ask", {})) == "thanks"  # after the elicitation
            readme = await c.read_resource("demo://readme")
            assert readme.contents[0].text == "read me"
            user = await c.read_resource("demo://users/7")
            assert user.contents[0].text == "user 7"
            prompt = await c.get_prompt("review", {"code": "x = 1"})
            assert prompt.messages[0].content.text == "Review this: x = 1"
    assert progress == [(1, 2, "half"), (2, 2, "done")]
    assert logs == ["adding"]
    assert tap.problems() == []


async def test_the_journal_holds_what_the_client_did() -> None:
    mock = declared()
    async with mock.connect(mode="legacy") as c:
        await c.call_tool("greet", {"name": "Ada"})
        await c.call_tool("greet", {"name": "Bob", "punctuation": "?"})
        await c.call_tool("weather", {"city": "Paris"})
    greet = mock["greet"]
    assert greet.call_count == 2 == mock.call_count("greet")
    greet.assert_called_with(name="Bob", punctuation="?")
    greet.assert_any_call(name="Ada")
    with pytest.raises(AssertionError, match="last called with"):
        greet.assert_called_with(name="Ada")
    first = greet.calls[0]
    assert first.result["content"][0]["text"] == "Hello, Ada!" and first.t >= 0
    assert [c.method for c in mock.calls][:1] == ["initialize"]
    unused = mock.unused()
    assert any(u.startswith("tool add (") and "test_mock_memory.py:" in u for u in unused)
    assert "tool weather {'city': 'Oslo'}" in " ".join(unused)
    assert not any(u.startswith("tool greet") for u in unused)
    with pytest.raises(AssertionError, match=r"declared but never used: .*tool add"):
        mock.assert_all_called()


async def test_the_decorator_form_and_async_with() -> None:
    async with mcptape.mock(assert_all_called=True) as mock:

        @mock.tool
        def double(x: int) -> int:
            """Doubles x."""
            return 2 * x

        # the client connected at entry: declarations made after it are answered too
        assert text(await mock.client.call_tool("double", {"x": 21})) == "42"
    assert double(2) == 4 and double.call_count == 1


async def test_the_mcptape_mock_fixture(mcptape_mock: Mock) -> None:
    weather = mcptape_mock.tool("weather", "sunny")
    async with mcptape_mock.connect() as c:
        assert text(await c.call_tool("weather", {"city": "Paris"})) == "sunny"
    weather.assert_called_once_with(city="Paris")


async def test_a_function_that_raises_is_a_tool_error_and_elicitation_reaches_the_client() -> None:
    mock = mcptape.mock()
    asked: list[Any] = []

    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        asked.append(params.message)
        return ElicitResult(action="accept", content={"name": "Ada"})

    def broken() -> str:
        raise ValueError("no luck")

    mock.tool("broken", broken)
    mock.tool(
        "ask",
        "thanks",
        elicit={
            "message": "Your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
        },
    )
    for mode in sorted(ERAS):
        async with mock.connect(mode=mode, elicitation_callback=answer) as c:
            result = await c.call_tool("broken", {})
            assert result.is_error and text(result) == "ValueError: no luck"
            assert text(await c.call_tool("ask", {})) == "thanks"
    assert asked == ["Your name?", "Your name?"]
    assert [c.result["content"][0]["text"] for c in mock["ask"].calls] == ["thanks", "thanks"]


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_declared_delay_holds_the_answer_back(mode: str) -> None:
    mock = mcptape.mock()
    mock.tool("slow", "late", delay=0.3)
    mock.tool("fast", "now")
    async with mock.connect(mode=mode) as c:
        start = anyio.current_time()
        assert text(await c.call_tool("slow", {})) == "late"
        assert anyio.current_time() - start >= 0.3
        assert text(await c.call_tool("fast", {})) == "now"


async def test_an_answer_for_the_arguments_comes_before_one_for_any() -> None:
    mock = mcptape.mock()
    mock.tool("forecast", ToolError("unknown city"))
    mock.tool("forecast", {"temp": 21}, args={"city": "Paris"})
    async with mock.connect() as c:
        assert (await c.call_tool("forecast", {"city": "Paris"})).structured_content == {"temp": 21}
        assert (await c.call_tool("forecast", {"city": "Rome"})).is_error
