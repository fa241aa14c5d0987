"""The event-stream parser: events come out whole however the bytes are split."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptape.wire.sse import SseEvent, SseParser, SseTooLarge, serialize

STREAM = (
    b": keep-alive\n\n"
    b"id: 7\nevent: endpoint\ndata: /messages/?session_id=abc\n\n"
    b"event: message\r\ndata: {\"a\":1}\r\n\r\n"
    b"data: line one\ndata: line two\nretry: 1500\n\n"
    b"id: \ndata: \n\n"
)
WANT = [
    SseEvent(comment="keep-alive"),
    SseEvent(data="/messages/?session_id=abc", event="endpoint", id="7"),
    SseEvent(data='{"a":1}', event="message"),
    SseEvent(data="line one\nline two", retry=1500),
    SseEvent(data="", id=""),
]


def parse(chunks: list[bytes]) -> list[SseEvent]:
    p = SseParser()
    out = []
    for c in chunks:
        out.extend(p.feed(c))
    return out


def test_whole_stream() -> None:
    assert parse([STREAM]) == WANT


def test_split_at_every_offset() -> None:
    for i in range(len(STREAM) + 1):
        assert parse([STREAM[:i], STREAM[i:]]) == WANT, i


def test_bare_cr_line_ends() -> None:
    # A CR at the very end may be half of a CRLF, so the parser waits for the next byte.
    got = parse([b"data: a\r\rdata: b\r", b"\r", b":x\n"])
    assert got == [SseEvent(data="a"), SseEvent(data="b"), SseEvent(comment="x")]


def test_unfinished_event_is_not_dispatched() -> None:
    assert parse([b"data: half"]) == []


def test_too_large_raises() -> None:
    p = SseParser(max_event=100)
    with pytest.raises(SseTooLarge):
        p.feed(b"data: " + b"x" * 200)


def test_big_event_in_many_chunks_is_linear() -> None:
    body = b"data: " + b"x" * 2_000_000 + b"\n\n"
    chunks = [body[i : i + 4096] for i in range(0, len(body), 4096)]
    (ev,) = parse(chunks)
    assert len(ev.data) == 2_000_000


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.text(alphabet=st.characters(blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)), max_size=30),
                          st.one_of(st.none(), st.text(alphabet="abc", min_size=1, max_size=5))), max_size=6),
       st.integers(1, 7))
def test_serialize_then_parse_round_trips(items: list[tuple[str, str | None]], step: int) -> None:
    events = [SseEvent(data=d, event=e) for d, e in items]
    wire = b"".join(serialize(e) for e in events)
    chunks = [wire[i : i + step] for i in range(0, len(wire), step)]
    assert parse(chunks) == events
