"""What the replay tells people: the no-match error (for the client and for stderr) and the
strict-mode report of recorded exchanges that never played. Pure string and dict building.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from mcptape.pairing import Exchange
from mcptape.wire.jsonrpc import error_response

from .index import Miss, Pass, ReplayIndex
from .matcher import Subject, describe, explain_diffs, nearest

NO_MATCH = -32010
"""JSON-RPC error code: the cassette holds no recorded answer for this request."""
EXHAUSTED = -32011
"""JSON-RPC error code: the request was recorded, but every recording of it already played."""


@dataclass(frozen=True, slots=True)
class Hints:
    """How the hints of the no-match error and the strict report name the options.

    A replay started from the command line speaks in flags; one started from Python or from
    the pytest marker speaks in that API's keyword arguments.
    """

    ignore: str = "replay with --ignore {pointer}"
    repeats: str = "replay with --allow-repeats"
    strict: str = "--strict"


CLI_HINTS = Hints()
PYTHON_HINTS = Hints(
    ignore='pass ignore=["{pointer}"] to use_cassette',
    repeats="pass allow_repeats=True to use_cassette",
    strict="strict=True",
)
MARKER_HINTS = Hints(
    ignore='add ignore=["{pointer}"] to @pytest.mark.mcptape',
    repeats="add allow_repeats=True to @pytest.mark.mcptape",
    strict="strict=True",
)


def no_match(
    index: ReplayIndex, pass_: Pass, subject: Subject, miss: Miss, msg_id: Any, hints: Hints = CLI_HINTS
) -> tuple[dict[str, Any], str]:
    """The JSON-RPC error response for an unmatched request, and the one-line text for stderr."""
    what = describe(subject)
    cassette = PurePath(index.cassette.name).name  # the file's name: a client is never told where it lives
    near = nearest(list(pass_.candidates()), subject, index.policy)
    data: dict[str, Any] = {
        "cassette": cassette,
        "request": {"method": subject.method, "params": subject.params},
        "nearest": [n.to_json() for n in near],
    }
    if miss.played:
        code = EXHAUSTED
        times = "once" if miss.played == 1 else f"{miss.played} times"
        message = f"mcptape replay: {what} was recorded {times} and has already been played {times}"
        hint = f"{hints.repeats} to answer it again with the last recording"
        data["reason"] = "exhausted"
        data["played"] = miss.played
    elif miss.rejected:
        code = NO_MATCH
        entry, reasons = miss.rejected[0]
        message = f"mcptape replay: {what} matched recorded line {entry.seq} by key, but a matcher refused it: {'; '.join(reasons)}"
        hint = "check the custom matchers of the match policy"
        data["reason"] = "matcher"
    elif near and near[0].subject.method == subject.method and near[0].diffs and _name(near[0].subject) == _name(subject):
        code = NO_MATCH
        best = near[0]
        message = (
            f"mcptape replay: no recorded answer for {what}: {explain_diffs(best.diffs)}, "
            f"compared with the nearest recorded request (line {best.seq})"
        )
        pointer = best.diffs[0].path
        hint = f"if {pointer} does not matter, {hints.ignore.format(pointer=pointer)}; else record this request"
        data["reason"] = "differs"
    else:
        code = NO_MATCH
        message = f"mcptape replay: {what} was never recorded in {cassette}"
        names = sorted({n for _, s in pass_.candidates(subject.method) if isinstance(n := _name(s), str)})
        if names and isinstance(_name(subject), str):
            message += f" (its {subject.method} requests are for {', '.join(map(repr, names))})"
        hint = "record a session that makes this request"
        data["reason"] = "never recorded"
    data["hint"] = hint
    return error_response(msg_id, code, message, data), f"{message}; {hint}"


def _name(s: Subject) -> Any:
    return s.params.get("name", s.params.get("uri")) if isinstance(s.params, dict) else None


def unplayed_report(cassette: str, unplayed: Sequence[Exchange], hints: Hints = CLI_HINTS) -> str:
    """Strict mode: the recorded requests the client never made, one per line."""
    lines = [f"mcptape replay: {hints.strict}: {len(unplayed)} recorded exchange(s) of {cassette} were never played:"]
    for ex in unplayed:
        seq = ex.request.event.seq
        name = f" {ex.name!r}" if ex.name else ""
        lines.append(f"  line {seq}: {ex.method}{name}")
    return "\n".join(lines)


def unplayed_json(cassette: str, unplayed: Sequence[Exchange]) -> dict[str, Any]:
    """`replay --report`: the recorded requests the client never made, for machines (`mcptape prune`).

    `seq` is the request's line in the cassette (its `seq`), as in `unplayed_report`.
    """
    return {
        "cassette": cassette,
        "unplayed": [{"seq": ex.request.event.seq, "method": ex.method, "name": ex.name} for ex in unplayed],
    }
