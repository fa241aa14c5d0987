"""Overlays: rules that select client requests and decide what they are answered with and how
the answer is delivered. Pure.

An `OverlayRule` is a selector (`method`, tool/prompt `name` or resource URI, `arguments`,
`nth`, `every`, `times`, `probability`, `seed`), an answer and a delivery:

- the answer: the recorded one (`delay` and the wire faults), a JSON-RPC error (`error`), a
  tool error (`tool_error`), or the recorded list with declared entries in it (`list`: the
  tools, resources and prompts an overlay declares, `mcptape.mocks.overlaid`);
- the delivery: `seconds` later, and what only a shell can carry out: `malformed`, `invalid`,
  `truncate`, `drop`, `disconnect`, and over HTTP `status` and `reset`.

Fault rules (`--fault-file`, `faults=`, `fault_rules` reads them) are overlay rules, and so are
a mock's `mcptape.recorded(...)` declarations and the `fault=` of a declared answer. An answer
declared whole (`mock.tool("add", 3)`) is the answerer's (`ReplayConfig.answerer`), asked
before the cassette; a rule then decides how that answer, made up or recorded, is delivered.

`Overlay` holds one client session's counters. The engine passes it each client message with
its outputs (`overlay.apply(msg, outputs, kind)`) and hands back the `Step`s it returns:
`Send` (a message, or the raw bytes a wire fault put in its place, after its delay),
`Hangup`, `Status` and `Note`. Delays are seconds after the client message arrived, on top of
any recorded timing. Random choices come from a seeded RNG per rule.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from mcptape.errors import ConfigError
from mcptape.versions import META_PROTOCOL_VERSION
from mcptape.wire.jsonrpc import (
    JSONRPC_INTERNAL_ERROR,
    MessageType,
    encode,
    error_response,
    id_key,
    request_meta,
    request_params,
)

from .outputs import Hangup, Note, Send, Status, Step

if TYPE_CHECKING:
    import random

__all__ = ["ACTIONS", "HANDSHAKE", "HTTP_ONLY", "LIST", "Overlay", "OverlayRule"]

ACTIONS = (
    "delay",
    "error",
    "tool_error",
    "malformed",
    "invalid",
    "truncate",
    "drop",
    "disconnect",
    "status",
    "reset",
)
"""Every action a fault rule can take, in the order the docs list them."""
LIST = "list"
"""The action of a declared overlay's list rule: the recorded list, with the declared entries."""
WIRE = frozenset({"malformed", "invalid", "truncate", "drop", "disconnect", "status", "reset"})
"""Actions that change how an answer is delivered, not what it says."""
HTTP_ONLY = frozenset({"status", "reset"})
"""Actions only `mcptape serve` can carry out; other shells skip such rules with a warning."""
HANDSHAKE = frozenset({"initialize", "server/discover", "ping"})
"""Methods a rule without `method` leaves alone, so a catch-all rule does not break connecting."""
_ADDING = frozenset({"delay", LIST})
"""Actions that apply together with the others: delays add up, lists get their entries."""


