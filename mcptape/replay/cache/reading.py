"""Reading an index file: the cassette's events (each message lazy), its pairing and its `Plan`.

Written by `mcptape.replay.cache.writing` from a first read, of lines checked as `load` checks them, and named by the bytes
they were read from: what it says is not checked again, but every line must be there, of the
layout and the code that wrote it (`layout.LAYOUT`, `location.code_stamp`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from mcptape._version import __version__
from mcptape.cassette import cut_short, truncated_warning
from mcptape.cassette.lazy import LineSource, lazy_event, plain_messages
from mcptape.cassette.model import _KINDS, _SOURCES, Event, Header, Kind
from mcptape.pairing import Exchange, Item, Session, lazy_item, lazy_items
from mcptape.replay.prepared import IndexedCassette, Plan
from mcptape.wire.jsonrpc import MessageType, classify

from . import location
from .layout import EXCHANGE_COLUMNS, KINDS_OF, LAYOUT, PROGRESS_CODE


def from_index(index: Path, path: Path, source: LineSource) -> IndexedCassette | bool | None:
    """The cassette from its index file, its messages lazy; False when the index says the
    cassette is best read in one pass every time (no index pays); None when there is none fit
    to use (none yet, unreadable, corrupt, cut short, another layout or mcptape)."""
    try:
        with open(index, "rb") as f:
            meta = orjson.loads(f.readline())
            if (
                not isinstance(meta, dict)
                or meta.get("layout") != LAYOUT
                or meta.get("mcptape") != __version__
                or meta.get("code") != location.code_stamp()
            ):
                return None
            with contextlib.suppress(OSError):
                os.utime(index)  # used: kept longer
            if meta.get("events") is None:  # not worth an index: read in one pass
                return False
            return cassette_of(meta, f, path, source)
    except (OSError, orjson.JSONDecodeError, KeyError, ValueError, TypeError, IndexError):
        return None


def cassette_of(
    meta: dict[str, Any], rows: Any, path: Path, source: LineSource
) -> IndexedCassette | None:
    """The cassette of an index file's rows, one a line (written by `writing.write_index` from lines
    checked as `load` checks them, and named by the bytes they were read from: not checked
    again), with its
    pairing; None when there are not as many as the first line says."""
    name = str(path)
    lines = iter(rows)  # one at a time: the rows are never all in memory with the events
    events, items, others = _events_of(meta, lines, source)
    session = _pairing_of(meta["exchanges"], lines, events, items, others)
    if session is None:
        return None
    plan = _plan_of(session, lines)
    if next(lines, None) is not None:
        return None
    cut = meta["truncated"]
    truncated = truncated_warning(name, cut[0], cut[1]) if cut else None
    warnings = [truncated] if truncated else []
    warnings.extend(cut_short(name, events))
    header = Header.from_json(meta["header"])
    lines_of = {seq: lineno for seq, lineno in meta["lines"]}
    pairing = (events, len(events), session)
    return IndexedCassette(
        header, events, path, warnings, truncated, lines_of, pairing, plan, source.parsed
    )


def _events_of(
    meta: dict[str, Any], lines: Iterator[bytes], source: LineSource
) -> tuple[list[Event], list[Any], list[Event]]:
    """The events of the next columns and rows (`writing.event_rows`), every message's
    `Item` (numbered as `writing.event_rows` numbers them; None for an invalid one) and the
    events pairing leaves aside."""
    loads_ = orjson.loads
    offsets, seqs, ts, codes, apart, clients = (loads_(next(lines, b"")) for _ in range(6))
    plain = plain_messages(source, offsets, seqs, ts, apart, clients)
    progress = [k for k, c in enumerate(codes) if c == PROGRESS_CODE]
    plain_items = lazy_items(plain, [KINDS_OF[c] for c in codes], progress)
    events: list[Event] = []
    items: list[Any] = []
    others: list[Event] = []
    k = 0
    for _ in range(meta["events"] - len(plain)):  # one row at a time, as it is read
        row = loads_(next(lines, b""))
        upto = k + row[0] - len(events)  # the plain messages before this row's event
        if not k <= upto <= len(plain):
            raise ValueError("an index file row out of place")
        events += plain[k:upto]
        items += plain_items[k:upto]
        k = upto
        _row_event(row, source, events, items, others)
    events += plain[k:]
    items += plain_items[k:]
    if len(events) != meta["events"]:
        raise ValueError("not as many events as the index file says")
    return events, items, others


def _row_event(
    row: list[Any],
    source: LineSource,
    events: list[Event],
    items: list[Any],
    others: list[Event],
) -> None:
    """Appends the event of an index file row and its messages' `Item`s."""
    _, lineno, offset, lazy, seq, t, kind, src, msg, text, b64, size, http, info, redacted = row
    source_ = _SOURCES[src] if src is not None else None
    fields = (seq, t, _KINDS[kind], source_, None if lazy else msg, text, b64, size, http, info, tuple(redacted))  # fmt: skip
    ev = lazy_event(fields, source, offset, lineno) if lazy else Event(*fields)
    events.append(ev)
    if lazy:  # a message: the kind of each of its messages
        assert source_ is not None
        if type(msg) is int:
            items.append(lazy_item(source_, ev, KINDS_OF[msg], -1, msg == PROGRESS_CODE))
        else:  # a batch
            items.extend(
                lazy_item(source_, ev, KINDS_OF[c], pos, c == PROGRESS_CODE)
                for pos, c in enumerate(msg)
            )
    elif ev.kind is not Kind.MESSAGE or source_ is None:
        others.append(ev)
    else:
        for m in msg if type(msg) is list else (msg,):
            typ = classify(m)
            items.append(None if typ is MessageType.INVALID else Item(source_, m, ev, typ))


