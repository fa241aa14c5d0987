"""A big cassette opened for replay from its index file: each message parsed when played.

A replay plays a few of a big cassette's messages, and needs of the rest only what indexing
reads: which messages make each exchange, and each request's method and matching key. A
replay of a cassette of at least `MIN_BYTES` reads it whole, as `load` does, the first two
times; the second writes an index file into mcptape's cache: every event as read, but each
message cut down to its kind (`MessageType`) and where its line is; then the cassette's pairing
(`mcptape.pairing.pair`: which messages make each exchange), so that a replay from it does not
pair again, which would read every message; then what the replay index reads of each request
(`mcptape.replay.index.Plan`: its method, its key under the default match policy, what its
client had declared), so that indexing reads none. Later replays of the same bytes read the
index instead, and each message is read from the cassette, by offset, when it is first played
(`mcptape.lazy`).

The index file is named by the cassette's SHA-1 and size, so an edited cassette never meets an
old index (a copy of it, under any name, finds its own), and it says which mcptape wrote it. It
lives in `$MCPTAPE_CACHE_DIR` (`off` turns the cache off), else `$XDG_CACHE_HOME/mcptape`, else
`~/.cache/mcptape`; the newest `KEEP` are kept. Failing to read or write it is never an error:
the replay reads the cassette as `load` does.
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from mcptape._perf import paused_gc
from mcptape._version import __version__
from mcptape.cassette import (
    Cassette,
    cut_short,
    loads,
    truncated_warning,
    unreadable_error,
)
from mcptape.lazy import LineSource, lazy_event, plain_messages
from mcptape.model import (
    _KINDS,
    _SOURCES,
    FORMAT_VERSION,
    HEADER_MARKER,
    Event,
    Header,
    Kind,
    Source,
)
from mcptape.pairing import Exchange, Item, Session, lazy_item, lazy_items, pair
from mcptape.replay.encoded import PROGRESS, rewrite_kind
from mcptape.replay.index import Plan, plan_of
from mcptape.wire.jsonrpc import MessageType, classify

MIN_BYTES = 1 << 20
"""Smaller cassettes are read whole every time. Measured (docs/performance.md): from 1 MiB, a
replay from the index answers its first request some 20-25 ms sooner and plays the whole
cassette in about the same time (each message it plays is parsed then, about 2.4 us); at 2 MB,
sooner at every length (the whole cassette in 381 against 416 ms); at 0.5 MB it is even."""

WORTH = 0.5
"""The share of the cassette's bytes that must be on server lines for an index to pay: with
fewer, the index file says so, and the cassette is read whole (a request's key is about as
long as the request: an index file of a cassette of big requests would be as long too).
Every message is lazy, short ones too (measured: even for the bench's lines of 150-200 bytes,
a skeleton and an offset were cheaper to read and to hold than the message; a kind and an
offset are less)."""

KEEP = 16
"""Index files kept in the cache, the most recently used."""

LAYOUT = 7
"""The index file's own layout (with the mcptape version that wrote it, both must match): a
line of what it is about, a line per column and one per event row (`_rows`), a line per column
of the exchanges, one of the rest of the pairing (`_pairing_rows`), and a line per column of
what the replay index reads of each request (`_plan_rows`)."""

_TYPES = tuple(MessageType)
"""A message's kind in an index file: its place in this tuple, or `_PROGRESS`."""
_CODES = {t: i for i, t in enumerate(_TYPES)}
_PROGRESS = len(_TYPES)
"""The code of a notification that a replay rewrites as progress (`LazyProgress`)."""
_KINDS_OF = (*_TYPES, MessageType.NOTIFICATION)
"""A code's `MessageType`."""
_NOTHING = (None,) * 5
"""An event's text, b64, size, http and info when it has none of them."""
_Columns = tuple[
    list[int], list[int], list[int], list[float], list[int], list[list[int]], list[int]
]
"""An index file's columns of plain messages: offsets, lengths, seqs, ts, kinds (each a place
in `_TYPES`, or `_PROGRESS`), the `[k, file line]` of those not on line `seq + 1`, and the `k` of those the
client sent."""
_PLAN_COLUMNS = 5
"""An index file's lines of what the replay index reads of each request (`_plan_rows`)."""
_EXCHANGE_COLUMNS = 8
"""An index file's columns of exchanges (`_pairing_rows`)."""
_Rows = tuple[list[list[Any]], _Columns, int]
"""What `_rows` makes: the rows, the columns, and how many bytes the server's lazy lines hold."""