@dataclass(frozen=True, slots=True)
class OverlayRule:
    """One rule: which requests (`method`, `name`, `arguments`, `nth`/`every`/`times`/
    `probability`), and what `action` they take: the answer they are given (recorded, an error,
    a tool error, a list with declared entries) or how it is delivered (later, or a wire fault)."""

    action: str
    method: str | None = None
    """The request's method; `*` wildcards allowed (`tools/*`). None: any but the handshake."""
    name: str | None = None
    """The tool or prompt name, or the resource URI; `*` wildcards allowed."""
    nth: int | None = None
    """Only the n-th matching request (1-based)."""
    every: int | None = None
    """Every n-th matching request (n, 2n, 3n ...)."""
    times: int | None = None
    """At most this many hits."""
    probability: float | None = None
    """Hit a matching request with this probability (drawn from the rule's seeded RNG)."""
    seed: int = 0
    seconds: float | tuple[float, float] = 0.0
    """The delay (action `delay`), or how long before any other action takes effect; [lo, hi] jitters."""
    code: int = JSONRPC_INTERNAL_ERROR
    message: str = "Internal error (injected by mcptape)"
    data: Any = None
    text: str = "Tool failed (injected by mcptape)"
    line: str = "mcptape fault: this line is not JSON"
    send: Any = None
    """`invalid`: the message to send; default: the recorded answer without `jsonrpc`."""
    keep_answer: bool = False
    """`malformed`/`invalid`: send the recorded answer after the garbage (a stray line, not a lost answer)."""
    status: int = 500
    retry_after: float | None = None
    body: str | None = None
    arguments: dict[str, Any] | None = None
    """Only requests with these arguments (`params.arguments`, compared whole)."""
    entries: tuple[Any, ...] = ()
    """`list`: (result key, entry key, entries) of what the overlay declares (`mcptape.mocks.overlaid`)."""
    source: str = field(default="", compare=False)
    """Where a declaration made the rule (a file and line), for notes; empty for fault rules."""

    def __post_init__(self) -> None:
        if self.action not in ACTIONS and self.action != LIST:
            raise ConfigError(f"fault action {self.action!r} is not one of: {', '.join(ACTIONS)}")
        for key in ("nth", "every", "times"):
            value = getattr(self, key)
            if value is not None and (
                not isinstance(value, int) or isinstance(value, bool) or value < 1
            ):
                raise ConfigError(f"fault rule {key}={value!r}: must be a whole number >= 1")
        if self.nth is not None and self.every is not None:
            raise ConfigError("a fault rule takes nth or every, not both")
        if self.probability is not None and not 0.0 <= self.probability <= 1.0:
            raise ConfigError(
                f"fault rule probability={self.probability!r}: must be between 0 and 1"
            )
        lo, hi = self.seconds if isinstance(self.seconds, tuple) else (self.seconds, self.seconds)
        if not 0.0 <= lo <= hi:
            raise ConfigError(
                f"fault rule seconds={self.seconds!r}: a number >= 0, or [low, high] with 0 <= low <= high"
            )
        if self.action == "status" and not 400 <= self.status <= 599:
            raise ConfigError(
                f"fault rule status={self.status!r}: must be an HTTP error status (400-599)"
            )

    def to_json(self) -> dict[str, Any]:
        """The rule as it would be written in a file: the action and every field not at its default."""
        out: dict[str, Any] = {"action": self.action}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name not in ("action", "source") and value != f.default:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def describe(self) -> str:
        """A one-line summary: `error -32603 on tools/call add, nth=2`."""
        what = {
            "delay": f"delay {self._seconds_text()}",
            "error": f"error {self.code}",
            "status": f"status {self.status}",
        }.get(self.action, self.action)
        if self.action != "delay" and self.seconds:
            what += f" after {self._seconds_text()}"
        where = " ".join(x for x in (self.method or "any request", self.name) if x)
        sel = [
            f"{k}={getattr(self, k)}"
            for k in ("arguments", "nth", "every", "times", "probability")
            if getattr(self, k) is not None
        ]
        return f"{what} on {where}" + (f", {', '.join(sel)}" if sel else "")

    def _seconds_text(self) -> str:
        return (
            f"{self.seconds[0]}-{self.seconds[1]}s"
            if isinstance(self.seconds, tuple)
            else f"{self.seconds}s"
        )

    def selects(self, msg: dict[str, Any]) -> bool:
        """Whether a client request is one this rule counts (method, name, arguments; not nth)."""
        method = str(msg.get("method", ""))
        if self.method is None:
            if method in HANDSHAKE:
                return False
        elif not fnmatch.fnmatchcase(method, self.method):
            return False
        if self.action == "tool_error" and method != "tools/call":
            return False
        if self.name is None and self.arguments is None:
            return True
        params = request_params(msg)
        if self.arguments is not None and params.get("arguments", {}) != self.arguments:
            return False
        if self.name is not None:
            value = params.get("name", params.get("uri"))
            return isinstance(value, str) and fnmatch.fnmatchcase(value, self.name)
        return True


