"""Many launches, one cassette: a client that starts the server for every operation.

langchain-mcp-adapters and llama-index launch the configured command once per operation, all
with the same `-o` path: every launch's session must land in the cassette, and every later
`mcptape replay` launch must be served from the session that matches it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from mcp import Client, StdioServerParameters

from mcptape.cassette import load
from mcptape.cassette.model import Kind
from mcptape.schema import cassette_schema
from tests.conftest import DEMO_SERVER, mcptape_cmd

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

Operation = Callable[[Client], Awaitable[Any]]


async def _list(c: Client) -> Any:
    return sorted(t.name for t in (await c.list_tools()).tools)


async def _add(c: Client) -> Any:
    return (await c.call_tool("add", {"a": 2, "b": 3})).model_dump(mode="json")["content"]


async def _divide(c: Client) -> Any:
    return (await c.call_tool("divide", {"a": 6, "b": 3})).model_dump(mode="json")["content"]


OPERATIONS: list[Operation] = [_list, _add, _divide]


def _params(*args: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    cmd = mcptape_cmd(*args)
    return StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)


def recorder(path: Path, *extra: str, env: dict[str, str] | None = None) -> StdioServerParameters:
    return _params(
        "record", "-q", *extra, "-o", str(path), "--", sys.executable, str(DEMO_SERVER), env=env
    )


async def _run(params: StdioServerParameters, op: Operation, mode: str = "legacy") -> Any:
    async with Client(params, mode=mode) as c:
        return await op(c)


def _sessions(path: Path) -> int:
    """How many sessions the cassette holds (each ends in its own `end`), every line valid."""
    cas = load(path)
    assert cas.warnings == []
    validator = jsonschema.Draft202012Validator(cassette_schema())
    for line in path.read_bytes().splitlines():
        validator.validate(json.loads(line))
    assert [e.seq for e in cas.events] == list(range(1, len(cas.events) + 1))
    return sum(1 for e in cas.events if e.kind is Kind.END)


def _show_json(path: Path) -> dict[str, Any]:
    out = subprocess.run(
        mcptape_cmd("show", "--format", "json", str(path)), capture_output=True, check=True
    )
    return dict(json.loads(out.stdout))


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_each_launch_records_a_session_and_replays_it(tmp_path: Path, mode: str) -> None:
    cassette = tmp_path / "same.jsonl"
    with anyio.fail_after(120):
        want = [await _run(recorder(cassette), op, mode) for op in OPERATIONS]
        assert _sessions(cassette) == len(OPERATIONS)
        got = [
            await _run(_params("replay", "--strict", str(cassette)), op, mode) for op in OPERATIONS
        ]
    assert got == want
    assert want[0][:2] == ["add", "divide"]
    assert "5" in json.dumps(want[1]) and "2.0" in json.dumps(want[2])
    sessions = _show_json(cassette)["sessions"]
    assert [s["n"] for s in sessions] == [1, 2, 3]
    text = subprocess.run(
        mcptape_cmd("show", str(cassette)), capture_output=True, check=True, text=True
    ).stdout
    assert text.count("session ") >= len(OPERATIONS)


async def test_concurrent_launches_both_land(tmp_path: Path) -> None:
    cassette = tmp_path / "same.jsonl"
    results: dict[int, Any] = {}

    async def one(n: int, op: Operation) -> None:
        results[n] = await _run(recorder(cassette), op)

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(one, 1, _add)
            tg.start_soon(one, 2, _divide)
    assert _sessions(cassette) == 2
    assert not list(tmp_path.glob("same-*.jsonl"))
    assert not list(tmp_path.glob("*.partial*"))
    with anyio.fail_after(60):
        assert await _run(_params("replay", str(cassette)), _divide) == results[2]
        assert await _run(_params("replay", str(cassette)), _add) == results[1]


async def test_a_new_run_replaces_and_new_episodes_appends(tmp_path: Path) -> None:
    cassette = tmp_path / "same.jsonl"
    with anyio.fail_after(120):
        await _run(recorder(cassette, env={"MCPTAPE_RUN": "one"}), _list)
        await _run(recorder(cassette, env={"MCPTAPE_RUN": "one"}), _add)
        assert _sessions(cassette) == 2
        await _run(recorder(cassette, env={"MCPTAPE_RUN": "two"}), _divide)
        assert _sessions(cassette) == 1
        await _run(recorder(cassette, "--record-mode", "new_episodes", env={"MCPTAPE_RUN": "three"}), _add)  # fmt: skip
        assert _sessions(cassette) == 2
        await _run(recorder(cassette, "--record-mode", "rewrite", env={"MCPTAPE_RUN": "four"}), _list)  # fmt: skip
        assert _sessions(cassette) == 1
        await _run(recorder(cassette, "--run", "five", env={"MCPTAPE_RUN": "four"}), _add)
        assert _sessions(cassette) == 1
        await _run(recorder(cassette, "--run", "five"), _divide)
        assert _sessions(cassette) == 2
