"""Writing an index file: a cassette's first read (`first.first_read`) kept for the replays after.

Every event as read, each message cut down to its kind and where its line is; then the pairing
the first read made (which messages make each exchange), so that a replay from the index file
does not pair again, which would read every message; then what the replay index reads of each
request (`mcptape.replay.prepared.Plan`), so that indexing reads none. Nothing is parsed again
but the lines of batches and of invalid messages, whose kinds no `Item` tells.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from mcptape._version import __version__
from mcptape.cassette.lazy import LazyEvent
from mcptape.cassette.model import Event, Kind, Source
from mcptape.pairing import Exchange, Item, LazyItem, LazyProgress, Session
from mcptape.replay.encoded import PROGRESS, rewrite_kind
from mcptape.replay.prepared import IndexedCassette, Plan
from mcptape.wire.jsonrpc import MessageType, classify

from . import location
from .layout import CODES, LAYOUT, NOTHING, PROGRESS_CODE, Columns, Rows

WORTH = 0.5
"""The share of the cassette's bytes that must be on server lines for an index to pay: with
fewer, the index file says so, and every replay reads the cassette in one pass (a request's
key is about as long as the request: an index file of a cassette of big requests would be as
long too). Every message is lazy, short ones too (measured: even for the bench's lines of
150-200 bytes, a skeleton and an offset were cheaper to read and to hold than the message; a
kind and an offset are less)."""


def write_index(index: Path, cas: IndexedCassette, size: int) -> None:
    """Writes the index file of a cassette's first read (`cas`, of a file of `size` bytes), or
    nothing when it cannot be written."""
    if cas.pairing is None or cas.plan is None:
        return
    events, _, session = cas.pairing
    worth = server_bytes(events, size) >= WORTH * size
    parts: list[Any] = []
    if worth:
        made = rows(events, session, cas.plan)
        if made is None:
            return
        parts = made
    meta = {
        "layout": LAYOUT,
        "mcptape": __version__,
        "code": location.code_stamp(),
        "size": size,
        "header": cas.header.to_json(),
        "truncated": _truncated(cas),
        "lines": list(cas.lines.items()),
        "events": len(events) if worth else None,
        "exchanges": len(session.exchanges) if worth else None,
    }
    _write(index, [meta, *parts])


def server_bytes(events: list[Event], size: int) -> int:
    """About how many of the file's bytes are on server lines: from each server message's line
    to the next message's (or the file's end)."""
    total, last, server = 0, None, Source.SERVER
    for ev in events:
        if type(ev) is LazyEvent:
            at = ev._offset
            if last is not None:
                total += at - last
            last = at if ev.src is server else None
    return total + (size - last if last is not None else 0)


def _truncated(cas: IndexedCassette) -> list[int] | None:
    """[file line, events read] of the truncated last line the first read dropped (None: there
    was none): the file's last line, counted on from the last message's."""
    if cas.truncated is None:
        return None
    last = next((e for e in reversed(cas.events) if type(e) is LazyEvent), None)
    if last is None:
        raise OSError("no message to count the truncated line from")
    fd, at = last._source.fd, last._offset
    rest = os.pread(fd, max(os.fstat(fd).st_size - at, 0), at)
    return [last.line + rest.count(b"\n"), len(cas.events)]


def _write(index: Path, parts: list[Any]) -> None:
    """Writes `parts` one a line into `index` (a temporary file renamed over it), each as JSON
    but bytes, as they are (the keys: JSON already, which has no newline)."""
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        tmp = index.with_name(f".{index.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            # each written as made: orjson's buffer (see `_perf.trimmed`) reused
            for part in parts:
                f.write(part if type(part) is bytes else orjson.dumps(part))
                f.write(b"\n")
        os.replace(tmp, index)
        location.prune(index.parent, "*.idx")
    except (OSError, TypeError, orjson.JSONEncodeError):
        with contextlib.suppress(OSError, UnboundLocalError):
            tmp.unlink(missing_ok=True)


def rows(events: list[Event], session: Session, plan: Plan) -> list[Any] | None:
    """The index file's lines after the first: the events' columns and rows (`event_rows`), the
    pairing's (`pairing_rows`), the plan's (`plan_rows`); None when they do not line up."""
    kinds = _kinds(session)
    made = event_rows(events, kinds)
    if made is None:
        return None
    full, columns = made
    pairing = pairing_rows(session, events, kinds)
    planned = plan_rows(plan)
    if pairing is None or planned is None:
        return None
    return [*columns, *full, *pairing[0], pairing[1], *planned]


def _kinds(session: Session) -> dict[int, int]:
    """id(event) -> the code (`code`) of the message of each lazy event that is not a batch, as
    its item says (an event without one: a batch, or an invalid message, is read again)."""
    out: dict[int, int] = {}
    for item in _items(session):
        if isinstance(item, LazyItem) and item.pos == -1:
            out[id(item.event)] = PROGRESS_CODE if type(item) is LazyProgress else CODES[item.type]
    return out


def _items(session: Session) -> list[Item]:
    """Every item of `session` (some more than once)."""
    out: list[Item] = []
    for x in session.exchanges:
        out.append(x.request)
        if x.response is not None:
            out.append(x.response)
        out += x.items
    out += [i for _, i in session.unsolicited]
    out += [i for pair in session.replies for i in pair]
    out += session.orphans
    return out


def event_rows(events: list[Event], kinds: dict[int, int]) -> Rows | None:
    """The index file's rows of `events`; `kinds` becomes id(event) -> the number of its first
    message's `Item` (every message of the lazy events numbered in order, a batch's one after
    another, as `reading.cassette_of` makes their items). None when an event is not where the
    first read put it.

    Most events are messages and nothing more: of each of those, its offset and seq (each as
    its step from the one before), t and kind (`layout.TYPES`), in four columns, `[k, line]` for the `k`th of them when its file line is
    not `seq + 1`, and the `k` of each the client sent (`Columns`). Every other event is a row
    of its own: [place, file line, offset, lazy, its fields]; a lazy one (a message: a batch,
    or one with HTTP metadata or redactions) has, for its message, the kind of each of its
    messages: what its `Item`s are made of when the index is read. Columns, read in a few
    `orjson.loads` and built without `Event.__init__`, open an index file in about half the
    time a row per event took (`docs/performance.md`)."""
    full: list[list[Any]] = []
    columns: Columns = ([], [], [], [], [], [])
    offsets, seqs, ts, codes, apart, clients = columns
    last = (0, 0)
    n = 0
    client = Source.CLIENT
    for at, ev in enumerate(events):
        if type(ev) is not LazyEvent:
            if ev.kind is Kind.MESSAGE and ev.src is not None:
                return None
            full.append([at, 0, 0, 0, ev.seq, ev.t, ev.kind, ev.src, ev.msg, ev.text, ev.b64,
                         ev.size, ev.http, ev.info, ev.redacted])  # fmt: skip
            continue
        msg: Any = kinds.get(id(ev))
        if msg is None:  # a batch, or an invalid message: read again
            whole = ev.peek()
            msg = [code(m) for m in whole] if type(whole) is list else code(whole)
        kinds[id(ev)] = n
        n += len(msg) if type(msg) is list else 1
        seq, offset, line = ev.where()
        if (
            type(msg) is int
            and (ev.text, ev.b64, ev.size, ev.http, ev.info) == NOTHING
            and not ev.redacted
        ):
            if line != seq + 1:
                apart.append([len(offsets), line])
            if ev.src is client:
                clients.append(len(offsets))
            offsets.append(offset - last[0])  # (steps: `lazy.plain_messages`)
            seqs.append(seq - last[1])
            last = (offset, seq)
            ts.append(ev.t)
            codes.append(msg)
            continue
        full.append([at, line, offset, 1, seq, ev.t, ev.kind, ev.src, msg, ev.text, ev.b64,
                     ev.size, ev.http, ev.info, ev.redacted])  # fmt: skip
    return full, columns


def code(msg: Any) -> int:
    """A message's code in an index file: its place in `TYPES`, or `PROGRESS_CODE` for a
    notification the replay rewrites as progress (what a client that asked for none skips; the
    engine plays no client message, so a client's progress is skipped all the same)."""
    typ = classify(msg)
    if typ is MessageType.NOTIFICATION and rewrite_kind(msg) == PROGRESS:
        return PROGRESS_CODE
    return CODES[typ]


def pairing_rows(
    session: Session, events: list[Event], first: dict[int, int]
) -> tuple[list[list[Any]], dict[str, Any]] | None:
    """`session` for an index file: its exchanges in `EXCHANGE_COLUMNS` columns (index, request,
    response, how many items, the items, session, protocol version, retry_of, HTTP exchange),
    their items by number (`first`: id(event) -> the number of its first message's item,
    `event_rows`): a request's as its step from the one before, the others' from their
    request's, small numbers, which Python does not allocate when they are read (nor a list an
    exchange: the items one after another); each session and protocol version as its place
    among the distinct ones (`_distinct`); then the
    unsolicited messages, the replies to them and the orphans (an invalid message with its
    event's place and its message). None when an item is not one of the lazy events' messages."""
    invalid = MessageType.INVALID

    def number(item: Item) -> int:
        pos = item.pos if isinstance(item, LazyItem) else None
        if pos is None:
            raise LookupError
        return first[id(item.event)] + max(pos, 0)

    try:
        columns = _exchange_columns(session.exchanges, number)
        odd = [i for i in session.orphans if i.type is invalid]
        place = {id(ev): k for k, ev in enumerate(events)} if odd else {}
        rest = {
            "unsolicited": [[before, number(i)] for before, i in session.unsolicited],
            "replies": [[number(a), number(b)] for a, b in session.replies],
            "orphans": [
                [place[id(i.event)], i.msg] if i.type is invalid else number(i)
                for i in session.orphans
            ],
        }
    except (KeyError, LookupError):
        return None
    return columns, rest


def _exchange_columns(xs: list[Exchange], number: Callable[[Item], int]) -> list[list[Any]]:
    """The `EXCHANGE_COLUMNS` columns of exchanges `xs` (`pairing_rows`), each item's number
    `number` of it."""
    requests = [number(x.request) for x in xs]
    paired = list(zip(xs, requests, strict=True))
    return [
        [x.index for x in xs],
        [n - last for n, last in zip(requests, [0, *requests], strict=False)],
        [None if x.response is None else number(x.response) - n for x, n in paired],
        [len(x.items) for x in xs],
        [number(i) - n for x, n in paired for i in x.items],
        _distinct([x.session for x in xs]),
        _distinct([x.protocol_version for x in xs]),
        [x.retry_of for x in xs],
        [x.http_exchange for x in xs],
    ]


def _distinct(values: list[Any]) -> list[Any]:
    """[the distinct values, each value's place among them]: what repeats in every exchange,
    read without a string each."""
    places: dict[Any, int] = {}
    at = [places.setdefault(v, len(places)) for v in values]
    return [list(places), at]


def plan_rows(plan: Plan) -> list[Any] | None:
    """`plan` for an index file, in `PLAN_COLUMNS` lines: the methods; the length of each key
    (-1: none); the keys one after another, as they are (JSON, which has no newline: orjson
    reading them as strings of a list peaked at many times the line's size); what each
    client declared, as a place in the last line, the declarations, each written once however
    many requests share it. None when a key has a newline."""
    places: dict[int, int] = {}
    declarations: list[dict[str, Any]] = []
    declared = []
    for d in plan.declared:
        place = places.get(id(d))
        if place is None:
            place = places[id(d)] = len(declarations)
            declarations.append(d)
        declared.append(place)
    keys = [k for k in plan.keys if k is not None]
    joined = b"".join(keys)
    if b"\n" in joined:  # (never: orjson writes no newline)
        return None
    return [
        plan.methods,
        [-1 if k is None else len(k) for k in plan.keys],
        joined,
        declared,
        declarations,
    ]
