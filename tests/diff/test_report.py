"""report: the summary line, text and markdown tables, the stable JSON shape, shortening."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcptape.diff.report import (
    JSON_FORMAT,
    render_json,
    render_markdown,
    render_text,
    report_json,
    shorten,
    shorten_pair,
    summary,
)
from mcptape.diff.types import (
    MISSING,
    Change,
    Difference,
    DiffOptions,
    DiffReport,
    Impact,
    Section,
    Side,
)

SIDE = Side("a.jsonl", "legacy", "2025-11-25", 5, 4)


def report(
    diffs: tuple[Difference, ...] | list[Difference] = (),
    envelope: tuple[Difference, ...] | list[Difference] = (),
    strict: bool = False,
) -> DiffReport:
    return DiffReport(SIDE, SIDE, DiffOptions(strict_envelope=strict), list(diffs), list(envelope))


BREAK = Difference(
    Section.TOOLS,
    Change.REMOVED,
    Impact.BREAKING,
    "tool weather",
    "/tools/weather",
    {"name": "weather"},
    MISSING,
    "tool 'weather' removed",
)
CHANGE = Difference(
    Section.ERROR,
    Change.CHANGED,
    Impact.BEHAVIOUR,
    "tools/call fail",
    "/error/code",
    -32000,
    -32001,
    "error code changed",
    1,
    8,
    9,
)
ADD = Difference(
    Section.TOOLS,
    Change.ADDED,
    Impact.COMPATIBLE,
    "tool multiply",
    "/tools/multiply",
    MISSING,
    {"name": "multiply"},
    "new tool",
)
ENV = Difference(
    Section.ENVELOPE,
    Change.ADDED,
    Impact.ENVELOPE,
    "tools/list",
    "/result/ttlMs",
    MISSING,
    0,
    "",
    4,
)


@pytest.mark.parametrize(
    ("diffs", "envelope", "strict", "line"),
    [
        ([], [], False, "equivalent"),
        ([], [ENV], False, "equivalent (1 envelope difference, not behaviour)"),
        ([], [ENV, ENV], True, "envelope differs: 2 envelope differences (--strict-envelope)"),
        ([BREAK, CHANGE, ADD], [], False, "behaviour differs: 1 breaking, 1 changed, 1 added"),
        ([CHANGE], [ENV], False, "behaviour differs: 1 changed (+1 envelope difference)"),
    ],
)
def test_summary_line(
    diffs: list[Difference], envelope: list[Difference], strict: bool, line: str
) -> None:
    r = report(diffs, envelope, strict)
    assert summary(r) == line
    for render in (render_text, render_markdown):
        assert line in render(r).splitlines()[0]


def test_json_report_shape_is_stable() -> None:
    data = orjson.loads(render_json(report([BREAK, CHANGE], [ENV])))
    assert list(data) == [
        "format",
        "summary",
        "equivalent",
        "exit_code",
        "counts",
        "a",
        "b",
        "options",
        "differences",
        "groups",
        "envelope",
        "noise",
        "masked",
    ]
    assert data["format"] == JSON_FORMAT
    assert data["counts"] == {
        "breaking": 1,
        "changed": 1,
        "added": 0,
        "removed": 0,
        "relaxed": 0,
        "tightened": 0,
        "cosmetic": 0,
        "envelope": 1,
    }
    assert data["exit_code"] == 1 and data["equivalent"] is False
    assert data["a"] == {
        "name": "a.jsonl",
        "era": "legacy",
        "protocol_version": "2025-11-25",
        "exchanges": 5,
        "calls": 4,
    }
    assert data["differences"][0] == {
        "section": "tools", "kind": "breaking", "change": "removed", "impact": "breaking", "exchange": "tool weather",
        "path": "/tools/weather", "message": "tool 'weather' removed", "a": {"name": "weather"},
    }  # fmt: skip
    assert data["differences"][1]["a"] == -32000 and data["differences"][1]["b"] == -32001
    assert (data["differences"][1]["a_seq"], data["differences"][1]["b_seq"]) == (8, 9)
    assert data["envelope"][0]["count"] == 4 and "a" not in data["envelope"][0]


def test_json_cuts_very_long_strings() -> None:
    long = Difference(
        Section.RESULT, Change.CHANGED, Impact.BEHAVIOUR, "x", "/result", "a" * 5000, "b"
    )
    value = report_json(report([long]))["differences"][0]["a"]
    assert value.endswith("… (5000 chars)") and len(value) < 2100


def test_text_and_markdown_tables_name_exchange_path_and_both_values() -> None:
    text = render_text(report([BREAK, CHANGE], [ENV]))
    assert "Server surface:" in text and "Exchanges:" in text and "Envelope (" in text
    assert (
        "tools/call fail" in text
        and "/error/code" in text
        and "-32000" in text
        and "-32001" in text
    )
    md = render_markdown(report([BREAK, CHANGE], [ENV]))
    assert (
        "### Server surface" in md
        and "| breaking |" in md
        and "`/error/code`" in md
        and "<details>" in md
    )


def test_markdown_escapes_pipes() -> None:
    d = Difference(
        Section.RESULT, Change.CHANGED, Impact.BEHAVIOUR, "tools/call a|b", "/result", "x|y", "z"
    )
    assert "a\\|b" in render_markdown(report([d]))


@pytest.mark.parametrize(
    ("value", "want"),
    [(MISSING, "-"), (None, "null"), ("hi", '"hi"'), (3, "3"), ({"a": [1]}, '{"a":[1]}')],
)
def test_shorten_short_values(value: Any, want: str) -> None:
    assert shorten(value) == want


def test_shorten_long_values_in_the_middle() -> None:
    out = shorten("x" * 500, 40)
    assert len(out) < 60 and "…" in out and "(502 chars)" in out


def test_two_long_strings_are_shown_from_where_they_differ() -> None:
    a, b = (
        "The quick brown fox jumps over the lazy dog " * 3 + "END-A",
        "The quick brown fox jumps over the lazy dog " * 3 + "END-B",
    )
    sa, sb = shorten_pair(a, b, 40)
    assert "END-A" in sa and "END-B" in sb


def test_a_side_of_cassettes_of_both_eras_says_so() -> None:
    from types import SimpleNamespace

    from mcptape.diff.report import _side

    mixed = SimpleNamespace(name="14 cassettes", era="mixed", protocol_version=None, calls=14)
    assert _side(mixed) == "14 cassettes (both protocol eras, 14 calls)"
    one = SimpleNamespace(name="a.jsonl", era="legacy", protocol_version="2025-11-25", calls=3)
    assert _side(one) == "a.jsonl (legacy 2025-11-25, 3 calls)"
