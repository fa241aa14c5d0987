"""schema: tool input/output schema changes, classified for a client."""

from __future__ import annotations

from typing import Any

import pytest

from mcptape.diff.schema import clean_schema, schema_changes
from mcptape.diff.types import MISSING, Change, Impact


def obj(props: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, **extra}
    if required is not None:
        out["required"] = required
    return out


S, I = {"type": "string"}, {"type": "integer"}

CASES = [
    # (a, b, output?, [(path, change, impact)])
    (
        obj({"a": S}),
        obj({"a": S, "b": S}, ["b"]),
        False,
        [("properties/b", Change.ADDED, Impact.BREAKING)],
    ),
    (
        obj({"a": S}),
        obj({"a": S, "b": S}),
        False,
        [("properties/b", Change.ADDED, Impact.COMPATIBLE)],
    ),
    (
        obj({"a": S, "b": S}),
        obj({"a": S}),
        False,
        [("properties/b", Change.REMOVED, Impact.BREAKING)],
    ),
    (obj({"a": S}), obj({"a": I}), False, [("properties/a/type", Change.CHANGED, Impact.BREAKING)]),
    (
        obj({"a": S}),
        obj({"a": S}, ["a"]),
        False,
        [("required/a", Change.TIGHTENED, Impact.BREAKING)],
    ),
    (
        obj({"a": S}, ["a"]),
        obj({"a": S}),
        False,
        [("required/a", Change.RELAXED, Impact.COMPATIBLE)],
    ),
    (
        obj({"a": {**S, "description": "x"}}),
        obj({"a": {**S, "description": "y"}}),
        False,
        [("properties/a/description", Change.CHANGED, Impact.COSMETIC)],
    ),
    (
        obj({"a": {**S, "enum": ["x"]}}),
        obj({"a": {**S, "enum": ["x", "y"]}}),
        False,
        [("properties/a/enum", Change.RELAXED, Impact.COMPATIBLE)],
    ),
    (
        obj({"a": {**S, "enum": ["x", "y"]}}),
        obj({"a": {**S, "enum": ["x"]}}),
        False,
        [("properties/a/enum", Change.TIGHTENED, Impact.BREAKING)],
    ),
    (
        obj({"a": S}),
        obj({"a": {**S, "default": "z"}}),
        False,
        [("properties/a/default", Change.ADDED, Impact.COMPATIBLE)],
    ),
    (
        obj({"a": S}),
        obj({"a": {**S, "maxLength": 3}}),
        False,
        [("properties/a/maxLength", Change.TIGHTENED, Impact.BREAKING)],
    ),
    (
        obj({"a": {**S, "maxLength": 3}}),
        obj({"a": S}),
        False,
        [("properties/a/maxLength", Change.RELAXED, Impact.COMPATIBLE)],
    ),
    # output schemas: the reader's point of view
    (obj({"r": S}, ["r"]), obj({}, []), True, [("properties/r", Change.REMOVED, Impact.BREAKING)]),
    (
        obj({"r": S}),
        obj({"r": S, "s": I}, ["s"]),
        True,
        [("properties/s", Change.ADDED, Impact.COMPATIBLE)],
    ),
    (obj({"r": S}, ["r"]), obj({"r": S}), True, [("required/r", Change.RELAXED, Impact.BREAKING)]),
    (MISSING, obj({"r": S}), True, [("", Change.ADDED, Impact.COMPATIBLE)]),
    (obj({"r": S}), MISSING, True, [("", Change.REMOVED, Impact.BREAKING)]),
]


@pytest.mark.parametrize(("a", "b", "output", "want"), CASES)
def test_schema_changes_are_classified(
    a: Any, b: Any, output: bool, want: list[tuple[str, Change, Impact]]
) -> None:
    got = [
        ("/".join(path), change, impact)
        for path, change, impact, *_ in schema_changes(a, b, output=output)
    ]
    assert got == want


def test_identical_schemas_have_no_changes() -> None:
    assert schema_changes(obj({"a": S}, ["a"]), obj({"a": S}, ["a"])) == []


def test_clean_schema_drops_titles_and_dialect_at_every_level_but_not_properties_named_title() -> (
    None
):
    schema = {"$schema": "x", "title": "T", "type": "object",
              "properties": {"title": {"type": "string", "title": "Title"}, "xs": {"type": "array", "items": {"title": "I", "type": "integer"}}},
              "$defs": {"D": {"title": "D", "type": "string"}}, "anyOf": [{"title": "A"}]}  # fmt: skip
    assert clean_schema(schema) == {
        "type": "object",
        "properties": {"title": {"type": "string"}, "xs": {"type": "array", "items": {"type": "integer"}}},
        "$defs": {"D": {"type": "string"}}, "anyOf": [{}],
    }  # fmt: skip
