"""The commands that stream a big cassette: peak resident memory of `mcptape check`, `fmt`,
`prune` and `show --format json` on a cassette and on one a quarter its size (memory must not
grow with the messages: `prune` and `show` hold a few numbers per event, the others a line); the
goal is on the growth per cassette byte, so that the interpreter and its imports do not count.

Each runs in a child process of its own, so `getrusage(RUSAGE_CHILDREN).ru_maxrss` (the largest
child so far) measures that one; the cassette is the replay scaling suite's (bench/replay.py).
`fmt` gets a copy whose header keys are out of order, so it rewrites every line; `prune` keeps
one tool of fifty (it drops most exchanges, and lists them all).
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
    "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
    "sys.exit(r.returncode)\n"
)
"""Runs a command in a fresh process and prints its peak RSS (bytes): `ru_maxrss` of the
children is the largest child's, so each measurement needs a parent of its own (which fails
as the command does: a command that failed early would look small)."""


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


def _command(name: str, path: Path, tmp: Path) -> list[str]:
    if name == "check":
        return [PY, "-m", "mcptape", "check", "-q", str(path)]
    if name == "prune --keep":
        return [
            PY,
            "-m",
            "mcptape",
            "prune",
            str(path),
            "--keep",
            "tool1",
            "-o",
            str(tmp / "pruned.jsonl"),
        ]
    if name == "show --format json":
        return [PY, "-m", "mcptape", "show", "--format", "json", str(path)]
    return [PY, "-m", "mcptape", "fmt", str(_unformatted(path, tmp / "messy.jsonl"))]


def streaming_suite(level: int) -> list[Row]:
    tmp = scratch()
    runs = pick(level, 1, 2, 3)
    rows = []
    # check validates every line against the JSON Schema (about 1 ms a line on these machines):
    # its big cassette is smaller than fmt's
    for name, big_n, limit in (
        ("check", pick(level, 1_000, 5_000, 20_000), 2.0),
        ("fmt (every line rewritten)", pick(level, 2_000, 20_000, 100_000), 0.1),
        ("prune --keep", pick(level, 2_000, 10_000, 40_000), 1.0),
        ("show --format json", pick(level, 2_000, 10_000, 40_000), 1.0),
    ):
        paths = {"small": cassette(tmp, big_n // 4), "big": cassette(tmp, big_n)}
        sizes = {k: p.stat().st_size for k, p in paths.items()}
        peaks: dict[str, list[int]] = {"small": [], "big": []}
        for _ in range(runs):
            for k, path in paths.items():
                peaks[k].append(peak_rss(_command(name, path, tmp)))
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
