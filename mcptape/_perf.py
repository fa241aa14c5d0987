"""Small performance helpers: the command line's collector tuning, and buffers of their size.

Library calls leave the cyclic garbage collector as they found it: a program (a test suite)
that loads or diffs a cassette keeps its own settings. Only the command line's process, which
mcptape owns, tunes it (`for_command`), and a process that serves one cassette until it exits
takes what it keeps out of the collector's sight (`settled`).
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

BUILDERS = frozenset({"replay", "serve", "diff", "show", "check"})
"""Commands that build a whole cassette's structures before they do their work, then either
end soon after or serve it until they exit (calling `settled` first)."""

_state = {"owned": False, "paused": False}
"""Whether `for_command` tuned this process (it is the command line's own), and whether it turned
the collector off, for `settled` to turn it back on."""


def for_command(args: Sequence[str]) -> None:
    """Turns the cyclic collector off for a command of `BUILDERS` (`args`: the command line's
    arguments), for the command line's own process only (never from a library call).

    Building a cassette's hundreds of thousands of dicts triggers collections that walk
    everything built so far, again and again, and a cassette holds no reference cycles: the
    collector costs time and frees nothing. A command that serves the cassette turns it back
    on when it starts serving (`settled`); the others end soon after the build.
    """
    if args and args[0] in BUILDERS:
        _state["owned"] = True
        if gc.isenabled():
            gc.disable()
            _state["paused"] = True


def settled() -> None:
    """Moves every object alive now out of the cyclic collector's sight (`gc.freeze`), for a
    process that serves one cassette until it exits: the cassette and its index stay alive to
    the end, yet each full collection walked them all. A replay served from an index file keeps
    the messages it parses, which brings full collections on, so the server calls it again as
    they pile up. Turns the collector back on when `for_command` turned it off. Does nothing in
    a process `for_command` did not tune (an in-process replay: the process is the user's)."""
    if not _state["owned"]:
        return
    gc.freeze()
    if _state["paused"]:
        _state["paused"] = False
        gc.enable()


def trimmed(data: bytes) -> bytes:
    """`data` in a buffer of its own size, for bytes that are kept.

    orjson returns its output in the buffer it wrote it into, which it does not shrink (from
    orjson 3.12; home-assistant/core#181240 found the same): a short key kept as orjson returns
    it holds a whole buffer, and an index of many keys held many times their size.
    """
    return bytes(memoryview(data))
