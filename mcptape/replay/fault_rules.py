"""Fault rules: the one format every replay shell shares, read from Python values, JSON or TOML. Pure.

A rule selects client requests (`method`, tool/prompt `name` or resource URI, `nth`,
`every`, `times`, `probability`) and names an `action` on their answers; docs/faults.md
lists them all. `faults.FaultPlan` applies rules to a session; this module only reads and
checks them, so a bad rule fails before anything is served, naming the rule and the key.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import orjson

from mcptape.errors import ConfigError
from mcptape.wire.jsonrpc import JSONRPC_INTERNAL_ERROR, request_params

__all__ = [
    "ACTIONS",
    "HANDSHAKE",
    "HTTP_ONLY",
    "FaultRule",
    "load_rules",
    "parse_rules",
    "rules_from_options",
]

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
_COMMON = frozenset(
    {"action", "method", "name", "nth", "every", "times", "probability", "seed", "seconds"}
)
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
            if f.name != "action" and value != f.default:
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
            for k in ("nth", "every", "times", "probability")
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
        value = (
            value.get("faults", [value])
            if isinstance(value, dict) and "action" not in value
            else [value]
        )
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
    """One rule from its dict: aliases expanded, keys and values checked, `seconds` as floats."""
    if not isinstance(item, dict):
        raise ConfigError(f"a rule is an object with an 'action', got {item!r}")
    item = _expand_aliases(dict(item))
    _check_keys(item)
    if isinstance(item.get("seconds"), list):
        item["seconds"] = tuple(item["seconds"])
    for key, val in item.items():
        _check_value(key, val)
    if "seconds" in item and isinstance(item["seconds"], tuple):
        item["seconds"] = (float(item["seconds"][0]), float(item["seconds"][1]))
    return FaultRule(**item)


def _expand_aliases(item: dict[str, Any]) -> dict[str, Any]:
    """`item` with a shorthand such as `tool` turned into its method plus name."""
    for alias, method in _ALIASES.items():
        if alias in item:
            if "method" in item or "name" in item:
                raise ConfigError(
                    f"{alias!r} is short for method {method!r} plus name: give one or the other"
                )
            item["method"], item["name"] = method, item.pop(alias)
    return item


def _check_keys(item: dict[str, Any]) -> None:
    """Raises ConfigError for an unknown action, or a key the action does not take."""
    action = item.get("action")
    if action not in ACTIONS:
        raise ConfigError(f"action {action!r} is not one of: {', '.join(ACTIONS)}")
    allowed = _COMMON | _ACTION_KEYS[action]
    unknown = sorted(set(item) - allowed)
    if unknown:
        raise ConfigError(
            f"{action}: unknown key(s) {', '.join(unknown)}; this action takes {', '.join(sorted(allowed))}"
        )


def _check_value(key: str, val: Any) -> None:
    """Raises ConfigError when `val` is not of the kind `key` takes."""
    if key in _NUMBERS and not _number_like(val):
        raise ConfigError(
            f"{key}={val!r}: must be a number" + (" or [low, high]" if key == "seconds" else "")
        )
    if key in _STRINGS and not isinstance(val, str):
        raise ConfigError(f"{key}={val!r}: must be a string")
    if key in _INTS and (not isinstance(val, int) or isinstance(val, bool)):
        raise ConfigError(f"{key}={val!r}: must be a whole number")
    if key == "keep_answer" and not isinstance(val, bool):
        raise ConfigError(f"keep_answer={val!r}: must be true or false")


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
        if p.suffix == ".toml":
            import tomllib  # only TOML rule files need it: kept off every replay's start-up

            value = tomllib.loads(data.decode())
        else:
            value = orjson.loads(data)
    except (
        OSError,
        ValueError,
    ) as exc:  # TOMLDecodeError, JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ConfigError(f"{p}: cannot read the fault rules: {exc}") from None
    try:
        return parse_rules(value)
    except ConfigError as exc:
        raise ConfigError(f"{p}: {exc}") from None


def rules_from_options(
    path: str | Path | None, inline: Sequence[str] = ()
) -> tuple[FaultRule, ...]:
    """The rules of a CLI's `--fault-file FILE` followed by its `--fault RULE_JSON` options.

    Raises:
        ConfigError: the file or an inline rule cannot be read, or a rule is wrong.
    """
    rules = load_rules(path) if path is not None else ()
    extra: list[FaultRule] = []
    for text in inline:
        try:
            value = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise ConfigError(
                f'--fault {text!r}: not JSON (write a rule such as \'{{"tool": "add", "action": "drop"}}\')'
            ) from None
        try:
            extra.extend(parse_rules(value))
        except ConfigError as exc:
            raise ConfigError(f"--fault {text!r}: {exc}") from None
    return (*rules, *extra)
