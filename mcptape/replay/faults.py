"""Faults on demand: rules that make a replay slow, failing, garbled or gone. Pure.

One rule format for every shell (`mcptape replay --faults`, `mcptape serve --faults`, the
in-process transport, `use_cassette(faults=...)`, the pytest marker). A rule selects client
requests (by `method`, by tool/prompt `name` or resource URI, by the n-th match) and says
what happens to the recorded answer:

    {"tool": "add", "nth": 2, "action": "error", "code": -32603, "message": "boom"}
    {"method": "tools/*", "action": "delay", "seconds": [0.1, 0.5], "seed": 7}

`FaultPlan` holds one client session's counters. A shell passes it each client message with
the engine's outputs for it (`plan.apply(value, outputs)`) and carries out the `Step`s that
come back: `Deliver` (a message or raw bytes, after a delay), `Hangup` (close the
connection, or reset it over HTTP), `Status` (an HTTP error status instead of the answer)
and `Note` (stderr). Delays are seconds after the client message arrived, on top of any
recorded timing. Everything is deterministic: random choices come from a seeded RNG per rule.
"""

from __future__ import annotations

import fnmatch
import random
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import orjson

from mcptape.errors import ConfigError
from mcptape.pairing import pair
from mcptape.versions import META_PROTOCOL_VERSION
from mcptape.wire.jsonrpc import JSONRPC_INTERNAL_ERROR, MessageType, classify, encode, error_response, id_key, request_meta, request_params

from .outputs import Note, Output, Send

__all__ = ["ACTIONS", "HTTP_ONLY", "Deliver", "FaultPlan", "FaultRule", "Hangup", "Status", "Step", "dry_run", "load_rules", "parse_rules", "rules_from_options"]

ACTIONS = ("delay", "error", "tool_error", "malformed", "invalid", "truncate", "drop", "disconnect", "status", "reset")
"""Every action a rule can take, in the order the docs list them."""
HTTP_ONLY = frozenset({"status", "reset"})
"""Actions only `mcptape serve` can carry out; other shells skip such rules with a warning."""
HANDSHAKE = frozenset({"initialize", "server/discover", "ping"})
"""Methods a rule without `method` leaves alone, so a catch-all rule does not break connecting."""
_ALIASES = {"tool": "tools/call", "prompt": "prompts/get", "resource": "resources/read"}
"""`{"tool": "add"}` is short for `{"method": "tools/call", "name": "add"}`."""
_ACTION_KEYS: dict[str, frozenset[str]] = {
    "delay": frozenset(), "error": frozenset({"code", "message", "data"}), "tool_error": frozenset({"text"}),
    "malformed": frozenset({"line", "keep_answer"}), "invalid": frozenset({"send", "keep_answer"}), "truncate": frozenset(),
    "drop": frozenset(), "disconnect": frozenset(), "status": frozenset({"status", "retry_after", "body"}), "reset": frozenset(),
}  # fmt: skip
_COMMON = frozenset({"action", "method", "name", "nth", "every", "times", "probability", "seed", "seconds"})
_NUMBERS = frozenset({"seconds", "probability", "retry_after"})
_STRINGS = frozenset({"method", "name", "message", "text", "line", "body"})
_INTS = frozenset({"nth", "every", "times", "seed", "code", "status"})


