"""Overlay rules: fault rules and a mock's overlay declarations are one mechanism. An overlay
makes one recorded tool fail while the rest plays as recorded (in process and over stdio), a
declared `recorded(delay=...)` is the recorded answer later, an overlay's declared tools are
listed, and a fault file and the overlay declaring the same give the same session and journal
(docs/mocks.md and docs/faults.md, "Fault rules are overlay rules")."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.client.stdio import StdioServerParameters

import mcptape
from mcptape.cassette import load
from mcptape.mocks.file import declarations, tree_of
from mcptape.pairing import pair
from mcptape.replay import ReplayConfig, ReplayEngine, Send
from mcptape.replay.memory import replay_transport
from tests.mocks.test_overlay_faults import CASSETTES, session
from tests.replay.recorded import ERAS
from tests.sdk_helpers import accept_name

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CASSETTE = CASSETTES["2025-11-25"]
"""The demo server's standard session: add (with progress), divide (a tool error), greet."""
RULE = {"tool": "divide", "action": "error", "code": -32042, "message": "divide is down"}
"""A fault rule that makes divide fail."""
FAILED = (-32042, "divide is down", None)
"""What the client sees of divide under that rule."""


def options(mode: str) -> dict[str, Any]:
    return {"mode": mode, "elicitation_callback": accept_name}


async def plain_session(mode: str) -> list[Any]:
    async with Client(replay_transport(CASSETTE, on_note=None), **options(mode)) as c:
        return await session(c)


def all_but_divide(seen: list[Any]) -> list[Any]:
    return [x for i, x in enumerate(seen) if i != 2]


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_an_overlay_rule_fails_one_recorded_tool_and_the_rest_plays_as_recorded(
    mode: str,
) -> None:
    with anyio.fail_after(30):
        with mcptape.mock(cassette=CASSETTE) as mock:
            mock.tool("divide", mcptape.recorded(fault="error", code=-32042, message="divide is down"))  # fmt: skip
            async with mock.connect(**options(mode)) as c:
                got = await session(c)
        plain = await plain_session(mode)
    assert got[2] == FAILED and plain[2] != FAILED
    assert all_but_divide(got) == all_but_divide(plain)
    assert mock.call_count("divide") == 1


def replay(*args: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "mcptape", "replay", *args])


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_over_stdio_a_fault_file_and_the_overlay_file_declaring_it_answer_alike(
    tmp_path: Path, mode: str
) -> None:
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"faults": [RULE]}))
    overlay = tmp_path / "overlay.toml"
    overlay.write_text(
        f'[server]\ncassette = {json.dumps(str(CASSETTE))}\n\n[[tools]]\nname = "divide"\n\n'
        '[[tools.answers]]\nrecorded = true\nfault = "error"\ncode = -32042\nmessage = "divide is down"\n'
    )
    with anyio.fail_after(60):
        async with Client(replay("--fault-file", str(faults), str(CASSETTE)), **options(mode)) as c:
            faulted = await session(c)
        async with Client(replay(str(overlay)), **options(mode)) as c:
            overlaid = await session(c)
        plain = await plain_session(mode)
    assert faulted == overlaid
    assert overlaid[2] == FAILED
    assert all_but_divide(overlaid) == all_but_divide(plain)


def _requests() -> tuple[dict[str, Any], dict[str, Any]]:
    """The recorded `initialize` and the recorded call of add."""
    exchanges = pair(load(CASSETTE).events).exchanges
    init = next(e.msg for e in exchanges if e.method == "initialize")
    add = next(e.msg for e in exchanges if e.method == "tools/call" and e.name == "add")
    return init, add


