"""The stdio shell over plain pipes (no subprocess, no event loop), and what `mcptape replay` imports."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import orjson
import pytest

from mcptape.replay import ReplayConfig
from mcptape.replay.server_stdio import StdioReplayServer
from tests.replay.tape import LEGACY_INIT, call, note, ok, req, tape

CASSETTE = tape(
    *LEGACY_INIT,
    ("c", call(2, "add", {"a": 1}, _meta={"progressToken": 2})),
    ("s", note("notifications/progress", {"progressToken": 2, "progress": 1})),
    ("s", ok(2, {"content": []})),
)  # fmt: skip


def serve(
    lines: list[bytes], *, strict: bool = False, speed: float | None = None
) -> tuple[int, list[Any]]:
    rin, win = os.pipe()
    rout, wout = os.pipe()
    os.write(win, b"".join(lines))
    os.close(win)
    server = StdioReplayServer(
        CASSETTE,
        ReplayConfig(),
        strict=strict,
        speed=speed,
        quiet=True,
        stdin_fd=rin,
        stdout_fd=wout,
    )
    code = server.run()
    os.close(wout)
    os.close(rin)
    with os.fdopen(rout, "rb") as f:
        return code, [orjson.loads(ln) for ln in f.read().splitlines()]


INIT = orjson.dumps(LEGACY_INIT[0][1]) + b"\n"
ADD = orjson.dumps(call("x", "add", {"a": 1}, _meta={"progressToken": "t"})) + b"\n"


@pytest.mark.parametrize("speed", [None, 1000.0])
def test_answers_every_line_in_order(speed: float | None) -> None:
    code, out = serve([INIT, b"\n", ADD], speed=speed)
    assert code == 0
    assert [m.get("method") or m["id"] for m in out] == [1, "notifications/progress", "x"]


def test_a_last_line_without_newline_is_still_answered() -> None:
    _, out = serve([INIT, orjson.dumps(req(7, "ping"))])
    assert out[-1] == ok(7, {})


def test_strict_exit_code_reflects_unplayed_exchanges() -> None:
    assert serve([INIT, ADD], strict=True)[0] == 0
    assert serve([INIT], strict=True)[0] == 1


def test_mcptape_replay_imports_neither_sdk_nor_heavy_dependencies() -> None:
    code = (
        "import sys, mcptape.cli, mcptape.cli.replay, mcptape.replay.server_stdio;"
        "heavy = [m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types', 'pydantic', 'mitmproxy', 'deepdiff', 'anyio', 'tabulate')];"
        "print(heavy)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=30
    )
    assert out.stdout.strip() == "[]"


def test_an_answer_recorded_after_the_clients_end_of_input_is_played() -> None:
    """A server that finishes its work at end of input: the client closed stdin, then read the
    answer. The replay answers it too (it used to drop it silently)."""
    from tests.replay.tape import HANGUP

    late = tape(
        *LEGACY_INIT,
        ("c", call(2, "add", {"a": 1})),
        HANGUP,
        ("s", ok(2, {"content": [{"type": "text", "text": "2"}]})),
    )
    rin, win = os.pipe()
    rout, wout = os.pipe()
    os.write(win, INIT + orjson.dumps(call(5, "add", {"a": 1})) + b"\n")
    os.close(win)
    code = StdioReplayServer(late, ReplayConfig(), quiet=True, stdin_fd=rin, stdout_fd=wout).run()
    os.close(wout)
    os.close(rin)
    with os.fdopen(rout, "rb") as f:
        out = [orjson.loads(ln) for ln in f.read().splitlines()]
    assert code == 0
    assert out[-1] == ok(5, {"content": [{"type": "text", "text": "2"}]})
