"""Writing an index file: a cassette read whole, its pairing and its `Plan`, for the replays after.

Every event as read, each message cut down to its kind and where its line is; then the pairing
(`mcptape.pairing.pair`: which messages make each exchange), so that a replay from it does not
pair again, which would read every message; then what the replay index reads of each request
(`mcptape.replay.prepared.Plan`), so that indexing reads none.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from mcptape._version import __version__
from mcptape.cassette import Cassette
from mcptape.cassette.model import FORMAT_VERSION, HEADER_MARKER, Event, Kind, Source
from mcptape.pairing import Item, Session, pair
from mcptape.replay.encoded import PROGRESS, rewrite_kind
from mcptape.replay.index import plan_of
from mcptape.replay.prepared import Plan, indexed
from mcptape.wire.jsonrpc import MessageType, classify

from . import location
from .layout import CODES, LAYOUT, NOTHING, PROGRESS_CODE, Columns, Rows

WORTH = 0.5
"""The share of the cassette's bytes that must be on server lines for an index to pay: with
fewer, the index file says so, and the cassette is read whole (a request's key is about as
long as the request: an index file of a cassette of big requests would be as long too).
Every message is lazy, short ones too (measured: even for the bench's lines of 150-200 bytes,
a skeleton and an offset were cheaper to read and to hold than the message; a kind and an
offset are less)."""


def write_index(index: Path, data: bytes, cas: Cassette) -> Cassette:
    """Writes the index file of a cassette read whole (`data`, read as `cas`); returns the
    cassette for the replay about to index it (an `IndexedCassette` with the pairing and plan
    made for the file, so that it does not pair again). Writes nothing when the cassette was
    migrated from an older format (its lines are not its events) or cannot be written."""
    first = data.find(b"\n")
    if first < 0:
        return cas
    try:
        head = orjson.loads(data[:first])
    except orjson.JSONDecodeError:
        return cas
    if head.get(HEADER_MARKER) != FORMAT_VERSION:
        return cas
    made = rows(data, first + 1, cas.events)
    if made is None:
        return cas
    full, columns, lazy_bytes = made
    worth = lazy_bytes >= WORTH * len(data)
    parts: list[Any] = []
    exchanges = None
    if worth:
        session = pair(cas.events)
        cas = indexed(cas, session, None)
        plan = plan_of(cas)
        cas = indexed(cas, session, plan)
        pairing = pairing_rows(session, cas.events)
        planned = plan_rows(plan)
        if pairing is None or planned is None:
            return cas
        parts = [*columns, *full, *pairing[0], pairing[1], *planned]
        exchanges = len(session.exchanges)
    # a truncated last line is the file's last (the reader dropped it, with a warning)
    cut = None if cas.truncated is None else [data.count(b"\n") + 1, len(cas.events)]
    meta = {
        "layout": LAYOUT,
        "mcptape": __version__,
        "code": location.code_stamp(),
        "size": len(data),
        "header": cas.header.to_json(),
        "truncated": cut,
        "lines": list(cas.lines.items()),
        "events": len(cas.events) if worth else None,
        "exchanges": exchanges,
    }
    _write(index, [meta, *parts])
    return cas


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


def rows(data: bytes, start: int, events: list[Event]) -> Rows | None:
    """The index file's rows of `events`, which were read from `data`'s lines after the header
    (blank lines skipped, a truncated last line dropped); None when they do not line up.

    Most events are messages and nothing more: of each of those, its offset, length, seq, t and
    kind (`layout.TYPES`), in five columns, `[k, line]` for the `k`th of them when its file line is
    not `seq + 1`, and the `k` of each the client sent (`Columns`). Every other event is a row
    of its own: [place, file line, offset, length, lazy, its fields]; a lazy one (a message:
    a batch, or one with HTTP metadata or redactions) has, for its message, the kind of each of
    its messages: what its `Item`s are made of when the index is read. Columns, read in a few
    `orjson.loads` and built without `Event.__init__`, open an index file in about half the
    time a row per event took (`docs/performance.md`). The third number made is how many bytes
    the server's lines hold (`WORTH`)."""
    full: list[list[Any]] = []
    columns: Columns = ([], [], [], [], [], [], [])
    offsets, lengths, seqs, ts, codes, apart, clients = columns
    offset, lineno, lazy_bytes = start, 1, 0
    find = data.find
    server, client, message = Source.SERVER, Source.CLIENT, Kind.MESSAGE
    for at, ev in enumerate(events):
        while True:
            lineno += 1
            end = find(b"\n", offset)
            stop = len(data) if end < 0 else end
            if data[offset:stop].strip():
                break
            if end < 0:  # no line left for this event
                return None
            offset = end + 1
        lazy = ev.kind is message and ev.src is not None
        msg = ev.msg
        if lazy:
            if ev.src is server:
                lazy_bytes += stop - offset
            if type(msg) is list:
                msg = [code(m) for m in msg]
            elif (ev.text, ev.b64, ev.size, ev.http, ev.info) == NOTHING and not ev.redacted:
                if lineno != ev.seq + 1:
                    apart.append([len(offsets), lineno])
                if ev.src is client:
                    clients.append(len(offsets))
                offsets.append(offset)
                lengths.append(stop - offset)
                seqs.append(ev.seq)
                ts.append(ev.t)
                codes.append(code(msg))
                offset = stop + 1
                continue
            else:
                msg = code(msg)
        full.append([at, lineno, offset, stop - offset, int(lazy), ev.seq, ev.t, ev.kind, ev.src,
                     msg, ev.text, ev.b64, ev.size, ev.http, ev.info, ev.redacted])  # fmt: skip
        offset = stop + 1
    return full, columns, lazy_bytes


