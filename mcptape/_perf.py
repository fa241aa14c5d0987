"""Small performance helpers shared by the modules that build large structures."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pauses the cyclic garbage collector while a large acyclic structure is built.

    Building hundreds of thousands of dicts triggers collections that traverse everything
    built so far, again and again; cassettes and indexes hold no reference cycles, so the
    pause changes nothing but the time (about half of it for a 100,000-exchange cassette).

    What was built stays, and stays in the youngest generation: the first collections after
    the pause would walk all of it, twice on its way to the oldest (a third of the time to
    open and index a 100,000-exchange cassette from its index file, 1 of 3 s). So when the
    pause ends it moves every object into the oldest generation at once (`gc.freeze` then
    `gc.unfreeze`; no object is walked), where the next full collection finds them, as it
    would have. Not when anything is frozen already (`settled`, or the program's own
    `gc.freeze`): unfreezing would thaw that too.
    """
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if not gc.get_freeze_count():
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def settled() -> None:
    """Moves every object alive now out of the cyclic collector's sight (`gc.freeze`), for a
    process that serves one cassette until it exits: the cassette and its index stay alive to
    the end, yet each full collection walked them all. A replay served from an index file keeps
    the messages it parses, which brings full collections on: pipelined replay of 20,000
    exchanges, 22k -> 31k requests/s so (read whole: 55k -> 61k). Not for the in-process replay,
    whose process is the user's."""
    gc.freeze()


def trimmed(data: bytes) -> bytes:
    """`data` in a buffer of its own size, for bytes that are kept.

    orjson returns its output in the buffer it wrote it into, which it does not shrink: 4 KiB
    for a key of 60 bytes (orjson 3.12 and later; home-assistant/core#181240 found the same).
    An index of 100,000 request keys so held 415 MB rather than 22 MB.
    """
    return bytes(memoryview(data))
