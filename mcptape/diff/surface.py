"""The server surface: tools, prompts, resources and templates of A vs B, classified.

Pure. A surface kind is compared only when both cassettes listed it (a cassette that
never called `tools/list` says nothing about tools). Removing anything is breaking, adding
is compatible; a tool's input and output schemas are compared argument by argument
(`schema.schema_changes`); text for people (descriptions, titles, annotations, icons) is
cosmetic.
"""

from __future__ import annotations

from typing import Any

from .pointer import pointer
from .schema import clean_schema, schema_changes
from .types import MISSING, Change, Difference, Impact, Section

COSMETIC_FIELDS = frozenset({"description", "title", "annotations", "icons", "_meta", "size"})
"""Item fields for people and models; changing them is cosmetic."""

ENVELOPE_FIELDS = frozenset({"execution"})
"""Item fields only one protocol revision has (`Tool.execution` is 2025-11-25 only)."""

SECTIONS: dict[str, tuple[Section, str]] = {
    "tools": (Section.TOOLS, "tool"),
    "prompts": (Section.PROMPTS, "prompt"),
    "resources": (Section.RESOURCES, "resource"),
    "resourceTemplates": (Section.TEMPLATES, "template"),
}


def surface_differences(
    a: dict[str, dict[str, Any] | None], b: dict[str, dict[str, Any] | None]
) -> list[Difference]:
    """Differences between two surfaces (`Canonical.surface`), breaking ones first within a kind."""
    out: list[Difference] = []
    for kind, (section, noun) in SECTIONS.items():
        ta, tb = a.get(kind), b.get(kind)
        if ta is None or tb is None:
            continue
        for ident in sorted(ta.keys() | tb.keys()):
            label = f"{noun} {ident}"
            base = (kind, ident)
            if ident not in tb:
                out.append(Difference(section, Change.REMOVED, Impact.BREAKING, label, pointer(base), ta[ident], MISSING,
                                      f"{noun} {ident!r} removed"))  # fmt: skip
            elif ident not in ta:
                out.append(Difference(section, Change.ADDED, Impact.COMPATIBLE, label, pointer(base), MISSING, tb[ident],
                                      f"new {noun} {ident!r}"))  # fmt: skip
            else:
                out.extend(_item(section, kind, noun, ident, ta[ident], tb[ident]))
    return out


def _item(
    section: Section, kind: str, noun: str, ident: str, a: dict[str, Any], b: dict[str, Any]
) -> list[Difference]:
    if a == b:
        return []
    label = f"{noun} {ident}"
    base = (kind, ident)
    out: list[Difference] = []
    for fld in sorted(a.keys() | b.keys()):
        va, vb = a.get(fld, MISSING), b.get(fld, MISSING)
        if fld in ("inputSchema", "outputSchema") and kind == "tools":
            ca = clean_schema(va) if va is not MISSING else MISSING
            cb = clean_schema(vb) if vb is not MISSING else MISSING
            if ca == cb:
                continue
            for path, change, impact, msg, xa, xb in schema_changes(
                ca, cb, output=fld == "outputSchema"
            ):
                out.append(
                    Difference(
                        section, change, impact, label, pointer((*base, fld, *path)), xa, xb, msg
                    )
                )
            continue
        if va == vb:
            continue
        change = (
            Change.ADDED if va is MISSING else Change.REMOVED if vb is MISSING else Change.CHANGED
        )
        if fld == "arguments" and kind == "prompts":
            out.extend(_prompt_arguments(section, label, base, va, vb))
        elif fld in ENVELOPE_FIELDS:
            out.append(Difference(Section.ENVELOPE, change, Impact.ENVELOPE, label, pointer((*base, fld)), va, vb,
                                  f"{fld} {change}"))  # fmt: skip
        elif fld in COSMETIC_FIELDS:
            out.append(
                Difference(
                    section,
                    change,
                    Impact.COSMETIC,
                    label,
                    pointer((*base, fld)),
                    va,
                    vb,
                    f"{fld} {change}",
                )
            )
        elif fld == "mimeType":
            out.append(
                Difference(
                    section,
                    change,
                    Impact.BREAKING,
                    label,
                    pointer((*base, fld)),
                    va,
                    vb,
                    "mimeType changed",
                )
            )
        else:
            out.append(
                Difference(
                    section,
                    change,
                    Impact.BEHAVIOUR,
                    label,
                    pointer((*base, fld)),
                    va,
                    vb,
                    f"{fld} {change}",
                )
            )
    return out


def _prompt_arguments(
    section: Section, label: str, base: tuple[str, ...], a: Any, b: Any
) -> list[Difference]:
    def by_name(args: Any) -> dict[str, dict[str, Any]]:
        if not isinstance(args, list):
            return {}
        return {str(x.get("name")): x for x in args if isinstance(x, dict)}

    ma, mb = by_name(a), by_name(b)
    out: list[Difference] = []
    for name in sorted(ma.keys() | mb.keys()):
        path = pointer((*base, "arguments", name))
        xa, xb = ma.get(name, MISSING), mb.get(name, MISSING)
        if xb is MISSING:
            out.append(
                Difference(
                    section,
                    Change.REMOVED,
                    Impact.BREAKING,
                    label,
                    path,
                    xa,
                    xb,
                    f"argument {name!r} removed",
                )
            )
            continue
        if xa is MISSING:
            req = bool(xb.get("required"))
            impact = Impact.BREAKING if req else Impact.COMPATIBLE
            msg = f"new {'required' if req else 'optional'} argument {name!r}"
            out.append(Difference(section, Change.ADDED, impact, label, path, xa, xb, msg))
            continue
        if bool(xa.get("required")) != bool(xb.get("required")):
            now = bool(xb.get("required"))
            impact, change = (
                (Impact.BREAKING, Change.TIGHTENED) if now else (Impact.COMPATIBLE, Change.RELAXED)
            )
            out.append(Difference(section, change, impact, label, path + "/required", xa.get("required", MISSING),
                                  xb.get("required", MISSING), f"argument {name!r} is now {'required' if now else 'optional'} ({change})"))  # fmt: skip
        for fld in sorted((xa.keys() | xb.keys()) - {"name", "required"}):
            va, vb = xa.get(fld, MISSING), xb.get(fld, MISSING)
            if va != vb:
                change = (
                    Change.ADDED
                    if va is MISSING
                    else Change.REMOVED
                    if vb is MISSING
                    else Change.CHANGED
                )
                out.append(
                    Difference(
                        section,
                        change,
                        Impact.COSMETIC,
                        label,
                        f"{path}/{fld}",
                        va,
                        vb,
                        f"argument {name!r}: {fld} {change}",
                    )
                )
    return out
