"""Stdio pacing: a response that follows progress is written only once the client has read the
progress, and its last byte only once the client has read the rest, on a pipe and on a socket pair
(what Node gives a child's stdout), never on a file."""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson
import pytest

from mcptape.replay.pacing import Pacer, kind_of, unread_probe

NOTE = b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}\n'
LOG = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"x"}}\n'
ANSWER = b'{"jsonrpc":"2.0","id":1,"result":{}}\n'

Ends = tuple[Callable[[int], bytes], int, str]
"""A read function on the client's end, the server's fd, and "pipe" or "socketpair"."""


@pytest.fixture(params=["pipe", "socketpair"])
def ends(request: pytest.FixtureRequest) -> Iterator[Ends]:
    if request.param == "pipe":
        r, w = os.pipe()
        yield (lambda n: os.read(r, n)), w, "pipe"
        os.close(r)
        os.close(w)
    else:
        client, server = socket.socketpair()
        yield client.recv, server.fileno(), "socketpair"
        client.close()
        server.close()


def answer_writes(kind: str, after: bytes = b"") -> list[bytes]:
    """How a response after progress is written: in two parts on a socket, whose reads can take
    what is written while they run; whole on a pipe, whose reads cannot (pacing.py)."""
    return [ANSWER + after] if kind == "pipe" else [ANSWER[:-1], ANSWER[-1:] + after]


def send(pacer: Pacer, *lines: bytes) -> bool:
    """`lines` through the pacer, each with the message it carries."""
    return pacer.send(list(lines), [orjson.loads(line) for line in lines])


def writer(fd: int, writes: list[bytes]) -> Callable[[bytes], bool]:
    def write(data: bytes) -> bool:
        writes.append(data)
        try:
            os.write(fd, data)
        except OSError:  # the client's end is closed
            return False
        return True

    return write


def test_a_response_after_progress_comes_in_a_later_read(ends: Ends) -> None:
    read, fd, kind = ends
    writes: list[bytes] = []
    pacer = Pacer.on(fd, writer(fd, writes), limit=30.0)  # never runs out in this test
    sending = threading.Thread(target=send, args=(pacer, NOTE, NOTE, ANSWER))
    sending.start()
    reads = [read(1 << 16)]
    while sum(map(len, reads)) < len(NOTE + NOTE + ANSWER):
        reads.append(read(1 << 16))
    sending.join(timeout=30)
    assert b"".join(reads) == NOTE + NOTE + ANSWER
    # no read carries progress and then a whole line more (the answer)
    assert [r for r in reads if r[r.rfind(b"progress") :].count(b"\n") > 1] == []
    assert writes == [NOTE + NOTE, *answer_writes(kind)]


def test_the_last_byte_of_a_response_after_progress_waits_until_the_rest_is_read() -> None:
    """A socket counts a message read while the read that took it may still take more: the
    response's last byte goes only once the client has read the rest, so it cannot complete the
    response in the read that carried the progress."""
    events: list[tuple[str, bytes | int]] = []
    queued = 0

    def write(data: bytes) -> bool:
        nonlocal queued
        events.append(("write", data))
        queued += len(data)
        return True

    def unread() -> int:  # the client reads everything the first time it is asked about
        nonlocal queued
        events.append(("unread", queued))
        left, queued = queued, 0
        return left

    assert send(Pacer(write, unread, limit=30.0, split=True), NOTE, ANSWER, LOG)
    assert events == [
        ("write", NOTE),
        ("unread", len(NOTE)),
        ("unread", 0),
        ("write", ANSWER[:-1]),
        ("unread", len(ANSWER) - 1),
        ("unread", 0),
        ("write", ANSWER[-1:] + LOG),
    ]


def test_responses_without_progress_before_them_go_in_one_write(ends: Ends) -> None:
    read, fd, _ = ends
    writes: list[bytes] = []
    pacer = Pacer.on(fd, writer(fd, writes), limit=30.0)
    assert send(pacer, ANSWER, LOG, ANSWER, NOTE)
    assert writes == [ANSWER + LOG + ANSWER + NOTE]


def test_what_pacing_tells_apart() -> None:
    assert kind_of({"jsonrpc": "2.0", "id": 1, "result": {}}) == "response"
    assert kind_of({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}}) == "response"
    assert kind_of([{"jsonrpc": "2.0", "id": 1, "result": {}}]) == "response"
    assert (
        kind_of({"jsonrpc": "2.0", "method": "notifications/progress", "params": {}}) == "progress"
    )
    assert kind_of({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}) == "other"
    assert kind_of({"jsonrpc": "2.0", "id": 0, "method": "elicitation/create"}) == "other"
    assert kind_of(b"garbage") == "other"


def test_a_client_that_does_not_read_gets_the_response_after_the_limit_and_no_more_waits(
    ends: Ends,
) -> None:
    read, fd, kind = ends
    writes: list[bytes] = []
    pacer = Pacer.on(fd, writer(fd, writes), limit=0.01)
    assert send(pacer, NOTE, ANSWER)  # nobody reads: the wait runs out
    assert writes == [NOTE, *answer_writes(kind)]
    del writes[:]
    assert send(pacer, NOTE, ANSWER)  # still unread: no more waits
    assert writes == [NOTE, *answer_writes(kind)]
    got = b""
    while len(got) < 2 * len(NOTE + ANSWER):
        got += read(1 << 16)
    assert got == (NOTE + ANSWER) * 2


def test_a_client_that_closed_its_end_is_not_waited_for() -> None:
    r, w = os.pipe()
    try:
        writes: list[bytes] = []
        pacer = Pacer.on(w, writer(w, writes), limit=30.0)
        assert send(pacer, NOTE)
        os.close(r)  # the client goes away without reading
        started = time.monotonic()
        assert not send(pacer, ANSWER)  # the write fails at once: EPIPE
        assert time.monotonic() - started < 10  # not the 30 s limit
        assert writes == [NOTE, ANSWER]
    finally:
        os.close(w)


def test_a_file_cannot_say_what_was_read_so_nothing_waits(tmp_path: Path) -> None:
    with (tmp_path / "out").open("wb") as f:
        assert unread_probe(f.fileno()) is None
        writes: list[bytes] = []
        assert send(Pacer.on(f.fileno(), writer(f.fileno(), writes)), NOTE, ANSWER)
    assert (tmp_path / "out").read_bytes() == NOTE + ANSWER
    assert writes == [NOTE + ANSWER]
