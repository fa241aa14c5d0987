"""Faults on demand: what fault rules do to a replay session's answers. Pure.

One rule format for every shell (`--fault-file` and `--fault` of `mcptape replay` and
`mcptape serve`, the in-process transport, `use_cassette(faults=...)`, the pytest marker). A
rule selects client requests (by `method`, by tool/prompt `name` or resource URI, by the n-th
match) and says what happens to the recorded answer:

    {"tool": "add", "nth": 2, "action": "error", "code": -32603, "message": "boom"}
    {"method": "tools/*", "action": "delay", "seconds": [0.1, 0.5], "seed": 7}

`FaultPlan` holds one client session's counters. A shell passes it each client message with
the engine's outputs for it (`plan.apply(value, outputs)`) and carries out the `Step`s that
come back: `Send` (a message, or the raw bytes a fault put in its place, after its delay),
`Hangup` (close the connection, or reset it over HTTP), `Status` (an HTTP error status instead
of the answer) and `Note` (stderr). Without rules the steps are the outputs as they are: the
engine's `Send`s and `Note`s are steps already. Delays are seconds after the client message
arrived, on top of any recorded timing. Everything is deterministic: random choices come from a seeded RNG per rule.
Reading and checking the rules themselves is `fault_rules`' job.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from mcptape.pairing import pair
from mcptape.versions import META_PROTOCOL_VERSION
from mcptape.wire.jsonrpc import (
    MessageType,
    classify,
    encode,
    error_response,
    id_key,
    request_meta,
    request_params,
)

from .fault_rules import (
    ACTIONS,
    HANDSHAKE,
    HTTP_ONLY,
    FaultRule,
    load_rules,
    parse_rules,
    rules_from_options,
)
from .outputs import Note, Output, Send

if TYPE_CHECKING:
    import random

__all__ = [
    "ACTIONS",
    "HANDSHAKE",
    "HTTP_ONLY",
    "FaultPlan",
    "FaultRule",
    "Hangup",
    "Status",
    "Step",
    "dry_run",
    "load_rules",
    "parse_rules",
    "rules_from_options",
]

# -- what the shells carry out -----------------------------------------------------------------


class Hangup(NamedTuple):
    """Close the connection (stdout, the memory stream, the HTTP stream) `delay` seconds after the trigger."""

    delay: float = 0.0
    reset: bool = False
    """HTTP: reset the TCP connection instead of ending the stream."""
    request_id: Any = None


class Status(NamedTuple):
    """HTTP: answer the request with this status instead of the recorded answer."""

    status: int
    retry_after: float | None
    body: str | None
    send: Send
    delay: float = 0.0


Step = Send | Hangup | Status | Note
"""What a shell carries out. A `Send` is delivered after its `delay` (its `raw` bytes, if a
fault set them); the engine's outputs are steps as they are."""


class _Decision(NamedTuple):
    delay: float
    rule: FaultRule | None
    number: int
    """The rule's position in the list (1-based), for notes."""
    modern: bool = False
    """The request is 2026-07-28 (its `_meta` names the version): results carry `resultType`."""
    what: str = "a request"
    """The request's method and name, for notes."""


