"""What the replay tells people: the no-match error (for the client and for stderr) and the
report of recorded exchanges that never played. Pure.

`UnplayedReport` is that report as a value: `--strict` prints its `text()`, `--report FILE`
writes its `to_json()`, and `mcptape prune --unused-from RUN_LOG` reads either back
(`UnplayedReport.find_all`), so the text's format and its reader live here, side by side.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from pathlib import PurePath
from typing import Any, NamedTuple

import orjson

from mcptape.cassette import Cassette
from mcptape.keys import parse_pointer, request_key
from mcptape.pairing import Exchange
from mcptape.wire.jsonrpc import error_response

from .index import Miss, Pass, ReplayIndex
from .matcher import MAX_DIFFS, Near, Subject, bounded, describe, explain_diffs, nearest

NO_MATCH = -32010
"""JSON-RPC error code: the cassette holds no recorded answer for this request."""
EXHAUSTED = -32011
"""JSON-RPC error code: the request was recorded, but every recording of it already played."""


class Hints(NamedTuple):
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
    index: ReplayIndex,
    pass_: Pass,
    subject: Subject,
    miss: Miss,
    msg_id: Any,
    hints: Hints = CLI_HINTS,
) -> tuple[dict[str, Any], str]:
    """The JSON-RPC error response for an unmatched request, and the one-line text for stderr."""
    what = describe(subject)
    cassette = client_name(index.cassette)
    near = nearest(list(pass_.candidates()), subject, index.policy)
    data: dict[str, Any] = {
        "cassette": cassette,
        "request": {"method": subject.method, "params": bounded(subject.params)},
        "nearest": [{**n.to_json(), "line": index.cassette.line_of(n.seq)} for n in near],
    }
    told = ""  # (what stderr says instead of `message`, when it names the file)
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
        line = index.cassette.line_of(entry.seq)
        message = f"mcptape replay: {what} matched recorded line {line} by key, but a matcher refused it: {'; '.join(reasons)}"
        hint = "check the custom matchers of the match policy"
        data["reason"] = "matcher"
    elif (
        near
        and near[0].subject.method == subject.method
        and near[0].diffs
        and _name(near[0].subject) == _name(subject)
    ):
        code = NO_MATCH
        best = near[0]
        message = (
            f"mcptape replay: no recorded answer for {what}: {explain_diffs(best.diffs)}, "
            f"compared with the nearest recorded request (line {index.cassette.line_of(best.seq)})"
        )
        pointer = _ignorable(index, pass_, subject, best)
        if pointer is not None:
            hint = f"if {pointer} does not matter, {hints.ignore.format(pointer=pointer)}; else record this request"
        else:
            hint = "ignoring any one of these fields would still match no recording: record this request"
        data["reason"] = "differs"
    else:
        code = NO_MATCH
        message = f"mcptape replay: {what} was never recorded in {cassette}"
        names = sorted(
            {n for _, s in pass_.candidates(subject.method) if isinstance(n := _name(s), str)}
        )
        its = ""
        if names and isinstance(_name(subject), str):
            its = f" (its {subject.method} requests are for {', '.join(map(repr, names))})"
        message += its
        told = f"mcptape replay: {what} was never recorded in {index.cassette.name}{its}"
        hint = "record a session that makes this request"
        data["reason"] = "never recorded"
    data["hint"] = hint
    return error_response(msg_id, code, message, data), f"{told or message}; {hint}"


def client_name(cassette: Cassette) -> str:
    """How what a client is told names the cassette: its file's name. A client is never told
    where the file lives (a directory can say whose machine, whose project); the operator's
    stderr names the whole path."""
    return PurePath(cassette.name).name


def _ignorable(index: ReplayIndex, pass_: Pass, subject: Subject, best: Near) -> str | None:
    """The first of `best`'s differing paths that, ignored alone, gives the request the key of a
    recorded one (its method's recordings compared with that path left out of both), or None."""
    recorded = [rec for _, rec in pass_.candidates(subject.method)]
    for diff in best.diffs[:MAX_DIFFS]:
        path = parse_pointer(diff.path)
        if not path:
            continue  # the whole params differ: no one member to ignore
        mine = _key_without(subject, path)
        if any(_key_without(rec, path) == mine for rec in recorded):
            return diff.path
    return None


def _key_without(subject: Subject, path: tuple[str, ...]) -> bytes:
    return request_key({"method": subject.method, "params": subject.params}, (path,))


def _name(s: Subject) -> Any:
    return s.params.get("name", s.params.get("uri")) if isinstance(s.params, dict) else None


_STRICT = "|".join(sorted({re.escape(h.strict) for h in (CLI_HINTS, PYTHON_HINTS, MARKER_HINTS)}))
_HEADLINE = re.compile(
    rf"mcptape replay: (?:{_STRICT}): \d+ recorded exchange\(s\) of (.+?) were never played:"
)
_ITEM = re.compile(r"""\bline (\d+): (\S+)(?: ('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"))?""")


class UnplayedReport(NamedTuple):
    """One replay session's recorded requests that it never played."""

    cassette: str
    unplayed: tuple[tuple[int, str, str | None], ...]
    """(the request's file line, method, tool/prompt name or resource URI), in cassette order.
    The file line is the one `check` cites and an editor shows (the header is line 1)."""

    @classmethod
    def of(cls, cassette: Cassette, unplayed: Sequence[Exchange]) -> UnplayedReport:
        return cls(
            cassette.name,
            tuple((cassette.line_of(ex.request.event.seq), ex.method, ex.name) for ex in unplayed),
        )

    def text(self, hints: Hints = CLI_HINTS) -> str:
        """What strict mode prints: a headline (naming the option as `hints` do), then one line per
        request (`line SEQ: METHOD 'NAME'`)."""
        lines = [
            f"mcptape replay: {hints.strict}: {len(self.unplayed)} recorded exchange(s) of {self.cassette} were never played:"
        ]
        lines.extend(
            f"  line {seq}: {method}{f' {name!r}' if name else ''}"
            for seq, method, name in self.unplayed
        )
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """What `--report FILE` appends, for machines; `line` is the request's file line."""
        return {
            "cassette": self.cassette,
            "unplayed": [{"line": ln, "method": m, "name": n} for ln, m, n in self.unplayed],
        }

    @classmethod
    def from_json(cls, obj: Any) -> UnplayedReport | None:
        """The report a `to_json()` object holds; None for any other value.

        A report written before mcptape gave file lines numbered the requests by their `seq`
        (one less than the file line in a cassette a recorder wrote): it is read as `seq + 1`.
        """
        if not isinstance(obj, dict) or not isinstance(obj.get("unplayed"), list):
            return None
        items = []
        for u in obj["unplayed"]:
            line = _line_of(u) if isinstance(u, dict) else None
            if line is not None:
                items.append((line, str(u.get("method", "")), u.get("name")))
        return cls(str(obj.get("cassette", "")), tuple(items))

    @classmethod
    def find_all(cls, text: str) -> list[UnplayedReport]:
        """Every report in a run log: `to_json()` output (an object, a list, or JSON lines) or the
        `text()` that `--strict` (and `UnplayedExchangesError`) prints, amid any other output."""
        try:
            whole = orjson.loads(text)
        except orjson.JSONDecodeError:
            whole = None
        if isinstance(whole, (dict, list)):
            return [
                r
                for obj in (whole if isinstance(whole, list) else [whole])
                if (r := cls.from_json(obj)) is not None
            ]
        reports: list[UnplayedReport] = []
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i].strip()
            i += 1
            if line.startswith("{"):
                try:
                    report = cls.from_json(orjson.loads(line))
                except orjson.JSONDecodeError:
                    report = None
                if report is not None:
                    reports.append(report)
                continue
            m = _HEADLINE.search(line)
            if m is None:
                continue
            items = _items(line[m.end() :])
            while i < len(lines) and (more := _items(lines[i])):
                items += more
                i += 1
            reports.append(cls(m.group(1), tuple(items)))
        return reports


def _line_of(item: dict[str, Any]) -> int | None:
    for key, add in (("line", 0), ("seq", 1)):
        value = item.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value + add
    return None


def _items(text: str) -> list[tuple[int, str, str | None]]:
    """The `line SEQ: METHOD 'NAME'` items of one line of `UnplayedReport.text()`."""
    out = []
    for m in _ITEM.finditer(text):
        name = m.group(3)
        if name is not None:
            try:
                name = str(ast.literal_eval(name))
            except (ValueError, SyntaxError):
                name = name[1:-1]
        out.append((int(m.group(1)), m.group(2), name))
    return out