def cache_dir() -> Path | None:
    """Where index files go; None when `MCPTAPE_CACHE_DIR` is `off` (or empty)."""
    env = os.environ.get("MCPTAPE_CACHE_DIR")
    if env is not None:
        return None if env.strip() in ("", "off") else Path(env) / "index"
    xdg = os.environ.get("XDG_CACHE_HOME")
    try:
        base = Path(xdg) if xdg else Path.home() / ".cache"
    except RuntimeError:  # no home directory to be found: no cache
        return None
    return base / "mcptape" / "index"


def open_for_replay(path: str | os.PathLike[str]) -> Cassette:
    """The cassette at `path`, for a replay: as `load` reads it, but for a big one whose index
    is cached, each message is read from the file when first played.

    Raises:
        CassetteError: as `load` does.
        CassetteVersionError: as `load` does.
    """
    p = Path(path)
    if p.suffix in (".toml", ".json"):
        from mcptape.mocks.file import is_mock_file, open_mock

        if is_mock_file(p):  # a mock file: its declarations over its cassette
            return open_mock(p, open_for_replay)
    cache = cache_dir()
    try:
        fd = os.open(p, os.O_RDONLY)
    except OSError as exc:
        raise unreadable_error(p, exc) from None
    source = LineSource(fd, str(p))  # closes the file when no lazy event needs it any more
    served = False
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if cache is None or st.st_size < MIN_BYTES:
            return loads(_read_all(fd), name=str(p), path=p)
        index = cache / _index_name(fd)  # hashed a piece at a time: not held
        cached = _from_index(index, p, source)
        if isinstance(cached, Cassette):
            served = True
            return cached
        os.lseek(fd, 0, os.SEEK_SET)
        data = _read_all(fd)
    except OSError as exc:
        raise unreadable_error(p, exc) from None
    finally:
        if not served:
            source.close()
    cas = loads(data, name=str(p), path=p)
    if cached is None:  # named by what was read now (the file may have changed since)
        _seen(cache / _index_name(data), data, cas)
    return cas


def _seen(index: Path, data: bytes, cas: Cassette) -> None:
    """A cassette read whole for a replay: the second time its bytes are, their index file is
    written (writing it costs half a reading: a cassette replayed once, as in a CI job with no
    cache kept, never pays it). The first time leaves a mark (`.seen`) instead."""
    mark = index.with_suffix(".seen")
    try:
        if not mark.exists():
            mark.parent.mkdir(parents=True, exist_ok=True)
            mark.touch()
            _prune(mark.parent, "*.seen")
            return
        mark.unlink()
    except OSError:
        return
    with paused_gc():
        _write_index(index, data, cas)


@functools.cache
def code_stamp() -> str:
    """The SHA-1 of the path, size and modification time of each of mcptape's own source files:
    an index file holds what this code made of a cassette (its pairing, its requests' keys), and
    an edited checkout (an editable install keeps its version number) must not meet an index
    file its old code wrote. About 0.5 ms, once a process; sources that cannot be read stamp
    this process alone (no index file is then used, and none is of use later)."""
    import hashlib

    found: list[str] = []
    folders = [Path(__file__).parent]
    try:
        while folders:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False):
                        if entry.name != "__pycache__":
                            folders.append(Path(entry.path))
                    elif entry.name.endswith(".py"):
                        st = entry.stat()
                        found.append(f"{entry.path}:{st.st_size}:{st.st_mtime_ns}")
    except OSError:
        found = [os.urandom(16).hex()]
    found.sort()
    return hashlib.sha1("\n".join(found).encode(), usedforsecurity=False).hexdigest()


