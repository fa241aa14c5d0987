"""Fault rules: the one format every replay shell shares, read from Python values, JSON or TOML. Pure.

A rule selects client requests (`method`, tool/prompt `name` or resource URI, `arguments`,
`nth`, `every`, `times`, `probability`) and names an `action` on their answers; docs/faults.md
lists them all. Each is read into an `overlay.OverlayRule`, which each session's `Overlay`
applies; this module only reads and checks them, so a bad rule fails before anything is
served, naming the rule and the key.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from mcptape.errors import ConfigError

from .overlay import ACTIONS, HANDSHAKE, HTTP_ONLY, OverlayRule

__all__ = [
    "ACTIONS",
    "HANDSHAKE",
    "HTTP_ONLY",
    "FaultRule",
    "load_rules",
    "parse_rules",
    "rules_from_options",
]

_ALIASES = {"tool": "tools/call", "prompt": "prompts/get", "resource": "resources/read"}
"""`{"tool": "add"}` is short for `{"method": "tools/call", "name": "add"}`."""
_ACTION_KEYS: dict[str, frozenset[str]] = {
    "delay": frozenset(), "error": frozenset({"code", "message", "data"}), "tool_error": frozenset({"text"}),
    "malformed": frozenset({"line", "keep_answer"}), "invalid": frozenset({"send", "keep_answer"}), "truncate": frozenset(),
    "drop": frozenset(), "disconnect": frozenset(), "status": frozenset({"status", "retry_after", "body"}), "reset": frozenset(),
}  # fmt: skip
_COMMON = frozenset(
    {
        "action",
        "method",
        "name",
        "arguments",
        "nth",
        "every",
        "times",
        "probability",
        "seed",
        "seconds",
    }
)
_NUMBERS = frozenset({"seconds", "probability", "retry_after"})
_STRINGS = frozenset({"method", "name", "message", "text", "line", "body"})
_INTS = frozenset({"nth", "every", "times", "seed", "code", "status"})

FaultRule = OverlayRule
"""A fault rule is an overlay rule (`mcptape.replay.overlay`); the name stays for its users."""


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
    if key == "arguments" and not isinstance(val, dict):
        raise ConfigError(f"arguments={val!r}: must be an object (the tool call's arguments)")
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
