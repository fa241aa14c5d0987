"""`mcptape replay`'s startup: it goes through the one click parser like every command, and
imports nothing that only other commands need."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from tests.conftest import ROOT, mcptape_cmd

GOLDEN = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"

HEAVY = (
    "tomllib", "asyncio", "anyio", "mcp", "mcp_types", "pydantic", "mitmproxy",
    "deepdiff", "tabulate", "httpx", "uvicorn", "jsonschema", "mcptape.diff", "mcptape.views",
    "mcptape.capture", "mcptape.redaction.redact", "mcptape.redaction.secrets", "mcptape.cli.diff", "mcptape.cli.record",
    "mcptape.cli.version", "shutil",
)  # fmt: skip
"""Modules (and their submodules) that `mcptape replay FILE` must not import before it answers."""


def test_a_directory_is_refused_in_one_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        mcptape_cmd("replay", str(tmp_path)), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "is a directory" in proc.stderr and proc.stderr.count("\n") == 1


def test_a_missing_cassette_is_named_as_given(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    proc = subprocess.run(
        mcptape_cmd("replay", "-q", "sub/missing.jsonl"),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert proc.stderr == "mcptape: error: sub/missing.jsonl: no such cassette\n"


INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip


@pytest.mark.parametrize("extra", [[], ["--timing", "none"]], ids=["flags", "option-with-value"])
def test_an_interrupt_ends_quietly(extra: list[str]) -> None:
    """Ctrl-C while serving: a blank line (closing the terminal's ^C), "aborted", exit 130."""
    proc = subprocess.Popen(
        mcptape_cmd("replay", "-q", *extra, str(GOLDEN)),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(orjson.dumps(INIT) + b"\n")
    proc.stdin.flush()
    assert orjson.loads(proc.stdout.readline())["id"] == 1  # serving: the handshake answered
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert err == b"\nmcptape: error: aborted\n"


def test_replay_answers_without_importing_what_other_commands_need() -> None:
    """`python -X importtime` lists every module the real command imports until it exits."""
    cmd = [sys.executable, "-X", "importtime", *mcptape_cmd("replay", "-q", str(GOLDEN))[1:]]
    proc = subprocess.run(
        cmd, input=orjson.dumps(INIT) + b"\n", capture_output=True, timeout=60,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr.decode()
    answer = orjson.loads(proc.stdout.splitlines()[0])
    assert answer["id"] == 1 and answer["result"]["protocolVersion"] == "2025-11-25"
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in proc.stderr.decode().splitlines()
        if line.startswith("import time:")
    }
    assert "mcptape.replay.server_stdio" in imported  # the listing is complete enough to judge
    heavy = sorted(m for m in imported if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == []
