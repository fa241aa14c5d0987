"""The replay's CPU per request, without pipes or a client: the stdio shell run in this process
over a file of requests, writing to /dev/null (no pacing: /dev/null cannot say what is unread).

Measured with `time.process_time`, so that the other jobs of a shared machine count less than
in the wall-clock rows, and the best of the runs taken: what another job does to a run (evicted
caches, a migration to the other core) can only add CPU time, never take it away, so the least
is the closest to the code's own cost (a median kept the machine's two speeds, 22-24 us and
32-34 us per request for either tree, in the figure). The figure has no baseline in the run (`--against REV` compares it
with another tree's). It is everything one request costs the replay process: parsing the line,
matching, playing the recorded exchange (ids and progress tokens rewritten) and encoding it.
"""

from __future__ import annotations

import gc
import os
import time
from pathlib import Path
from typing import Any

import orjson

from .common import Row, pick, scratch, spread
from .replay import call, cassette

GOAL_US = 20.0
"""The engine's share of the pipelined goal (20,000 requests/s, 50 us each, client included)."""


def _requests(tmp: Path, n: int, progress: bool) -> Path:
    path = tmp / f"requests-{n}-{int(progress)}.jsonl"
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}}  # fmt: skip
    lines = [orjson.dumps(init), b'{"jsonrpc":"2.0","method":"notifications/initialized"}']
    for i in range(n):
        params = call(i, f"t{i}" if progress else None)
        lines.append(
            orjson.dumps({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": params})
        )
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def cpu_per_request(cassette_: Any, requests: Path, n: int) -> float:
    """Microseconds of this process's CPU per request, the stdio shell serving `requests`."""
    from mcptape.replay.engine import ReplayConfig
    from mcptape.replay.server_stdio import StdioReplayServer

    with open(requests, "rb") as inp, open(os.devnull, "wb") as out:
        server = StdioReplayServer(
            cassette_, ReplayConfig(), quiet=True, stdin_fd=inp.fileno(), stdout_fd=out.fileno()
        )
        gc.collect()
        t0 = time.process_time()
        server.run()
        return (time.process_time() - t0) / n * 1e6


def engine_suite(level: int) -> list[Row]:
    tmp = scratch()
    n, runs = pick(level, (300, 1), (5_000, 5), (20_000, 7))
    from mcptape.cassette import load

    cas = load(cassette(tmp, n))
    rows = []
    for progress, what in ((False, "no progress"), (True, "each asks for progress")):
        reqs = _requests(tmp, n, progress)
        per = [cpu_per_request(cas, reqs, n) for _ in range(runs)]
        value = min(per)  # another job can only add CPU time to a run (cache misses, migrations)
        rows.append(Row(f"replay engine: CPU per request, in-process stdio shell ({what})", value, None, "us",
                        f"<= {GOAL_US:.0f} us", value <= GOAL_US, spread=spread(per),
                        note=f"{n:,} requests to /dev/null; process CPU time, best of {runs}"))  # fmt: skip
    return rows
