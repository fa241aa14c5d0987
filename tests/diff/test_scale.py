"""bench/diff_scale.py builds what it claims: planted differences are found, and only those."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from mcptape.cassette import loads
from mcptape.diff.engine import diff_cassettes

BENCH = Path(__file__).resolve().parents[2] / "bench" / "diff_scale.py"


def test_the_benchmark_cassettes_differ_exactly_where_planted() -> None:
    spec = importlib.util.spec_from_file_location("diff_scale", BENCH)
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    a, b = loads(bench.build(1200, 40, False)), loads(bench.build(1200, 40, True))
    report = diff_cassettes(a, b)
    errors = sum(1 for i in range(1200) if i % 120 == 1)
    results = sum(1 for i in range(1200) if i % 40 == 0 and i % 120 != 1)
    assert report.counts()["changed"] == errors + results == len(report.differences)
    assert {d.path for d in report.differences} == {"/error/code", "/result/content/0/text"}
    assert report.envelope == []
