"""The GitHub Action (action.yml): its script run here with the environment GitHub's runner sets.

The script reads the action's inputs from the MCPTAPE_* variables action.yml maps them to,
writes the markdown report to GITHUB_STEP_SUMMARY and its outputs to GITHUB_OUTPUT, and
fails on breaking changes. The server is the demo server (the official `mcp` SDK), release 1
recorded, release 2 (with breaking changes) verified.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.conftest import DEMO_SERVER
from tests.e2e.test_diff_e2e import record_demo

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "action_verify.py"


@pytest.fixture(scope="module")
def cassettes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("workspace") / "cassettes"
    folder.mkdir()

    async def record() -> None:
        with anyio.fail_after(60):
            await record_demo(folder / "legacy.jsonl", "legacy", "v1")

    anyio.run(record)
    return folder


def run_action(
    tmp_path: Path, cassettes: Path, *, variant: str = "v1", **inputs: str
) -> tuple[int, str, str, dict[str, str]]:
    summary, output, temp = (
        tmp_path / "summary.md",
        tmp_path / "output.txt",
        tmp_path / "runner-temp",
    )
    temp.mkdir()
    env = {
        **os.environ,
        "GITHUB_ACTIONS": "true", "CI": "true", "GITHUB_WORKSPACE": str(cassettes.parent),
        "GITHUB_STEP_SUMMARY": str(summary), "GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(temp),
        "GITHUB_ACTION_PATH": str(ROOT), "DEMO_SERVER_VARIANT": variant,
        "MCPTAPE_CASSETTES": "cassettes", "MCPTAPE_SERVER": f"{sys.executable} {DEMO_SERVER}", "MCPTAPE_URL": "",
        "MCPTAPE_FAIL_ON": "breaking", "MCPTAPE_NOISE_RUNS": "0", "MCPTAPE_ARGS": "",
    }  # fmt: skip
    env.update({f"MCPTAPE_{k.upper()}": v for k, v in inputs.items()})
    proc = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=180, env=env
    )
    outputs = (
        dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        if output.exists()
        else {}
    )
    return proc.returncode, proc.stdout, summary.read_text() if summary.exists() else "", outputs


def test_breaking_changes_fail_the_job_with_the_report_in_the_summary(
    tmp_path: Path, cassettes: Path
) -> None:
    code, stdout, summary, outputs = run_action(tmp_path, cassettes, variant="v2")
    assert code == 1
    assert "behaviour differs: 2 breaking" in summary and "| tool weather" in summary
    assert (
        outputs["exit-code"] == "1"
        and outputs["breaking"] == "2"
        and outputs["summary"].startswith("behaviour differs")
    )
    assert Path(outputs["report"]).is_file()
    assert len(re.findall(r"^::error title=mcptape breaking: tool ", stdout, re.M)) == 2


def test_fail_on_never_reports_without_failing(tmp_path: Path, cassettes: Path) -> None:
    code, _, summary, outputs = run_action(tmp_path, cassettes, variant="v2", fail_on="never")
    assert code == 0 and "behaviour differs" in summary and outputs["breaking"] == "2"


def test_an_unchanged_server_passes(tmp_path: Path, cassettes: Path) -> None:
    code, _, summary, outputs = run_action(tmp_path, cassettes, fail_on="differences")
    assert code == 0, summary
    assert "equivalent" in summary and outputs["exit-code"] == "0" and outputs["differences"] == "0"


def test_a_server_that_cannot_start_fails_with_the_reason_in_the_summary(
    tmp_path: Path, cassettes: Path
) -> None:
    code, stdout, summary, outputs = run_action(
        tmp_path, cassettes, server="/nonexistent/server --flag"
    )
    assert code == 2 and outputs["exit-code"] == "2"
    assert "could not run" in summary and "cannot start '/nonexistent/server'" in summary
    assert stdout.count("::error title=mcptape verify::") == 1


def test_action_yml_runs_this_script_with_every_input_mapped() -> None:
    text = (ROOT / "action.yml").read_text()
    assert (
        "using: composite" in text
        and 'python "$GITHUB_ACTION_PATH/scripts/action_verify.py"' in text
    )
    for name in ("cassettes", "server", "url", "fail-on", "noise-runs", "args"):
        env = "MCPTAPE_" + name.upper().replace("-", "_")
        assert f"  {name}:\n" in text and f"{env}: ${{{{ inputs.{name} }}}}" in text
