"""`mcptape diff` of the bundled server-everything runs (cassettes/runs/everything): release
2026.1.26 against 2026.8.31 drops `additionalProperties: false` from nine tools' input
schemas, a relaxation, and adds the same annotations to many tools."""

from __future__ import annotations

import orjson
import pytest
from click.testing import CliRunner

from mcptape.cli.diff import diff
from tests.conftest import ROOT

from .text_table import text_rows

RUNS = ROOT / "cassettes" / "runs" / "everything"
OLD, NEW = RUNS / "2026.1.26" / "run-1.jsonl", RUNS / "2026.8.31" / "run-1.jsonl"
RELAXED_PATH = "/tools/*/inputSchema/additionalProperties"
NINE = [
    "echo", "get-annotated-message", "get-resource-links", "get-resource-reference", "get-structured-content",
    "get-sum", "gzip-file-as-resource", "simulate-research-query", "trigger-long-running-operation",
]  # fmt: skip


def run(*args: str) -> str:
    result = CliRunner().invoke(diff, [str(OLD), str(NEW), *args])
    assert result.exit_code == 1, result.output
    return result.output


def test_the_dropped_constraint_is_counted_relaxed_never_removed() -> None:
    data = orjson.loads(run("--format", "json"))
    assert data["summary"] == "behaviour differs: 1 added, 9 relaxed, 15 cosmetic"
    assert data["counts"]["removed"] == 0 and data["counts"]["relaxed"] == 9
    relaxed = [
        d for d in data["differences"] if d["path"].endswith("/inputSchema/additionalProperties")
    ]
    assert len(relaxed) == 9
    assert {(d["kind"], d["change"], d["impact"]) for d in relaxed} == {
        ("relaxed", "relaxed", "compatible")
    }
    assert all(d["message"] == "schema: other properties now allowed (relaxed)" for d in relaxed)


def test_json_keeps_every_row_and_groups_the_nine_identical_changes() -> None:
    data = orjson.loads(run("--format", "json"))
    (group,) = [g for g in data["groups"] if g["path"] == RELAXED_PATH]
    assert group["items"] == NINE and group["where"] == "9 tools"
    assert group["exchanges"] == [f"tool {name}" for name in NINE]
    assert (group["kind"], group["a"], "b" in group) == ("relaxed", False, False)
    rows = [data["differences"][i] for i in group["differences"]]
    assert [r["exchange"] for r in rows] == [f"tool {name}" for name in NINE]
    # the annotations added to 15 tools are two groups and one row: their values differ
    annotations = [g for g in data["groups"] if g["path"] == "/tools/*/annotations"]
    assert sorted(len(g["items"]) for g in annotations) == [4, 9]


def test_text_shows_the_nine_changes_as_one_relaxed_entry_naming_the_tools() -> None:
    out = run()
    lines = out.splitlines()
    assert lines[0] == "behaviour differs: 1 added, 9 relaxed, 15 cosmetic"
    assert "Server surface (25 differences in 6 entries):" in lines
    rows = text_rows(out)
    assert [r["kind"] for r in rows].count("removed") == 0
    (row,) = [r for r in rows if r["kind"] == "relaxed"]
    assert row == {
        "kind": "relaxed", "where": "9 tools [2]", "path": RELAXED_PATH, "A": "false", "B": "-",
        "what": "schema: other properties now allowed (relaxed)",
    }  # fmt: skip
    start = lines.index(next(line for line in lines if line.startswith("[2] ")))
    assert (
        " ".join(lines[start : start + 2]).removeprefix("[2] ").split()
        == [n + "," for n in NINE[:-1]] + NINE[-1:]
    )


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_no_output_names_the_relaxation_removed(fmt: str) -> None:
    out = run("--format", fmt)
    assert "9 relaxed" in out and "9 removed" not in out
    if fmt == "markdown":
        rows = [line for line in out.splitlines() if "additionalProperties" in line]
        assert (
            len(rows) == 1
            and rows[0].startswith("| relaxed ")
            and "9 tools: echo, get-annotated-message" in rows[0]
        )


def test_no_line_of_the_text_report_is_wider_than_100_columns() -> None:
    for old, new in [(OLD, NEW), (NEW, OLD), (OLD, RUNS / "2026.1.26" / "run-2.jsonl")]:
        result = CliRunner().invoke(diff, [str(old), str(new)])
        assert result.exit_code in (0, 1)
        widest = max(result.output.splitlines(), key=len)
        assert len(widest) <= 100, widest
