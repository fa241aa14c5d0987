"""Known MCP protocol revisions and their traits.

Revisions are dates, but they are compared by their position in `KNOWN`, never as
strings: an unknown future revision sorts after every known one.
"""

from __future__ import annotations

KNOWN: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
"""Every revision mcptape knows, oldest first."""

HANDSHAKE_VERSIONS: tuple[str, ...] = KNOWN[:4]
"""Revisions that open a session with `initialize` (the legacy era)."""

MODERN: tuple[str, ...] = ("2026-07-28",)
"""Stateless revisions: every request carries `_meta` and there is no handshake."""

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
TRACE_KEYS: tuple[str, ...] = ("traceparent", "tracestate", "baggage")


_RANKS: dict[str, int] = {v: i for i, v in enumerate(KNOWN)}
_UNKNOWN = len(KNOWN)


def _rank(version: str) -> int:
    # unknown (or not a string, from a hostile peer): assume newer than anything known
    return _RANKS.get(version, _UNKNOWN) if isinstance(version, str) else _UNKNOWN


def is_at_least(version: str, minimum: str) -> bool:
    """True when `version` is `minimum` or a later revision."""
    return _rank(version) >= _rank(minimum)


_MODERN_RANK = _RANKS[MODERN[0]]


def is_modern(version: str | None) -> bool:
    """True for stateless (2026-07-28 and later) revisions."""
    return version is not None and _rank(version) >= _MODERN_RANK
