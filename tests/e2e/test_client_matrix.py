"""The client matrix: every client replays every recording client's cassette, on stdio and HTTP.

Clients: the official `mcp` Python SDK in its `auto` and `legacy` connect modes, the TypeScript
SDK 1.x with its own StdioClientTransport / StreamableHTTPClientTransport (no mcptape helper:
tests/e2e/js/ts-client.mjs), and the MCP Inspector CLI (`inspector --cli`). Cassettes: the golden
demo-server sessions (scripts/record-golden) recorded by the Python SDK `auto` (2026-07-28), the
Python SDK `legacy` (2025-11-25) and the TS SDK 1.x (2025-11-25, it has no other handshake), each
over stdio (replayed by `mcptape replay`) and Streamable HTTP (replayed by `mcptape serve`).

Every cell checks against the cassette itself: the recorded tool list and results, every recorded
progress step on each of 100 calls with a progress callback, the recorded JSON-RPC error and isError
result, and the elicitation: the client's handler gets the recorded question and the call the
recorded answer. The Inspector CLI has no progress callback and answers every elicitation with
`cancel` (it cannot ask anyone): its cells check results and errors, and that the elicited call
still gets the recorded answer. npm packages: tests/e2e/js/package-lock.json (scripts/install-test-deps).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.types import ElicitResult

from mcptape.cassette import load
from mcptape.pairing import Exchange, Session, pair
from tests.conftest import ROOT, mcptape_cmd
from tests.e2e.test_golden import _final, plain
from tests.replay.recorded import stdio

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

JS = ROOT / "tests" / "e2e" / "js"
TS_CLIENT = JS / "ts-client.mjs"
INSPECTOR = JS / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build" / "index.js"  # fmt: skip
CALLS = 100
"""Calls with a progress callback per cell, all in one client process."""

RECORDED_BY = {
    "python-auto": "python-sdk/2026-07-28",
    "python-legacy": "python-sdk/2025-11-25",
    "ts-sdk": "ts-sdk/2025-11-25",
}
TRANSPORTS = {"stdio": "stdio.jsonl", "http": "streamable-http.jsonl"}
CLIENTS = ["python-auto", "python-legacy", "ts-sdk", "inspector"]
OPERATIONS = ["add", "fail", "divide", "greet", "readme", "review"]


def cassette(recorded_by: str, transport: str) -> Path:
    return ROOT / "cassettes" / RECORDED_BY[recorded_by] / TRANSPORTS[transport]


@dataclass
class Recorded:
    """What the cassette says the server answered, per operation of a cell."""

    tools: list[Any]
    answers: dict[str, Any]
    """Operation -> the recorded result (plain), or {"error": {"code", "message"}}."""
    steps: list[list[Any]]
    """The progress the server reported on the recorded `add` call: [progress, total, message]."""
    question: str
    """The elicitation message of the recorded `greet` call."""


def _answer(ex: Exchange) -> Any:
    if ex.error is not None:
        return {"error": {"code": ex.error["code"], "message": ex.error["message"]}}
    return plain(ex.result)


def _find(session: Session, method: str, **params: Any) -> Exchange:
    for ex in session.exchanges:
        p = ex.msg.get("params") or {}
        if (
            ex.method == method
            and ex.retry_of is None
            and all(p.get(k) == v for k, v in params.items())
        ):
            return ex
    raise AssertionError(f"the cassette has no {method} {params}")


def _elicitation(ex: Exchange, session: Session) -> str:
    """The question of a call that elicited: a server request in it (legacy), or its input_required
    result's inputRequests (2026-07-28)."""
    for item in ex.items:
        if item.msg.get("method") == "elicitation/create":
            return str(item.msg["params"]["message"])
    requests = (ex.result or {}).get("inputRequests") or {}
    for request in requests.values():
        if request.get("method") == "elicitation/create":
            return str(request["params"]["message"])
    raise AssertionError(f"line {ex.request.line}: {ex.name} elicited nothing")


def recorded(path: Path) -> Recorded:
    session = pair(load(path).events)
    add = _find(session, "tools/call", name="add")
    greet = _find(session, "tools/call", name="greet")
    calls = {
        "add": add,
        "fail": _find(session, "tools/call", name="fail"),
        "divide": _find(session, "tools/call", name="divide"),
        "greet": greet,
        "readme": _find(session, "resources/read", uri="demo://readme"),
        "review": _find(session, "prompts/get", name="review"),
    }
    steps = [
        [i.msg["params"]["progress"], i.msg["params"].get("total"), i.msg["params"].get("message")]
        for i in add.items
        if i.msg.get("method") == "notifications/progress"
    ]
    assert steps, f"{path}: the recorded add call reported no progress"
    return Recorded(
        tools=_find(session, "tools/list").result["tools"],
        answers={op: _answer(_final(ex, session)) for op, ex in calls.items()},
        steps=steps,
        question=_elicitation(greet, session),
    )


