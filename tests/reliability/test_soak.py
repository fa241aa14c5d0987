"""Soak: the stdio recorder passes a long stream of messages with flat memory and loses none.

The quick variant runs in CI; the slow one (1,000,000 messages) needs MCPTAPE_SLOW=1.
Memory is the recorder's VmRSS, read when a tenth of the traffic has passed (warm) and again at
the end, while the session is still open.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.conftest import mcptape_cmd

from .helpers import SLOW_REASON, lines_of, rss_kib, slow_enabled

CHUNK_ECHO = str(Path(__file__).with_name("chunk_echo.py"))
pytestmark = pytest.mark.e2e


def line(i: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"message %d"}}}\n'
        % (i, i)
    )


def soak(tmp_path: Path, requests: int) -> tuple[int, int, Path]:
    """Pipes `requests` lines through `mcptape record` in front of an echo server; returns RSS
    (KiB) when warm and at the end, and the cassette."""
    out = tmp_path / "soak.jsonl"
    proc = subprocess.Popen(
        mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, CHUNK_ECHO),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert proc.stdin and proc.stdout
    marks = {requests // 10: "warm", requests: "end"}
    rss: dict[str, int] = {}
    all_read = threading.Event()

    def read() -> None:
        assert proc.stdout
        seen = 0
        fd = proc.stdout.fileno()
        while seen < requests:
            chunk = os.read(fd, 1 << 17)
            if not chunk:
                break
            before, seen = seen, seen + chunk.count(b"\n")
            for mark, name in marks.items():
                if before < mark <= seen:
                    rss[name] = rss_kib(proc.pid)
        all_read.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    batch = 2000
    for start in range(0, requests, batch):
        proc.stdin.write(b"".join(line(i) for i in range(start, min(start + batch, requests))))
    proc.stdin.flush()
    assert all_read.wait(timeout=1800), "the echoes did not all come back"
    proc.stdin.close()
    assert proc.wait(timeout=120) == 0
    proc.stdout.close()
    return rss["warm"], rss["end"], out


def check_nothing_lost(path: Path, requests: int) -> None:
    """Every message both ways, in order, numbered, and the end marker; read line by line."""
    want = {"client": 0, "server": 0}
    seq = 0
    last = None
    for n, obj in enumerate(lines_of(path)):
        if n == 0:
            continue
        seq += 1
        assert obj["seq"] == seq
        if obj["kind"] == "message":
            who = obj["from"]
            assert obj["msg"]["id"] == want[who], (who, obj)
            want[who] += 1
        last = obj["kind"]
    assert want == {"client": requests, "server": requests} and last == "end"


def run(tmp_path: Path, requests: int, max_growth_kib: int) -> None:
    warm, end, cassette = soak(tmp_path, requests)
    check_nothing_lost(cassette, requests)
    print(
        f"\nsoak: {2 * requests} messages recorded, recorder RSS {warm} KiB warm -> {end} KiB at the end"
    )
    assert end - warm < max_growth_kib, f"the recorder's memory grew from {warm} to {end} KiB"


def test_the_recorder_passes_20000_messages_with_flat_memory(tmp_path: Path) -> None:
    run(tmp_path, 10_000, max_growth_kib=8 * 1024)


@pytest.mark.slow
@pytest.mark.skipif(not slow_enabled(), reason=SLOW_REASON)
def test_the_recorder_passes_1000000_messages_with_flat_memory(tmp_path: Path) -> None:
    run(tmp_path, 500_000, max_growth_kib=8 * 1024)
