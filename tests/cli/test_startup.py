"""`mcptape replay`'s startup: its plain form runs without click, as click would run it, and
imports nothing that only other commands need."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from mcptape.cli.replay import replay
from mcptape.cli.replay_run import plain_replay
from tests.conftest import ROOT, mcptape_cmd

GOLDEN = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"

HEAVY = (
    "click", "difflib", "tomllib", "asyncio", "anyio", "mcp", "mcp_types", "pydantic", "mitmproxy",
    "deepdiff", "tabulate", "httpx", "uvicorn", "jsonschema", "mcptape.diff", "mcptape.views",
    "mcptape.capture", "mcptape.redact", "mcptape.secrets", "mcptape.cli.group",
)  # fmt: skip
"""Modules (and their submodules) that `mcptape replay FILE` must not import before it answers."""

PLAIN = [
    ["replay", "a.jsonl"],
    ["replay", "-q", "a.jsonl"],
    ["replay", "a.jsonl", "--quiet"],
    ["replay", "--strict", "a.jsonl", "--allow-repeats"],
    ["replay", "--same-era", "--strict", "--strict", "-q", "a.jsonl"],
]


@pytest.mark.parametrize("argv", PLAIN, ids=" ".join)
def test_the_plain_form_is_read_as_click_reads_it(argv: list[str]) -> None:
    with replay.make_context("replay", argv[1:]) as ctx:
        assert plain_replay(argv) == ctx.params


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["replay"],
        ["--version"],
        ["show", "a.jsonl"],
        ["replay", "--help"],
        ["replay", "-h", "a.jsonl"],
        ["replay", "--timing", "recorded", "a.jsonl"],
        ["replay", "--ignore=/arguments/when", "a.jsonl"],
        ["replay", "--strict=yes", "a.jsonl"],
        ["replay", "-qq", "a.jsonl"],
        ["replay", "--strct", "a.jsonl"],
        ["replay", "a.jsonl", "b.jsonl"],
        ["replay", "--", "a.jsonl"],
        ["replay", "-"],
        ["replay", ""],
        ["replay", "--dry-run", "a.jsonl"],
    ],
    ids=repr,
)
def test_every_other_form_is_left_to_click(argv: list[str]) -> None:
    assert plain_replay(argv) is None


def test_a_directory_is_left_to_click_which_refuses_it(tmp_path: Path) -> None:
    assert plain_replay(["replay", str(tmp_path)]) is None
    proc = subprocess.run(
        mcptape_cmd("replay", str(tmp_path)), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "is a directory" in proc.stderr and proc.stderr.count("\n") == 1


def test_shell_completion_is_left_to_click(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_MCPTAPE_COMPLETE", "bash_complete")
    assert plain_replay(["replay", "a.jsonl"]) is None


def test_both_ways_end_alike_on_a_missing_cassette(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.jsonl")
    plain = subprocess.run(mcptape_cmd("replay", "-q", missing), capture_output=True, text=True)
    # --timing none is the default: the same command, read by click
    clicked = subprocess.run(
        mcptape_cmd("replay", "-q", "--timing", "none", missing), capture_output=True, text=True
    )
    assert plain.returncode == clicked.returncode == 2
    assert plain.stderr == clicked.stderr
    assert plain.stderr.startswith("mcptape: error: ") and "missing.jsonl" in plain.stderr


INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip


@pytest.mark.parametrize("extra", [[], ["--timing", "none"]], ids=["plain", "click"])
def test_an_interrupt_ends_both_ways_alike(extra: list[str]) -> None:
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
