"""pointer: JSON pointers for paths and --ignore patterns."""

from __future__ import annotations

from typing import Any

import pytest

from mcptape.diff.pointer import drop, ignored, matches, pointer, tokens


@pytest.mark.parametrize(
    ("parts", "text"),
    [
        ((), ""),
        (("result", "content", 0, "text"), "/result/content/0/text"),
        (("_meta", "io.x/y", "a~b"), "/_meta/io.x~1y/a~0b"),
    ],
)
def test_pointer_round_trips(parts: tuple[Any, ...], text: str) -> None:
    assert pointer(parts) == text
    assert tokens(text) == tuple(str(p) for p in parts)


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("/result", "/result/content/0/text", True),
        ("/result/content/*/text", "/result/content/3/text", True),
        ("/result/content/*/text", "/result/content/3/type", False),
        ("/tools/*/description", "/tools/echo/description", True),
        ("/tools/*/description", "/tools/echo", False),
        ("/error/code", "/error", False),
    ],
)
def test_matches_covers_the_path_and_below(pattern: str, path: str, hit: bool) -> None:
    assert matches(tokens(pattern), tokens(path)) is hit
    assert ignored([tokens(pattern)], tokens(path)) is hit


def test_drop_removes_what_a_pattern_points_at_without_touching_the_input() -> None:
    value = {"a": [{"x": 1, "y": 2}, {"x": 3}], "b": 1}
    assert drop(value, ("a", "*", "x")) == {"a": [{"y": 2}, {}], "b": 1}
    assert drop(value, ("b",)) == {"a": [{"x": 1, "y": 2}, {"x": 3}]}
    assert drop(value, ("nope", "x")) is value
    assert value == {"a": [{"x": 1, "y": 2}, {"x": 3}], "b": 1}
