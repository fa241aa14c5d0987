"""`python -m bench [--quick] [--only NAME]`: runs the benchmarks, prints a table, writes bench/results.json.

Every figure is a ratio against a baseline measured in the same run (medians over
alternating runs), because these machines are shared and noisy; absolute numbers are
printed for information only.
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
import time
from dataclasses import asdict
from pathlib import Path

import orjson
from tabulate import tabulate

from .common import FULL, QUICK, SMOKE, Row, compile_package

SUITES: dict[str, str] = {
    "recorder": "bench.recorder:recorder_overhead",
    "replay": "bench.replay:replay_stdio",
    "scaling": "bench.replay:scaling",
    "from-index": "bench.replay:from_index",
    "first-replay": "bench.first_replay:first_replay",
    "engine": "bench.engine:engine_suite",
    "in-process": "bench.replay:in_process",
    "diff": "bench.replay:diff",
    "http": "bench.http:http_suite",
    "check": "bench.check:check_suite",
    "streaming": "bench.streaming:streaming_suite",
    "views": "bench.views:views_suite",
}
"""suite name -> "module:function(quick) -> list[Row]"; suites whose module is absent are skipped."""


DEFAULT_OUTPUT = Path(__file__).with_name("results.json")


def _fmt(value: float, unit: str) -> str:
    if unit in ("s", "x"):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    if unit == "us":
        return f"{value:.1f}"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _table(rows: list[Row]) -> list[list[str]]:
    return [
        [r.target, f"{_fmt(r.value, r.unit)} {r.unit}", "" if r.baseline is None else _fmt(r.baseline, r.unit),
         "" if r.ratio is None else f"{r.ratio:.2f}x", "" if r.spread is None else f"{r.spread:.0%}",
         r.goal, "pass" if r.ok else "FAIL", r.note]
        for r in rows
    ]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(prog="python -m bench")
    ap.add_argument("--quick", action="store_true", help="fewer and smaller runs (about a minute)")
    ap.add_argument(
        "--smoke", action="store_true", help="tiny runs that only prove every suite works (seconds)"
    )
    ap.add_argument("--only", action="append", help="run only these suites")
    ap.add_argument(
        "--against",
        metavar="REV",
        help="also run the same benchmarks on git revision REV, alternately, and compare (bench/against.py)",
    )
    ap.add_argument(
        "--new",
        metavar="REV",
        help="with --against: compare with git revision REV's package instead of this tree's "
        "(what one commit range changed, measured with today's benchmarks)",
    )
    ap.add_argument(
        "--keep-going", action="store_true", help="skip a suite that fails (--against sets it)"
    )
    ap.add_argument("--rounds", type=int, default=3, help="with --against: rounds of each tree")
    ap.add_argument("-o", "--output", default=str(DEFAULT_OUTPUT))
    args = ap.parse_args()
    if args.new and not args.against:
        ap.error("--new needs --against (the revision to compare it with)")
    level = SMOKE if args.smoke else QUICK if args.quick else FULL
    if args.against:
        from .against import compare

        flags = [
            "--keep-going",
            *(["--smoke"] if args.smoke else ["--quick"] if args.quick else []),
        ]
        flags += [f"--only={name}" for name in args.only or ()]
        out = Path(args.output)
        if out == DEFAULT_OUTPUT:
            out = out.with_name("against.json")
        sys.exit(compare(args.against, flags, args.rounds, out, new=args.new))
    import mcptape

    compile_package(Path(mcptape.__file__).parent)  # the package under test, as installed
    rows: list[Row] = []
    started = time.time()
    for name, target in SUITES.items():
        if args.only and name not in args.only:
            continue
        mod, fn = target.split(":")
        try:
            func = getattr(importlib.import_module(mod), fn)
        except ModuleNotFoundError as exc:
            print(f"bench: skipping {name}: {exc}", file=sys.stderr)
            continue
        print(f"bench: {name} ...", file=sys.stderr, flush=True)
        try:
            rows.extend(func(level))
        except Exception as exc:
            if not args.keep_going:
                raise
            print(f"bench: suite {name} failed, skipped: {exc!r}"[:300], file=sys.stderr)
    print(
        tabulate(
            _table(rows), headers=["target", "value", "baseline", "ratio", "+-", "goal", "", "note"]
        )
    )
    doc = {
        "level": ["smoke", "quick", "full"][level],
        "python": platform.python_version(),
        "machine": platform.machine(),
        "seconds": round(time.time() - started, 1),
        "rows": [asdict(r) for r in rows],
    }
    Path(args.output).write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    print(f"bench: wrote {args.output} in {doc['seconds']} s", file=sys.stderr)


if __name__ == "__main__":
    main()