@dataclass(frozen=True, slots=True)
class FaultRule:
    """One rule: which requests (`method`, `name`, `nth`/`every`/`times`/`probability`) and what to do."""

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

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ConfigError(f"fault action {self.action!r} is not one of: {', '.join(ACTIONS)}")
        for key in ("nth", "every", "times"):
            value = getattr(self, key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError(f"fault rule {key}={value!r}: must be a whole number >= 1")
        if self.nth is not None and self.every is not None:
            raise ConfigError("a fault rule takes nth or every, not both")
        if self.probability is not None and not 0.0 <= self.probability <= 1.0:
            raise ConfigError(f"fault rule probability={self.probability!r}: must be between 0 and 1")
        lo, hi = self.seconds if isinstance(self.seconds, tuple) else (self.seconds, self.seconds)
        if not 0.0 <= lo <= hi:
            raise ConfigError(f"fault rule seconds={self.seconds!r}: a number >= 0, or [low, high] with 0 <= low <= high")
        if self.action == "status" and not 400 <= self.status <= 599:
            raise ConfigError(f"fault rule status={self.status!r}: must be an HTTP error status (400-599)")

    def to_json(self) -> dict[str, Any]:
        """The rule as it would be written in a file: the action and every field not at its default."""
        out: dict[str, Any] = {"action": self.action}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name != "action" and value != f.default:
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def describe(self) -> str:
        """A one-line summary: `error -32603 on tools/call add, nth=2`."""
        what = {"delay": f"delay {self._seconds_text()}", "error": f"error {self.code}", "status": f"status {self.status}"}.get(self.action, self.action)
        if self.action != "delay" and self.seconds:
            what += f" after {self._seconds_text()}"
        where = " ".join(x for x in (self.method or "any request", self.name) if x)
        sel = [f"{k}={getattr(self, k)}" for k in ("nth", "every", "times", "probability") if getattr(self, k) is not None]
        return f"{what} on {where}" + (f", {', '.join(sel)}" if sel else "")

    def _seconds_text(self) -> str:
        return f"{self.seconds[0]}-{self.seconds[1]}s" if isinstance(self.seconds, tuple) else f"{self.seconds}s"

    def selects(self, msg: dict[str, Any]) -> bool:
        """Whether a client request is one this rule counts (method and name; not nth)."""
        method = str(msg.get("method", ""))
        if self.method is None:
            if method in HANDSHAKE:
                return False
        elif not fnmatch.fnmatchcase(method, self.method):
            return False
        if self.action == "tool_error" and method != "tools/call":
            return False
        if self.name is not None:
            params = request_params(msg)
            value = params.get("name", params.get("uri"))
            return isinstance(value, str) and fnmatch.fnmatchcase(value, self.name)
        return True


def parse_rules(value: Any) -> tuple[FaultRule, ...]:
    """Rules from Python values: a list of dicts or `FaultRule`s, one dict, or `{"faults": [...]}`.

    Raises:
        ConfigError: a rule has an unknown key, action or value (the message says which).
    """
    if value is None:
        return ()
    if isinstance(value, (dict, FaultRule)):
        value = value.get("faults", [value]) if isinstance(value, dict) and "action" not in value else [value]
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"faults must be a list of rules, got {type(value).__name__}")
    rules = []
    for i, item in enumerate(value, start=1):
        try:
            rules.append(item if isinstance(item, FaultRule) else _rule(item))
        except ConfigError as exc:
            raise ConfigError(f"fault rule {i}: {exc}") from None
    return tuple(rules)


def _rule(item: Any) -> FaultRule:
    if not isinstance(item, dict):
        raise ConfigError(f"a rule is an object with an 'action', got {item!r}")
    item = dict(item)
    for alias, method in _ALIASES.items():
        if alias in item:
            if "method" in item or "name" in item:
                raise ConfigError(f"{alias!r} is short for method {method!r} plus name: give one or the other")
            item["method"], item["name"] = method, item.pop(alias)
    action = item.get("action")
    if action not in ACTIONS:
        raise ConfigError(f"action {action!r} is not one of: {', '.join(ACTIONS)}")
    allowed = _COMMON | _ACTION_KEYS[action]
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise ConfigError(f"{action}: unknown key(s) {', '.join(unknown)}; this action takes {', '.join(sorted(allowed))}")
    if isinstance(item.get("seconds"), list):
        item["seconds"] = tuple(item["seconds"])
    for key, val in item.items():
        if key in _NUMBERS and not _number_like(val):
            raise ConfigError(f"{key}={val!r}: must be a number" + (" or [low, high]" if key == "seconds" else ""))
        if key in _STRINGS and not isinstance(val, str):
            raise ConfigError(f"{key}={val!r}: must be a string")
        if key in _INTS and (not isinstance(val, int) or isinstance(val, bool)):
            raise ConfigError(f"{key}={val!r}: must be a whole number")
        if key == "keep_answer" and not isinstance(val, bool):
            raise ConfigError(f"keep_answer={val!r}: must be true or false")
    if "seconds" in item and isinstance(item["seconds"], tuple):
        item["seconds"] = (float(item["seconds"][0]), float(item["seconds"][1]))
    return FaultRule(**item)


