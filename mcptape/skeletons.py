"""Cassettes read for their exchanges only: each message cut down to what pairing reads.

The commands that need a big cassette's exchanges but not all of its messages at once
(`prune`, `show --format json`) pair these skeletons, then read the file again, line by line,
for the rest: memory holds the skeletons, not the cassette.
"""

from __future__ import annotations

import os

from mcptape.cassette import Cassette, cut_short, lines_apart, stream
from mcptape.model import Event, Header
from mcptape.pairing import skeleton_event


def load_skeletons(path: str | os.PathLike[str], tolerate_truncated: bool = False) -> Cassette:
    """The cassette with each event's `skeleton_event` (what pairing reads), read line by line:
    what pairing needs, in a fraction of the memory of `load` (the commands that need the
    exchanges of a big cassette read it again, line by line, for the rest). Every line is
    validated as `load` does; a truncated last line is an error, or with `tolerate_truncated` a
    warning, as with `load`.

    Raises:
        CassetteError: as `load` does (and for a truncated last line, see above).
    """
    src = stream(path, tolerate_truncated=tolerate_truncated)
    events: list[Event] = []
    linenos: list[int] = []
    for el in src.events:
        events.append(skeleton_event(el.event))
        linenos.append(el.lineno)
    warnings = [*src.warnings, *cut_short(src.name, events)]
    truncated = src.warnings[0] if src.warnings else None
    head = Header.from_json(src.head)
    return Cassette(head, events, src.path, warnings, truncated, lines_apart(linenos, events))
