"""`mcptape show` in its three formats, and the CLI's one-line errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, mcptape_cmd

GOLDEN = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(mcptape_cmd(*args), capture_output=True, text=True, timeout=60)


def test_show_table_pairs_requests_with_responses() -> None:
    proc = run("show", str(GOLDEN))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert "protocol 2025-11-25" in lines[0]
    assert lines[1] == "replays for legacy (recorded) and 2026-07-28 (translated) clients"
    init = next(ln for ln in lines if " initialize " in ln)
    assert "asks 2025-11-25" in init and "#2" in init  # paired with the response on line 2
    assert any("notifications/progress" in ln and "1/2 adding" in ln for ln in lines)
    assert any("error -32000" in ln and "failed: boom" in ln for ln in lines)
    assert any("elicitation/create" in ln for ln in lines)


def test_show_json_is_machine_readable() -> None:
    proc = run("show", str(GOLDEN), "--format", "json")
    doc = json.loads(proc.stdout)
    assert doc["protocol_versions"] == ["2025-11-25"]
    assert doc["serves"] == {"legacy": "recorded", "modern": "translated"}
    calls = [r for r in doc["rows"] if r["what"] == "tools/call"]
    assert calls and all(r["pair"] is not None for r in calls)
    answer = next(r for r in doc["rows"] if r["seq"] == calls[0]["pair"])
    assert answer["what"] in ("result", "error -32000") and answer["latency_ms"] >= 0


def test_show_mermaid_is_a_sequence_diagram() -> None:
    out = run("show", str(GOLDEN), "--format", "mermaid").stdout
    lines = out.splitlines()
    assert lines[0] == "sequenceDiagram"
    assert any(ln.strip().startswith("C->>S: tools/call") for ln in lines)
    assert any(ln.strip().startswith("S-->>C: result") for ln in lines)
    labels = [re.sub(r"#\d+;", "", ln.split(": ", 1)[-1]) for ln in lines[3:]]
    assert not any(c in label for label in labels for c in ";#<>"), (
        "labels are escaped with Mermaid's entities"
    )
    assert any("#35;" in ln for ln in lines), "a real # (an entity), not a look-alike glyph"
    assert not any("＃" in ln or "∶" in ln for ln in lines)


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (("show", "/no/such.jsonl"), 2, "mcptape: error: /no/such.jsonl: no such cassette"),
        (("replay", "/no/such.jsonl"), 2, "mcptape: error: /no/such.jsonl: no such cassette"),
        (
            ("diff", "/no/such.jsonl", str(GOLDEN)),
            2,
            "mcptape: error: /no/such.jsonl: no such cassette",
        ),
        (("redact", "/no/such.jsonl"), 2, "mcptape: error: redact: Invalid value"),
        (("show", str(GOLDEN), "--format", "yaml"), 2, "Invalid value for '-f' / '--format'"),
        (("record", "--bogus", "--", "x"), 2, "mcptape: error: record: No such option '--bogus'"),
        (("nosuchcommand",), 2, "No such command 'nosuchcommand'"),
        (("replay", str(ROOT / "README.md")), 1, "README.md:1: not an mcptape cassette"),
    ],
)
def test_errors_are_one_line_with_the_right_exit_code(
    args: tuple[str, ...], code: int, text: str
) -> None:
    proc = run(*args)
    assert proc.returncode == code
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert text in lines[0] and "Traceback" not in proc.stderr


def test_python_dash_m_and_console_script_agree(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcptape", "--version"], capture_output=True, text=True, check=True
    )
    assert proc.stdout.startswith("mcptape 0.")


def test_usage_errors_have_one_prefix() -> None:
    proc = run("redact", "/no/such.jsonl")
    assert proc.stderr.count("mcptape") == 2, (
        proc.stderr
    )  # "mcptape: error: redact: ... (see `mcptape redact --help`)"
    assert proc.stderr.startswith("mcptape: error: redact: ")


def test_diff_and_verify_take_dash_f_like_show() -> None:
    assert run("diff", str(GOLDEN), str(GOLDEN), "-f", "json").returncode == 0
    assert "-f, --format" in run("verify", "--help").stdout