def _number_like(val: Any) -> bool:
    if isinstance(val, tuple):
        return len(val) == 2 and all(_number_like(v) for v in val)
    return val is None or (isinstance(val, (int, float)) and not isinstance(val, bool))


def load_rules(path: str | Path) -> tuple[FaultRule, ...]:
    """Rules from a file: JSON (a list, or `{"faults": [...]}`), or TOML (`[[faults]]` tables).

    Raises:
        ConfigError: the file cannot be read or parsed, or a rule is wrong.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
        value = tomllib.loads(data.decode()) if p.suffix == ".toml" else orjson.loads(data)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read the fault rules: {exc}") from None
    try:
        return parse_rules(value)
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from None


def rules_from_options(path: str | Path | None, inline: Sequence[str] = ()) -> tuple[FaultRule, ...]:
    """The rules of a CLI's `--faults FILE` followed by its `--fault RULE_JSON` options.

    Raises:
        ConfigError: the file or an inline rule cannot be read, or a rule is wrong.
    """
    rules = load_rules(path) if path is not None else ()
    extra = []
    for text in inline:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise ConfigError(f"--fault {text!r}: not JSON (write a rule such as '{{\"tool\": \"add\", \"action\": \"drop\"}}')") from None
        try:
            extra.extend(parse_rules(value))
        except ConfigError as exc:
            raise ConfigError(f"--fault {text!r}: {exc}") from None
    return (*rules, *extra)


# -- what the shells carry out -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deliver:
    """Send this message (or these raw bytes, one line / one SSE data field) `delay` seconds after the trigger."""

    send: Send
    delay: float = 0.0
    raw: bytes | None = None
    """Bytes to write instead of `send.msg` (no newline): a malformed, invalid or truncated answer."""
    fault: str | None = None
    """The action that made it (`truncate` tells the HTTP shell to cut the SSE event and close)."""


@dataclass(frozen=True, slots=True)
class Hangup:
    """Close the connection (stdout, the memory stream, the HTTP stream) `delay` seconds after the trigger."""

    delay: float = 0.0
    reset: bool = False
    """HTTP: reset the TCP connection instead of ending the stream."""
    request_id: Any = None


@dataclass(frozen=True, slots=True)
class Status:
    """HTTP: answer the request with this status instead of the recorded answer."""

    status: int
    retry_after: float | None
    body: str | None
    send: Send
    delay: float = 0.0


Step = Deliver | Hangup | Status | Note


@dataclass(slots=True)
class _Decision:
    delay: float
    rule: FaultRule | None
    number: int
    """The rule's position in the list (1-based), for notes."""
    modern: bool = False
    """The request is 2026-07-28 (its `_meta` names the version): results carry `resultType`."""


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
        self._rngs = [random.Random(r.seed) for r in self.rules]
        for i, rule in enumerate(self.rules, start=1):
            if rule.action in HTTP_ONLY and not self.http:
                self.notes.append(Note(f"fault rule {i} ({rule.describe()}) needs HTTP (mcptape serve); skipped here"))

    def select(self, msg: dict[str, Any]) -> list[tuple[int, FaultRule, float]]:
        """Counts one client request against every rule: (rule number, rule, seconds) of the rules that hit it.

        Delay rules all apply (their seconds add up); of the other rules, the first that hits wins.
        """
        hits: list[tuple[int, FaultRule, float]] = []
        decided = False
        for i, rule in enumerate(self.rules):
            if (rule.action in HTTP_ONLY and not self.http) or not rule.selects(msg):
                continue
            self._seen[i] += 1
            n, rng = self._seen[i], self._rngs[i]
            chance = rng.random() if rule.probability is not None else 0.0
            hit = (rule.nth is None or n == rule.nth) and (rule.every is None or n % rule.every == 0)
            hit = hit and (rule.times is None or self._hits[i] < rule.times)
            hit = hit and (rule.probability is None or chance < rule.probability)
            if not hit or (decided and rule.action != "delay"):
                continue
            lo, hi = rule.seconds if isinstance(rule.seconds, tuple) else (rule.seconds, rule.seconds)
            seconds = lo if lo == hi else rng.uniform(lo, hi)
            self._hits[i] += 1
            decided = decided or rule.action != "delay"
            hits.append((i + 1, rule, seconds))
        return hits

    def apply(self, value: Any, outputs: list[Output]) -> list[Step]:
        """The steps that carry out `outputs` (the engine's answer to client message `value`) with the faults."""
        for msg in value if isinstance(value, list) else [value]:
            if classify(msg) is MessageType.REQUEST:
                hits = self.select(msg)
                if hits:
                    action = [h for h in hits if h[1].action != "delay"]
                    number, rule = (action[0][0], action[0][1]) if action else (0, None)
                    modern = META_PROTOCOL_VERSION in request_meta(msg)
                    self._pending[id_key(msg["id"])] = _Decision(sum(h[2] for h in hits), rule, number, modern)
            elif classify(msg) is MessageType.NOTIFICATION and msg.get("method") == "notifications/cancelled":
                self._pending.pop(id_key(request_params(msg).get("requestId")), None)
        steps: list[Step] = []
        floor = 0.0  # a delayed answer holds back what the engine put after it, to keep the order
        for out in outputs:
            if isinstance(out, Note):
                steps.append(out)
                continue
            decision = self._pending.pop(id_key(out.request_id), None) if out.final and out.request_id is not None else None
            if decision is None:
                steps.append(Deliver(out, floor) if floor else Deliver(out))
                continue
            floor = max(floor, decision.delay)
            steps.extend(_carry_out(out, decision, floor))
            if any(isinstance(s, Hangup) for s in steps):
                break
        return steps


