"""The matching key: a request's method and params without the parts that vary run to run.

Shared by replay (which recorded exchange answers an incoming request) and diff (which
exchanges of two cassettes correspond). Pure.

Volatile, removed: the JSON-RPC id (not in params), `_meta.progressToken`,
`_meta["io.modelcontextprotocol/clientInfo"]`, `_meta["io.modelcontextprotocol/protocolVersion"]`,
trace context (`traceparent`, `tracestate`, `baggage`), `requestState`, and any path a
matching is told to ignore (JSON pointers) or that was redacted at record time.
Significant, kept: names, arguments, URIs, cursors, log level, declared client capabilities,
`inputResponses`, every other `_meta` key.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from mcptape._perf import trimmed
from mcptape.pointer import tokens
from mcptape.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    TRACE_KEYS,
)

VOLATILE_META: frozenset[str] = frozenset(
    {"progressToken", META_CLIENT_INFO, META_PROTOCOL_VERSION, *TRACE_KEYS}
)
"""`_meta` keys that never take part in matching."""

VOLATILE_PARAMS: frozenset[str] = frozenset({"requestState"})
"""Top-level params that never take part in matching."""

VOLATILE_META_BY_METHOD: dict[str, frozenset[str]] = {
    "server/discover": frozenset({META_CLIENT_CAPABILITIES, META_LOG_LEVEL}),
}
"""`_meta` keys left out for one method only: a server's discover answer does not depend on
what the client declares, so a client with other callbacks (other capabilities) still
finds it; for every other request the declared capabilities and log level stay significant."""


def parse_pointer(pointer: str) -> tuple[str, ...]:
    """Splits a JSON pointer (`/params/arguments/when`) into its unescaped tokens.

    A leading `/params` is optional: pointers are relative to the request's params.
    """
    parts = tokens(pointer)
    return parts[1:] if parts and parts[0] == "params" else parts


def strip_params(
    params: Any, ignore: Iterable[tuple[str, ...]] = (), method: str | None = None
) -> Any:
    """A copy of params without the volatile parts (of any request, or of `method`'s) and the ignored paths."""
    if not isinstance(params, dict):
        return params
    out = {k: v for k, v in params.items() if k not in VOLATILE_PARAMS}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        drop = (
            VOLATILE_META | VOLATILE_META_BY_METHOD.get(method, frozenset())
            if method
            else VOLATILE_META
        )
        meta = {k: v for k, v in meta.items() if k not in drop}
        if meta:
            out["_meta"] = meta
        else:
            del out["_meta"]
    for path in ignore:
        if path and path[0] in out:  # (else nothing to drop: most paths, most requests)
            out = _drop(out, path)
    return out


def _drop(value: Any, path: tuple[str, ...]) -> Any:
    """`value` without `path` (a copy of what changes; `value` itself when the path is not there)."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(value, dict) and head in value:
        inner = _drop(value[head], rest) if rest else None
        if rest and inner is value[head]:
            return value
        copy = dict(value)
        if rest:
            copy[head] = inner
        else:
            del copy[head]
        return copy
    if isinstance(value, list) and head.isdigit() and int(head) < len(value):
        inner = _drop(value[int(head)], rest) if rest else None
        if rest and inner is value[int(head)]:
            return value
        items = list(value)
        items[int(head)] = inner
        return items
    return value


def request_key(msg: dict[str, Any], ignore: Iterable[tuple[str, ...]] = ()) -> bytes:
    """The key of a request or notification: canonical JSON of method + params stripped of the
    volatile parts and of the `ignore` paths (matching's `--ignore` pointers, parsed)."""
    params = strip_params(msg.get("params"), tuple(ignore), msg.get("method"))
    body = {"method": msg.get("method"), "params": params if params is not None else {}}
    if body["params"] == {}:
        body["params"] = {}
    return trimmed(orjson.dumps(body, option=orjson.OPT_SORT_KEYS))


def redacted_param_paths(
    redacted: Iterable[str], position: int | None = None
) -> list[tuple[str, ...]]:
    """The params paths among a recorded event's redacted JSON pointers: `/params/...`, or for
    the message at `position` in a JSON-RPC batch, `/<position>/params/...`."""
    prefix: tuple[str, ...] = ("params",) if position is None else (str(position), "params")
    out = []
    for pointer in redacted:
        parts = tokens(pointer)
        if parts[: len(prefix)] == prefix:
            out.append(parts[len(prefix) :])
    return out


def batch_position(msg: Any, batch: Any) -> int | None:
    """Where `msg` sits in `batch` (an event's `msg`) when that is a JSON-RPC batch, else None."""
    if not isinstance(batch, list):
        return None
    return next((i for i, m in enumerate(batch) if m is msg), None)
