"""Every runnable example in examples/ runs, as a user would run it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES
from tests.diff.text_table import text_rows

pytestmark = pytest.mark.e2e


def test_the_copyable_pytest_example_replays_its_cassettes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_with_mcptape.py"],
        cwd=EXAMPLES, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout


def test_make_demo_runs_every_step(tmp_path: object) -> None:
    env = dict(os.environ, MCPTAPE_DEMO_DIR=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "demo.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "demo: done" in out
    assert out.count("add(1, 2) = 3") == 3, "recorded, replayed, and recorded again for v2"
    assert "equivalent (11 envelope differences, not behaviour)" in out
    whats = [r.get("what") for r in text_rows(out)]  # the diff's tables wrap within 100 columns
    assert "behaviour differs" in out and "new required argument 'tone'" in whats


def test_record_http_example(tmp_path: object) -> None:
    out = f"{tmp_path}/http.jsonl"
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "record_http.py"), out],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "add(1, 2) = 3 progress: ['adding', 'done']" in proc.stdout
    assert "streamable-http" in proc.stdout and "tools/call" in proc.stdout


def test_verify_example() -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "verify_release.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "-> exit 0" in proc.stdout and "-> exit 1" in proc.stdout
    assert "tool 'weather' removed" in [r.get("what") for r in text_rows(proc.stdout)]


def test_diff_in_ci_example(tmp_path: object) -> None:
    env = dict(os.environ, PYTHON=sys.executable)
    proc = subprocess.run(
        ["bash", str(EXAMPLES / "diff_in_ci.sh"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "new required argument 'tone'" in proc.stdout
    assert "breaking changes: 2" in proc.stdout