def _carry_out(out: Send, d: _Decision, delay: float) -> list[Step]:
    rule = d.rule
    ex = out.exchange
    what = " ".join(x for x in (ex.method, ex.name) if x) if ex is not None else "a request"
    if rule is None:
        return [Deliver(out, delay), Note(f"fault: answer to {what} (id {out.request_id!r}) delayed {delay:.3f}s", "info")]
    note = Note(f"fault rule {d.number} ({rule.action}) hits {what} (id {out.request_id!r})", "info")
    rid = out.request_id
    act = rule.action
    if act == "error":
        return [Deliver(replace(out, msg=error_response(rid, rule.code, rule.message, rule.data)), delay, fault=act), note]
    if act == "tool_error":
        recorded = out.msg.get("result") if isinstance(out.msg, dict) else None
        base = {k: v for k, v in (recorded or {}).items() if k not in ("content", "structuredContent", "isError")}
        result = {**base, "content": [{"type": "text", "text": rule.text}], "isError": True}
        if d.modern:
            result.setdefault("resultType", "complete")
        return [Deliver(replace(out, msg={"jsonrpc": "2.0", "id": rid, "result": result}), delay, fault=act), note]
    if act in ("malformed", "invalid"):
        if act == "malformed":
            raw = rule.line.encode()
        else:
            raw = encode(rule.send if rule.send is not None else {k: v for k, v in out.msg.items() if k != "jsonrpc"})
        return [Deliver(out, delay, raw, act), *([Deliver(out, delay)] if rule.keep_answer else []), note]
    if act == "truncate":
        whole = encode(out.msg)
        return [Deliver(out, delay, whole[: max(1, len(whole) // 2)], act), note]
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
    lines = [f"{cassette.name}: {len(rules)} fault rule(s), as if the client made the recorded requests in order"]
    hit_by: list[list[str]] = [[] for _ in rules]
    plan, started = FaultPlan(rules, http), False
    for ex in pair(cassette.events).exchanges:
        if ex.is_notification:
            continue
        if ex.method == "initialize" and started:
            plan = FaultPlan(rules, http)
        started = True
        for number, rule, seconds in plan.select(ex.msg):
            n = plan._seen[number - 1]
            extra = f", {seconds:.3f}s" if seconds else ""
            hit_by[number - 1].append(f"    #{ex.request.event.seq} {ex.method} {ex.name or ''}".rstrip() + f"  (match {n}{extra})")
    for i, rule in enumerate(rules):
        lines.append(f"rule {i + 1}: {rule.describe()}")
        if rule.action in HTTP_ONLY and not http:
            lines.append("    skipped: HTTP-only (mcptape serve)")
        else:
            lines.extend(hit_by[i] or ["    hits no recorded request"])
    return "\n".join(lines) + "\n"