@dataclass(slots=True)
class FaultPlan:
    """One client session's fault counters; see the module docstring."""

    rules: tuple[FaultRule, ...]
    http: bool = False
    """True in `mcptape serve`; elsewhere HTTP-only rules are skipped."""
    notes: list[Note] = field(default_factory=list)
    """Warnings about the rules themselves, for the shell to print once."""
    _seen: list[int] = field(default_factory=list)
    _hits: list[int] = field(default_factory=list)
    _rngs: list[random.Random] = field(default_factory=list)
    _pending: dict[tuple[str, Any], _Decision] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.rules = parse_rules(self.rules)
        self._seen = [0] * len(self.rules)
        self._hits = [0] * len(self.rules)
        if self.rules:
            from random import Random  # (random's import is not on the replay path without rules)

            self._rngs = [Random(r.seed) for r in self.rules]
        for i, rule in enumerate(self.rules, start=1):
            if rule.action in HTTP_ONLY and not self.http:
                self.notes.append(
                    Note(
                        f"fault rule {i} ({rule.describe()}) needs HTTP (mcptape serve); skipped here"
                    )
                )

    def select(self, msg: dict[str, Any]) -> list[tuple[int, FaultRule, float, int]]:
        """Counts one client request against every rule: (rule number, rule, seconds, match count) of those that hit it.

        Delay rules all apply (their seconds add up); of the other rules, the first that hits wins.
        """
        hits: list[tuple[int, FaultRule, float, int]] = []
        decided = False
        for i, rule in enumerate(self.rules):
            if (rule.action in HTTP_ONLY and not self.http) or not rule.selects(msg):
                continue
            self._seen[i] += 1
            n, rng = self._seen[i], self._rngs[i]
            chance = rng.random() if rule.probability is not None else 0.0
            hit = (rule.nth is None or n == rule.nth) and (
                rule.every is None or n % rule.every == 0
            )
            hit = hit and (rule.times is None or self._hits[i] < rule.times)
            hit = hit and (rule.probability is None or chance < rule.probability)
            if not hit or (decided and rule.action != "delay"):
                continue
            lo, hi = (
                rule.seconds if isinstance(rule.seconds, tuple) else (rule.seconds, rule.seconds)
            )
            seconds = lo if lo == hi else rng.uniform(lo, hi)
            self._hits[i] += 1
            decided = decided or rule.action != "delay"
            hits.append((i + 1, rule, seconds, n))
        return hits

    def _count(self, msg: Any, typ: MessageType) -> None:
        """Decides the fate of a client request's answer; a cancellation forgets it."""
        if typ is MessageType.REQUEST:
            hits = self.select(msg)
            if hits:
                action = [h for h in hits if h[1].action != "delay"]
                number, rule = (action[0][0], action[0][1]) if action else (0, None)
                modern = META_PROTOCOL_VERSION in request_meta(msg)
                params = request_params(msg)
                name = params.get("name", params.get("uri"))
                what = " ".join(
                    x for x in (str(msg["method"]), name if isinstance(name, str) else None) if x
                )
                self._pending[id_key(msg["id"])] = _Decision(
                    sum(h[2] for h in hits), rule, number, modern, what
                )
        elif typ is MessageType.NOTIFICATION and msg.get("method") == "notifications/cancelled":
            self._pending.pop(id_key(request_params(msg).get("requestId")), None)

    def apply(
        self, value: Any, outputs: Sequence[Output], kind: MessageType | None = None
    ) -> Sequence[Step]:
        """The steps that carry out `outputs` (the engine's answer to client message `value`) with the faults.

        Without rules, the outputs themselves (delivered as they are). `kind`: what `value` is,
        when the shell has classified it already.
        """
        if not self.rules:
            return outputs
        for msg in value if isinstance(value, list) else [value]:
            self._count(msg, kind if kind is not None and msg is value else classify(msg))
        steps: list[Step] = []
        floor = 0.0  # a delayed answer holds back what the engine put after it, to keep the order
        for out in outputs:
            if isinstance(out, Note):
                steps.append(out)
                continue
            decision = (
                self._pending.pop(id_key(out.request_id), None)
                if out.final and out.request_id is not None
                else None
            )
            if decision is None:
                steps.append(out.later(floor) if floor else out)
                continue
            floor = max(floor, decision.delay)
            steps.extend(_carry_out(out, decision, floor))
            if any(isinstance(s, Hangup) for s in steps):
                break
        return steps


def _carry_out(out: Send, d: _Decision, delay: float) -> list[Step]:
    rule = d.rule
    what = d.what
    if rule is None:
        return [
            out.later(delay),
            Note(f"fault: answer to {what} (id {out.request_id!r}) delayed {delay:.3f}s", "info"),
        ]
    note = Note(
        f"fault rule {d.number} ({rule.action}) hits {what} (id {out.request_id!r})", "info"
    )
    rid = out.request_id
    act = rule.action
    if act == "error":
        error = error_response(rid, rule.code, rule.message, rule.data)
        return [replace(out, msg=error, delay=delay, fault=act), note]
    if act == "tool_error":
        recorded = out.msg.get("result") if isinstance(out.msg, dict) else None
        base = {
            k: v
            for k, v in (recorded or {}).items()
            if k not in ("content", "structuredContent", "isError")
        }
        result = {**base, "content": [{"type": "text", "text": rule.text}], "isError": True}
        if d.modern:
            result.setdefault("resultType", "complete")
        answer = {"jsonrpc": "2.0", "id": rid, "result": result}
        return [replace(out, msg=answer, delay=delay, fault=act), note]
    if act in ("malformed", "invalid"):
        if act == "malformed":
            raw = rule.line.encode()
        else:
            raw = encode(
                rule.send
                if rule.send is not None
                else {k: v for k, v in out.msg.items() if k != "jsonrpc"}
            )
        return [
            replace(out, delay=delay, raw=raw, fault=act),
            *([out.later(delay)] if rule.keep_answer else []),
            note,
        ]
    if act == "truncate":
        whole = encode(out.msg)
        return [replace(out, delay=delay, raw=whole[: max(1, len(whole) // 2)], fault=act), note]
    if act == "drop":
        return [note]
    if act in ("disconnect", "reset"):
        return [note, Hangup(delay, act == "reset", rid)]
    return [Status(rule.status, rule.retry_after, rule.body, out, delay), note]  # "status"


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
    plan, started = FaultPlan(rules, http), False
    for ex in pair(cassette.events).exchanges:
        if ex.is_notification:
            continue
        if ex.method == "initialize" and started:
            plan = FaultPlan(rules, http)
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