class Hit(NamedTuple):
    """A rule that hit a request: its number (1-based), the rule, its seconds, its match count."""

    number: int
    rule: OverlayRule
    seconds: float
    n: int


class _Decision(NamedTuple):
    delay: float
    rule: OverlayRule | None
    number: int
    """The rule's position in the list (1-based), for notes."""
    modern: bool = False
    """The request is 2026-07-28 (its `_meta` names the version): results carry `resultType`."""
    what: str = "a request"
    """The request's method and name, for notes."""
    lists: tuple[OverlayRule, ...] = ()
    """`list` rules that hit: entries for the answer."""


@dataclass(slots=True)
class Overlay:
    """One client session's overlay counters; see the module docstring."""

    rules: tuple[OverlayRule, ...]
    http: bool = False
    """True in `mcptape serve`; elsewhere HTTP-only rules are skipped."""
    notes: list[Note] = field(default_factory=list)
    """Warnings about the rules themselves, for the shell to print once."""
    _seen: list[int] = field(default_factory=list)
    _hits: list[int] = field(default_factory=list)
    _rngs: list[random.Random] = field(default_factory=list)
    _pending: dict[tuple[str, Any], _Decision] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._seen = [0] * len(self.rules)
        self._hits = [0] * len(self.rules)
        if self.rules:
            from random import Random  # (random's import is not on the replay path without rules)

            self._rngs = [Random(r.seed) for r in self.rules]
        for i, rule in enumerate(self.rules, start=1):
            if rule.action in HTTP_ONLY and not self.http:
                self.notes.append(
                    Note(f"{_named(rule, i)} ({rule.describe()}) needs HTTP (mcptape serve); skipped here")
                )  # fmt: skip

    def renew(self, rules: tuple[OverlayRule, ...]) -> None:
        """The rules changed (a mock declared more while its client is connected): the counters
        of the rules still in the same place are kept, the others start afresh."""
        keep = 0
        for old, new in zip(self.rules, rules, strict=False):
            if old != new:
                break
            keep += 1
        fresh = rules[keep:]
        self.rules = rules
        self._seen = [*self._seen[:keep], *(0 for _ in fresh)]
        self._hits = [*self._hits[:keep], *(0 for _ in fresh)]
        if fresh:
            from random import Random

            self._rngs = [*self._rngs[:keep], *(Random(r.seed) for r in fresh)]

    def select(self, msg: dict[str, Any]) -> list[Hit]:
        """Counts one client request against every rule: the rules that hit it.

        Delay and list rules all apply (delays add up); of the other rules, the first that hits wins.
        """
        hits: list[Hit] = []
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
            if not hit or (decided and rule.action not in _ADDING):
                continue
            lo, hi = (
                rule.seconds if isinstance(rule.seconds, tuple) else (rule.seconds, rule.seconds)
            )
            seconds = lo if lo == hi else rng.uniform(lo, hi)
            self._hits[i] += 1
            decided = decided or rule.action not in _ADDING
            hits.append(Hit(i + 1, rule, seconds, n))
        return hits

    def _count(self, msg: Any, typ: MessageType) -> None:
        """Decides the fate of a client request's answer; a cancellation forgets it."""
        if typ is MessageType.REQUEST:
            hits = self.select(msg)
            if hits:
                action = [h for h in hits if h.rule.action not in _ADDING]
                number, rule = (action[0].number, action[0].rule) if action else (0, None)
                modern = META_PROTOCOL_VERSION in request_meta(msg)
                params = request_params(msg)
                name = params.get("name", params.get("uri"))
                what = " ".join(
                    x for x in (str(msg["method"]), name if isinstance(name, str) else None) if x
                )
                lists = tuple(h.rule for h in hits if h.rule.action == LIST)
                self._pending[id_key(msg["id"])] = _Decision(
                    sum(h.seconds for h in hits), rule, number, modern, what, lists
                )
        elif typ is MessageType.NOTIFICATION and msg.get("method") == "notifications/cancelled":
            self._pending.pop(id_key(request_params(msg).get("requestId")), None)

    def apply(self, msg: Any, outputs: Sequence[Step], kind: MessageType) -> list[Step]:
        """The steps that carry out `outputs` (the engine's answer to client message `msg`, of
        kind `kind`) as the rules decided."""
        self._count(msg, kind)
        steps: list[Step] = []
        floor = 0.0  # a delayed answer holds back what the engine put after it, to keep the order
        for out in outputs:
            if not isinstance(out, Send):
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
            if decision.lists:
                out = _listed(out, decision.lists)
            steps.extend(_carry_out(out, decision, floor))
            if any(isinstance(s, Hangup) for s in steps):
                break
        return steps


