"""Recorder overhead on stdio: round trips through `mcptape record` vs straight to the server."""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from .common import (
    DEMO_SERVER,
    PY,
    ROOT,
    TRIVIAL_SERVER,
    Row,
    StdioPeer,
    interleaved,
    mcptape,
    p99,
    pick,
    round_trips,
    rps,
    scratch,
)

PASSTHROUGH = ROOT / "bench" / "passthrough.py"


def _rt_rps(cmd: list[str], n: int, handshake: bool, sink: list[list[float]]) -> float:
    peer = StdioPeer(cmd)
    try:
        if handshake:
            peer.handshake()
        round_trips(peer, 20)  # warm up
        lat = round_trips(peer, n)
    finally:
        peer.close()
    sink.append(lat)
    return rps(lat)


def recorder_overhead(level: int) -> list[Row]:
    n, runs = pick(level, (20, 1), (200, 3), (1000, 5))
    tmp = scratch()
    rows = []
    for label, server, handshake, goal in (
        ("SDK server", DEMO_SERVER, True, 0.95),
        ("trivial responder", TRIVIAL_SERVER, False, 0.70),
    ):
        lat: dict[str, list[list[float]]] = {"direct": [], "recorded": [], "passthrough": []}
        med = interleaved(runs, {
            "direct": lambda s=server, h=handshake, lat=lat: _rt_rps(s, n, h, lat["direct"]),
            "passthrough": lambda s=server, h=handshake, lat=lat: _rt_rps([PY, str(PASSTHROUGH), *s], n, h, lat["passthrough"]),
            "recorded": lambda s=server, h=handshake, lat=lat: _rt_rps(mcptape("record", "-q", "-o", str(tmp / "r.jsonl"), "--", *s), n, h, lat["recorded"]),
        })  # fmt: skip
        ratio = med["recorded"] / med["direct"]
        added = statistics.median(p99(r) for r in lat["recorded"]) - statistics.median(
            p99(d) for d in lat["direct"]
        )
        floor = med["passthrough"] / med["direct"]
        rows.append(Row(
            f"record stdio: round trips/s vs {label}", med["recorded"], med["direct"], "req/s",
            f">= {goal}x", ratio >= goal, ratio,
            f"p99 added {added * 1e6:.0f} us; bare pass-through floor {floor:.2f}x, recorder/floor {med['recorded'] / med['passthrough']:.2f}x",
            spread=med.spread("recorded", "direct"),
        ))  # fmt: skip
    rows.append(_throughput(tmp, level))
    return rows


def _throughput(tmp: Path, level: int) -> Row:
    """A 10 MB result passing through the recorder: MB/s from request to last byte."""
    size = 10 * 1024 * 1024
    big_server = [PY, "-c", (
        "import sys\n"
        "body = b'{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"text\":\"' + b'x' * SIZE + b'\"}}\\n'\n"
        "for line in sys.stdin.buffer:\n"
        "    sys.stdout.buffer.write(body); sys.stdout.buffer.flush()\n"
    ).replace("SIZE", str(size))]  # fmt: skip

    def once(cmd: list[str]) -> float:
        peer = StdioPeer(cmd)
        try:
            peer.w.write(b'{"jsonrpc":"2.0","id":1,"method":"x"}\n')
            peer.w.flush()
            peer.r.readline()  # warm: first answer
            t0 = time.perf_counter()
            peer.w.write(b'{"jsonrpc":"2.0","id":1,"method":"x"}\n')
            peer.w.flush()
            line = peer.r.readline()
            dt = time.perf_counter() - t0
            assert len(line) > size
        finally:
            peer.close()
        return size / dt / 1e6

    runs = pick(level, 1, 3, 5)
    med = interleaved(runs, {"direct": lambda: once(big_server),
                             "recorded": lambda: once(mcptape("record", "-q", "-o", str(tmp / "big.jsonl"), "--", *big_server))})  # fmt: skip
    return Row("record stdio: 10 MB result throughput", med["recorded"], med["direct"], "MB/s", ">= 200 MB/s",
               med["recorded"] >= 200, med["recorded"] / med["direct"], spread=med.spread("recorded"))  # fmt: skip