def _index_name(content: int | bytes) -> str:
    """The index file's name for the cassette open as file descriptor `content` (read to its end),
    or with these bytes: their SHA-1 and size."""
    import hashlib  # (here: 4 ms of every replay's startup otherwise)

    digest = hashlib.sha1(usedforsecurity=False)
    if isinstance(content, bytes):
        digest.update(content)
        return f"{digest.hexdigest()}-{len(content)}.idx"
    size = 0
    while chunk := os.read(content, 1 << 20):
        digest.update(chunk)
        size += len(chunk)
    return f"{digest.hexdigest()}-{size}.idx"


def _read_all(fd: int) -> bytes:
    """The rest of the file open as `fd` (left open), read in one buffer of its size."""
    with os.fdopen(os.dup(fd), "rb") as f:
        return f.read()


def _from_index(index: Path, path: Path, source: LineSource) -> Cassette | bool | None:
    """The cassette from its index file, its messages lazy; False when the index says
    the cassette is best read whole; None when there is none fit to use (none yet, unreadable,
    corrupt, cut short, another layout or mcptape)."""
    try:
        with open(index, "rb") as f:
            meta = orjson.loads(f.readline())
            if (
                not isinstance(meta, dict)
                or meta.get("layout") != LAYOUT
                or meta.get("mcptape") != __version__
                or meta.get("code") != code_stamp()
            ):
                return None
            with contextlib.suppress(OSError):
                os.utime(index)  # used: kept longer
            if meta.get("events") is None:  # not worth an index: read whole
                return False
            with paused_gc():
                return _cassette_of(meta, f, path, source)
    except (OSError, orjson.JSONDecodeError, KeyError, ValueError, TypeError, IndexError):
        return None


def _cassette_of(
    meta: dict[str, Any], rows: Any, path: Path, source: LineSource
) -> Cassette | None:
    """The cassette of an index file's rows, one a line (written by `_write_index` from lines
    `load` checked, and named by the bytes they were read from: not checked again), with its
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
    return Cassette(
        header, events, path, warnings, truncated, lines_of, (events, len(events), session), plan
    )


def _events_of(
    meta: dict[str, Any], lines: Iterator[bytes], source: LineSource
) -> tuple[list[Event], list[Any], list[Event]]:
    """The events of the next columns and rows (`_rows`), every message's
    `Item` (numbered as `_numbers` numbers them; None for an invalid one) and the events
    pairing leaves aside."""
    loads_ = orjson.loads
    offsets, lengths, seqs, ts, codes, apart, clients = (loads_(next(lines, b"")) for _ in range(7))
    plain = plain_messages(source, offsets, lengths, seqs, ts, apart, clients)
    progress = [k for k, c in enumerate(codes) if c == _PROGRESS]
    plain_items = lazy_items(plain, [_KINDS_OF[c] for c in codes], progress)
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
    _, lineno, offset, length, lazy, seq, t, kind, src, msg, text, b64, size, http, info, redacted = row  # fmt: skip
    source_ = _SOURCES[src] if src is not None else None
    fields = (seq, t, _KINDS[kind], source_, None if lazy else msg, text, b64, size, http, info, tuple(redacted))  # fmt: skip
    ev = lazy_event(fields, source, offset, length, lineno) if lazy else Event(*fields)
    events.append(ev)
    if lazy:  # a message: the kind of each of its messages
        assert source_ is not None
        if type(msg) is int:
            items.append(lazy_item(source_, ev, _KINDS_OF[msg], -1, msg == _PROGRESS))
        else:  # a batch
            items.extend(
                lazy_item(source_, ev, _KINDS_OF[c], pos, c == _PROGRESS)
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
    """The session of the `count` exchanges' columns and the last row (`_pairing_rows`); None
    when the file holds more. A session or protocol version, repeated in every exchange, is one
    string for all of them (as orjson reads them, one string each: 11 MB per 100k exchanges)."""
    loads_ = orjson.loads
    columns = [loads_(next(lines, b"")) for _ in range(_EXCHANGE_COLUMNS)]
    if any(len(column) != count for column in columns):
        return None
    at, request, response, within, sess, version, retry_of, http_exchange = columns
    one: dict[Any, Any] = {}
    sess = [one.setdefault(x, x) for x in sess]
    version = [one.setdefault(x, x) for x in version]
    session = Session(others=others)
    found = session.exchanges.append
    rows = zip(at, request, response, within, sess, version, retry_of, http_exchange, strict=True)
    for i, req, res, inner, s, v, retry, hx in rows:
        answer = None if res is None else items[res]
        found(Exchange(i, items[req], answer, [items[n] for n in inner], s, v, retry, hx))
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
    """The `Plan` of the next columns (`_plan_rows`): each exchange's method, key and the place
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


