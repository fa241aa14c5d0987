"""The event-stream parser: events come out whole however the bytes are split."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptape.wire.sse import SseEvent, SseParser, SseTooLarge, serialize

STREAM = (
    b": keep-alive\n\n"
    b"id: 7\nevent: endpoint\ndata: /messages/?session_id=abc\n\n"
    b'event: message\r\ndata: {"a":1}\r\n\r\n'
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
    # A CR ends its line at once; an LF after it (here none) would belong to the same line end.
    got = parse([b"data: a\r\rdata: b\r", b"\r", b":x\n"])
    assert got == [SseEvent(data="a"), SseEvent(data="b"), SseEvent(comment="x")]


def test_cr_only_stream_dispatches_without_waiting_for_more() -> None:
    p = SseParser()
    assert p.feed(b'event: message\rdata: {"a":1}\r\r') == [
        SseEvent(data='{"a":1}', event="message")
    ]
    assert p.feed(b"data: b\r") == []
    assert p.feed(b"\r") == [SseEvent(data="b")]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    # "data: a" CR | LF CR LF: one line end, then the blank line; the LF is not a second blank line.
    p = SseParser()
    assert p.feed(b"data: a\r") == []
    assert p.feed(b"\n\r\ndata: b\r\n\r\n") == [SseEvent(data="a"), SseEvent(data="b")]


def test_mixed_line_ends_in_one_stream() -> None:
    wire = b"data: 1\r\n\ndata: 2\r\rdata: 3\n\r\nid: 9\rdata: 4\n\n"
    want = [SseEvent(data="1"), SseEvent(data="2"), SseEvent(data="3"), SseEvent(data="4", id="9")]
    for i in range(len(wire) + 1):
        assert parse([wire[:i], wire[i:]]) == want, i


def test_byte_order_mark_at_the_start_is_skipped() -> None:
    wire = b"\xef\xbb\xbfdata: first\n\ndata: second\n\n"
    want = [SseEvent(data="first"), SseEvent(data="second")]
    assert parse([wire]) == want
    for i in range(1, 5):
        assert parse([wire[:i], wire[i:]]) == want, i
    assert parse([b"\xef", b"\xbb", b"\xbf", b"data: x\n\n"]) == [SseEvent(data="x")]


def test_byte_order_mark_later_is_data() -> None:
    assert parse([b"data: a\n\n\xef\xbb\xbfdata: b\n\n"]) == [SseEvent(data="a")]


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
@given(
    st.lists(
        st.tuples(
            st.text(
                alphabet=st.characters(
                    blacklist_characters="\r\n\x00", blacklist_categories=("Cs",)
                ),
                max_size=30,
            ),
            st.one_of(st.none(), st.text(alphabet="abc", min_size=1, max_size=5)),
        ),
        max_size=6,
    ),
    st.integers(1, 7),
)
def test_serialize_then_parse_round_trips(items: list[tuple[str, str | None]], step: int) -> None:
    events = [SseEvent(data=d, event=e) for d, e in items]
    wire = b"".join(serialize(e) for e in events)
    chunks = [wire[i : i + step] for i in range(0, len(wire), step)]
    assert parse(chunks) == events
