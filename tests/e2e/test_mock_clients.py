"""Real clients against a declared mock file: the MCP Inspector CLI and the TypeScript SDK 1.x
list the tools of a `.toml` mock served by `mcptape replay` (stdio) and `mcptape serve` (HTTP),
and call them: the answer declared for the arguments, the tool error for any others, and the
no-match error for arguments a tool declares no answer for (docs/mocks.md, the file form).
The TypeScript SDK also reaches a Python mock through `mock.command`, progress and all."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import mcptape
from tests.conftest import mcptape_cmd
from tests.e2e.test_client_matrix import CALLS, INSPECTOR, TS_CLIENT, Served, node

pytestmark = pytest.mark.e2e

MOCK = """\
[server]
name = "weather"

[[tools]]
name = "forecast"
description = "The forecast for a city."
input_schema = { type = "object", properties = { city = { type = "string" } }, required = ["city"] }

[[tools.answers]]
args = { city = "Paris" }
result = { temp = 21, sky = "clear" }

[[tools.answers]]
error = "only Paris is declared"

[[tools]]
name = "add"
description = "Adds two numbers."
input_schema = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } } }

[[tools.answers]]
args = { a = 1, b = 2 }
text = "3"
"""

TOOLS = [
    {
        "name": "forecast",
        "description": "The forecast for a city.",
        "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
    {
        "name": "add",
        "description": "Adds two numbers.",
        "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
    },
]  # fmt: skip
PARIS = {
    "content": [{"type": "text", "text": '{"temp": 21, "sky": "clear"}'}],
    "structuredContent": {"temp": 21, "sky": "clear"},
    "isError": False,
}
ROME = {"content": [{"type": "text", "text": "only Paris is declared"}], "isError": True}
THREE = {"content": [{"type": "text", "text": "3"}], "isError": False}
NO_MATCH = (
    'mcptape mock weather: tools/call add {"a": 5} fits no declared arguments; '
    "nearest: a: 5 vs declared 1; b: '(absent)' vs declared 2"
)


@pytest.fixture
def mock(tmp_path: Path) -> Path:
    path = tmp_path / "mock.toml"
    path.write_text(MOCK)
    return path


@pytest.fixture(params=["stdio", "http"])
def target(request: pytest.FixtureRequest, mock: Path) -> Iterator[list[str]]:
    """How a client reaches the mock: `mcptape replay mock.toml`, or `mcptape serve`'s URL."""
    if request.param == "stdio":
        yield ["--", *mcptape_cmd("replay", "-q", str(mock))]
        return
    served = Served(mock)
    try:
        yield [served.url]
    finally:
        served.close()


def inspector(args: list[str], target: list[str], home: Path) -> tuple[int, Any]:
    """One Inspector CLI run: its exit code and the JSON it printed (a result on stdout, or an
    error envelope as the last line of stderr). The target comes after an option of one value."""
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json"),
           "MCP_CLIENT_CONFIG_PATH": str(home / "client.json")}  # fmt: skip
    where = ["--transport", "http", "--server-url", target[0]] if len(target) == 1 else target[1:]
    done = subprocess.run([node(), str(INSPECTOR), "--cli", "-q", "--format", "json", *args, *where],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    if done.stdout.strip():
        return done.returncode, json.loads(done.stdout)["result"]
    return done.returncode, json.loads(done.stderr.strip().splitlines()[-1])["error"]


def test_the_inspector_lists_and_calls_the_declared_tools(
    target: list[str], tmp_path: Path
) -> None:
    def ask(*args: str) -> tuple[int, Any]:
        return inspector(list(args), target, tmp_path)

    call = ["--method", "tools/call", "--tool-name"]
    assert ask("--method", "tools/list") == (0, {"tools": TOOLS})
    assert ask("--tool-arg", "city=Paris", *call, "forecast") == (0, PARIS)
    assert ask("--tool-arg", "a=1", "b=2", *call, "add") == (0, THREE)
    # a tool error is a result with isError: the Inspector prints it and exits 5
    assert ask("--tool-arg", "city=Rome", *call, "forecast") == (5, ROME)
    # arguments no answer is declared for: a JSON-RPC error naming the nearest declaration
    code, error = ask("--tool-arg", "a=5", *call, "add")
    assert (code, error["message"]) == (1, NO_MATCH)


def test_the_typescript_sdk_lists_and_calls_the_declared_tools(target: list[str]) -> None:
    calls = [["forecast", {"city": "Paris"}], ["forecast", {"city": "Rome"}], ["add", {"a": 1, "b": 2}], ["add", {"a": 5}]]  # fmt: skip
    done = subprocess.run([node(), str(TS_CLIENT), "calls", json.dumps(calls), *target],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got["sdkErrors"] == []
    assert got["tools"] == TOOLS
    assert got["calls"] == [PARIS, ROME, THREE, {"error": {"code": -32010, "message": NO_MATCH}}]


def test_the_typescript_sdk_over_mock_command_gets_every_progress_step() -> None:
    """`mock.command` relays a mock of this process to a stdio client: a function answers, and
    the relay paces its stdout as the stdio replay does, so the TS SDK 1.x, which drops a
    progress notification read together with its response, gets every step of every call."""
    with mcptape.mock("paced") as mock:
        add = mock.tool("add", lambda a, b: a + b, progress=[(1, 2, "half"), (2, 2, "done")])
        done = subprocess.run([node(), str(TS_CLIENT), "matrix", str(CALLS), "--", *mock.command],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        got = json.loads(done.stdout)
        assert got["sdkErrors"] == []
        assert got["progress"] == [[[1, 2, "half"], [2, 2, "done"]]] * CALLS
        assert got["add"]["content"] == [{"type": "text", "text": "3"}]
        assert add.call_count == CALLS
