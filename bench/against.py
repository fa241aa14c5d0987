"""`python -m bench --against REV`: the same benchmarks on this tree and on git revision REV,
run alternately (old new old new ...), so that "did this change make mcptape slower?" is
answered in one run on one machine, with the noise measured rather than guessed.

REV's `mcptape/` package is extracted (`git archive`) into a temporary directory beside a
link to this tree's `bench/`: both trees run the same benchmark code, the same example
servers and the same baselines; only the package under test differs. Each row is compared
by its ratio (or its value, for rows without a baseline): the median over rounds, and the
run-to-run spread of both trees. A row is "worse" only when it moved the wrong way by more
than that spread.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

import orjson
from tabulate import tabulate

from .common import ROOT, spread

NOISE_FLOOR = 0.02
"""Below this a change is "same" even when both trees ran without spread (one round)."""

HIGHER_IS_BETTER = {"req/s", "MB/s", "sessions"}
"""Units where more is better; for the others (s, us, x) less is better, ratio or value."""


def _extract(rev: str, into: Path) -> None:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "mcptape"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        sys.exit(f"bench: cannot read revision {rev!r}: {archive.stderr.decode().strip()}")
    with tarfile.open(fileobj=BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    (into / "bench").symlink_to(ROOT / "bench", target_is_directory=True)


def _run(tree: Path, flags: list[str], out: Path) -> list[dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [sys.executable, "-m", "bench", *flags, "-o", str(out)],
        cwd=tree,
        env=env,
        stdout=subprocess.DEVNULL,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"bench: the run on {tree} failed (exit {done.returncode}); see its output above")
    return orjson.loads(out.read_bytes())["rows"]  # type: ignore[no-any-return]


def _figure(row: dict[str, Any]) -> float:
    return float(row["ratio"] if row["ratio"] is not None else row["value"])


def judge(old: list[float], new: list[float], unit: str) -> tuple[float, float, str]:
    """(relative change of the medians, the noise, "same" / "better" / "WORSE").

    A change is one only when the medians moved by more than the run-to-run spread of either
    tree *and* the runs do not overlap: every run of one tree beyond every run of the other (a
    rank test: with three rounds each, chance alone puts one side wholly above the other in 1
    of 10 comparisons, either way). The spread alone, half the range of three runs, is too
    narrow a guess of the noise: on identical trees (`--against HEAD --new HEAD`) it called
    3 of 26 rows better or worse; with the overlap rule, none.
    """
    mo, mn = statistics.median(old), statistics.median(new)
    noise = max(spread(old), spread(new), NOISE_FLOOR)
    change = mn / mo - 1 if mo else 0.0
    better = change > 0 if unit in HIGHER_IS_BETTER else change < 0
    if abs(change) <= noise or _overlap(old, new):
        return change, noise, "same"
    return change, noise, "better" if better else "WORSE"


def _overlap(old: list[float], new: list[float]) -> bool:
    """True when some run of one tree falls within the range of the other's (one run each: never)."""
    if len(old) < 2 or len(new) < 2:
        return False
    return min(new) <= max(old) and min(old) <= max(new)


def compare(rev: str, flags: list[str], rounds: int, output: Path, new: str | None = None) -> int:
    """Runs both trees `rounds` times each, alternately; prints the comparison. Exit 0.

    `new`: a revision whose package stands on the new side instead of this tree's (`--new`).
    """
    runs: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    units: dict[str, str] = {}
    order: list[str] = []
    with tempfile.TemporaryDirectory(prefix="mcptape-bench-against-") as tmp:
        old = Path(tmp) / "old"
        old.mkdir()
        _extract(rev, old)
        fresh = ROOT
        if new is not None:
            fresh = Path(tmp) / "new"
            fresh.mkdir()
            _extract(new, fresh)
        for n in range(rounds):
            for name, tree in (("old", old), ("new", fresh)):
                print(
                    f"bench: round {n + 1}/{rounds}, {name} tree ...", file=sys.stderr, flush=True
                )
                for row in _run(tree, flags, Path(tmp) / f"{name}-{n}.json"):
                    target = row["target"]
                    units[target] = row["unit"]
                    if target not in order:
                        order.append(target)
                    runs[name].setdefault(target, []).append(_figure(row))
    table, doc = [], []
    for target in order:
        a, b = runs["old"].get(target), runs["new"].get(target)
        if not a or not b:
            continue
        change, noise, verdict = judge(a, b, units[target])
        ma, mb = statistics.median(a), statistics.median(b)
        table.append([target, f"{ma:.3g}", f"{mb:.3g}", f"{change:+.0%}", f"{noise:.0%}", verdict])
        doc.append({"target": target, "unit": units[target], "old": a, "new": b, "change": change,
                    "noise": noise, "verdict": verdict})  # fmt: skip
    side = f"{new} (new)" if new is not None else "this tree (new)"
    print(f"bench: {rev} (old) against {side}, {rounds} rounds each, alternately")
    print(tabulate(table, headers=["target", "old", "new", "change", "noise +-", "verdict"]))
    output.write_bytes(orjson.dumps({"against": rev, "new": new, "rounds": rounds, "rows": doc},
                                    option=orjson.OPT_INDENT_2) + b"\n")  # fmt: skip
    return 0
