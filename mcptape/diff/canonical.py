"""The canonical form of a cassette: its values, the matching key, and per-message helpers.

Pure. `normalize` builds these; `align`, `engine` and `verify` read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcptape.diff.pointer import drop
from mcptape.eras import reserved
from mcptape.keys import request_key, strip_params
from mcptape.versions import META_CLIENT_CAPABILITIES, META_LOG_LEVEL
from mcptape.wire.jsonrpc import request_params

from .schema import clean_schema


@dataclass(frozen=True, slots=True)
class Options:
    """What normalizing keeps: error messages, and paths the user asked to ignore."""

    strict_messages: bool = False
    ignore: tuple[tuple[str, ...], ...] = ()
    """Pointer token tuples; `("params", ...)` ones also leave the matching key."""


@dataclass(slots=True)
class Call:
    """One logical exchange in canonical form."""

    method: str
    name: str | None
    key: bytes
    body: dict[str, Any]
    """What is compared: `result` or `error` (or neither), `inputs`, `progress`, `logs`, `notifications`."""
    envelope: dict[str, Any] = field(default_factory=dict)
    """Envelope-only values, by pointer (`/result/ttlMs`), compared apart from behaviour."""
    log_level: str | None = None
    seq: int = 0
    """The cassette line (event seq) of the request, for people looking for it."""

    @property
    def label(self) -> str:
        return f"{self.method} {self.name}" if self.name else self.method


@dataclass(slots=True)
class Handshake:
    """What the server said about itself: legacy InitializeResult or 2026-07-28 DiscoverResult."""

    server: dict[str, Any] = field(default_factory=dict)
    """name, title, description, instructions, capabilities (behaviour)."""
    envelope: dict[str, Any] = field(default_factory=dict)
    """protocol versions, server version, client capabilities (envelope)."""
    partial: bool = False
    """Only what results' `_meta.serverInfo` told (no initialize or discover was recorded)."""


@dataclass(slots=True)
class Canonical:
    """A whole cassette in canonical form."""

    era: str
    """"legacy", "modern" or "unknown"."""
    protocol_version: str | None
    handshake: Handshake
    calls: list[Call]
    surface: dict[str, dict[str, Any] | None]
    """kind ("tools", "prompts", "resources", "resourceTemplates") -> {name: definition}, None when never listed."""
    changes: list[dict[str, Any]]
    """The change-notification stream (list_changed, resources/updated), in order."""
    exchanges: int = 0


def canonical_key(method: str, params: Any, opts: Options) -> bytes:
    """The alignment key: method + params without volatile, era-only and ignored parts."""
    p = strip_params(params)
    if isinstance(p, dict):
        p = {k: v for k, v in p.items() if k not in ("inputResponses", "requestState")}
        meta = p.get("_meta")
        if isinstance(meta, dict):
            meta = {
                k: v for k, v in meta.items() if k not in (META_CLIENT_CAPABILITIES, META_LOG_LEVEL)
            }
            if meta:
                p["_meta"] = meta
            else:
                del p["_meta"]
        for pattern in opts.ignore:
            if pattern and pattern[0] == "params":
                p = drop(p, pattern[1:])
    return request_key({"method": method, "params": p or {}})  # canonical JSON, shared with replay


def _plain_meta(meta: Any) -> dict[str, Any]:
    """A `_meta` without reserved keys and progress tokens (empty when nothing is left)."""
    if not isinstance(meta, dict):
        return {}
    return {k: v for k, v in meta.items() if not reserved(k) and k != "progressToken"}


def without_meta(params: Any) -> Any:
    """Params (or a result) whose `_meta` keeps only non-reserved keys, and is dropped when empty."""
    if not isinstance(params, dict):
        return params
    out = {k: v for k, v in params.items() if k != "_meta"}
    plain = _plain_meta(params.get("_meta"))
    if plain:
        out["_meta"] = plain
    return out


def notification_entry(msg: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(stream, canonical entry) of a server notification inside a call."""
    method = msg.get("method")
    params = request_params(msg)
    if method == "notifications/progress":
        return "progress", {k: params[k] for k in ("progress", "total", "message") if k in params}
    if method == "notifications/message":
        return "logs", {k: params[k] for k in ("level", "logger", "data") if k in params}
    return "notifications", {"method": method, "params": without_meta(params)}


def input_entry(method: Any, params: Any, answer: Any) -> dict[str, Any]:
    """One server-to-client input request with the client's answer, in canonical form."""
    p = without_meta(params)
    if isinstance(p, dict) and isinstance(p.get("requestedSchema"), dict):
        p = {**p, "requestedSchema": clean_schema(p["requestedSchema"])}
    ans = without_meta(answer) if isinstance(answer, dict) else answer
    return {"method": method, "params": p, "answer": ans}


def sort_inputs(inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Input requests in a canonical order (legacy wire order and MRTR key order differ)."""
    return sorted(inputs, key=lambda e: repr(freeze(e)))


def freeze(value: Any) -> Any:
    """A hashable, order-independent stand-in for a JSON value (dicts become sorted tuples)."""
    if isinstance(value, dict):
        return ("{", tuple(sorted((str(k), freeze(v)) for k, v in value.items())))
    if isinstance(value, list):
        return ("[", tuple(freeze(v) for v in value))
    return value
