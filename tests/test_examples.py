"""Every runnable example in examples/ runs, as a user would run it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES

pytestmark = pytest.mark.e2e


def test_the_copyable_pytest_example_replays_its_cassettes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_with_mcptape.py"],
        cwd=EXAMPLES, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed" in proc.stdout