def code(msg: Any) -> int:
    """A message's code in an index file: its place in `TYPES`, or `PROGRESS_CODE` for a
    notification the replay rewrites as progress (what a client that asked for none skips; the
    engine plays no client message, so a client's progress is skipped all the same)."""
    typ = classify(msg)
    if typ is MessageType.NOTIFICATION and rewrite_kind(msg) == PROGRESS:
        return PROGRESS_CODE
    return CODES[typ]


def numbers(events: list[Event]) -> dict[int, int]:
    """id(event) -> the number of its first message's `Item`: every message of the message events
    that have a source, numbered in order (a batch's one after another), as `reading.cassette_of` makes
    their items."""
    out: dict[int, int] = {}
    n = 0
    message = Kind.MESSAGE
    for ev in events:
        if ev.kind is message and ev.src is not None:
            out[id(ev)] = n
            n += len(ev.msg) if type(ev.msg) is list else 1
    return out


def pairing_rows(
    session: Session, events: list[Event]
) -> tuple[list[list[Any]], dict[str, Any]] | None:
    """`session` (paired from `events`) for an index file: its exchanges in `EXCHANGE_COLUMNS`
    columns (index, request, response, items, session, protocol version, retry_of, HTTP
    exchange), their items by number (`numbers`); then the unsolicited messages, the replies
    to them and the orphans (an invalid message with its event's place and its item's message).
    None when an item is not one of the events' messages."""
    first = numbers(events)
    place = {id(ev): i for i, ev in enumerate(events)}

    def number(item: Item) -> int:
        ev = item.event
        base = first[id(ev)]
        if type(ev.msg) is not list:
            if item.msg is not ev.msg:
                raise LookupError
            return base
        for pos, m in enumerate(ev.msg):
            if m is item.msg:
                return base + pos
        raise LookupError

    try:
        xs = session.exchanges
        columns: list[list[Any]] = [
            [x.index for x in xs],
            [number(x.request) for x in xs],
            [None if x.response is None else number(x.response) for x in xs],
            [[number(i) for i in x.items] for x in xs],
            [x.session for x in xs],
            [x.protocol_version for x in xs],
            [x.retry_of for x in xs],
            [x.http_exchange for x in xs],
        ]
        rest = {
            "unsolicited": [[before, number(i)] for before, i in session.unsolicited],
            "replies": [[number(a), number(b)] for a, b in session.replies],
            "orphans": [
                [place[id(i.event)], i.msg] if i.type is MessageType.INVALID else number(i)
                for i in session.orphans
            ],
        }
    except (KeyError, LookupError):
        return None
    return columns, rest


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
