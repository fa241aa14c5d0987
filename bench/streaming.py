"""The one-pass commands on a big cassette: peak resident memory of `mcptape check` and
`mcptape fmt` over the cassette's size (they stream it: memory must not grow with the file).

Each runs in a child process of its own, so `getrusage(RUSAGE_CHILDREN).ru_maxrss` (the largest
child so far) measures that one; the cassette is the replay scaling suite's (bench/replay.py).
`fmt` gets a copy whose header keys are out of order, so it rewrites every line.
"""

from __future__ import annotations

import resource
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

import orjson

from .common import PY, Row, pick, spread
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
    assert resource  # (imported for the reader: the child uses it)
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


def _growth(measure: dict[str, list[int]], sizes: dict[str, int]) -> tuple[float, float]:
    """(the resident memory each cassette byte adds: peak growth from the small to the big
    cassette over the growth of the file, the big cassette's peak in bytes)."""
    small, big = (statistics.median(measure[k]) for k in ("small", "big"))
    return (big - small) / (sizes["big"] - sizes["small"]), big


def streaming_suite(level: int) -> list[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="mcptape-bench-"))
    runs = pick(level, 1, 2, 3)
    rows = []
    # check validates every line against the JSON Schema (about 1 ms a line on these machines):
    # its big cassette is smaller than fmt's
    for name, big_n, goal, limit in (
        ("check", pick(level, 1_000, 5_000, 20_000), "<= 2x", 2.0),
        ("fmt (every line rewritten)", pick(level, 2_000, 20_000, 100_000), "<= 0.1x", 0.1),
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
        per_byte, peak = _growth(peaks, sizes)
        rows.append(
            Row(f"streaming: {name}, memory added per cassette byte", per_byte, None, "x", goal,
                per_byte <= limit,
                note=f"{peak / 1e6:.0f} MB peak for {sizes['big'] / 1e6:.0f} MB ({big_n // 1000}k exchanges), "
                     f"{statistics.median(peaks['small']) / 1e6:.0f} MB for {sizes['small'] / 1e6:.0f} MB",
                spread=spread(peaks["big"]))
        )  # fmt: skip
    shutil.rmtree(tmp, ignore_errors=True)
    return rows
