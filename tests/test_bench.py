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
