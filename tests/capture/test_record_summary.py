"""A recording ends with one line: how many sessions, exchanges and messages, and where."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson

from tests.conftest import demo_server_cmd, mcptape_cmd

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def record(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    asks = "".join(orjson.dumps(m).decode() + "\n" for m in (INIT, LIST))
    return subprocess.run(
        [*mcptape_cmd("record", "-o", "x.jsonl", *flags, "--"), *demo_server_cmd()],
        input=asks, capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip


def test_a_stdio_recording_ends_with_its_summary_line(tmp_path: Path) -> None:
    done = record(tmp_path)
    assert done.returncode == 0, done.stderr
    last = done.stderr.splitlines()[-1]
    assert last.startswith("mcptape record: 1 session, ") and last.endswith(" in x.jsonl"), last
    assert " exchanges, " in last and " messages " in last


def test_quiet_prints_no_summary(tmp_path: Path) -> None:
    done = record(tmp_path, "-q")
    assert done.returncode == 0 and "session" not in done.stderr, done.stderr