def test_a_recorded_answer_declared_late_is_the_recorded_answer_that_many_seconds_later() -> None:
    init, add = _requests()
    with mcptape.mock(cassette=CASSETTE) as mock:
        mock.tool("add", mcptape.recorded(delay=2))
        late = ReplayEngine.from_cassette(mock.cassette(), mock.engine_config())
    plain = ReplayEngine.from_cassette(load(CASSETTE), ReplayConfig())
    steps = []
    for engine in (late, plain):
        engine.receive(init)
        steps.append([s for s in engine.receive(add) if isinstance(s, Send)])
    assert [s.msg for s in steps[0]] == [s.msg for s in steps[1]]  # progress, logs, the answer
    assert [s.delay for s in steps[0]] == [0.0] * (len(steps[0]) - 1) + [2.0]
    assert steps[0][-1].final and {s.delay for s in steps[1]} == {0.0}


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_client_gets_the_late_recorded_answer_no_sooner(mode: str) -> None:
    with anyio.fail_after(30):
        with mcptape.mock(cassette=CASSETTE) as mock:
            mock.tool("add", mcptape.recorded(delay=0.3))
            async with mock.connect(**options(mode)) as c:
                await c.list_tools()
                start = anyio.current_time()
                result = await c.call_tool("add", {"a": 1, "b": 2})
                took = anyio.current_time() - start
        async with Client(replay_transport(CASSETTE, on_note=None), **options(mode)) as c:
            recorded = await c.call_tool("add", {"a": 1, "b": 2})
    assert took >= 0.3
    assert result.model_dump(exclude={"meta"}) == recorded.model_dump(exclude={"meta"})


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_an_overlays_declared_tools_are_listed_with_the_recorded_ones(mode: str) -> None:
    with anyio.fail_after(30):
        with mcptape.mock(cassette=CASSETTE) as mock:
            mock.tool("shout", lambda text: text.upper(), description="Shouts.")
            mock.tool("greet", "Hi!", description="A declared greeting.")
            async with mock.connect(**options(mode)) as c:
                listed = (await c.list_tools()).tools
                shouted = await c.call_tool("shout", {"text": "hey"})
        async with Client(replay_transport(CASSETTE, on_note=None), **options(mode)) as c:
            recorded = (await c.list_tools()).tools
    assert [t.name for t in listed] == [t.name for t in recorded] + ["shout"]
    by_name = {t.name: t for t in listed}
    assert by_name["shout"].description == "Shouts."
    assert by_name["greet"].description == "A declared greeting."
    assert by_name["add"] == next(t for t in recorded if t.name == "add")
    assert shouted.content[0].text == "HEY"


def test_declared_prompts_and_resources_join_the_recorded_lists() -> None:
    init, _ = _requests()
    with mcptape.mock(cassette=CASSETTE) as mock:
        mock.prompt("haiku", "Write a haiku.")
        mock.resource("demo://extra", "more")
        engine = ReplayEngine.from_cassette(mock.cassette(), mock.engine_config())
    engine.receive(init)
    for n, (method, key, name) in enumerate(
        [("prompts/list", "prompts", "haiku"), ("resources/list", "resources", "extra")]
    ):
        [answer] = [s for s in engine.receive({"jsonrpc": "2.0", "id": 50 + n, "method": method}) if isinstance(s, Send)]  # fmt: skip
        assert answer.msg["result"][key][-1]["name"] == name


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_fault_rule_and_the_overlay_declaration_of_it_journal_alike(mode: str) -> None:
    def journal(mock: Any) -> list[Any]:
        return [(c.method, c.params, c.answer) for c in mock.calls]

    seen = []
    with anyio.fail_after(30):
        for declare in (
            lambda m: m.fault(RULE),
            lambda m: m.tool("divide", mcptape.recorded(fault="error", code=-32042, message="divide is down")),
        ):  # fmt: skip
            with mcptape.mock(cassette=CASSETTE) as mock:
                declare(mock)
                async with mock.connect(**options(mode)) as c:
                    got = await session(c)
            seen.append((got, journal(mock)))
        async with Client(replay_transport(CASSETTE, faults=[RULE], on_note=None), **options(mode)) as c:  # fmt: skip
            faulted = await session(c)
    assert seen[0] == seen[1]
    assert seen[0][0] == faulted and faulted[2] == FAILED
    assert any(
        answer and answer.get("error", {}).get("code") == -32042 for *_, answer in seen[0][1]
    )


def test_a_mocks_overlay_rules_are_written_as_fault_rules_and_read_back() -> None:
    with mcptape.mock(cassette=CASSETTE) as mock:
        mock.tool("add", mcptape.recorded(delay=1.5, nth=2))
        mock.tool("greet", "Hi", fault="drop")
        mock.fault(RULE)
        tree = tree_of(mock.server, CASSETTE)
    assert tree["faults"] == [
        {"action": "delay", "method": "tools/call", "name": "add", "nth": 2, "seconds": 1.5},
        {"action": "drop", "method": "tools/call", "name": "greet"},
        {"action": "error", "method": "tools/call", "name": "divide", "code": -32042, "message": "divide is down"},
    ]  # fmt: skip
    assert declarations(json.loads(json.dumps(tree))).rules == mock.server.rules