def _write_index(index: Path, data: bytes, cas: Cassette) -> None:
    """Writes the index file of a cassette read whole (`data`, read as `cas`, whose pairing is
    kept for the replay about to index it); nothing when the cassette was migrated from an older
    format (its lines are not its events) or cannot be."""
    first = data.find(b"\n")
    if first < 0:
        return
    try:
        head = orjson.loads(data[:first])
    except orjson.JSONDecodeError:
        return
    if head.get(HEADER_MARKER) != FORMAT_VERSION:
        return
    made = _rows(data, first + 1, cas.events)
    if made is None:
        return
    rows, columns, lazy_bytes = made
    worth = lazy_bytes >= WORTH * len(data)
    pairing: tuple[list[list[Any]], dict[str, Any]] | None = None
    plan: list[Any] = []
    if worth:
        session = pair(cas.events)
        cas.pairing = (cas.events, len(cas.events), session)
        cas.plan = plan_of(cas)
        pairing = _pairing_rows(session, cas.events)
        if pairing is None:
            return
        planned = _plan_rows(cas.plan)
        if planned is None:
            return
        plan = planned
    # a truncated last line is the file's last (the reader dropped it, with a warning)
    cut = None if cas.truncated is None else [data.count(b"\n") + 1, len(cas.events)]
    meta = {
        "layout": LAYOUT,
        "mcptape": __version__,
        "code": code_stamp(),
        "size": len(data),
        "header": cas.header.to_json(),
        "truncated": cut,
        "lines": list(cas.lines.items()),
        "events": len(cas.events) if worth else None,
        "exchanges": len(session.exchanges) if pairing else None,
    }
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        tmp = index.with_name(f".{index.name}.{os.getpid()}.tmp")
        with open(tmp, "wb") as f:
            newline = orjson.OPT_APPEND_NEWLINE
            f.write(orjson.dumps(meta, option=newline))
            if pairing is not None:
                # each written as made: orjson's buffer (4 KiB a row, see `_perf.trimmed`) reused
                for column in columns:
                    f.write(orjson.dumps(column, option=newline))
                for row in rows:
                    f.write(orjson.dumps(row, option=newline))
                for column in pairing[0]:
                    f.write(orjson.dumps(column, option=newline))
                f.write(orjson.dumps(pairing[1], option=newline))
                for column in plan:  # (the keys as they are, a line of their own)
                    f.write(column if type(column) is bytes else orjson.dumps(column))
                    f.write(b"\n")
        os.replace(tmp, index)
        _prune(index.parent, "*.idx")
    except (OSError, TypeError, orjson.JSONEncodeError):
        with contextlib.suppress(OSError, UnboundLocalError):
            tmp.unlink(missing_ok=True)


