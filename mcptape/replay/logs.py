"""Recorded logs, for the live client's log level. Sans-IO.

A recorded log (`notifications/message` with a `level`) reaches the client only when the level
it asked for admits it (RFC 5424 order, `LEVELS`), as a real server filters:

- a 2026-07-28 request carries its level in `_meta["io.modelcontextprotocol/logLevel"]`; without
  one the server sends that request no log at all;
- a legacy client sets its level with `logging/setLevel`; until it does, a legacy server logs
  at its own default, which is what the recording holds: the recorded logs play as recorded.

The recording holds only what its own client asked for: a client that asks for a lower level
than the recording client did gets no more than was recorded, and one note per session says so
(`shortfall`).
"""

from __future__ import annotations

from typing import Any

from .index import LEVEL_UNKNOWN

LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""The log levels, least severe first (RFC 5424, as MCP orders them)."""
RANK = {level: i for i, level in enumerate(LEVELS)}
LOG = "notifications/message"
ALL = 0
"""The floor that admits every recorded log (as recorded)."""
NONE = len(LEVELS)
"""The floor that admits no log (a 2026-07-28 request that asked for none)."""


def floor(level: Any, modern: bool) -> int:
    """The rank from which a client's logs are played: `level`'s, else (no level, or one no
    server knows) none for a 2026-07-28 request and the recording's for a legacy client."""
    rank = RANK.get(level) if isinstance(level, str) else None
    if rank is not None:
        return rank
    return NONE if modern else ALL


def admitted(msg: dict[str, Any], floor: int) -> bool:
    """True when recorded server message `msg` is no log, or a log the floor admits (a log
    whose level no server knows counts as `debug`)."""
    if msg.get("method") != LOG:
        return True
    params = msg.get("params")
    level = params.get("level") if isinstance(params, dict) else None
    return (RANK.get(level, 0) if isinstance(level, str) else 0) >= floor


def shortfall(level: Any, recorded: dict[str, Any], modern: bool) -> tuple[str, str] | None:
    """What a client that asked for `level` misses of what the real server would send it, given
    what the recording client declared (`Entry.declared`): (the note, its level), or None.

    A legacy client that set no level gets every log from a legacy server, so it misses what
    the recording client did not ask for too (said at `info`: it asked for nothing itself)."""
    if LEVEL_UNKNOWN in recorded:
        return None  # (a legacy recording without setLevel: what the server logs by default)
    implicit = level is None and not modern
    if implicit:
        asked, level, said = (
            "set no log level (a legacy server sends it every log)",
            LEVELS[0],
            "info",
        )
    elif isinstance(level, str) and level in RANK:
        asked, said = f"asked for logs at level {level} and above", "warning"
    else:
        return None
    had = recorded.get("logLevel")
    if had not in RANK:
        return (
            f"the client {asked}; the recording client asked for none, so the cassette holds no log to play",
            said,
        )
    if RANK[level] >= RANK[had]:
        return None
    return (
        f"the client {asked}; the cassette holds only logs at level {had} and above (the level "
        "its recording client asked for)",
        said,
    )
