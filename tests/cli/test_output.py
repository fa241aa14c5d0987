"""What the commands print around their work: a closed pipe, mistyped commands, `--version`,
progress on a terminal only, and paths as the user gave them."""

from __future__ import annotations

import os
import pty
import shutil
import subprocess
from pathlib import Path

import pytest

from mcptape.cli import version
from tests.conftest import ROOT, mcptape_cmd
from tests.reliability.helpers import client, server, write_cassette

GOLDEN = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"


@pytest.fixture
def big(tmp_path: Path) -> Path:
    """A cassette whose `show --format json` fills a pipe many times over."""
    events = []
    for i in range(1, 1500):
        call = {"name": "echo", "arguments": {"text": f"message {i} " * 8}}
        events.append(client({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}))
        events.append(server({"jsonrpc": "2.0", "id": i, "result": {"content": []}}))
    return write_cassette(tmp_path / "big.jsonl", *events)


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_closed_pipe_ends_quietly_with_exit_0(big: Path, fmt: str) -> None:
    """`mcptape show C --format json | head -1`: the reader goes after one line."""
    proc = subprocess.Popen(
        mcptape_cmd("show", str(big), "--format", fmt),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline()
    proc.stdout.close()  # what head does after its line
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert err == b""


def test_a_mistyped_command_names_the_nearest() -> None:
    proc = subprocess.run(mcptape_cmd("shwo", "x"), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert proc.stderr == (
        "mcptape: error: No such command 'shwo'. Did you mean 'show'? (see `mcptape --help`)\n"
    )


def test_version_lists_each_extra_and_the_outside_tools() -> None:
    proc = subprocess.run(mcptape_cmd("--version"), capture_output=True, text=True, timeout=60)
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0 and lines[0].startswith("mcptape 0.")
    extras = {ln.split(":")[0] for ln in lines[1:]}
    assert {"mitm", "sdk", "http", "check", "secrets", "node", "npx"} <= extras
    assert "all" not in extras and "test" not in extras
    assert any(ln.startswith("http: installed (uvicorn ") for ln in lines)


def test_a_missing_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(version, "_installed", lambda name: None if name != "httpx" else "0.28")
    assert version.extra_line("mitm", ["mitmproxy"]) == (
        "mitm: missing: pip install 'mcptape[mitm]' (for record --http, import of mitmproxy flows)"
    )
    assert version.extra_line("http", ["uvicorn", "httpx"]).startswith(
        "http: missing uvicorn: pip install 'mcptape[http]'"
    )
    monkeypatch.setattr(shutil, "which", lambda _tool: None)
    assert version.tool_line("node").startswith("node: not found (needed for Node servers")


def _copies(tmp_path: Path, n: int) -> list[str]:
    for i in range(n):
        shutil.copy(GOLDEN, tmp_path / f"c{i}.jsonl")
    return [f"c{i}.jsonl" for i in range(n)]


def test_progress_shows_on_a_terminal_only(tmp_path: Path) -> None:
    names = _copies(tmp_path, 3)
    plain = subprocess.run(
        mcptape_cmd("check", *names), capture_output=True, text=True, cwd=tmp_path
    )
    assert plain.returncode == 0
    assert plain.stderr == "mcptape check: 3 cassette(s) clean\n", "nothing extra off a terminal"
    assert _on_a_terminal(tmp_path, "check", *names).count("mcptape check: checking") >= 1
    quiet = _on_a_terminal(tmp_path, "check", "-q", *names)
    assert quiet == "", "-q: no progress, no summary"


def _on_a_terminal(cwd: Path, *args: str) -> str:
    """The command's stderr when stderr is a terminal (a pseudo-terminal read to its end)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        mcptape_cmd(*args),
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        stdin=subprocess.DEVNULL,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: every writer has gone
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert proc.wait(timeout=60) == 0
    return b"".join(chunks).decode()


def test_paths_are_printed_as_given(tmp_path: Path) -> None:
    _copies(tmp_path, 1)
    rel = subprocess.run(
        mcptape_cmd("redact", "c0.jsonl", "--redact-key", "x-none", "-o", "out.jsonl"),
        capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert rel.returncode == 0 and "c0.jsonl -> out.jsonl" in rel.stderr
    assert str(tmp_path) not in rel.stderr
    missing = subprocess.run(
        mcptape_cmd("show", "nope.jsonl"), capture_output=True, text=True, cwd=tmp_path
    )
    assert missing.stderr == "mcptape: error: nope.jsonl: no such cassette\n"
