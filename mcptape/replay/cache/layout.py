"""The index file's layout: what each message's kind is written as, and what its lines hold
(`mcptape.replay.cache.writing` writes them, `mcptape.replay.cache.reading` reads them)."""

from __future__ import annotations

from typing import Any

from mcptape.wire.jsonrpc import MessageType

LAYOUT = 8
"""The index file's own layout (with the mcptape version that wrote it, both must match): a
line of what it is about, a line per column and one per event row (`writing.event_rows`), a line per column
of the exchanges, one of the rest of the pairing (`writing.pairing_rows`), and a line per column of
what the replay index reads of each request (`writing.plan_rows`)."""

TYPES = tuple(MessageType)
"""A message's kind in an index file: its place in this tuple, or `PROGRESS_CODE`."""
CODES = {t: i for i, t in enumerate(TYPES)}
PROGRESS_CODE = len(TYPES)
"""The code of a notification that a replay rewrites as progress (`LazyProgress`)."""
KINDS_OF = (*TYPES, MessageType.NOTIFICATION)
"""A code's `MessageType`."""
NOTHING = (None,) * 5
"""An event's text, b64, size, http and info when it has none of them."""
Columns = tuple[list[int], list[int], list[float], list[int], list[list[int]], list[int]]
"""An index file's columns of plain messages: offsets and seqs (each as its step from the one
before), ts, kinds (each a place
in `TYPES`, or `PROGRESS_CODE`), the `[k, file line]` of those not on line `seq + 1`, and the `k` of those the
client sent."""
PLAN_COLUMNS = 5
"""An index file's lines of what the replay index reads of each request (`writing.plan_rows`)."""
EXCHANGE_COLUMNS = 9
"""An index file's columns of exchanges (`writing.pairing_rows`)."""
Rows = tuple[list[list[Any]], Columns]
