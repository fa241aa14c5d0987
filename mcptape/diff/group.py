"""Identical changes across surface items, gathered: one entry lists the tools it applies to.

Pure. A release often changes many tools the same way (`additionalProperties: false`
dropped from every input schema, the same annotations added): each tool's change stays a
row of `DiffReport.differences` and is counted, but the reports show the rows as one
entry. Two rows are the same change when they differ only in the item they belong to:
same section, change, impact, message, values (and cassettes), and the same path below
the item (`/tools/*/inputSchema/additionalProperties`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .canonical import freeze
from .pointer import pointer, tokens
from .types import MISSING, Difference, Section

ITEM_SECTIONS: dict[Section, str] = {
    Section.TOOLS: "tools",
    Section.PROMPTS: "prompts",
    Section.RESOURCES: "resources",
    Section.TEMPLATES: "templates",
}
"""Sections whose rows are about one named item, and what to call several of them."""


@dataclass(frozen=True, slots=True)
class Group:
    """One entry of the report: a row, or the same change in several items."""

    rows: tuple[int, ...]
    """Indices of its rows in `DiffReport.differences`, in report order."""
    first: Difference
    """Its first row: the section, change, impact, message and values every row shares."""
    path: str
    """The path, with the item's token written `*` when the entry covers several items."""
    items: tuple[str, ...]
    """The names (or URIs) of the items it applies to; empty for a row about no item."""

    @property
    def where(self) -> str:
        """`tool echo`, or `9 tools` for a shared change."""
        if len(self.rows) == 1:
            return self.first.exchange
        return f"{len(self.items)} {ITEM_SECTIONS[self.first.section]}"


def _value(v: Any) -> str:
    return "<missing>" if v is MISSING else repr(freeze(v))


def _item_key(d: Difference) -> tuple[str, tuple[Any, ...]] | None:
    """(item name, what the row shares with the same change in another item), or None."""
    if d.section not in ITEM_SECTIONS:
        return None
    parts = tokens(d.path)
    if len(parts) < 3:  # a whole item added or removed: its definition and message are its own
        return None
    below = tuple(parts[2:])
    key = (d.section, d.change, d.impact, d.message, below, _value(d.a), _value(d.b), d.cassettes)
    return parts[1], key


def group(diffs: Sequence[Difference]) -> list[Group]:
    """Every row in exactly one group; groups in the order of their first row."""
    order: dict[tuple[Any, ...], int] = {}
    members: list[list[int]] = []
    names: list[list[str]] = []
    for i, d in enumerate(diffs):
        found = _item_key(d)
        if found is None:
            members.append([i])
            names.append([])
            continue
        name, key = found
        at = order.get(key)
        if at is None:
            order[key] = len(members)
            members.append([i])
            names.append([name])
        else:
            members[at].append(i)
            names[at].append(name)
    out = []
    for rows, items in zip(members, names, strict=True):
        first = diffs[rows[0]]
        path = first.path
        if len(rows) > 1:
            parts = tokens(first.path)
            path = pointer((parts[0], "*", *parts[2:]))
        out.append(Group(tuple(rows), first, path, tuple(items)))
    return out
