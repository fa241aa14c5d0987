"""group: the same change in several tools (prompts, ...) is one entry; anything else stays a row."""

from __future__ import annotations

from mcptape.diff.group import group
from mcptape.diff.pointer import pointer
from mcptape.diff.report import render_json, render_markdown, render_text
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


def dropped(tool: str, was: object = False) -> Difference:
    return Difference(Section.TOOLS, Change.RELAXED, Impact.COMPATIBLE, f"tool {tool}",
                      pointer(("tools", tool, "inputSchema", "additionalProperties")), was, MISSING,
                      "schema: other properties now allowed (relaxed)")  # fmt: skip


def test_the_same_change_in_three_tools_is_one_entry_at_the_first_row() -> None:
    other = Difference(
        Section.RESULT,
        Change.CHANGED,
        Impact.BEHAVIOUR,
        "tools/call a",
        "/result/content/0/text",
        "x",
        "y",
    )
    entries = group([dropped("a"), other, dropped("b"), dropped("c/d")])
    assert [e.rows for e in entries] == [(0, 2, 3), (1,)]
    first = entries[0]
    assert (first.where, first.path, first.items) == (
        "3 tools",
        "/tools/*/inputSchema/additionalProperties",
        ("a", "b", "c/d"),
    )
    assert (entries[1].where, entries[1].path) == ("tools/call a", "/result/content/0/text")


def test_other_values_another_message_or_another_section_are_other_entries() -> None:
    prompt = Difference(Section.PROMPTS, Change.RELAXED, Impact.COMPATIBLE, "prompt a",
                        "/prompts/a/inputSchema/additionalProperties", False, MISSING, dropped("a").message)  # fmt: skip
    assert [e.rows for e in group([dropped("a"), dropped("b", {}), prompt])] == [(0,), (1,), (2,)]


def test_whole_items_added_are_never_one_entry() -> None:
    new = [Difference(Section.TOOLS, Change.ADDED, Impact.COMPATIBLE, f"tool {n}", f"/tools/{n}", MISSING, {}, "new tool")
           for n in "ab"]  # fmt: skip
    assert len(group(new)) == 2


def test_every_format_shows_one_entry_and_still_counts_every_row() -> None:
    side = Side("a.jsonl", "legacy", "2025-11-25", 3, 2)
    report = DiffReport(side, side, DiffOptions(), [dropped("a"), dropped("b")])
    text = render_text(report)
    assert (
        text.startswith("behaviour differs: 2 relaxed")
        and "2 tools [1]" in text
        and "[1] a, b" in text
    )
    (row,) = [
        line for line in render_markdown(report).splitlines() if "additionalProperties" in line
    ]
    assert row.startswith("| relaxed | 2 tools: a, b |")
    data = render_json(report)
    assert (
        '"where": "2 tools"' in data and '"differences": [\n        0,\n        1\n      ]' in data
    )
