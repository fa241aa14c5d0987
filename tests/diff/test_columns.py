"""columns: the text report's tables and lines never run wider than 100 columns, and lose nothing."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mcptape.diff.columns import WIDTH, table, wrap

cell = st.text(alphabet=st.sampled_from('ab/ ,-x…"{}:'), max_size=150) | st.sampled_from(
    ["/tools/trigger-long-running-operation/inputSchema/additionalProperties", "-32000", "1.0", ""]
)


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


@given(st.lists(st.lists(cell, min_size=6, max_size=6), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_a_table_fits_100_columns_and_keeps_every_character(rows: list[list[str]]) -> None:
    text = table(rows, ["kind", "where", "path", "A", "B", "what"])
    assert max(len(line) for line in text.splitlines()) <= WIDTH
    body = squeeze(text)
    for row in rows:
        for c in row:
            for piece in squeeze(c).split("…"):
                assert all(ch in body for ch in piece)


@given(st.text(max_size=400), st.integers(5, 120))
@settings(max_examples=100, deadline=None)
def test_wrap_keeps_lines_within_the_width_and_the_text_whole(text: str, width: int) -> None:
    text = text.replace("\r", " ")
    lines = wrap(text, width, "  ")
    assert all(len(line) <= width for line in lines)
    assert squeeze("".join(lines)) == squeeze(text)


def test_a_pointer_wraps_after_its_slashes_and_a_list_after_its_commas() -> None:
    assert wrap("/tools/*/inputSchema/additionalProperties", 22) == [
        "/tools/*/inputSchema/",
        "additionalProperties",
    ]
    assert wrap("echo, get-sum, trigger-long-running-operation", 20, anywhere=False) == [
        "echo, get-sum,", "trigger-long-running", "-operation",
    ]  # fmt: skip


def test_a_table_that_fits_is_left_as_tabulate_draws_it() -> None:
    text = table(
        [["breaking", "tool echo", "/tools/echo", "-", '"1.0"', "tool 'echo' removed"]],
        ["kind", "where", "path", "A", "B", "what"],
    )
    assert (
        text.splitlines()[2]
        == "breaking  tool echo  /tools/echo  -    \"1.0\"  tool 'echo' removed"
    )
