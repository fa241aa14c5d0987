"""Replay: stdio round trips and pipelining, startup, scaling with cassette size, in-process."""

from __future__ import annotations

import gc
import os
import statistics
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import orjson

from .common import (
    PY,
    TRIVIAL_SERVER,
    Row,
    StdioPeer,
    interleaved,
    mcptape,
    pick,
    rps,
    scratch,
    spread,
)
from .diff_scale import build

NOTE = "lorem ipsum " * 4


def call(i: int, token: str | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": f"tool{i % 50}", "arguments": {"x": i, "note": NOTE}}
    if token:
        params["_meta"] = {"progressToken": token}
    return params


def cassette(tmp: Path, n: int) -> Path:
    path = tmp / f"replay-{n}.jsonl"
    if not path.exists():
        path.write_bytes(build(n, 10**9, False))
    return path


def _sequential(cmd: list[str], n: int) -> float:
    peer = StdioPeer(cmd)
    try:
        peer.handshake()
        lat = []
        for i in range(n):
            t0 = time.perf_counter()
            peer.request("tools/call", call(i, f"t{i}"))
            lat.append(time.perf_counter() - t0)
    finally:
        peer.close()
    return rps(lat)


def _pipelined(cmd: list[str], n: int) -> float:
    peer = StdioPeer(cmd)
    try:
        peer.handshake()
        lines = b"".join(orjson.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": call(i)}) + b"\n"
                         for i in range(n))  # fmt: skip
        t0 = time.perf_counter()
        writer = threading.Thread(target=lambda: (peer.w.write(lines), peer.w.flush()))
        writer.start()
        answered = 0
        while answered < n:
            msg = orjson.loads(peer.r.readline())
            if "id" in msg and "method" not in msg:
                answered += 1
        dt = time.perf_counter() - t0
        writer.join()
    finally:
        peer.close()
    return n / dt


def _startup(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    peer = StdioPeer(cmd)
    try:
        peer.handshake()
        return time.perf_counter() - t0
    finally:
        peer.close()


def replay_stdio(level: int) -> list[Row]:
    tmp = scratch()
    n, runs = pick(level, (50, 1), (500, 3), (2000, 5))
    cas = cassette(tmp, n)
    replay = mcptape("replay", "-q", str(cas))
    seq = interleaved(
        runs,
        {
            "trivial": lambda: _sequential(TRIVIAL_SERVER, n),
            "replay": lambda: _sequential(replay, n),
        },
    )
    pn = pick(level, 500, 20_000, 50_000)
    big = cassette(tmp, pn)
    pipes = [_pipelined(mcptape("replay", "-q", str(big)), pn) for _ in range(runs)]
    pipe = statistics.median(pipes)
    start = interleaved(runs, {"python": lambda: _startup([PY, "-c", "import sys, orjson\nfor l in sys.stdin.buffer:\n"
                                                                 " m = orjson.loads(l)\n if 'id' in m: print(orjson.dumps({'jsonrpc':'2.0','id':m['id'],'result':{}}).decode(), flush=True)"]),
                               "replay": lambda: _startup(replay)})  # fmt: skip
    return [
        Row("replay stdio: sequential round trips/s vs trivial responder", seq["replay"], seq["trivial"], "req/s", ">= 0.6x",
            seq["replay"] / seq["trivial"] >= 0.6, seq["replay"] / seq["trivial"], spread=seq.spread("replay", "trivial")),
        Row("replay stdio: pipelined requests/s", pipe, None, "req/s", ">= 20,000", pipe >= 20_000, spread=spread(pipes)),
        Row("replay stdio: startup to first answer", start["replay"], start["python"], "s", "<= 0.12 s", start["replay"] <= 0.12,
            start["replay"] / start["python"], "baseline: a bare Python+orjson responder's startup",
            spread=start.spread("replay")),
    ]  # fmt: skip


def _engine_us_per_request(path: Path, n_req: int) -> float:
    from mcptape.cassette import load
    from mcptape.replay.engine import ReplayEngine
    from mcptape.replay.index import ReplayIndex

    cas = load(path)
    engine = ReplayEngine(ReplayIndex(cas))
    engine.receive({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}})  # fmt: skip
    msgs = [
        {"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": call(i, f"x{i}")}
        for i in range(n_req)
    ]
    t0 = time.perf_counter()
    for m in msgs:
        engine.receive(m)
    return (time.perf_counter() - t0) / n_req * 1e6


def _load_and_index(path: Path) -> tuple[float, int]:
    """Seconds to load and index, and the resident memory it added (bytes), measured in a fresh process."""
    code = (
        "import sys, time\n"
        "try:\n    from mcptape._perf import for_command\nexcept ImportError:\n    pass\n"
        "else:\n    for_command(['replay'])  # as the command line tunes its collector\n"
        "from mcptape.cassette import load\nfrom mcptape.replay.index import ReplayIndex\n"
        "def rss():\n"
        "    return next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmRSS:'))\n"
        "r0 = rss()\n"
        "t0 = time.perf_counter(); index = ReplayIndex(load(sys.argv[1])); dt = time.perf_counter() - t0\n"
        "print(dt, rss() - r0)\n"
    )
    out = subprocess.run(
        [PY, "-c", code, str(path)], capture_output=True, text=True, check=True
    ).stdout.split()
    return float(out[0]), int(out[1])


def _parse_only(path: Path) -> float:
    """The floor for loading: orjson parsing every line of the same file, in a fresh process."""
    code = ("import sys, time, orjson\nd = open(sys.argv[1], 'rb').read()\nt0 = time.perf_counter()\n"
            "x = [orjson.loads(l) for l in d.split(b'\\n')[1:] if l]\nprint(time.perf_counter() - t0)\n")  # fmt: skip
    return float(
        subprocess.run(
            [PY, "-c", code, str(path)], capture_output=True, text=True, check=True
        ).stdout
    )


def results_cassette(tmp: Path, n: int) -> Path:
    """`n` tools/call exchanges whose results are a text of about 800 bytes (a file read, a
    page fetched): a cassette that is mostly server messages, as long agent sessions are."""
    path = tmp / f"results-{n}.jsonl"
    head = {"mcptape_cassette": 1, "mcptape_version": "0.1.0", "transport": "stdio", "target": {"command": ["bench"]},
            "recorded_at": "2026-01-01T00:00:00Z", "redaction": {}}  # fmt: skip
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "b", "version": "1"},
    }
    msgs = [("client", {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
            ("server", {"jsonrpc": "2.0", "id": 0, "result": {**init, "serverInfo": {"name": "b", "version": "1"}}})]  # fmt: skip
    for i in range(1, n + 1):
        msgs.append(
            ("client", {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call(i)})
        )
        text = f"file {i}: " + "lorem ipsum dolor " * 40
        msgs.append(("server", {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": text}]}}))  # fmt: skip
    lines = [orjson.dumps(head)]
    lines += [orjson.dumps({"seq": k, "t": k / 1000, "kind": "message", "from": src, "msg": m})
              for k, (src, m) in enumerate(msgs, start=1)]  # fmt: skip
    lines.append(orjson.dumps({"seq": len(msgs) + 1, "t": 1.0, "kind": "end"}))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _open_and_index(path: Path, cache: str) -> tuple[float, int]:
    """`_load_and_index` as a replay opens the cassette (`mcptape.replay.cache`, where the tree has
    it), its index cache in `cache` (`off`: none)."""
    code = (
        "import sys, time\n"
        "try:\n    from mcptape._perf import for_command\nexcept ImportError:\n    pass\n"
        "else:\n    for_command(['replay'])  # as the command line tunes its collector\n"
        "try:\n    from mcptape.replay.cache import open_for_replay\n"
        "except ImportError:\n    try:\n        from mcptape.sidecar import open_for_replay\n"
        "    except ImportError:\n        from mcptape.cassette import load as open_for_replay\n"
        "from mcptape.replay.index import ReplayIndex\n"
        "def rss():\n"
        "    return next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmRSS:'))\n"
        "r0 = rss()\n"
        "t0 = time.perf_counter(); index = ReplayIndex(open_for_replay(sys.argv[1])); dt = time.perf_counter() - t0\n"
        "print(dt, rss() - r0)\n"
    )
    env = {**os.environ, "MCPTAPE_CACHE_DIR": cache}
    out = subprocess.run(
        [PY, "-c", code, str(path)], capture_output=True, text=True, check=True, env=env
    ).stdout.split()
    return float(out[0]), int(out[1])


def from_index(level: int) -> list[Row]:
    """A replay's open + index of a big cassette from its index file (`mcptape.replay.cache`), against
    the same cassette read whole, for the results cassette and for the scaling one."""
    tmp = scratch()
    n = pick(level, 6_000, 20_000, 100_000)
    runs = pick(level, 1, 3, 3)
    limit = 1.5 * n / 100_000
    rows = []
    for what, path in (
        ("800-byte results", results_cassette(tmp, n)),
        ("the scaling cassette", cassette(tmp, n)),
    ):
        cache = str(tmp / f"cache-{path.stem}")
        for _ in range(2):  # the first two replays read it whole; the second writes its index file
            _open_and_index(path, cache)
        res = interleaved(runs, {"whole": lambda p=path: _open_and_index(p, "off")[0],
                                 "index": lambda p=path, c=cache: _open_and_index(p, c)[0]})  # fmt: skip
        rss = statistics.median(_open_and_index(path, cache)[1] for _ in range(runs))
        size = path.stat().st_size
        rows += [
            Row(f"replay from its index file: open + index {n // 1000}k exchanges, {what}", res["index"], res["whole"], "s",
                f"<= {limit:.2g} s", res["index"] <= limit, res["index"] / res["whole"],
                f"{size / 1e6:.0f} MB; baseline: the same cassette read whole (MCPTAPE_CACHE_DIR=off)", spread=res.spread("index", "whole")),
            Row(f"replay from its index file: resident memory / cassette size, {what}", rss / size, None, "x", "<= 2x", rss / size <= 2,
                note=f"{rss / 1e6:.0f} MB for a {size / 1e6:.0f} MB cassette"),
        ]  # fmt: skip
    return rows


def scaling(level: int) -> list[Row]:
    tmp = scratch()
    big_n = pick(level, 2_000, 20_000, 100_000)
    small, large = cassette(tmp, 1_000), cassette(tmp, big_n)
    runs = pick(level, 1, 2, 3)
    limit = 1.5 * big_n / 100_000  # the 100k target, scaled to the size measured
    per = interleaved(
        runs,
        {
            "1k": lambda: _engine_us_per_request(small, 1_000),
            "100k": lambda: _engine_us_per_request(large, 1_000),
        },
    )
    ratio = per["100k"] / per["1k"]
    loads: list[tuple[float, int]] = []
    floors: list[float] = []
    for _ in range(runs):
        loads.append(_load_and_index(large))
        floors.append(_parse_only(large))
    secs = statistics.median(x[0] for x in loads)
    floor = statistics.median(floors)
    rss = statistics.median(x[1] for x in loads)
    size = large.stat().st_size
    return [
        Row(f"replay scaling: per-request time, {big_n // 1000}k vs 1k exchanges", per["100k"], per["1k"], "us", "within 20%",
            ratio <= 1.2, ratio, spread=per.spread("100k", "1k")),
        Row(f"replay scaling: load + index {big_n // 1000}k exchanges", secs, floor, "s",
            f"<= {limit:.2g} s and <= 1.5x", secs <= limit and secs <= 1.5 * floor, secs / floor,
            f"{size / 1e6:.0f} MB, {big_n * 5:,} events; baseline: orjson alone parsing its lines",
            spread=spread([x[0] / f for x, f in zip(loads, floors, strict=True)])),
        Row("replay scaling: resident memory / cassette size", rss / size, None, "x", "<= 2x", rss / size <= 2,
            note=f"{rss / 1e6:.0f} MB for a {size / 1e6:.0f} MB cassette", spread=spread([x[1] for x in loads])),
    ]  # fmt: skip


def in_process(level: int) -> list[Row]:
    """The SDK client on the in-memory replay vs the same client over stdio to the real SDK server."""
    code = (
        "import sys, time, anyio\n"
        "from mcp import Client, StdioServerParameters\n"
        "from mcptape.replay.memory import replay_transport\n"
        "mode, n, cas = sys.argv[1], int(sys.argv[2]), sys.argv[3]\n"
        "async def main():\n"
        "    target = replay_transport(cas, allow_repeats=True) if mode == 'memory' else StdioServerParameters(command=sys.executable, args=[sys.argv[4]])\n"
        "    async with Client(target, mode='legacy') as c:\n"
        "        for _ in range(20): await c.call_tool('echo', {'message': 'hi'})\n"
        "        t0 = time.perf_counter()\n"
        "        for _ in range(n): await c.call_tool('echo', {'message': 'hi'})\n"
        "        print(n / (time.perf_counter() - t0))\n"
        "anyio.run(main)\n"
    )
    tmp = scratch()
    cas = tmp / "echo.jsonl"
    from .common import DEMO_SERVER

    rec = f"""
import anyio, sys
from mcp import Client, StdioServerParameters
async def main():
    async with Client(StdioServerParameters(command=sys.executable, args={mcptape("record", "-q", "-o", str(cas), "--", *DEMO_SERVER)[1:]!r}), mode='legacy') as c:
        await c.call_tool('echo', {{'message': 'hi'}})
anyio.run(main)
"""
    subprocess.run([PY, "-c", rec], check=True, capture_output=True)
    n, runs = pick(level, (20, 1), (200, 3), (1000, 5))

    def run(mode: str) -> float:
        out = subprocess.run(
            [PY, "-c", code, mode, str(n), str(cas), DEMO_SERVER[1]],
            capture_output=True,
            text=True,
            check=True,
        )
        return float(out.stdout.strip())

    med = interleaved(runs, {"stdio": lambda: run("stdio"), "memory": lambda: run("memory")})
    ratio = med["memory"] / med["stdio"]
    return [Row("in-process replay: SDK client round trips/s vs stdio SDK server", med["memory"], med["stdio"], "req/s",
                ">= 8x", ratio >= 8, ratio, spread=med.spread("memory", "stdio"))]  # fmt: skip


def diff(level: int) -> list[Row]:
    from mcptape.cassette import load
    from mcptape.diff.engine import diff_cassettes

    tmp = scratch()
    pa, pb = tmp / "a.jsonl", tmp / "b.jsonl"
    n = pick(level, 500, 10_000, 10_000)
    pa.write_bytes(build(n, 40, False))
    pb.write_bytes(build(n, 40, True))
    times, floors = [], []
    for _ in range(pick(level, 1, 3, 5)):
        gc.disable()  # as `mcptape diff` does (library calls leave the collector as they find it)
        try:
            t0 = time.perf_counter()
            report = diff_cassettes(load(pa), load(pb))
            times.append(time.perf_counter() - t0)
        finally:
            gc.enable()
        floors.append(_parse_only(pa) + _parse_only(pb))
    secs, floor = statistics.median(times), statistics.median(floors)
    limit = 0.5 * n / 10_000  # the 10k target, scaled to the size measured
    return [Row(f"diff: two {n:,}-exchange cassettes, load + diff", secs, floor, "s", f"<= {limit:.2g} s", secs <= limit,
                secs / floor, f"{len(report.differences)} differences found; baseline: orjson alone parsing both",
                spread=spread([t / f for t, f in zip(times, floors, strict=True)]))]  # fmt: skip
