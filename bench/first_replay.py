"""The first replay of a big cassette never opened before: time to its first answer and its
resident memory, against orjson alone parsing the file's lines (the floor for reading it).

    python -m bench --only first-replay

The replay runs as users start it (`mcptape replay`), its index cache off
(`MCPTAPE_INDEX_CACHE=0`) and in a directory of its own, so nothing it read before helps.
Both sides run in a fresh process each, alternately; wall time and the process's CPU time are
both kept (another job on a shared machine adds to the first, rarely to the second).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import orjson

from .common import PY, Row, interleaved, mcptape, pick, scratch
from .replay import cassette

FLOOR = (
    "import sys, orjson\n"
    "f = open(sys.argv[1], 'rb')\n"
    "x = [orjson.loads(l) for l in f]\n"
    "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
)
"""The floor: every line of the file parsed by orjson, in a process of its own, which prints
its peak resident memory (kB; the peak of the process it was forked from is not its own)."""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def floor(path: Path) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, peak resident bytes) of the floor's process."""
    cpu = _cpu()
    t0 = time.perf_counter()
    out = subprocess.run([PY, "-c", FLOOR, str(path)], capture_output=True, check=True)
    wall = time.perf_counter() - t0
    return wall, _cpu() - cpu, int(out.stdout) * 1024


def first_answer(path: Path) -> tuple[float, float, int]:
    """(wall seconds to the first answer, CPU seconds of the replay process until then, its
    peak resident bytes then) of `mcptape replay` on a cassette it never saw."""
    with tempfile.TemporaryDirectory(prefix="mcptape-first-") as cache:
        env = {**os.environ, "MCPTAPE_INDEX_CACHE": "0", "MCPTAPE_CACHE_DIR": cache}
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}}}  # fmt: skip
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            mcptape("replay", "-q", str(path)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        assert proc.stdin and proc.stdout
        proc.stdin.write(orjson.dumps(request) + b"\n")
        proc.stdin.flush()
        answer = orjson.loads(proc.stdout.readline())
        wall = time.perf_counter() - t0
        if answer.get("id") != 1:
            raise RuntimeError(f"the replay answered {answer!r}")
        ticks = os.sysconf("SC_CLK_TCK")
        stat = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = (int(stat[11]) + int(stat[12])) / ticks  # utime, stime
        status = Path(f"/proc/{proc.pid}/status").read_text().splitlines()
        peak = next(int(x.split()[1]) * 1024 for x in status if x.startswith("VmHWM:"))
        proc.stdin.close()
        proc.wait()
        proc.stdout.close()
    return wall, cpu, peak


def first_replay(level: int) -> list[Row]:
    """Rows: the first answer's wall and CPU time over the floor's, and resident memory over
    the cassette's size."""
    n = pick(level, 2_000, 20_000, 100_000)
    runs = pick(level, 1, 3, 3)
    path = cassette(scratch(), n)
    size = path.stat().st_size
    got: dict[str, list[tuple[float, float, int]]] = {"floor": [], "replay": []}

    def run(name: str) -> float:
        out = (floor if name == "floor" else first_answer)(path)
        got[name].append(out)
        return out[0]

    wall = interleaved(runs, {"floor": lambda: run("floor"), "replay": lambda: run("replay")})
    cpu = {k: statistics.median(x[1] for x in v) for k, v in got.items()}
    peak = statistics.median(x[2] for x in got["replay"])
    floor_peak = statistics.median(x[2] for x in got["floor"])
    ratio, cpu_ratio = wall["replay"] / wall["floor"], cpu["replay"] / cpu["floor"]
    mb = f"{size / 1e6:.0f} MB, {n // 1000}k exchanges"
    return [
        Row(f"first replay: first answer, {n // 1000}k exchanges never opened", wall["replay"], wall["floor"], "s",
            "<= 2x", ratio <= 2, ratio, f"{mb}; baseline: orjson parsing its lines; CPU time {cpu_ratio:.2f}x",
            extra={"cpu": cpu["replay"], "cpu_floor": cpu["floor"]}, spread=wall.spread("replay", "floor")),
        Row("first replay: resident memory / cassette size", peak / size, None, "x", "<= 2.5x", peak / size <= 2.5,
            note=f"{peak / 1e6:.0f} MB for a {size / 1e6:.0f} MB cassette (the floor: {floor_peak / size:.1f}x)"),
    ]  # fmt: skip
