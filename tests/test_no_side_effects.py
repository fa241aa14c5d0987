"""Library calls leave the process as they found it: loading a cassette, diffing two and building
a replay index (from a cassette read whole and from its index file) change neither whether the
cyclic garbage collector runs nor what is frozen; only the command line's own process tunes it."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from mcptape.cassette import load
from mcptape.diff.engine import diff_cassettes
from mcptape.replay.index import ReplayIndex
from tests.conftest import ROOT

HEADER = {"mcptape_cassette": 1, "mcptape_version": "0.1.0", "transport": "stdio",
          "target": {"command": ["x"]}, "recorded_at": "2026-01-01T00:00:00Z", "redaction": {}}  # fmt: skip


def write(path: Path, n: int, text: str = "hi") -> Path:
    init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}  # fmt: skip
    msgs = [("client", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
            ("server", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {}}})]  # fmt: skip
    for i in range(1, n + 1):
        msgs.append(("client", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "t", "arguments": {"i": i}}}))  # fmt: skip
        msgs.append(("server", {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": f"{text} {i}"}]}}))  # fmt: skip
    lines = [orjson.dumps(HEADER)]
    lines += [orjson.dumps({"seq": k, "t": k / 1000, "kind": "message", "from": s, "msg": m})
              for k, (s, m) in enumerate(msgs, 1)]  # fmt: skip
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def state() -> tuple[bool, bool]:
    """Whether the collector runs, and whether anything is frozen (objects frozen may be freed
    since: their count only says something was)."""
    return gc.isenabled(), gc.get_freeze_count() > 0


@pytest.fixture(params=["enabled", "disabled", "frozen"])
def collector(request: pytest.FixtureRequest) -> Iterator[tuple[bool, bool]]:
    """The collector as a program may have set it: on, off, or with objects of its own frozen."""
    was = gc.isenabled()
    if request.param == "disabled":
        gc.disable()
    elif request.param == "frozen":
        gc.freeze()
    try:
        yield state()
    finally:
        gc.unfreeze()
        if was:
            gc.enable()
        else:
            gc.disable()


def test_loading_diffing_and_indexing_leave_the_collector_as_it_was(
    tmp_path: Path, collector: tuple[bool, bool]
) -> None:
    a = load(write(tmp_path / "a.jsonl", 300))
    assert state() == collector
    b = load(write(tmp_path / "b.jsonl", 300, text="ho"))
    report = diff_cassettes(a, b)
    assert report.differences  # (it did diff)
    assert state() == collector
    index = ReplayIndex(a)
    assert len(index.entries) == 300
    assert state() == collector


def test_commands_run_in_process_leave_the_collector_as_it_was(
    tmp_path: Path, collector: tuple[bool, bool]
) -> None:
    """`main([...])` called by a program (a test suite), and a stdio replay served in it, are
    library calls too: only `python -m mcptape` / the `mcptape` script tunes its process."""
    import os

    from mcptape.cli import main
    from mcptape.replay.outputs import ReplayConfig
    from mcptape.replay.server_stdio import StdioReplayServer

    a, b = write(tmp_path / "a.jsonl", 50), write(tmp_path / "b.jsonl", 50, text="ho")
    with pytest.raises(SystemExit):
        main(["diff", "-q", str(a), str(b)])
    assert state() == collector
    rin, win = os.pipe()
    rout, wout = os.pipe()
    os.close(win)  # the client leaves at once: the server settles, then ends
    try:
        StdioReplayServer(load(a), ReplayConfig(), quiet=True, stdin_fd=rin, stdout_fd=wout).run()
    finally:
        os.close(wout)
        os.close(rin)
        os.close(rout)
    assert state() == collector


def test_a_replay_from_the_index_file_leaves_the_collector_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, collector: tuple[bool, bool]
) -> None:
    from mcptape.replay.cache import open_for_replay

    monkeypatch.setenv("MCPTAPE_CACHE_DIR", str(tmp_path / "cache"))
    path = write(tmp_path / "big.jsonl", 6_000)
    for _ in range(3):  # read whole, then its index file written, then read from it
        index = ReplayIndex(open_for_replay(path))
        assert len(index.entries) == 6_000
        assert state() == collector
    assert list((tmp_path / "cache").rglob("*.idx"))


def test_the_collector_runs_while_a_big_cassette_is_read_and_indexed(tmp_path: Path) -> None:
    """Not paused behind the program's back: its collections happen as it set them."""
    path = write(tmp_path / "a.jsonl", 3_000)
    runs: list[str] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        runs.append(phase)

    assert gc.isenabled()
    gc.callbacks.append(seen)
    try:
        ReplayIndex(load(path))
    finally:
        gc.callbacks.remove(seen)
    assert "start" in runs


def test_the_command_line_tunes_its_own_collector_and_serving_turns_it_back_on() -> None:
    code = (
        "import gc\n"
        "from mcptape import _perf\n"
        "_perf.for_command(['record', 'x'])\n"
        "assert gc.isenabled()\n"
        "_perf.for_command(['replay', 'x'])\n"
        "assert not gc.isenabled()\n"
        "_perf.settled()\n"
        "assert gc.isenabled() and gc.get_freeze_count() > 1000\n"
        "gc.disable()\n"
        "_perf.settled()\n"
        "assert not gc.isenabled()  # (the program's own choice: kept)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
