"""A mock's file form served by `mcptape replay` like a cassette (both eras), an overlay that
makes one recorded tool fail while the rest plays as recorded, and `mock.command`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters

import mcptape
from mcptape.mocks import ToolError, answers
from tests.replay.recorded import ERAS, Recording, record_demo
from tests.sdk_helpers import accept_name, demo_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

MOCK_TOML = """
[server]
name = "demo"

[[tools]]
name = "add"
description = "Adds two numbers."
input_schema = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } } }

[[tools.answers]]
args = { a = 1, b = 2 }
result = 3
progress = [[1, 2, "half"]]

[[tools.answers]]
error = "only 1 + 2 is declared"

[[tools]]
name = "roll"

[[tools.answers]]
sequence = [4, { error = "no more dice" }]

[[resources]]
uri = "demo://users/{id}"
text = "user {id}"

[[prompts]]
name = "review"
arguments = [{ name = "code", required = true }]
text = "Review this: {code}"
"""


def replay(path: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "mcptape", "replay", str(path)]
    )


def text(result: Any) -> str:
    return str(result.content[0].text)


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_toml_mock_is_served_by_mcptape_replay(tmp_path: Path, mode: str) -> None:
    path = tmp_path / "demo.toml"
    path.write_text(MOCK_TOML)
    with anyio.fail_after(30):
        async with Client(replay(path), mode=mode) as c:
            assert c.protocol_version == ERAS[mode]
            assert [t.name for t in (await c.list_tools()).tools] == ["add", "roll"]
            assert text(await c.call_tool("add", {"a": 1, "b": 2})) == "3"
            other = await c.call_tool("add", {"a": 2, "b": 2})
            assert other.is_error and text(other) == "only 1 + 2 is declared"
            assert text(await c.call_tool("roll", {})) == "4"
            assert (await c.call_tool("roll", {})).is_error
            user = await c.read_resource("demo://users/42")
            assert user.contents[0].text == "user 42"
            prompt = await c.get_prompt("review", {"code": "x = 1"})
            assert prompt.messages[0].content.text == "Review this: x = 1"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Recording:
    return record_demo(tmp_path_factory.mktemp("tape") / "demo.jsonl", "legacy")


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_an_overlay_makes_one_recorded_tool_fail_and_the_rest_plays_as_recorded(
    tmp_path: Path, recorded: Recording, mode: str
) -> None:
    overlay = tmp_path / "overlay.json"
    tree = {
        "mcptape_mock": 1,
        "server": {"cassette": str(recorded.path)},
        "tools": [{"name": "greet", "answers": [{"error": "greet is down"}]}],
    }
    overlay.write_text(json.dumps(tree))

    async def session(path: Path) -> Any:
        async with Client(
            replay(path), mode=mode, elicitation_callback=accept_name, log_level="info"
        ) as c:
            return await demo_session(c)

    with anyio.fail_after(30):
        got = await session(overlay)
        plain = await session(recorded.path)
    failed = {
        k: v for k, v in got.results[3].items() if k != "resultType"
    }  # (2026-07-28's envelope)
    assert failed == {"content": [{"type": "text", "text": "greet is down"}], "isError": True}
    assert plain.results[3] != got.results[3]
    assert got.tools == plain.tools == recorded.outcome.tools
    assert [r for i, r in enumerate(got.results) if i != 3] == [
        r for i, r in enumerate(plain.results) if i != 3
    ]
    assert got.progress == plain.progress


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_mock_command_serves_a_data_mock_over_stdio(mode: str) -> None:
    with mcptape.mock("data") as mock:
        mock.tool("roll", answers(3, ToolError("no more")))
        mock.tool("add", 3, args={"a": 1, "b": 2})
        mock.tool("slow", "late", delay=0.3)
        command = mock.command
        async with Client(
            StdioServerParameters(command=command[0], args=command[1:]), mode=mode
        ) as c:
            assert c.protocol_version == ERAS[mode]
            assert text(await c.call_tool("roll", {})) == "3"
            assert (await c.call_tool("roll", {})).is_error
            assert text(await c.call_tool("add", {"a": 1, "b": 2})) == "3"
            with pytest.raises(MCPError):
                await c.call_tool("add", {"a": 5, "b": 2})
            start = anyio.current_time()
            assert text(await c.call_tool("slow", {})) == "late"
            assert anyio.current_time() - start >= 0.3


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_mock_command_answers_from_a_function_of_this_process(mode: str) -> None:
    seen: list[tuple[int, int]] = []

    def add(a: int, b: int) -> int:
        seen.append((a, b))
        return a + b

    with mcptape.mock("functions") as mock:
        handle = mock.tool("add", add)
        command = mock.command
        async with Client(
            StdioServerParameters(command=command[0], args=command[1:]), mode=mode
        ) as c:
            assert c.protocol_version == ERAS[mode]
            assert text(await c.call_tool("add", {"a": 2, "b": 3})) == "5"
        assert seen == [(2, 3)]
        assert handle.call_count == mock.call_count("add") == 1
        handle.assert_called_once_with(a=2, b=3)
        assert [c.method for c in mock.calls if c.method == "tools/call"] == ["tools/call"]


async def test_closing_the_mock_ends_the_sessions_of_its_command() -> None:
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}  # fmt: skip
    with anyio.fail_after(30):
        mock = mcptape.mock()
        async with await anyio.open_process(mock.command) as proc:
            assert proc.stdin is not None and proc.stdout is not None
            line = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}
            await proc.stdin.send(json.dumps(line).encode() + b"\n")
            got = b""
            while not got.endswith(b"\n"):
                got += await proc.stdout.receive()
            assert json.loads(got)["result"]["protocolVersion"] == "2025-06-18"
            mock.close()  # the client has not closed its end: the relay still ends
            assert await proc.wait() == 0
    assert [c.method for c in mock.calls] == ["initialize"]


def test_mock_command_serves_only_while_its_mock_is_open() -> None:
    with mcptape.mock() as mock:
        mock.tool("add", lambda a, b: a + b)
        command = mock.command
    done = subprocess.run(command, input=b"", capture_output=True, timeout=60, check=False)
    assert done.returncode == 1
    assert b"inside `with mcptape.mock() as mock`" in done.stderr


@pytest.fixture(scope="module")
def recordings(
    tmp_path_factory: pytest.TempPathFactory, recorded: Recording
) -> dict[str, Recording]:
    modern = record_demo(tmp_path_factory.mktemp("tape") / "demo.jsonl", "auto")
    return {"legacy": recorded, "modern": modern}


@pytest.mark.parametrize("suffix", [".toml", ".json"])
@pytest.mark.parametrize("mode", sorted(ERAS))
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_a_stub_of_a_recording_served_back_gives_the_recorded_answers(
    tmp_path: Path, recordings: dict[str, Recording], mode: str, suffix: str, era: str
) -> None:
    import subprocess

    recorded = recordings[era]
    out = tmp_path / f"demo{suffix}"
    done = subprocess.run(
        [sys.executable, "-m", "mcptape", "stub", str(recorded.path), "-o", str(out)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr

    async def session(path: Path) -> Any:
        async with Client(
            replay(path), mode=mode, elicitation_callback=accept_name, log_level="info"
        ) as c:
            return await demo_session(c)

    with anyio.fail_after(30):
        got = await session(out)
        plain = await session(recorded.path)
    assert got.tools == plain.tools
    assert got.results == plain.results
    assert got.progress == plain.progress


async def test_a_cassette_keeps_a_journal_too(recorded: Recording) -> None:
    async with mcptape.use_cassette(recorded.path) as tape:
        await tape.client.call_tool("add", {"a": 1, "b": 2})
    assert tape.journal.call_count("add") == 1
    tape.journal.assert_called_with("add", a=1, b=2)
    call = tape.journal.of("tools/call", "add")[0]
    assert call.result["content"][0]["text"] == "3"
    assert any(c is call for c in tape.calls)


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_mcptape_check_finds_what_a_served_mock_file_sent_valid(
    tmp_path: Path, mode: str
) -> None:
    import subprocess

    path = tmp_path / "demo.toml"
    path.write_text(MOCK_TOML)
    recording = tmp_path / "session.jsonl"
    record = ["-m", "mcptape", "record", "-q", "-o", str(recording), "--", sys.executable, "-m", "mcptape", "replay", str(path)]  # fmt: skip
    with anyio.fail_after(30):
        async with Client(
            StdioServerParameters(command=sys.executable, args=record), mode=mode
        ) as c:
            await c.list_tools()
            await c.call_tool("add", {"a": 1, "b": 2}, progress_callback=_ignore)
            await c.call_tool("add", {"a": 5, "b": 2})
            await c.call_tool("roll", {})
            await c.read_resource("demo://users/1")
            await c.get_prompt("review", {"code": "x"})
    done = subprocess.run([sys.executable, "-m", "mcptape", "check", str(recording)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2026-07-28" in recording.read_text() or mode == "legacy"


async def _ignore(*_: Any) -> None:
    return None


async def test_use_cassette_takes_a_mock_file(tmp_path: Path) -> None:
    path = tmp_path / "demo.toml"
    path.write_text(MOCK_TOML)
    async with mcptape.use_cassette(path) as tape:
        assert text(await tape.client.call_tool("roll", {})) == "4"
    assert tape.journal.call_count("roll") == 1


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_python_overlay_changes_one_answer_and_journals_the_rest(
    recorded: Recording, mode: str
) -> None:
    with mcptape.mock(cassette=recorded.path) as mock:
        add = mock.tool("add", lambda a, b: str(a * b), args={"a": 1, "b": 2})
        async with mock.connect(mode=mode, elicitation_callback=accept_name) as c:
            assert text(await c.call_tool("add", {"a": 1, "b": 2})) == "2"  # declared: a * b
            greeted = await c.call_tool("greet", {})  # recorded
            assert text(greeted) == "Hello, Ada!"
    add.assert_called_once_with(a=1, b=2)
    assert mock.call_count("greet") == 1
    assert mock.unused() == []
