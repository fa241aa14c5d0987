"""Replay: a cassette served as a deterministic MCP server.

`index` (exchanges by key), `matcher` (what matches, and why not), `engine` (sans-IO: client
messages in, recorded server messages out; `outputs` holds what it hands back), `overlay`
(sans-IO: overlay rules, fault rules among them, and each session's `Overlay`, which turns
the engine's outputs into the steps the shells carry out), `faults` (fault rules' names),
`report` (no-match and strict-mode texts), and the shells that carry out the steps:
`server_stdio` (`mcptape replay`), `memory` (an in-process transport for the `mcp` SDK
`Client`) and the `http` subpackage (`mcptape serve`). The shells are not imported here, so
importing this package pulls in neither anyio nor the SDK nor uvicorn.
"""

from __future__ import annotations

from typing import Any

from .engine import Note, ReplayConfig, ReplayEngine, Send
from .index import ReplayIndex
from .matcher import DEFAULT_MATCHERS, MatchPolicy, Subject
from .report import EXHAUSTED, NO_MATCH

__all__ = [
    "DEFAULT_MATCHERS",
    "EXHAUSTED",
    "NO_MATCH",
    "MatchPolicy",
    "Note",
    "ReplayConfig",
    "ReplayEngine",
    "ReplayIndex",
    "ReplayTransport",
    "Send",
    "Subject",
    "replay_transport",
]

_LAZY = {"ReplayTransport", "replay_transport"}
"""Names from `memory`, imported on first use: it needs anyio and the `mcp` SDK."""


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import memory

        return getattr(memory, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
