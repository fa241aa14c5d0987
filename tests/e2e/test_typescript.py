"""The TypeScript helper (js/) and its vitest example, run by the suite: a TS SDK 1.x client on
`mcptape replay` and `mcptape serve`, the journal of a declared mock, and a --strict failure that
fails the vitest run.

Node and npm come from the machine; the npm packages from js/package-lock.json (`npm ci`,
skipped when js/node_modules is current), so a fresh checkout runs these too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

JS = ROOT / "js"


def npm_ready() -> Path:
    """Installs js/'s packages from its lock file unless they are current; the vitest binary."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            "npm is not installed: run `make test` (it installs Node and npm) or install Node 20"
        )
    stamp = JS / "node_modules" / ".mcptape-installed"
    lock = JS / "package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=JS,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, f"npm ci in js/ failed:\n{done.stderr[-2000:]}"
        stamp.touch()
    return JS / "node_modules" / ".bin" / "vitest"


def vitest(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    runner = npm_ready()
    full = {**os.environ, "MCPTAPE_COMMAND": f"{sys.executable} -m mcptape", **env}
    full.pop("MCPTAPE_RECORD_MODE", None)
    full.pop("FORCE_COLOR", None)
    full["NO_COLOR"] = "1"  # vitest colours its summary when CI is set
    return subprocess.run(
        [str(runner), "run", *args], cwd=JS, capture_output=True, text=True, timeout=300, env=full
    )


def test_the_vitest_example_passes() -> None:
    done = vitest()
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    plain = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout)
    assert re.search(r"Tests\s+12 passed", plain), plain[
        -2000:
    ]  # the strict-failure demo runs only on demand


def test_a_strict_replay_with_unplayed_exchanges_fails_the_vitest_run() -> None:
    done = vitest("test/strict-failure.test.ts", MCPTAPE_SHOW_STRICT_FAILURE="1")
    out = done.stdout + done.stderr
    assert done.returncode != 0, out[-3000:]
    assert "StrictReplayError" in out and "never played" in out, out[-3000:]
