"""`mcptape record` exits with the server's code, also when the server answered nothing."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import mcptape_cmd

pytestmark = pytest.mark.e2e


def record(out: Path, code: str) -> subprocess.CompletedProcess[str]:
    cmd = mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, "-c", code)
    return subprocess.run(cmd, input="", capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("code", "expected", "why"),
    [
        ("import sys; sys.exit(7)", 7, "it exited with code 7"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", 128 + signal.SIGKILL, "it was stopped by SIGKILL"),
        ("import os, signal; os.kill(os.getpid(), signal.SIGTERM)", 128 + signal.SIGTERM, "it was stopped by SIGTERM"),
    ],
)  # fmt: skip
def test_a_server_that_ends_before_answering_gives_its_exit_code_like_a_shell(
    tmp_path: Path, code: str, expected: int, why: str
) -> None:
    out = tmp_path / "c.jsonl"
    proc = record(out, code)
    assert proc.returncode == expected
    assert proc.stderr.splitlines() == [
        f"mcptape: error: the server answered nothing ({why}), so {out} was not written"
    ]
    assert list(tmp_path.iterdir()) == [], "no cassette and no recording left behind"


def test_a_failed_re_recording_keeps_the_good_cassette_and_passes_the_code_on(
    tmp_path: Path,
) -> None:
    out = tmp_path / "c.jsonl"
    out.write_bytes(b"a good recording\n")
    proc = record(out, "import sys; print('no key', file=sys.stderr); sys.exit(7)")
    assert proc.returncode == 7
    assert proc.stderr.splitlines() == [
        "no key",
        f"mcptape: error: the server answered nothing (it exited with code 7), so {out} was left "
        "as it was; its stderr: no key",
    ]
    assert out.read_bytes() == b"a good recording\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_a_server_that_exits_0_without_answering_still_fails_the_recording(
    tmp_path: Path,
) -> None:
    """A failed recording never exits 0: that would read as a cassette written."""
    out = tmp_path / "c.jsonl"
    proc = record(out, "pass")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"mcptape: error: the server answered nothing (it exited with code 0), so {out} was not written"
    ]
    assert not out.exists()
