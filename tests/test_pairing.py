"""Pairing: a server request outside any client request pairs with the client's answer."""

from __future__ import annotations

import gc

from mcptape.cassette import Cassette, dumps, load
from mcptape.cassette.model import Event, Kind, Source
from mcptape.check import check_bytes
from mcptape.pairing import Exchange, Item, PairingStream, pair
from tests.reliability.helpers import GOLDEN
from tests.replay.tape import LEGACY_INIT, ok, req, tape

AFTER_INITIALIZED = [  # as server-filesystem does: roots/list while nothing is in flight
    *LEGACY_INIT,
    ("s", req(0, "roots/list")),
    ("c", req(2, "tools/list")),
    ("s", ok(2, {"tools": []})),
    ("c", ok(0, {"roots": [{"uri": "file:///work"}]})),  # answered later, wherever it falls
]


def test_a_server_request_in_no_request_pairs_with_the_answer_wherever_it_falls() -> None:
    session = pair(tape(*AFTER_INITIALIZED).events)
    assert session.orphans == []
    ((request, answer),) = session.replies
    assert request.msg["method"] == "roots/list" and answer.msg["result"]["roots"]
    assert [item.msg["method"] for _, item in session.unsolicited] == ["roots/list"]
    tools = session.exchanges[2]
    assert tools.method == "tools/list" and tools.items == [] and tools.response is not None


def test_on_http_the_answer_pairs_by_session_with_a_request_on_the_get_stream() -> None:
    http = {
        3: {"session": "s1", "exchange": 9},  # the GET stream
        4: {"session": "s1", "exchange": 10},  # the client's POST of its answer
        5: {"session": "s2", "exchange": 11},  # another session's answer with the same id
    }
    steps = [
        *LEGACY_INIT,
        ("s", req(0, "roots/list")),
        ("c", ok(0, {"roots": []})),
        ("c", ok(0, {})),
    ]
    session = pair(tape(*steps, http=http).events)
    assert len(session.replies) == 1 and session.replies[0][1].event.http == http[4]
    assert [o.event.http for o in session.orphans] == [http[5]]


def test_check_finds_no_pairing_problem_and_still_finds_an_answer_to_nothing() -> None:
    clean = tape(*AFTER_INITIALIZED)
    broken = tape(*AFTER_INITIALIZED, ("c", ok(0, {"roots": []})))  # a second answer to id 0

    def pairing(cassette: Cassette) -> list[str]:
        report = check_bytes(dumps(cassette))
        return [f.what for f in report.findings if f.check == "pairing"]

    assert pairing(clean) == []
    assert pairing(broken) == ["a response (id 0) that answers no request"]


class _Recorder:
    """A `Watcher` that rebuilds what it is told, as `pair` would have built it."""

    def __init__(self) -> None:
        self.exchanges: list[Exchange] = []
        self.responses: dict[int, Item] = {}
        self.requests: dict[int, Item] = {}
        self.items: dict[int, list[Item]] = {}
        self.outside: list[tuple[int, Item]] = []

    def opened(self, ex: Exchange) -> None:
        self.exchanges.append(ex)
        self.requests[ex.index] = ex.request
        self.items[ex.index] = []

    def added(self, ex: Exchange, item: Item) -> None:
        self.items[ex.index].append(item)

    def answered(self, ex: Exchange) -> None:
        assert ex.response is not None
        self.responses[ex.index] = ex.response

    def unsolicited(self, before: int, item: Item) -> None:
        self.outside.append((before, item))


def _streamed(events: list[Event]) -> tuple[_Recorder, PairingStream]:
    told = _Recorder()
    stream = PairingStream(told)
    for ev in events:
        if ev.kind is Kind.MESSAGE and ev.src is not None:
            stream.add(ev)
    return told, stream


def test_a_pairing_stream_tells_what_pair_builds_for_every_bundled_cassette() -> None:
    assert len(GOLDEN) >= 8
    for path in GOLDEN:
        events = load(path).events
        whole = pair(events)
        told, stream = _streamed(events)
        assert [ex.index for ex in told.exchanges] == [ex.index for ex in whole.exchanges], path
        for ex, got in zip(whole.exchanges, told.exchanges, strict=True):
            assert told.requests[ex.index].msg == ex.request.msg, path
            assert [i.msg for i in told.items[ex.index]] == [i.msg for i in ex.items], path
            answer = told.responses.get(ex.index)
            assert (answer.msg if answer else None) == (ex.response.msg if ex.response else None)
            assert (got.session, got.protocol_version, got.retry_of, got.http_exchange) == (
                ex.session, ex.protocol_version, ex.retry_of, ex.http_exchange,
            ), path  # fmt: skip
        assert [(n, i.msg) for n, i in told.outside] == [(n, i.msg) for n, i in whole.unsolicited]
        assert [i.msg for i in stream.orphans] == [i.msg for i in whole.orphans], path
        assert [(a.msg, b.msg) for a, b in stream.replies] == [
            (a.msg, b.msg) for a, b in whole.replies
        ]


def test_a_pairing_stream_keeps_no_message_of_an_answered_exchange() -> None:
    def call(i: int) -> list[Event]:
        token = {"_meta": {"progressToken": f"t{i}"}}
        return [
            Event(4 * i, 0.0, Kind.MESSAGE, Source.CLIENT, {**req(i, "tools/call"), "params": token}),
            Event(4 * i + 1, 0.0, Kind.MESSAGE, Source.SERVER,
                  {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": f"t{i}", "progress": 1}}),
            Event(4 * i + 2, 0.0, Kind.MESSAGE, Source.SERVER, ok(i, {"content": []})),
        ]  # fmt: skip

    class Forgets:
        def opened(self, ex: Exchange) -> None: ...
        def added(self, ex: Exchange, item: Item) -> None: ...
        def answered(self, ex: Exchange) -> None: ...
        def unsolicited(self, before: int, item: Item) -> None: ...

    stream = PairingStream(Forgets())
    gc.collect()
    before = sum(type(o) is Item for o in gc.get_objects())
    for i in range(1, 5_001):
        for ev in call(i):
            stream.add(ev)
    gc.collect()
    assert sum(type(o) is Item for o in gc.get_objects()) - before <= 1  # (ANSWERED aside)
    late = Event(99_999, 0.0, Kind.MESSAGE, Source.SERVER,
                 {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "t7", "progress": 2}})  # fmt: skip
    told = _Recorder()
    stream = PairingStream(told)
    for ev in [*call(7), late]:
        stream.add(ev)
    assert [i.event.seq for i in told.items[0]] == [
        29,
        99_999,
    ]  # a late message still finds its own
    assert stream.orphans == [] and told.outside == []
