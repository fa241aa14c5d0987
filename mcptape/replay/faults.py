"""Faults on demand: fault rules, which are overlay rules (`mcptape.replay.overlay`). Pure.

One rule format for every shell (`--fault-file` and `--fault` of `mcptape replay` and
`mcptape serve`, the in-process transport, `use_cassette(faults=...)`, the pytest marker). A
rule selects client requests (by `method`, by tool/prompt `name` or resource URI, by its
`arguments`, by the n-th match) and says what happens to the recorded answer:

    {"tool": "add", "nth": 2, "action": "error", "code": -32603, "message": "boom"}
    {"method": "tools/*", "action": "delay", "seconds": [0.1, 0.5], "seed": 7}

`fault_rules` reads them into `OverlayRule`s, which go into `ReplayConfig.overlay`: each
engine's `Overlay` (one per client session) applies them, as it applies a mock's overlay
declarations, and the shells carry out the steps it returns (`Send`, `Hangup`, `Status`,
`Note`). This module keeps the names the shells and tests import, and `dry_run`.
"""

from __future__ import annotations

from typing import Any

from mcptape.pairing import pair

from .fault_rules import (
    ACTIONS,
    HANDSHAKE,
    HTTP_ONLY,
    FaultRule,
    load_rules,
    parse_rules,
    rules_from_options,
)
from .outputs import Hangup, Status, Step
from .overlay import Overlay, OverlayRule

__all__ = [
    "ACTIONS",
    "HANDSHAKE",
    "HTTP_ONLY",
    "FaultRule",
    "Hangup",
    "Overlay",
    "OverlayRule",
    "Status",
    "Step",
    "dry_run",
    "load_rules",
    "parse_rules",
    "rules_from_options",
]


def dry_run(rules: Any, cassette: Any, *, http: bool | None = None) -> str:
    """Which recorded requests each rule would hit, if a client made them in recorded order.

    Counters restart with each recorded handshake (`initialize`), as they do in a replay.
    """
    rules = parse_rules(rules)
    http = cassette.header.transport != "stdio" if http is None else http
    lines = [
        f"{cassette.name}: {len(rules)} fault rule(s), as if the client made the recorded requests in order"
    ]
    hit_by: list[list[str]] = [[] for _ in rules]
    plan, started = Overlay(rules, http), False
    for ex in pair(cassette.events).exchanges:
        if ex.is_notification:
            continue
        if ex.method == "initialize" and started:
            plan = Overlay(rules, http)
        started = True
        for number, _rule, seconds, n in plan.select(ex.msg):
            extra = f", {seconds:.3f}s" if seconds else ""
            hit_by[number - 1].append(
                f"    #{ex.request.event.seq} {ex.method} {ex.name or ''}".rstrip()
                + f"  (match {n}{extra})"
            )
    for i, rule in enumerate(rules):
        lines.append(f"rule {i + 1}: {rule.describe()}")
        if rule.action in HTTP_ONLY and not http:
            lines.append("    skipped: HTTP-only (mcptape serve)")
        else:
            lines.extend(hit_by[i] or ["    hits no recorded request"])
    return "\n".join(lines) + "\n"
