"""A cassette with what a replay already knows of it: the replay's own state, kept apart.

A replay opened from an index file (`mcptape.replay.cache`) knows the cassette's pairing and
what the replay index reads of each request without reading a message. `IndexedCassette`
carries them to `mcptape.replay.index.ReplayIndex`; a plain `Cassette` carries none, and is
paired when indexed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from mcptape import pairing as pairing_
from mcptape.cassette import Cassette
from mcptape.cassette.lazy import Parsed
from mcptape.pairing import Session


class Plan(NamedTuple):
    """What a `ReplayIndex` reads of each exchange's request of `session`, by exchange: its
    method, its key under a policy keyed by default (`keyed_by_default`; None: not indexed),
    what its client had declared. An index file keeps it (`mcptape.replay.cache`), so that a replay
    from one indexes a big cassette without reading a request (the first read makes it as it
    reads)."""

    session: Session
    methods: list[str]
    keys: list[bytes | None]
    declared: list[dict[str, Any]]


@dataclass(slots=True)
class IndexedCassette(Cassette):
    """A `Cassette` with its pairing, and the `Plan` of it, as its reader made them."""

    pairing: tuple[list[Any], int, Session] | None = None
    """(`events`, their number, their session): `paired` uses it while `events` is still that
    list, of that length (a caller that changes them gets them paired again)."""
    plan: Plan | None = None
    """What the replay index reads of each request of that pairing (None: not at hand)."""
    parsed: Parsed | None = None
    """How many of its lazy events (`mcptape.cassette.lazy`) have read their line (None: it has none)."""


def paired(cassette: Cassette) -> Session:
    """`pair` of the cassette's events, or the pairing its reader kept (`IndexedCassette`)
    while the events are still those it was made of. The session is shared: its readers do
    not change it."""
    kept = cassette.pairing if isinstance(cassette, IndexedCassette) else None
    if kept is not None and kept[0] is cassette.events and kept[1] == len(cassette.events):
        return kept[2]
    return pairing_.pair(cassette.events)


def parsed_lines(cassette: Cassette) -> int:
    """How many of the cassette's lazy events have read and parsed their line so far (0 for a
    cassette read whole)."""
    parsed = cassette.parsed if isinstance(cassette, IndexedCassette) else None
    return 0 if parsed is None else parsed.count


def kept_plan(cassette: Cassette, session: Session) -> Plan | None:
    """The `Plan` the cassette's reader kept, when it is that of `session`."""
    plan = cassette.plan if isinstance(cassette, IndexedCassette) else None
    return plan if plan is not None and plan.session is session else None
