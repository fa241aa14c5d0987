"""A mock's overlay rules: what its declarations ask of the recorded answers. Pure.

Over a recording (an overlay), three kinds of declaration are overlay rules
(`mcptape.replay.overlay.OverlayRule`, the same rules fault files hold), applied by each
session's `Overlay` in the engine:

- `mcptape.recorded(delay=..., fault=...)`: the recorded answer, later, or delivered with a
  fault (`mock.tool("add", mcptape.recorded(delay=2))`, `recorded = true` in a mock file);
- `fault=` on a declared answer: that answer, delivered with a wire fault;
- the declared tools, resources and prompts, in the recorded lists (`tools/list`, ...): a
  declared entry takes the place of a recorded one of the same name, the others are added.

`mock.fault(...)` and a mock file's `[[faults]]` add fault rules as they are written in a
fault file.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from mcptape.errors import ConfigError
from mcptape.replay.fault_rules import parse_rules
from mcptape.replay.overlay import ACTIONS, LIST, WIRE, OverlayRule

from .declare import Prompt, Recorded, Resource, Tool


def listings(
    tools: Iterable[Tool], resources: Iterable[Resource], prompts: Iterable[Prompt]
) -> dict[str, tuple[str, str, list[dict[str, Any]]]]:
    """What the declarations list, by list method: the result's member, the field that names an
    entry, and the entries (a pure mock's whole answer; over a recording, what it adds)."""
    resources = list(resources)
    return {
        "tools/list": ("tools", "name", [t.listing() for t in tools]),
        "resources/list": ("resources", "uri", [r.listing() for r in resources if not r.templated]),
        "resources/templates/list": (
            "resourceTemplates",
            "uriTemplate",
            [r.listing() for r in resources if r.templated],
        ),
        "prompts/list": ("prompts", "name", [p.listing() for p in prompts]),
    }


def list_rules(
    tools: Iterable[Tool], resources: Iterable[Resource], prompts: Iterable[Prompt]
) -> list[OverlayRule]:
    """One `list` rule per recorded list the declarations add to (over a recording)."""
    return [
        OverlayRule(LIST, method, entries=(key, by, tuple(entries)), source=f"declared {key}")
        for method, (key, by, entries) in listings(tools, resources, prompts).items()
        if entries
    ]


def recorded_rule(
    answer: Recorded, method: str, name: str, args: dict[str, Any] | None, source: str
) -> OverlayRule:
    """The rule of a `recorded(...)` declaration for tool (or prompt, resource) `name`."""
    fault = answer.fault
    if fault is not None and (fault not in ACTIONS or fault == "delay"):
        raise ConfigError(
            f"{source}: recorded(fault={fault!r}): a fault is one of {', '.join(a for a in ACTIONS if a != 'delay')}; "
            "for a late answer give delay="
        )
    item = {"action": fault or "delay", **answer.keys}
    return _rule(item, method, name, args, answer.delay, source)


def fault_rule(
    fault: Any, method: str, name: str, args: dict[str, Any] | None, delay: float, source: str
) -> OverlayRule:
    """The rule of a declared answer's `fault` (a wire fault's name, or its rule as a dict)."""
    item = dict(fault) if isinstance(fault, dict) else {"action": fault}
    if item.get("action") not in WIRE:
        raise ConfigError(
            f"{source}: fault={fault!r}: a declared answer takes a wire fault: {', '.join(a for a in ACTIONS if a in WIRE)} "
            "(declare an error as the answer itself)"
        )
    return _rule(item, method, name, args, delay, source)


def _rule(
    item: dict[str, Any],
    method: str,
    name: str,
    args: dict[str, Any] | None,
    delay: float | tuple[float, float],
    source: str,
) -> OverlayRule:
    for taken in ("method", "name", "tool", "prompt", "resource", "arguments"):
        if taken in item:
            raise ConfigError(
                f"{source}: {taken!r} is given by the declaration (its name and args), not the fault"
            )
    item = {**item, "method": method, "name": name}
    if args is not None:
        item["arguments"] = args
    if delay:
        item["seconds"] = list(delay) if isinstance(delay, tuple) else delay
    try:
        [rule] = parse_rules([item])
    except ConfigError as exc:
        raise ConfigError(f"{source}: {exc}") from None
    return dataclasses.replace(rule, source=source)


def file_rules(tree: dict[str, Any], where: str) -> list[OverlayRule]:
    """A mock file's `[[faults]]`: fault rules, as a fault file writes them."""
    value = tree.get("faults")
    if value is None:
        return []
    try:
        return list(parse_rules(value))
    except ConfigError as exc:
        raise ConfigError(f"{where}: faults: {exc}") from None
