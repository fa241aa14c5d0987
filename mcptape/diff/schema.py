"""JSON Schema comparison for tool input and output schemas, and schema noise removal.

Pure. `clean_schema` drops what generators add without meaning (`$schema`, and the
`title` pydantic derives from every name). `schema_changes` compares two schemas at every
depth (`properties`, `required`, `items`, `additionalProperties`, `enum`, `anyOf`/`oneOf`,
`type`, constraints, nested as deep as they go) and classifies each change for a client:
an input schema is what the client sends, so what accepts less is breaking; an output
schema is what the client reads, so what may send more (or other) is breaking.

A change that only makes a schema accept more (a constraint dropped or loosened, a type
widened, an argument made optional, an enum value or branch added) is `Change.RELAXED`, one
that makes it accept less is `Change.TIGHTENED`, with " (relaxed)" or " (tightened)" at the
end of its message; a relaxation is never a "removed".

                                   input schema      output schema
  property removed                 breaking          breaking
  new required property            breaking          compatible
  new optional property            compatible        compatible
  optional -> required             breaking          compatible
  required -> optional             compatible        breaking
  enum value added                 compatible        breaking
  enum value removed               breaking          compatible
  anyOf/oneOf branch added         compatible        breaking
  anyOf/oneOf branch removed       breaking          compatible
  type widened (string -> [string, null])  compatible   breaking
  type changed otherwise, $ref, const, format, allOf   breaking   breaking
  constraint added (maxLength, pattern, additionalProperties: false, items, ...)
                                   breaking          compatible
  constraint removed               compatible        breaking
  bound loosened / tightened (maxLength 10 -> 20 / 20 -> 10)
                                   compatible / breaking   breaking / compatible
  default changed                  compatible        compatible
  description, examples            cosmetic          cosmetic

Nested properties are named by their path in messages: `argument 'edits[].oldText'`.
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

_STRUCTURAL = frozenset(
    {
        "properties",
        "required",
        "items",
        "additionalProperties",
        "enum",
        "anyOf",
        "oneOf",
        "type",
        "$defs",
        "definitions",
    }
)
"""Keywords compared by their meaning (below); every other keyword by the generic rules."""

_RETYPING = frozenset(
    {"$ref", "allOf", "const", "format", "not", "if", "then", "else", "prefixItems"}
)
"""Keywords whose change makes a different type: breaking both ways."""

LOWER_BOUNDS = frozenset(
    {"minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties", "minContains"}
)
UPPER_BOUNDS = frozenset(
    {"maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties", "maxContains"}
)
"""Numeric constraints whose change has a direction: a lower minimum or a higher maximum accepts more."""

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


def _change(va: Any, vb: Any) -> Change:
    return Change.ADDED if va is MISSING else Change.REMOVED if vb is MISSING else Change.CHANGED


def _impact(accepts_more: bool, output: bool) -> Impact:
    """Accepting more is compatible for what the client sends, breaking for what it reads."""
    return Impact.COMPATIBLE if accepts_more != output else Impact.BREAKING


def schema_changes(a: Any, b: Any, *, output: bool = False) -> list[SchemaChange]:
    """Classified changes from schema `a` to schema `b` (both cleaned); `output` flips the rules."""
    if a is MISSING or b is MISSING:
        if a is MISSING:
            return [
                (
                    (),
                    Change.ADDED,
                    Impact.COMPATIBLE,
                    f"{'output' if output else 'input'} schema added",
                    a,
                    b,
                )
            ]
        return [
            (
                (),
                Change.REMOVED,
                Impact.BREAKING,
                f"{'output' if output else 'input'} schema removed",
                a,
                b,
            )
        ]
    if not isinstance(a, dict) or not isinstance(b, dict):
        return [] if a == b else [((), Change.CHANGED, Impact.BREAKING, "schema changed", a, b)]
    out: list[SchemaChange] = []
    _Compare(output, out).schema((), "", a, b)
    return sorted(out, key=lambda c: c[0])


class _Compare:
    def __init__(self, output: bool, out: list[SchemaChange]) -> None:
        self.output = output
        self.out = out
        self.what = "property" if output else "argument"

    def _name(self, where: str) -> str:
        return f"{self.what} {where!r}" if where else "schema"

    def add(
        self, path: tuple[str, ...], change: Change, impact: Impact, msg: str, va: Any, vb: Any
    ) -> None:
        self.out.append((path, change, impact, msg, va, vb))

    def loosen(self, path: tuple[str, ...], accepts_more: bool, msg: str, va: Any, vb: Any) -> None:
        """A relaxation (the schema accepts more) or a tightening, named so in its message."""
        change = Change.RELAXED if accepts_more else Change.TIGHTENED
        self.add(path, change, _impact(accepts_more, self.output), f"{msg} ({change})", va, vb)

    def schema(self, path: tuple[str, ...], where: str, a: Any, b: Any) -> None:
        """Compares two (sub)schemas at `path`; `where` names them for people (`edits[].oldText`)."""
        if a == b:
            return
        if not isinstance(a, dict) or not isinstance(b, dict):
            self.add(path, Change.CHANGED, Impact.BREAKING, f"{self._name(where)} retyped", a, b)
            return
        self._properties(path, where, a, b)
        self._items(path, where, a, b)
        self._additional(path, where, a, b)
        self._enum(path, where, a, b)
        for key in ("anyOf", "oneOf"):
            self._branches(path, where, key, a.get(key, MISSING), b.get(key, MISSING))
        self._type(path, where, a, b)
        for key in ("$defs", "definitions"):
            self._defs(path, key, a.get(key, MISSING), b.get(key, MISSING))
        self._keywords(path, where, a, b)

    def _properties(
        self, path: tuple[str, ...], where: str, a: dict[str, Any], b: dict[str, Any]
    ) -> None:
        pa, pb, ra, rb = _props(a), _props(b), _required(a), _required(b)

        def child(n: str) -> str:
            return f"{where}.{n}" if where else n

        for n in sorted(pa.keys() - pb.keys()):
            self.add(
                (*path, "properties", n),
                Change.REMOVED,
                Impact.BREAKING,
                f"{self.what} {child(n)!r} removed",
                pa[n],
                MISSING,
            )
        for n in sorted(pb.keys() - pa.keys()):
            p = (*path, "properties", n)
            if self.output:
                self.add(
                    p,
                    Change.ADDED,
                    Impact.COMPATIBLE,
                    f"new {self.what} {child(n)!r}",
                    MISSING,
                    pb[n],
                )
            elif n in rb:
                self.add(
                    p,
                    Change.ADDED,
                    Impact.BREAKING,
                    f"new required {self.what} {child(n)!r}",
                    MISSING,
                    pb[n],
                )
            else:
                self.add(
                    p,
                    Change.ADDED,
                    Impact.COMPATIBLE,
                    f"new optional {self.what} {child(n)!r}",
                    MISSING,
                    pb[n],
                )
        for n in sorted(pa.keys() & pb.keys()):
            was, now = n in ra, n in rb
            if was != now:
                msg = f"{self.what} {child(n)!r} is now {'required' if now else 'optional'}"
                self.loosen((*path, "required", n), not now, msg, was, now)
            self.schema((*path, "properties", n), child(n), pa[n], pb[n])
        # required names without a property schema (allowed by JSON Schema)
        for n in sorted((ra ^ rb) - (pa.keys() | pb.keys())):
            now = n in rb
            msg = f"{self.what} {child(n)!r} is now {'required' if now else 'optional'}"
            self.loosen((*path, "required", n), not now, msg, not now, now)

    def _items(
        self, path: tuple[str, ...], where: str, a: dict[str, Any], b: dict[str, Any]
    ) -> None:
        ia, ib = a.get("items", MISSING), b.get("items", MISSING)
        if ia == ib:
            return
        if isinstance(ia, dict) and isinstance(ib, dict):
            self.schema((*path, "items"), f"{where}[]", ia, ib)
        elif ia is MISSING or ib is MISSING:
            dropped = ib is MISSING
            msg = f"{self._name(where)}: items {'dropped' if dropped else 'added'}"
            self.loosen((*path, "items"), dropped, msg, ia, ib)
        else:
            self.add(
                (*path, "items"),
                Change.CHANGED,
                Impact.BREAKING,
                f"{self._name(where)} retyped (items)",
                ia,
                ib,
            )

    def _additional(
        self, path: tuple[str, ...], where: str, a: dict[str, Any], b: dict[str, Any]
    ) -> None:
        va, vb = a.get("additionalProperties", MISSING), b.get("additionalProperties", MISSING)
        if va == vb:
            return
        p = (*path, "additionalProperties")
        if isinstance(va, dict) and isinstance(vb, dict):
            self.schema(p, f"{where}{{*}}", va, vb)
            return

        def openness(v: Any) -> int:  # 2: anything goes, 1: a schema, 0: nothing more
            return 2 if v is MISSING or v is True else 1 if isinstance(v, dict) else 0

        oa, ob = openness(va), openness(vb)
        change = _change(va, vb)
        if oa == ob:  # absent vs true: the same meaning
            self.add(
                p,
                change,
                Impact.COSMETIC,
                f"{self._name(where)}: additionalProperties {change} (same meaning)",
                va,
                vb,
            )
            return
        loosened = ob > oa
        msg = f"{self._name(where)}: {'other properties now allowed' if loosened else 'other properties no longer allowed'}"
        self.loosen(p, loosened, msg, va, vb)

    def _enum(
        self, path: tuple[str, ...], where: str, a: dict[str, Any], b: dict[str, Any]
    ) -> None:
        va, vb = a.get("enum", MISSING), b.get("enum", MISSING)
        if va == vb:
            return
        p = (*path, "enum")
        change = _change(va, vb)
        if not isinstance(va, list) or not isinstance(
            vb, list
        ):  # an enum added is a constraint added
            dropped = vb is MISSING
            self.loosen(
                p, dropped, f"{self._name(where)}: enum {'dropped' if dropped else 'added'}", va, vb
            )
            return
        sa, sb = set(map(repr, va)), set(map(repr, vb))
        if sa == sb:
            self.add(
                p, change, Impact.COSMETIC, f"{self._name(where)}: allowed values reordered", va, vb
            )
        elif sa <= sb or sb <= sa:
            grew = sa <= sb
            self.loosen(
                p,
                grew,
                f"{self._name(where)}: allowed values {'extended' if grew else 'narrowed'}",
                va,
                vb,
            )
        else:
            self.add(
                p, change, Impact.BREAKING, f"{self._name(where)}: allowed values changed", va, vb
            )

    def _branches(self, path: tuple[str, ...], where: str, key: str, la: Any, lb: Any) -> None:
        if la == lb:
            return
        p = (*path, key)
        if not isinstance(la, list) or not isinstance(lb, list):
            self.add(
                p, _change(la, lb), Impact.BREAKING, f"{self._name(where)} retyped ({key})", la, lb
            )
            return
        if len(la) == len(lb):
            for i, (xa, xb) in enumerate(zip(la, lb, strict=True)):
                self.schema((*p, str(i)), f"{where}<{key} {i}>", xa, xb)
            return
        ra, rb = [repr(x) for x in la], [repr(x) for x in lb]
        for i, x in enumerate(la):
            if ra[i] not in rb:
                self.loosen(
                    (*p, str(i)), False, f"{self._name(where)}: {key} branch dropped", x, MISSING
                )
        for i, x in enumerate(lb):
            if rb[i] not in ra:
                self.loosen(
                    (*p, str(i)), True, f"{self._name(where)}: {key} branch added", MISSING, x
                )

    def _type(
        self, path: tuple[str, ...], where: str, a: dict[str, Any], b: dict[str, Any]
    ) -> None:
        va, vb = a.get("type", MISSING), b.get("type", MISSING)
        if va == vb:
            return

        def types(v: Any) -> set[str] | None:
            if v is MISSING:
                return None  # any type
            return {str(t) for t in v} if isinstance(v, list) else {str(v)}

        ta, tb = types(va), types(vb)
        widened = tb is None or (ta is not None and ta < tb)
        narrowed = ta is None or (tb is not None and tb < ta)
        msg = "schema type changed" if not where else f"{self._name(where)} retyped (type)"
        if widened or narrowed:
            self.loosen(
                (*path, "type"),
                widened,
                f"{self._name(where)}: type {'widened' if widened else 'narrowed'}",
                va,
                vb,
            )
        else:
            self.add((*path, "type"), _change(va, vb), Impact.BREAKING, msg, va, vb)

    def _defs(self, path: tuple[str, ...], key: str, da: Any, db: Any) -> None:
        if da == db:
            return
        if not isinstance(da, dict) or not isinstance(db, dict):
            self.add(
                (*path, key),
                _change(da, db),
                Impact.BREAKING,
                f"definitions changed ({key})",
                da,
                db,
            )
            return
        for n in sorted(da.keys() | db.keys()):
            xa, xb = da.get(n, MISSING), db.get(n, MISSING)
            if xa is MISSING:
                continue  # a new definition means nothing until something refers to it
            if xb is MISSING:
                self.add(
                    (*path, key, n),
                    Change.REMOVED,
                    Impact.BREAKING,
                    f"definition {n!r} removed",
                    xa,
                    xb,
                )
            else:
                self.schema((*path, key, n), f"#{n}", xa, xb)

    def _keywords(
        self, path: tuple[str, ...], where: str, a: dict[str, Any], b: dict[str, Any]
    ) -> None:
        name = self._name(where)
        for key in sorted((a.keys() | b.keys()) - _STRUCTURAL):
            va, vb = a.get(key, MISSING), b.get(key, MISSING)
            if va == vb:
                continue
            change = _change(va, vb)
            if key in COSMETIC:
                self.add((*path, key), change, Impact.COSMETIC, f"{name}: {key} {change}", va, vb)
            elif key == "default":
                self.add(
                    (*path, key), change, Impact.COMPATIBLE, f"{name}: default {change}", va, vb
                )
            elif key in _RETYPING:
                self.add((*path, key), change, Impact.BREAKING, f"{name} retyped ({key})", va, vb)
            else:  # a constraint (maxLength, pattern, minimum, ...): removing it accepts more
                self._constraint((*path, key), name, key, va, vb)

    def _constraint(self, path: tuple[str, ...], name: str, key: str, va: Any, vb: Any) -> None:
        """A validation keyword: dropped relaxes, added tightens, a numeric bound moves either way."""
        if va is MISSING or vb is MISSING:
            dropped = vb is MISSING
            self.loosen(path, dropped, f"{name}: {key} {'dropped' if dropped else 'added'}", va, vb)
            return
        numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (va, vb))
        if numbers and key in LOWER_BOUNDS | UPPER_BOUNDS:
            raised = vb > va
            self.loosen(
                path,
                raised == (key in UPPER_BOUNDS),
                f"{name}: {key} {'raised' if raised else 'lowered'}",
                va,
                vb,
            )
            return
        self.add(
            path, Change.CHANGED, _impact(False, self.output), f"{name}: {key} changed", va, vb
        )