def _rows(data: bytes, start: int, events: list[Event]) -> _Rows | None:
    """The index file's rows of `events`, which were read from `data`'s lines after the header
    (blank lines skipped, a truncated last line dropped); None when they do not line up.

    Most events are messages and nothing more: of each of those, its offset, length, seq, t and
    kind (`_TYPES`), in five columns, `[k, line]` for the `k`th of them when its file line is
    not `seq + 1`, and the `k` of each the client sent (`_Columns`). Every other event is a row
    of its own: [place, file line, offset, length, lazy, its fields]; a lazy one (a message:
    a batch, or one with HTTP metadata or redactions) has, for its message, the kind of each of
    its messages: what its `Item`s are made of when the index is read. Columns, read in a few
    `orjson.loads` and built without `Event.__init__`, open an index file in about half the
    time a row per event took (`docs/performance.md`). The third number made is how many bytes
    the server's lines hold (`WORTH`)."""
    full: list[list[Any]] = []
    columns: _Columns = ([], [], [], [], [], [], [])
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
                msg = [_code(m) for m in msg]
            elif (ev.text, ev.b64, ev.size, ev.http, ev.info) == _NOTHING and not ev.redacted:
                if lineno != ev.seq + 1:
                    apart.append([len(offsets), lineno])
                if ev.src is client:
                    clients.append(len(offsets))
                offsets.append(offset)
                lengths.append(stop - offset)
                seqs.append(ev.seq)
                ts.append(ev.t)
                codes.append(_code(msg))
                offset = stop + 1
                continue
            else:
                msg = _code(msg)
        full.append([at, lineno, offset, stop - offset, int(lazy), ev.seq, ev.t, ev.kind, ev.src,
                     msg, ev.text, ev.b64, ev.size, ev.http, ev.info, ev.redacted])  # fmt: skip
        offset = stop + 1
    return full, columns, lazy_bytes


def _code(msg: Any) -> int:
    """A message's code in an index file: its place in `_TYPES`, or `_PROGRESS` for a
    notification the replay rewrites as progress (what a client that asked for none skips; the
    engine plays no client message, so a client's progress is skipped all the same)."""
    typ = classify(msg)
    if typ is MessageType.NOTIFICATION and rewrite_kind(msg) == PROGRESS:
        return _PROGRESS
    return _CODES[typ]


def _numbers(events: list[Event]) -> dict[int, int]:
    """id(event) -> the number of its first message's `Item`: every message of the message events
    that have a source, numbered in order (a batch's one after another), as `_cassette_of` makes
    their items."""
    out: dict[int, int] = {}
    n = 0
    message = Kind.MESSAGE
    for ev in events:
        if ev.kind is message and ev.src is not None:
            out[id(ev)] = n
            n += len(ev.msg) if type(ev.msg) is list else 1
    return out


def _pairing_rows(
    session: Session, events: list[Event]
) -> tuple[list[list[Any]], dict[str, Any]] | None:
    """`session` (paired from `events`) for an index file: its exchanges in `_EXCHANGE_COLUMNS`
    columns (index, request, response, items, session, protocol version, retry_of, HTTP
    exchange), their items by number (`_numbers`); then the unsolicited messages, the replies
    to them and the orphans (an invalid message with its event's place and its item's message).
    None when an item is not one of the events' messages."""
    first = _numbers(events)
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


def _plan_rows(plan: Plan) -> list[Any] | None:
    """`plan` for an index file, in `_PLAN_COLUMNS` lines: the methods; the length of each key
    (-1: none); the keys one after another, as they are (JSON, which has no newline: orjson
    reading 100,000 of them as strings of a list peaked at 14 times the line's size); what each
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


def _prune(directory: Path, pattern: str) -> None:
    """Deletes all but the `KEEP` most recently used files of `pattern` (index files, marks),
    and what writers killed mid-write left an hour ago or more."""
    for f in directory.glob(".*.tmp"):
        with contextlib.suppress(OSError):
            if f.stat().st_mtime < time.time() - 3600:
                f.unlink()
    files = []
    for f in directory.glob(pattern):
        with contextlib.suppress(OSError):
            files.append((f.stat().st_mtime_ns, f))
    files.sort(reverse=True)
    for _, f in files[KEEP:]:
        with contextlib.suppress(OSError):
            f.unlink()
