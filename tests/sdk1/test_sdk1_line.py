"""The `mcp` SDK's 1.x line: a project pinned to `mcp<2` replays bundled cassettes in process.

The tests run under `.venv-sdk1` (`scripts/sdk1-env`: mcptape from this checkout beside the
1.x SDK, exact versions from tests/sdk1/lock.txt), as a child pytest run over a test file
written like a user's: the in-process transport under a `ClientSession`, the pytest
plugin's session in an async and a sync test, 2.x client options, a request with no
recording, and recording (record modes `once` and `new_episodes`) from a 1.x server.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytest_plugins = ["pytester"]

SDK1_PYTHON = Path(os.environ.get("MCPTAPE_SDK1_PYTHON") or ROOT / ".venv-sdk1" / "bin" / "python")
"""The interpreter of the 1.x venv; MCPTAPE_SDK1_PYTHON names another (say, one with the floor release)."""
CASSETTES = ROOT / "cassettes" / "python-sdk"

pytestmark = pytest.mark.skipif(
    not SDK1_PYTHON.exists() and not os.environ.get("CI"),  # in CI, `make test` builds it: a must
    reason="no .venv-sdk1: make test-sdk1 (or scripts/sdk1-env) builds it",
)

USER_TESTS = """
from importlib.metadata import version

import mcp
import pytest
from mcp import ClientSession

from mcptape.replay.memory import replay_transport

SAME_ERA = {same_era!r}
MODERN = {modern!r}
BOTH = [
    pytest.param(SAME_ERA, marks=pytest.mark.mcptape(cassette=SAME_ERA), id="2025-11-25"),
    pytest.param(MODERN, marks=pytest.mark.mcptape(cassette=MODERN), id="2026-07-28"),
]


@pytest.fixture
def anyio_backend():
    return "asyncio"


def test_this_is_the_1x_sdk():
    assert version("mcp").startswith("1.") and not hasattr(mcp, "Client")


@pytest.mark.anyio
@pytest.mark.parametrize("cassette", [SAME_ERA, MODERN])
async def test_the_transport_serves_a_client_session(cassette):
    async with replay_transport(cassette, on_note=None) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.serverInfo.name == "mcptape-demo"
            tools = await session.list_tools()
            assert "add" in [tool.name for tool in tools.tools]
            result = await session.call_tool("echo", {{"message": "hello"}})
            assert result.content[0].text == "hello"


@pytest.mark.anyio
@pytest.mark.parametrize("cassette", BOTH)
async def test_the_plugins_client_is_a_session(mcptape, cassette):
    assert isinstance(mcptape.client, ClientSession)
    tools = await mcptape.client.list_tools()
    assert "add" in [tool.name for tool in tools.tools]
    result = await mcptape.client.call_tool("add", {{"a": 1, "b": 2}})
    assert result.content[0].text == "3"


@pytest.mark.parametrize("cassette", BOTH)
def test_a_sync_test_runs_a_session(mcptape, cassette):
    async def echo(client):
        return await client.call_tool("echo", {{"message": "hello"}})

    assert mcptape.run(echo).content[0].text == "hello"


@pytest.mark.anyio
@pytest.mark.mcptape(cassette=SAME_ERA, client={{"mode": "legacy", "log_level": "info", "read_timeout_seconds": 30}})
async def test_the_2x_options_a_1x_session_has_no_use_for(mcptape):
    assert (await mcptape.client.list_tools()).tools


@pytest.mark.anyio
@pytest.mark.mcptape(cassette=MODERN, client={{"mode": "2026-07-28"}})
async def test_a_modern_mode(mcptape):
    await mcptape.client.list_tools()


@pytest.mark.anyio
@pytest.mark.mcptape(cassette=SAME_ERA)
async def test_unrecorded(mcptape):
    await mcptape.client.call_tool("add", {{"a": 1, "b": 99}})
"""


ONE_X_SERVER = """
from mcp.server.fastmcp import FastMCP

app = FastMCP("one-x")


@app.tool()
def shout(text: str) -> str:
    return text.upper()


app.run()
"""

RECORDING_TESTS = """
import pytest

pytestmark = [pytest.mark.anyio, pytest.mark.mcptape(cassette="shout", server=["python", "one_x_server.py"])]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.parametrize("mcptape_record_mode", ["once"])
async def test_recorded(mcptape):
    assert mcptape.recording
    assert (await mcptape.client.call_tool("shout", {"text": "a"})).content[0].text == "A"


@pytest.mark.parametrize("mcptape_record_mode", ["new_episodes"])
async def test_a_new_episode(mcptape):
    assert not mcptape.recording
    assert (await mcptape.client.call_tool("shout", {"text": "a"})).content[0].text == "A"
    assert (await mcptape.client.call_tool("shout", {"text": "b"})).content[0].text == "B"
"""


def test_a_project_on_the_1x_sdk_records_and_adds_new_episodes(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(one_x_server=ONE_X_SERVER, test_recording=RECORDING_TESTS)
    args = ["-m", "pytest", "-p", "no:cacheprovider", "-p", "anyio", "--tb=short", "-q"]
    result = pytester.run(str(SDK1_PYTHON), *args, "test_recording.py", timeout=120)
    result.assert_outcomes(passed=2)
    [cassette] = pytester.path.rglob("shout.jsonl")
    calls = [line for line in cassette.read_text().splitlines() if '"tools/call"' in line]
    assert ['"text":"a"' in calls[0], '"text":"b"' in calls[1], len(calls)] == [True, True, 2]


def test_a_project_on_the_1x_sdk_replays_in_process_and_fails_in_a_few_lines(
    pytester: pytest.Pytester,
) -> None:
    path = pytester.makepyfile(
        test_user=USER_TESTS.format(
            same_era=str(CASSETTES / "2025-11-25" / "stdio.jsonl"),
            modern=str(CASSETTES / "2026-07-28" / "stdio.jsonl"),
        )
    )
    unrecorded = (
        path.read_text()
        .splitlines()
        .index('    await mcptape.client.call_tool("add", {"a": 1, "b": 99})')
    )
    args = ["-m", "pytest", "-p", "no:cacheprovider", "-p", "anyio", "--tb=short", "-q"]
    result = pytester.run(str(SDK1_PYTHON), *args, "test_user.py", timeout=120)
    out = result.stdout.str()
    result.assert_outcomes(passed=8, failed=2)
    lines = out[out.index("_ test_a_modern_mode _") :].splitlines()
    assert re.fullmatch(
        r"client option mode='2026-07-28' needs the mcp SDK 2\.x \(installed: mcp 1\.[0-9.]+\); "
        r"with 1\.x use mode='legacy' or leave it out",
        lines[1],
    ), out
    lines = out[out.index("_ test_unrecorded _") :].splitlines()
    assert lines[1] == (
        f"test_user.py:{unrecorded + 1}: no recorded answer for tools/call 'add': arguments/b is 99 "
        "(recorded 2), compared with the nearest recorded request (line 7)"
    ), out
    assert 'fix:      if /arguments/b does not matter, add ignore=["/arguments/b"]' in lines[5]
    assert "Traceback" not in out and "ExceptionGroup" not in out