def _pairing_of(
    count: int, lines: Iterator[bytes], events: list[Event], items: list[Any], others: list[Event]
) -> Session | None:
    """The session of the `count` exchanges' columns and the last row (`writing.pairing_rows`); None
    when the file holds more. A session or protocol version, repeated in every exchange, is one
    string for all of them."""
    loads_ = orjson.loads
    at, request, response, counts, within, sess, version, retry_of, http_exchange = (
        loads_(next(lines, b"")) for _ in range(EXCHANGE_COLUMNS)
    )
    sess, version = ([names[k] for k in places] for names, places in (sess, version))
    columns = (at, request, response, counts, sess, version, retry_of, http_exchange)
    if any(len(column) != count for column in columns) or len(within) != sum(counts):
        return None
    session = Session(others=others)
    found = session.exchanges.append
    req = k = 0
    for i, step, res, n, s, v, retry, hx in zip(*columns, strict=True):
        req += step
        answer = None if res is None else items[req + res]
        inner = [items[req + d] for d in within[k : k + n]]
        k += n
        found(Exchange(i, items[req], answer, inner, s, v, retry, hx))
    rest = loads_(next(lines, b""))
    session.unsolicited = [(before, items[i]) for before, i in rest["unsolicited"]]
    session.replies = [(items[a], items[b]) for a, b in rest["replies"]]
    invalid = MessageType.INVALID
    session.orphans = [
        items[o] if type(o) is int else Item(events[o[0]].src, o[1], events[o[0]], invalid)
        for o in rest["orphans"]
    ]
    if any(x.request is None for x in session.exchanges):
        return None
    return session


def _plan_of(session: Session, lines: Iterator[bytes]) -> Plan:
    """The `Plan` of the next columns (`writing.plan_rows`): each exchange's method, key and the place
    of what its client declared among the declarations. A method is one string for all the
    exchanges that name it."""
    loads_ = orjson.loads
    methods, lengths = loads_(next(lines, b"")), loads_(next(lines, b""))
    joined = next(lines, b"")
    declared, declarations = loads_(next(lines, b"")), loads_(next(lines, b""))
    count = len(session.exchanges)
    if not len(methods) == len(lengths) == len(declared) == count:
        raise ValueError("an index file's plan is not one of its exchanges")
    keys: list[bytes | None] = []
    at = 0
    for n in lengths:
        if n < 0:
            keys.append(None)
        else:
            keys.append(joined[at : at + n])
            at += n
    if at != len(joined) - 1:  # (its newline)
        raise ValueError("an index file's keys are not as long as it says")
    one: dict[str, str] = {}
    return Plan(
        session, [one.setdefault(m, m) for m in methods], keys, [declarations[d] for d in declared]
    )