# --- what each client got: {"tools", "progress": [steps per call] | None, op: answer, "elicited"} ---


async def python_cell(mode: str, target: Any) -> dict[str, Any]:
    elicited: list[str] = []

    async def answer(_ctx: Any, params: Any) -> ElicitResult:
        elicited.append(params.message)
        return ElicitResult(action="accept", content={"name": "Ada"})

    async def outcome(call: Any) -> Any:
        try:
            return plain(await call)
        except MCPError as exc:
            return {"error": {"code": exc.error.code, "message": exc.error.message}}

    got: dict[str, Any] = {"progress": []}
    with anyio.fail_after(120):
        async with Client(target, mode=mode, elicitation_callback=answer, cache=None) as c:
            got["tools"] = plain(await c.list_tools())["tools"]
            for i in range(CALLS):
                steps: list[list[Any]] = []

                async def on_progress(p: float, total: float | None, message: str | None) -> None:
                    steps.append([p, total, message])  # noqa: B023 (awaited within the iteration)

                result = await c.call_tool("add", {"a": 1, "b": 2}, progress_callback=on_progress)
                got["progress"].append(steps)
                if i == 0:
                    got["add"] = plain(result)
            got["fail"] = await outcome(c.call_tool("fail", {}))
            got["divide"] = await outcome(c.call_tool("divide", {"a": 1, "b": 0}))
            got["greet"] = await outcome(c.call_tool("greet", {}))
            got["readme"] = await outcome(c.read_resource("demo://readme"))
            got["review"] = await outcome(c.get_prompt("review", {"code": "print(1)"}))
    got["elicited"] = elicited
    return got


def node() -> str:
    found = shutil.which("node")
    if found is None or not INSPECTOR.exists():
        pytest.fail(
            "node or tests/e2e/js's packages are missing: run `make test` (scripts/install-test-deps)"
        )
    return found


