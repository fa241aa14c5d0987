"""The one line a recording ends with: how many sessions, exchanges and messages, and where."""

from __future__ import annotations

import os

from mcptape.errors import McpTapeError
from mcptape.skeletons import outline


def summary(path: str | os.PathLike[str], shown: str | None = None) -> str:
    """`2 sessions, 5 exchanges, 14 messages in cassettes/x.jsonl`, read back from the cassette
    written (a cassette that cannot be read back is named alone); `shown`: the path as the user
    gave it."""
    where = shown if shown is not None else str(path)
    try:
        o = outline(path, tolerate_truncated=True)
    except McpTapeError:
        return f"written to {where}"
    exchanges = sum(1 for n in o.notification if not n)
    sessions = len(set(o.sessions)) or (1 if len(o) else 0)
    messages = sum(o.message)
    return (
        f"{_count(sessions, 'session')}, {_count(exchanges, 'exchange')}, "
        f"{_count(messages, 'message')} in {where}"
    )


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"
