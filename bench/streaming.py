"""The one-pass commands on a big cassette: peak resident memory of `mcptape check` and
`mcptape fmt` on a cassette and on one a quarter its size (they stream it: memory must not grow
with the file); the goal is on the growth per cassette byte, so that the interpreter and its
imports do not count.

Each runs in a child process of its own, so `getrusage(RUSAGE_CHILDREN).ru_maxrss` (the largest
child so far) measures that one; the cassette is the replay scaling suite's (bench/replay.py).
`fmt` gets a copy whose header keys are out of order, so it rewrites every line.
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
from pathlib import Path

import orjson

from .common import PY, Row, pick, scratch, spread
from .replay import cassette

_MEASURE = (
    "import resource, subprocess, sys\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
)
"""Runs a command in a fresh process and prints its peak RSS (bytes): `ru_maxrss` of the
children is the largest child's, so each measurement needs a parent of its own."""


def peak_rss(cmd: list[str]) -> int:
    """The peak resident memory (bytes) of `cmd`, run to its end."""
    out = subprocess.run(
        [PY, "-c", _MEASURE, *cmd], capture_output=True, text=True, check=True
    ).stdout
    return int(out)


def _unformatted(src: Path, dst: Path) -> Path:
    """A copy of `src` with its header's keys reversed: not canonical from line 1 on."""
    with open(src, "rb") as f, open(dst, "wb") as out:
        head = orjson.loads(f.readline())
        out.write(orjson.dumps(dict(reversed(list(head.items())))) + b"\n")
        shutil.copyfileobj(f, out)
    return dst


def streaming_suite(level: int) -> list[Row]:
    tmp = scratch()
    runs = pick(level, 1, 2, 3)
    rows = []
    # check validates every line against the JSON Schema (about 1 ms a line on these machines):
    # its big cassette is smaller than fmt's
    for name, big_n, limit in (
        ("check", pick(level, 1_000, 5_000, 20_000), 2.0),
        ("fmt (every line rewritten)", pick(level, 2_000, 20_000, 100_000), 0.1),
    ):
        paths = {"small": cassette(tmp, big_n // 4), "big": cassette(tmp, big_n)}
        sizes = {k: p.stat().st_size for k, p in paths.items()}
        peaks: dict[str, list[int]] = {"small": [], "big": []}
        for _ in range(runs):
            for k, path in paths.items():
                if name == "check":
                    peaks[k].append(peak_rss([PY, "-m", "mcptape", "check", "-q", str(path)]))
                else:
                    messy = _unformatted(path, tmp / "messy.jsonl")
                    peaks[k].append(peak_rss([PY, "-m", "mcptape", "fmt", str(messy)]))
        small, big = (statistics.median(peaks[k]) for k in ("small", "big"))
        per_byte = (big - small) / (sizes["big"] - sizes["small"])
        rows.append(
            Row(f"streaming: {name}, peak memory, {big_n:,} vs {big_n // 4:,} exchanges", big / 1e6,
                small / 1e6, "MB", f"grows <= {limit:g} B per cassette byte", per_byte <= limit, big / small,
                note=f"grows {per_byte:.2f} B per cassette byte ({sizes['big'] / 1e6:.0f} MB vs "
                     f"{sizes['small'] / 1e6:.1f} MB)",
                spread=spread(peaks["big"]))
        )  # fmt: skip
    shutil.rmtree(tmp, ignore_errors=True)
    return rows