def ts_cell(target: list[str]) -> dict[str, Any]:
    done = subprocess.run([node(), str(TS_CLIENT), "matrix", str(CALLS), *target],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    got: dict[str, Any] = json.loads(done.stdout)
    assert got.pop("sdkErrors") == [], (
        "the TS SDK reported errors (e.g. progress for an unknown token)"
    )
    return {k: plain(v) if k in OPERATIONS else v for k, v in got.items()}


INSPECTOR_CALLS: dict[str, list[str]] = {
    "tools": ["--method", "tools/list"],
    "add": ["--tool-args-json", '{"a": 1, "b": 2}', "--method", "tools/call", "--tool-name", "add"],
    "fail": ["--method", "tools/call", "--tool-name", "fail"],
    "divide": ["--tool-args-json", '{"a": 1, "b": 0}', "--method", "tools/call", "--tool-name", "divide"],
    "greet": ["--method", "tools/call", "--tool-name", "greet"],
}  # fmt: skip
"""One Inspector CLI run per operation (it makes one call per run, about a second of Node start-up
each, so its cells leave out the resource read and the prompt that the SDK cells make); the target
comes last, after an option that takes one value (a variadic one would swallow it)."""


def inspector_cell(target: list[str], home: Path) -> dict[str, Any]:
    env = {**os.environ, "HOME": str(home), "MCP_CATALOG_PATH": str(home / "mcp.json"),
           "MCP_CLIENT_CONFIG_PATH": str(home / "client.json")}  # fmt: skip
    got: dict[str, Any] = {"progress": None, "elicited": None}
    ops = list(INSPECTOR_CALLS)
    for first in range(0, len(ops), 3):  # three runs at a time: the machine has two cores
        runs = {op: subprocess.Popen([node(), str(INSPECTOR), "--cli", "-q", "--format", "json", *INSPECTOR_CALLS[op], *target],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                for op in ops[first : first + 3]}  # fmt: skip
        for op, run in runs.items():
            got[op] = _inspector_answer(op, run)
    got["tools"] = got["tools"]["tools"]
    return got


def _inspector_answer(op: str, run: subprocess.Popen[str]) -> Any:
    out, err = run.communicate(timeout=120)
    if out.strip():  # a result (an isError one too, with an error envelope on stderr, exit 5)
        return plain(json.loads(out)["result"])
    # a JSON-RPC error: the envelope on stderr, exit 1 (its code is "error", not the number)
    assert run.returncode == 1, (op, run.returncode, err[-2000:])
    return {"error": {"message": json.loads(err.strip().splitlines()[-1])["error"]["message"]}}


# --- the replays: `mcptape replay` per client run, one `mcptape serve` per HTTP cassette ---


def replay_cmd(path: Path) -> list[str]:
    return mcptape_cmd("replay", "-q", "--allow-repeats", str(path))


class Served:
    def __init__(self, path: Path) -> None:
        self.proc = subprocess.Popen(mcptape_cmd("serve", "-q", "--allow-repeats", "--port", "0", str(path)),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
        assert self.proc.stderr is not None
        self.stderr: list[bytes] = []
        for line in self.proc.stderr:
            self.stderr.append(line)
            m = re.match(rb"mcptape serve: serving \S+ at (\S+)", line)
            if m:
                self.url = m.group(1).decode()
                break
        else:
            raise AssertionError(f"mcptape serve {path} exited: {b''.join(self.stderr).decode()}")
        # keep reading, so a chatty replay never blocks on a full pipe
        threading.Thread(target=self.stderr.extend, args=(self.proc.stderr,), daemon=True).start()

    def close(self) -> None:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def served() -> Iterator[dict[Path, Served]]:
    running: dict[Path, Served] = {}
    yield running
    for server in running.values():
        server.close()


@pytest.fixture(scope="module")
def recordings() -> dict[Path, Recorded]:
    return {}


@pytest.mark.parametrize("transport", list(TRANSPORTS))
@pytest.mark.parametrize("recorded_by", list(RECORDED_BY))
@pytest.mark.parametrize("client", CLIENTS)
async def test_the_client_gets_what_the_recording_client_got(
    client: str, recorded_by: str, transport: str, served: dict[Path, Served],
    recordings: dict[Path, Recorded], tmp_path: Path,
) -> None:  # fmt: skip
    path = cassette(recorded_by, transport)
    want = recordings.get(path) or recordings.setdefault(path, recorded(path))
    if transport == "http":
        if path not in served:
            served[path] = Served(path)
        url = served[path].url
    if client.startswith("python-"):
        mode = client.removeprefix("python-")
        got = await python_cell(mode, url if transport == "http" else stdio(replay_cmd(path)))
    elif client == "ts-sdk":
        got = await anyio.to_thread.run_sync(
            ts_cell, [url] if transport == "http" else ["--", *replay_cmd(path)]
        )
    else:
        target = (
            ["--transport", "http", "--server-url", url]
            if transport == "http"
            else replay_cmd(path)
        )
        got = await anyio.to_thread.run_sync(inspector_cell, target, tmp_path)

    assert got["tools"] == want.tools
    for op in (
        OPERATIONS if client != "inspector" else [op for op in INSPECTOR_CALLS if op != "tools"]
    ):
        if client == "inspector" and "error" in want.answers[op]:  # the Inspector prints no code
            assert got[op] == {"error": {"message": want.answers[op]["error"]["message"]}}, op
        else:
            assert got[op] == want.answers[op], op
    if got["progress"] is not None:
        complete = sum(steps == want.steps for steps in got["progress"])
        assert complete == CALLS, (
            f"{complete} of {CALLS} calls got every progress step {want.steps}"
        )
    if got["elicited"] is not None:
        assert got["elicited"] == [want.question]


EVERYTHING = ROOT / "cassettes" / "everything" / "2025-11-25"
"""server-everything declares logging: the Inspector CLI sets a log level before anything else."""


@pytest.mark.parametrize("transport", list(TRANSPORTS))
async def test_the_inspector_sets_a_log_level_first_and_the_replay_accepts_it(
    transport: str, served: dict[Path, Served], tmp_path: Path
) -> None:
    """The recording client never sent logging/setLevel; the Inspector sends it first. On stdio a
    `mcptape record` between them shows the replay answering it; on both, the call after it gets
    the recorded answer."""
    path = EVERYTHING / TRANSPORTS[transport]
    session = pair(load(path).events)
    assert not any(ex.method == "logging/setLevel" for ex in session.exchanges)
    want = _answer(_find(session, "tools/call", name="echo"))
    between = tmp_path / "between.jsonl"
    if transport == "http":
        if path not in served:
            served[path] = Served(path)
        target = ["--transport", "http", "--server-url", served[path].url]
    else:  # the Inspector keeps a `--` in its target only after a `--` of its own
        target = ["--", *mcptape_cmd("record", "-q", "-o", str(between), "--", *replay_cmd(path))]
    env = {**os.environ, "HOME": str(tmp_path), "MCP_CATALOG_PATH": str(tmp_path / "mcp.json"),
           "MCP_CLIENT_CONFIG_PATH": str(tmp_path / "client.json")}  # fmt: skip
    args = ["--tool-args-json", '{"message": "hello from mcptape"}', "--method", "tools/call", "--tool-name", "echo"]  # fmt: skip
    run = subprocess.Popen([node(), str(INSPECTOR), "--cli", "-q", "--format", "json", *args, *target],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)  # fmt: skip
    got = await anyio.to_thread.run_sync(_inspector_answer, "echo", run)
    assert got == want
    if transport == "stdio":
        sent = pair(load(between).events).exchanges
        set_level = next(ex for ex in sent if ex.method == "logging/setLevel")
        assert set_level.index < next(ex.index for ex in sent if ex.method == "tools/list")
        assert set_level.error is None and set_level.result == {}
