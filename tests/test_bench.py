"""The benchmarks run (in their smallest size) and write a valid results file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e


def test_bench_smoke_runs_every_suite_and_writes_results(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "-o", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["level"] == "smoke"
    targets = [r["target"] for r in doc["rows"]]
    for prefix in (
        "record stdio",
        "replay stdio",
        "replay scaling",
        "first replay",
        "replay engine",
        "in-process replay",
        "diff",
        "record http",
        "serve http",
        "views",
    ):
        assert any(t.startswith(prefix) for t in targets), prefix
    for row in doc["rows"]:
        assert row["value"] > 0, row
        assert isinstance(row["ok"], bool)
        if row["baseline"] is not None:
            assert row["ratio"] == pytest.approx(row["value"] / row["baseline"], rel=1e-6), row
    assert "target" in proc.stdout and "goal" in proc.stdout
    assert all("spread" in row for row in doc["rows"])


def test_a_spread_is_half_the_range_over_the_median() -> None:
    from bench.common import Medians, spread

    assert spread([9.0, 10.0, 11.0]) == pytest.approx(0.1)
    assert spread([5.0]) == 0.0
    med = Medians({"new": [2.0, 4.0], "old": [1.0, 2.0]})
    assert med["new"] == 3.0
    assert med.spread("new", "old") == 0.0  # the same ratio (2x) in both runs: no noise


@pytest.mark.parametrize(
    ("old", "new", "unit", "verdict"),
    [
        ([100.0, 104.0, 96.0], [101.0, 99.0, 103.0], "req/s", "same"),  # within 4% noise
        ([100.0, 101.0, 99.0], [80.0, 81.0, 79.0], "req/s", "WORSE"),  # fewer requests/s
        ([100.0, 101.0, 99.0], [80.0, 81.0, 79.0], "s", "better"),  # less time
        ([1.0, 1.01, 0.99], [1.3, 1.31, 1.29], "x", "WORSE"),  # a time ratio grew
        ([0.5], [0.505], "x", "same"),  # one round each: the 2% floor, not zero noise
        ([0.5], [0.6], "x", "WORSE"),  # one round each: beyond the floor, nothing to overlap
        # identical trees, measured: medians 4% apart with 4% spread, but the runs interleave
        ([0.0166, 0.0177, 0.017], [0.0182, 0.0168, 0.0176], "s", "same"),
        ([10.0, 10.1, 9.9, 13.0], [12.0, 12.1, 11.9], "s", "same"),  # one slow old run overlaps
        ([10.0, 10.1, 9.9, 11.0], [12.0, 12.1, 11.9], "s", "WORSE"),  # every new run slower
    ],
)
def test_against_calls_a_change_only_what_exceeds_the_noise(
    old: list[float], new: list[float], unit: str, verdict: str
) -> None:
    from bench.against import judge

    assert judge(old, new, unit)[2] == verdict


def test_against_runs_both_trees_alternately_and_compares_them(tmp_path: Path) -> None:
    out = tmp_path / "against.json"
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--only", "diff", "--against", "HEAD",
                           "--rounds", "2", "-o", str(out)], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stderr.count("old tree") == 2 and proc.stderr.count("new tree") == 2
    doc = json.loads(out.read_text())
    (row,) = doc["rows"]
    assert row["target"].startswith("diff:")
    assert len(row["old"]) == len(row["new"]) == 2
    assert row["verdict"] in ("same", "better", "WORSE")
    assert "verdict" in proc.stdout


def test_against_an_unknown_revision_is_a_one_line_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--only", "diff", "--against", "no-such-rev",
                           "-o", str(tmp_path / "x.json")], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert proc.returncode != 0
    assert "cannot read revision 'no-such-rev'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_against_with_new_compares_two_revisions_packages(tmp_path: Path) -> None:
    out = tmp_path / "against.json"
    proc = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--only", "diff", "--against", "HEAD",
                           "--new", "HEAD", "--rounds", "1", "-o", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "HEAD (old) against HEAD (new)" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["against"] == doc["new"] == "HEAD"
    assert doc["rows"][0]["target"].startswith("diff:")


def test_new_without_against_is_a_usage_error() -> None:
    proc = subprocess.run([sys.executable, "-m", "bench", "--new", "HEAD"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2
    assert "--new needs --against" in proc.stderr


def test_the_package_under_test_is_timed_compiled_as_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench.common import compile_package

    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")  # as on this machine: no process writes any
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("X = 1\n")
    (pkg / "mod.py").write_text("def f():\n    return 2\n")
    assert compile_package(pkg) == 0
    assert sorted(p.name.split(".")[0] for p in (pkg / "__pycache__").iterdir()) == [
        "__init__",
        "mod",
    ]
    (pkg / "broken.py").write_text("def (\n")
    assert compile_package(pkg) == 1