def test_recorded_needs_a_recording_and_a_declared_answer_takes_only_wire_faults() -> None:
    with mcptape.mock() as mock, pytest.raises(mcptape.ConfigError, match="over one"):
        mock.tool("add", mcptape.recorded(delay=1))
    with mcptape.mock(cassette=CASSETTE) as mock:
        with pytest.raises(mcptape.ConfigError, match="takes a wire fault"):
            mock.tool("add", 3, fault="error")
        with pytest.raises(mcptape.ConfigError, match="for a late answer give delay="):
            mock.tool("add", mcptape.recorded(fault="delay"))


def test_a_resource_and_a_prompt_take_recorded_answers_too() -> None:
    exchanges = pair(load(CASSETTE).events).exchanges
    init, _ = _requests()
    read = next(e.msg for e in exchanges if e.method == "resources/read" and e.response is not None and e.error is None)  # fmt: skip
    got = next(e.msg for e in exchanges if e.method == "prompts/get")
    with mcptape.mock(cassette=CASSETTE) as mock:
        mock.resource(read["params"]["uri"], mcptape.recorded(fault="drop"))
        mock.prompt(got["params"]["name"], mcptape.recorded(delay=1))
        engine = ReplayEngine.from_cassette(mock.cassette(), mock.engine_config())
    engine.receive(init)
    assert [s for s in engine.receive(read) if isinstance(s, Send)] == []  # dropped
    [answer] = [s for s in engine.receive(got) if isinstance(s, Send)]
    assert answer.delay == 1 and "messages" in answer.msg["result"]


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_over_http_an_overlay_rule_answers_a_recorded_call_with_a_status(mode: str) -> None:
    pytest.importorskip("uvicorn")

    http = CASSETTE.parent / "streamable-http.jsonl"
    with mcptape.mock(cassette=http) as mock:
        mock.tool("divide", mcptape.recorded(fault="status", status=503))
        mock.tool("shout", "HEY")
        with anyio.fail_after(30):
            async with Client(mock.url, **options(mode)) as c:
                listed = [t.name for t in (await c.list_tools()).tools]
                with pytest.raises(MCPError) as failed:
                    await c.call_tool("divide", {"a": 1, "b": 0})
                added = await c.call_tool("add", {"a": 1, "b": 2})
    assert listed[-1] == "shout" and "divide" in listed
    assert failed.value.error.message == "Server returned an error response"  # the 503
    assert not added.is_error


async def test_rules_declared_once_the_mocks_client_is_connected_apply_from_then_on() -> None:
    with anyio.fail_after(30):
        async with mcptape.mock(cassette=CASSETTE) as mock:  # its client connects here
            added = await mock.client.call_tool("add", {"a": 1, "b": 2})
            mock.tool("add", mcptape.recorded(fault="error", code=-32042, message="add is down"))
            with pytest.raises(MCPError) as failed:
                await mock.client.call_tool("add", {"a": 1, "b": 2})
    assert not added.is_error
    assert failed.value.error.code == -32042


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_mock_command_carries_the_overlay_rules_to_mcptape_replay(mode: str) -> None:
    with anyio.fail_after(60):
        with mcptape.mock(cassette=CASSETTE) as mock:
            mock.tool("divide", mcptape.recorded(fault="error", code=-32042, message="divide is down"))  # fmt: skip
            command = mock.command
            params = StdioServerParameters(command=command[0], args=command[1:])
            async with Client(params, **options(mode)) as c:
                got = await session(c)
        plain = await plain_session(mode)
    assert got[2] == FAILED
    assert all_but_divide(got) == all_but_divide(plain)


def test_a_mock_files_faults_round_trip_through_toml() -> None:
    import tomllib

    from mcptape.mocks.file import dumps_toml

    with mcptape.mock(cassette=CASSETTE) as mock:
        mock.tool("add", mcptape.recorded(delay=(0.5, 1.5), seed=3), args={"a": 1, "b": 2})
        mock.fault(RULE)
        text = dumps_toml(tree_of(mock.server, CASSETTE))
    assert "[[faults]]" in text
    assert declarations(tomllib.loads(text)).rules == mock.server.rules