def _named(rule: OverlayRule, number: int) -> str:
    return f"overlay rule ({rule.source})" if rule.source else f"fault rule {number}"


def _listed(out: Send, rules: tuple[OverlayRule, ...]) -> Send:
    """A recorded list answer with the declared entries: one with a recorded entry's name takes
    its place, the others are added to the last page (the one without `nextCursor`)."""
    result = out.msg.get("result") if isinstance(out.msg, dict) else None
    if not isinstance(result, dict):
        return out
    changed = dict(result)
    for rule in rules:
        key, by, declared = rule.entries
        recorded = result.get(key)
        if not isinstance(recorded, list):
            continue
        mine = {e[by]: e for e in declared}
        entries = [mine.pop(e.get(by), e) if isinstance(e, dict) else e for e in recorded]
        if "nextCursor" not in result:
            entries += mine.values()
        changed[key] = entries
    return replace(out, msg={**out.msg, "result": changed})


def _carry_out(out: Send, d: _Decision, delay: float) -> list[Step]:
    rule = d.rule
    what = d.what
    if rule is None:
        if not delay and d.lists:
            return [out]
        return [
            out.later(delay),
            Note(f"fault: answer to {what} (id {out.request_id!r}) delayed {delay:.3f}s", "info"),
        ]
    note = Note(
        f"{_named(rule, d.number)} ({rule.action}) hits {what} (id {out.request_id!r})", "info"
    )
    rid = out.request_id
    act = rule.action
    if act == "error":
        error = error_response(rid, rule.code, rule.message, rule.data)
        return [replace(out, msg=error, delay=delay, fault=act), note]
    if act == "tool_error":
        return [replace(out, msg=_tool_error(out, rule, d.modern), delay=delay, fault=act), note]
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


def _tool_error(out: Send, rule: OverlayRule, modern: bool) -> dict[str, Any]:
    """A `tools/call` answer with `isError` and the rule's text, keeping the recorded result's other keys."""
    recorded = out.msg.get("result") if isinstance(out.msg, dict) else None
    base = {
        k: v
        for k, v in (recorded or {}).items()
        if k not in ("content", "structuredContent", "isError")
    }
    result = {**base, "content": [{"type": "text", "text": rule.text}], "isError": True}
    if modern:
        result.setdefault("resultType", "complete")
    return {"jsonrpc": "2.0", "id": out.request_id, "result": result}


def rules_of(configured: Sequence[OverlayRule], answerer: Any) -> tuple[OverlayRule, ...]:
    """A session's rules: the configured ones (fault rules), then the answerer's declarations'."""
    declared = getattr(answerer, "overlay_rules", ()) if answerer is not None else ()
    return (*configured, *declared) if declared else tuple(configured)
