"""schema: nested schema changes, classified at every depth (the four cases of issue 16 and more)."""

from __future__ import annotations

from typing import Any

import pytest

from mcptape.diff.schema import schema_changes
from mcptape.diff.types import Change, Impact

S, I = {"type": "string"}, {"type": "integer"}


def obj(props: dict[str, Any], required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object", "properties": props, **extra}
    if required is not None:
        out["required"] = required
    return out


def edits(item: dict[str, Any]) -> dict[str, Any]:
    """server-filesystem's edit_file: `edits` is an array of {oldText, newText} objects."""
    return obj({"path": S, "edits": {"type": "array", "items": item}}, ["path", "edits"])


EDIT = obj({"oldText": S, "newText": S}, ["oldText", "newText"], additionalProperties=False)

CASES = [
    # the release checks of issue 16: nested optional added, nested required added, enum value removed, nested additionalProperties: false dropped
    (obj({"opts": obj({"a": S})}), obj({"opts": obj({"a": S, "b": S})}), False,
     [("properties/opts/properties/b", Change.ADDED, Impact.COMPATIBLE, "new optional argument 'opts.b'")]),
    (obj({"opts": obj({"a": S})}), obj({"opts": obj({"a": S, "b": S}, ["b"])}), False,
     [("properties/opts/properties/b", Change.ADDED, Impact.BREAKING, "new required argument 'opts.b'")]),
    (obj({"opts": obj({"mode": {**S, "enum": ["fast", "safe"]}})}), obj({"opts": obj({"mode": {**S, "enum": ["fast"]}})}), False,
     [("properties/opts/properties/mode/enum", Change.TIGHTENED, Impact.BREAKING, "argument 'opts.mode': allowed values narrowed (tightened)")]),
    (edits(EDIT), edits({k: v for k, v in EDIT.items() if k != "additionalProperties"}), False,
     [("properties/edits/items/additionalProperties", Change.RELAXED, Impact.COMPATIBLE,
       "argument 'edits[]': other properties now allowed (relaxed)")]),
    # deeper and other keywords
    (edits(EDIT), edits({**EDIT, "properties": {**EDIT["properties"], "dryRun": {"type": "boolean"}}}), False,
     [("properties/edits/items/properties/dryRun", Change.ADDED, Impact.COMPATIBLE, "new optional argument 'edits[].dryRun'")]),
    (edits(EDIT), edits({**EDIT, "required": ["oldText"]}), False,
     [("properties/edits/items/required/newText", Change.RELAXED, Impact.COMPATIBLE, "argument 'edits[].newText' is now optional (relaxed)")]),
    (edits(EDIT), edits({**EDIT, "properties": {"oldText": I, "newText": S}}), False,
     [("properties/edits/items/properties/oldText/type", Change.CHANGED, Impact.BREAKING, "argument 'edits[].oldText' retyped (type)")]),
    (obj({"v": {"anyOf": [S, I]}}), obj({"v": {"anyOf": [S, I, {"type": "null"}]}}), False,
     [("properties/v/anyOf/2", Change.RELAXED, Impact.COMPATIBLE, "argument 'v': anyOf branch added (relaxed)")]),
    (obj({"v": {"oneOf": [S, I]}}), obj({"v": {"oneOf": [S]}}), False,
     [("properties/v/oneOf/1", Change.TIGHTENED, Impact.BREAKING, "argument 'v': oneOf branch dropped (tightened)")]),
    (obj({"v": {"anyOf": [S, obj({"x": S})]}}), obj({"v": {"anyOf": [S, obj({"x": S, "y": S}, ["y"])]}}), False,
     [("properties/v/anyOf/1/properties/y", Change.ADDED, Impact.BREAKING, "new required argument 'v<anyOf 1>.y'")]),
    (obj({"v": S}), obj({"v": {"type": ["string", "null"]}}), False,
     [("properties/v/type", Change.RELAXED, Impact.COMPATIBLE, "argument 'v': type widened (relaxed)")]),
    (obj({"o": obj({"a": S}, additionalProperties=False)}), obj({"o": obj({"a": S})}, additionalProperties=False), False,
     [("additionalProperties", Change.TIGHTENED, Impact.BREAKING, "schema: other properties no longer allowed (tightened)"),
      ("properties/o/additionalProperties", Change.RELAXED, Impact.COMPATIBLE, "argument 'o': other properties now allowed (relaxed)")]),
    # output schemas: the reader's side
    (obj({"r": obj({"a": S})}), obj({"r": obj({"a": S, "b": S}, ["b"])}), True,
     [("properties/r/properties/b", Change.ADDED, Impact.COMPATIBLE, "new property 'r.b'")]),
    (obj({"r": obj({"a": S}, ["a"])}), obj({"r": obj({"a": S})}), True,
     [("properties/r/required/a", Change.RELAXED, Impact.BREAKING, "property 'r.a' is now optional (relaxed)")]),
    (obj({"r": {**S, "enum": ["a"]}}), obj({"r": {**S, "enum": ["a", "b"]}}), True,
     [("properties/r/enum", Change.RELAXED, Impact.BREAKING, "property 'r': allowed values extended (relaxed)")]),
    (obj({"r": {"type": "array", "items": obj({"a": S}, additionalProperties=False)}}),
     obj({"r": {"type": "array", "items": obj({"a": S})}}), True,
     [("properties/r/items/additionalProperties", Change.RELAXED, Impact.BREAKING, "property 'r[]': other properties now allowed (relaxed)")]),
    # relaxations and tightenings are named so, never "removed" or "added"
    (obj({"a": {**S, "maxLength": 10}}), obj({"a": {**S, "maxLength": 20}}), False,
     [("properties/a/maxLength", Change.RELAXED, Impact.COMPATIBLE, "argument 'a': maxLength raised (relaxed)")]),
    (obj({"a": {**I, "minimum": 0}}), obj({"a": {**I, "minimum": 1}}), False,
     [("properties/a/minimum", Change.TIGHTENED, Impact.BREAKING, "argument 'a': minimum raised (tightened)")]),
    (obj({"a": {**S, "pattern": "^x"}}), obj({"a": S}), False,
     [("properties/a/pattern", Change.RELAXED, Impact.COMPATIBLE, "argument 'a': pattern dropped (relaxed)")]),
    (obj({"a": {**S, "pattern": "^x"}}), obj({"a": {**S, "pattern": "^y"}}), False,
     [("properties/a/pattern", Change.CHANGED, Impact.BREAKING, "argument 'a': pattern changed")]),
    (obj({"a": {**S, "enum": ["x"]}}), obj({"a": S}), False,
     [("properties/a/enum", Change.RELAXED, Impact.COMPATIBLE, "argument 'a': enum dropped (relaxed)")]),
    (obj({"a": {"type": "array", "items": S}}), obj({"a": {"type": "array"}}), False,
     [("properties/a/items", Change.RELAXED, Impact.COMPATIBLE, "argument 'a': items dropped (relaxed)")]),
    (obj({"r": {**S, "maxLength": 5}}), obj({"r": {**S, "maxLength": 3}}), True,
     [("properties/r/maxLength", Change.TIGHTENED, Impact.COMPATIBLE, "property 'r': maxLength lowered (tightened)")]),
    (obj({}), obj({}, additionalProperties=False), True,
     [("additionalProperties", Change.TIGHTENED, Impact.COMPATIBLE, "schema: other properties no longer allowed (tightened)")]),
]  # fmt: skip


@pytest.mark.parametrize(("a", "b", "output", "want"), CASES)
def test_nested_schema_changes_are_classified_with_a_reason(
    a: Any, b: Any, output: bool, want: list[tuple[str, Change, Impact, str]]
) -> None:
    got = [
        ("/".join(path), change, impact, msg)
        for path, change, impact, msg, *_ in schema_changes(a, b, output=output)
    ]
    assert got == want


def test_the_four_releases_through_a_whole_diff_of_tools_list() -> None:
    from mcptape.diff.engine import diff_cassettes

    from .builders import cassette, legacy_handshake, req, res, tool

    def listing(*props: dict[str, Any]) -> Any:
        tools = [tool(f"t{i}", {"o": p}) for i, p in enumerate(props)]
        return cassette(*legacy_handshake(), req(2, "tools/list"), res(2, {"tools": tools}))

    base = [obj({"a": S}), obj({"a": S}), obj({"m": {**S, "enum": ["x", "y"]}}), EDIT]
    new = [obj({"a": S, "b": S}), obj({"a": S, "b": S}, ["b"]), obj({"m": {**S, "enum": ["x"]}}),
           {k: v for k, v in EDIT.items() if k != "additionalProperties"}]  # fmt: skip
    report = diff_cassettes(listing(*base), listing(*new))
    assert [(d.exchange, d.impact) for d in report.differences] == [
        ("tool t0", Impact.COMPATIBLE), ("tool t1", Impact.BREAKING), ("tool t2", Impact.BREAKING), ("tool t3", Impact.COMPATIBLE),
    ]  # fmt: skip
