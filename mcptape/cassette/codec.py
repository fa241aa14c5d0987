"""The cassette codec: every encoding and decoding of a cassette line goes through here.

What a line may hold is the JSON Schema's to say (`mcptape/schema/cassette-v1.schema.json`, the
source of truth: `tests/test_cassette_codec.py` holds the model's enums and the checkers' tables
equal to it). How a line is written is this module's alone: compact JSON, the keys in the order
of `Header.to_json` and `Event.to_json`, one line per header or event, its newline included.
The recorder's fast path (`message_line`), the session tools' edits (`renumbered`,
`with_session`) and the rewriting commands write through here, and the readers decode a line
with `decode_line`; no other module builds or parses a cassette line itself
(`tests/test_cassette_codec.py` holds them to that too).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import orjson

from mcptape.cassette.model import HEADER_MARKER, Event, Header, Source

DecodeError = orjson.JSONDecodeError
"""What `decode_line` raises for a line that is not JSON (a `ValueError`)."""

decode_line: Callable[[bytes | str], Any] = orjson.loads
"""A line's JSON value, as parsed (raises `DecodeError` when it is not JSON). orjson's own
function, no wrapper around it: the readers call it once a line."""

_dumps = orjson.dumps

SESSION = "session"
"""The `info` member that marks the first event of a session after the first."""

RUN_FIELD = "run"
"""The header field (and `info.session` member) holding a digest of the run that recorded."""


# -- encoding -----------------------------------------------------------------------------------


def header_line(header: Header | dict[str, Any]) -> bytes:
    """The header's line, newline included. A dict is written with its keys as they are ordered
    (a rewrite keeps a header's fields, unknown ones included, in their order)."""
    return _dumps(header if isinstance(header, dict) else header.to_json()) + b"\n"


def event_line(event: Event | dict[str, Any]) -> bytes:
    """The event's line, newline included. A dict (an event line's fields, as `fmt` orders them)
    is written with its keys as they are ordered."""
    return _dumps(event if isinstance(event, dict) else event.to_json()) + b"\n"


_FROM = {src: b'","from":"' + str(src).encode() + b'","msg":' for src in Source}


def message_line(
    seq: int, t: float, src: Source, body: bytes, value: Any, http: dict[str, Any] | None
) -> bytes:
    """A message event's line with `body`, the payload's bytes as they were on the wire, spliced
    in as its `msg`: the recorder's fast path, which stores a message exactly as it was sent and
    does not serialize it again. `body` must be JSON (the recorder just parsed it into `value`).

    The line is `event_line` of the same event but for the message's own spacing and number
    forms. A body spread over several lines (a pretty-printed HTTP body) is written as
    `value` instead: one cassette line holds one event.
    """
    body = body.strip()
    if b"\n" in body or b"\r" in body:
        body = _dumps(value)
    tail = b',"http":' + _dumps(http) + b"}\n" if http is not None else b"}\n"
    # (one copy of a big body: the join)
    head = b'{"seq":%d,"t":%b,"kind":"message' % (seq, _dumps(round(t, 6)))
    return b"".join((head, _FROM[src], body, tail))


# -- the session tools' edits -------------------------------------------------------------------

_HEAD = re.compile(rb'^\{"seq":(\d+),"t":([-+0-9.eE]+),')
"""How every event line mcptape writes starts: its `seq` and `t`."""
_SEQ = re.compile(rb'^\{"seq":\d+')
_SESSION_MARK = re.compile(rb'"session":\{')
_MARK_START = b'"session":{"recorded_at":'
"""How every session mark starts (`with_session` writes it so): counted, it says how many
sessions there are."""


def event_head(line: bytes) -> tuple[int, float] | None:
    """The `seq` and `t` an event line starts with, read without parsing the line (None: the
    line does not start as mcptape writes one)."""
    head = _HEAD.match(line)
    return None if head is None else (int(head[1]), float(head[2]))


def renumbered(line: bytes, seq: int, t: float | None = None) -> bytes | None:
    """The event line `line` (no newline) numbered `seq` (and timed `t`, rounded as every event
    is: None keeps its time), the rest of it byte for byte. None: the line does not start as
    mcptape writes one; write the event anew (`event_line`)."""
    if t is None:
        head = _SEQ.match(line)
        return None if head is None else b'{"seq":%d' % seq + line[head.end() :]
    head = _HEAD.match(line)
    if head is None:
        return None
    return b'{"seq":%d,"t":%b,' % (seq, _dumps(round(t, 6))) + line[head.end() :]


def with_session(line: bytes, marker: dict[str, Any]) -> bytes:
    """The event line `line` (no newline) with `info.session` = `marker` (whose first member is
    `recorded_at`), the rest of it byte for byte when it has no `info`."""
    obj = decode_line(line)
    if "info" in obj:
        event = Event.from_json(obj)
        event.info = {**(event.info or {}), SESSION: marker}
        return event_line(event).rstrip(b"\n")
    info = b',"info":' + _dumps({SESSION: marker})
    cut = line.rfind(b',"redacted":') if "redacted" in obj else len(line) - 1
    return line[:cut] + info + line[cut:]


def session_run(line: bytes) -> str | None:
    """The run that recorded the session an event line starts ("" when its mark names none);
    None when the line starts no session."""
    if _SESSION_MARK.search(line) is None:
        return None  # (most lines: told without parsing them)
    try:
        obj = decode_line(line)
    except DecodeError:
        return None
    info = obj.get("info") if isinstance(obj, dict) else None
    session = info.get(SESSION) if isinstance(info, dict) else None
    if not isinstance(session, dict):
        return None
    run = session.get(RUN_FIELD)
    return run if isinstance(run, str) else ""


def session_marks(data: bytes) -> int:
    """How many session marks the cassette bytes `data` hold (those `with_session` wrote)."""
    return data.count(_MARK_START)


# -- decoding -----------------------------------------------------------------------------------


def header_fields(line: bytes) -> dict[str, Any] | None:
    """A header line's fields, unchecked but for the header marker (None: the line is not JSON
    or not a cassette header). `mcptape.cassette.format` reads a header with its checks."""
    try:
        head = decode_line(line)
    except DecodeError:
        return None
    return head if isinstance(head, dict) and HEADER_MARKER in head else None


# -- reading lines ------------------------------------------------------------------------------

NOT_JSON: Any = object()
"""What `read_lines` gives for the value of a line that is not JSON."""


Line = tuple[int, int, bytes, Any]
"""One line of a cassette as `read_lines` reads it: (its number, where it starts in the file in
bytes, its bytes as in the file, newline included but on a last line without one, its JSON
value or `NOT_JSON`). A plain tuple, not a named one: one is made for every line read."""


def read_lines(lines: Iterable[bytes], lineno: int = 1, offset: int = 0) -> Iterator[Line]:
    """The lines of a cassette that are not blank, parsed, one at a time (`Line`): numbered
    from `lineno` and placed from `offset` (those of the first line `lines` gives). It decides
    nothing: a line that is not JSON comes with `NOT_JSON` (truncated when it is the last one
    and has no newline, else corrupt), and the caller says what that means (`stream` raises;
    `mcptape check` reports it and reads on)."""
    loads_ = decode_line
    for raw in lines:
        start = offset
        offset += len(raw)
        lineno += 1
        if not raw.strip():
            continue
        try:
            obj = loads_(raw)
        except DecodeError:
            obj = NOT_JSON
        yield lineno - 1, start, raw, obj
