"""JSON Schema comparison for tool input and output schemas, and schema noise removal.

Pure. `clean_schema` drops what generators add without meaning (`$schema`, and the
`title` pydantic derives from every name). `schema_changes` compares two object schemas
argument by argument and classifies each change for a client:

input schema (what the client sends)        output schema (what the client reads)
  argument removed            breaking        property removed              breaking
  new required argument       breaking        new property                  compatible
  new optional argument       compatible      property no longer required   breaking
  optional -> required        breaking        property now required         compatible
  required -> optional        compatible
  type / enum / items changed breaking        type / enum / items changed   breaking
  enum value added            compatible (input) / breaking (output)
  description, examples       cosmetic        description, examples         cosmetic
"""

from __future__ import annotations

from typing import Any

from .types import MISSING, Change, Impact

NOISE = frozenset({"title", "$schema"})
"""Schema keywords that carry no meaning for a client."""

COSMETIC = frozenset({"description", "examples", "$comment", "deprecated"})
"""Schema keywords for people, not validators."""

_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains")

SchemaChange = tuple[tuple[str, ...], Change, Impact, str, Any, Any]
"""(path under the schema, change, impact, message, value in A, value in B)."""


def clean_schema(schema: Any) -> Any:
    """A copy of a JSON Schema without `NOISE` keywords, at every level."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for k, v in schema.items():
        if k in NOISE:
            continue
        if k in _SUBSCHEMA_MAPS and isinstance(v, dict):
            out[k] = {name: clean_schema(sub) for name, sub in v.items()}
        elif k in _SUBSCHEMA_LISTS and isinstance(v, list):
            out[k] = [clean_schema(sub) for sub in v]
        elif k in _SUBSCHEMA_ONE:
            out[k] = clean_schema(v)
        else:
            out[k] = v
    return out


def _required(schema: dict[str, Any]) -> set[str]:
    req = schema.get("required")
    return {str(r) for r in req} if isinstance(req, list) else set()


def _props(schema: dict[str, Any]) -> dict[str, Any]:
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def schema_changes(a: Any, b: Any, *, output: bool = False) -> list[SchemaChange]:
    """Classified changes from schema `a` to schema `b` (both cleaned); `output` flips the rules."""
    what = "property" if output else "argument"
    if a is MISSING or b is MISSING:
        if a is MISSING:
            return [((), Change.ADDED, Impact.COMPATIBLE, f"{'output' if output else 'input'} schema added", a, b)]
        return [((), Change.REMOVED, Impact.BREAKING, f"{'output' if output else 'input'} schema removed", a, b)]
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [] if a == b else [((), Change.CHANGED, Impact.BREAKING, "schema changed", a, b)]
    out: list[SchemaChange] = []
    pa, pb, ra, rb = _props(a), _props(b), _required(a), _required(b)
    for name in pa.keys() - pb.keys():
        path = ("properties", name)
        out.append((path, Change.REMOVED, Impact.BREAKING, f"{what} {name!r} removed", pa[name], MISSING))
    for name in pb.keys() - pa.keys():
        path = ("properties", name)
        if output:
            out.append((path, Change.ADDED, Impact.COMPATIBLE, f"new {what} {name!r}", MISSING, pb[name]))
        elif name in rb:
            out.append((path, Change.ADDED, Impact.BREAKING, f"new required {what} {name!r}", MISSING, pb[name]))
        else:
            out.append((path, Change.ADDED, Impact.COMPATIBLE, f"new optional {what} {name!r}", MISSING, pb[name]))
    for name in sorted(pa.keys() & pb.keys()):
        was, now = name in ra, name in rb
        if was != now:
            tightened = now if not output else was
            impact = Impact.BREAKING if tightened else Impact.COMPATIBLE
            msg = f"{what} {name!r} is now {'required' if now else 'optional'}"
            out.append((("required", name), Change.CHANGED, impact, msg, was, now))
        out.extend(_property_changes(("properties", name), pa[name], pb[name], what, name, output))
    out.extend(_keyword_changes((), a, b, output, skip={"properties", "required", "type"}))
    if a.get("type") != b.get("type"):
        out.append((("type",), Change.CHANGED, Impact.BREAKING, "schema type changed", a.get("type", MISSING), b.get("type", MISSING)))
    return sorted(out, key=lambda c: c[0])


def _property_changes(path: tuple[str, ...], a: Any, b: Any, what: str, name: str, output: bool) -> list[SchemaChange]:
    if a == b:
        return []
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [(path, Change.CHANGED, Impact.BREAKING, f"{what} {name!r} retyped", a, b)]
    return _keyword_changes(path, a, b, output, skip=set(), name=f"{what} {name!r}")


def _keyword_changes(
    path: tuple[str, ...], a: dict[str, Any], b: dict[str, Any], output: bool, skip: set[str], name: str = "schema"
) -> list[SchemaChange]:
    out: list[SchemaChange] = []
    for key in sorted((a.keys() | b.keys()) - skip):
        va, vb = a.get(key, MISSING), b.get(key, MISSING)
        if va == vb:
            continue
        change = Change.ADDED if va is MISSING else Change.REMOVED if vb is MISSING else Change.CHANGED
        if key in COSMETIC:
            out.append(((*path, key), change, Impact.COSMETIC, f"{name}: {key} {change}", va, vb))
        elif key == "enum" and isinstance(va, list) and isinstance(vb, list):
            grew = set(map(repr, va)) <= set(map(repr, vb))
            impact = Impact.COMPATIBLE if grew and not output else Impact.BREAKING
            out.append(((*path, key), change, impact, f"{name}: allowed values {'extended' if grew else 'changed'}", va, vb))
        elif key == "default":
            out.append(((*path, key), change, Impact.COMPATIBLE, f"{name}: default {change}", va, vb))
        elif key in ("type", "items", "properties", "$ref", "anyOf", "oneOf", "allOf", "const", "format"):
            out.append(((*path, key), change, Impact.BREAKING, f"{name} retyped ({key})", va, vb))
        else:
            loosened = vb is MISSING
            impact = Impact.COMPATIBLE if loosened != output else Impact.BREAKING
            out.append(((*path, key), change, impact, f"{name}: {key} {change}", va, vb))
    return out
