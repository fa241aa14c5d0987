"""The newline framer: lines come out whole and in order however the bytes are split."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mcptape.wire.ndjson import LineFramer, Oversize

SAMPLE = b'{"jsonrpc":"2.0","id":1,"method":"ping"}\nnot json\n\xff\xfe binary\n[{"a":1},{"b":2}]\n\n{"x":"y"}'


def frame(chunks: list[bytes], max_line: int = 1 << 20) -> list[bytes | Oversize]:
    f = LineFramer(max_line)
    out: list[bytes | Oversize] = []
    for c in chunks:
        out.extend(f.feed(c))
    tail = f.flush()
    if tail is not None:
        out.append(tail)
    return out


def test_split_at_every_offset_gives_the_same_lines() -> None:
    want = SAMPLE.split(b"\n")
    for i in range(len(SAMPLE) + 1):
        assert frame([SAMPLE[:i], SAMPLE[i:]]) == want, i


def test_byte_by_byte() -> None:
    assert frame([bytes([b]) for b in SAMPLE]) == SAMPLE.split(b"\n")


def test_no_trailing_partial_line_when_input_ends_with_newline() -> None:
    f = LineFramer()
    assert f.feed(b"a\nb\n") == [b"a", b"b"]
    assert f.flush() is None


def test_oversize_line_is_reported_by_size_and_framing_recovers() -> None:
    big = b"x" * 5000
    out = frame([b"ok\n", big[:1000], big[1000:] + b"\nafter\n"], max_line=1024)
    assert out[0] == b"ok"
    assert isinstance(out[1], Oversize) and out[1].size == 5000 and out[1].head.startswith(b"xxx")
    assert out[2] == b"after"


def test_oversize_line_in_one_chunk() -> None:
    out = frame([b"y" * 3000 + b"\nz\n"], max_line=100)
    assert isinstance(out[0], Oversize) and out[0].size == 3000
    assert out[1] == b"z"


def test_pending_counts_unfinished_bytes() -> None:
    f = LineFramer()
    f.feed(b"abc")
    assert f.pending == 3


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=40), max_size=12), st.data())
def test_any_chunking_round_trips(lines: list[bytes], data: st.DataObject) -> None:
    lines = [ln.replace(b"\n", b"") for ln in lines]
    stream = b"".join(ln + b"\n" for ln in lines)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=8)))
    chunks, prev = [], 0
    for c in cuts + [len(stream)]:
        chunks.append(stream[prev:c])
        prev = c
    assert frame(chunks) == lines


def test_an_oversize_line_keeps_its_first_bytes_across_chunks() -> None:
    line = bytes(range(256)).replace(b"\n", b"") * 40  # 10,200 bytes, no newline in them
    chunks = [line[i : i + 700] for i in range(0, len(line), 700)]
    out = frame([*chunks[:-1], chunks[-1] + b"\nnext\n"], max_line=5000)
    assert out == [Oversize(len(line), line[:4096]), b"next"]
