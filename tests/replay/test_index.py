"""The replay index and passes over it: FIFO per key, repeats, fresh passes, policies."""

from __future__ import annotations

from mcptape.replay import matcher as m
from mcptape.replay.index import Entry, Miss, ReplayIndex
from mcptape.replay.matcher import MatchPolicy, Subject
from tests.replay.tape import HANGUP, LEGACY_INIT, call, err, ok, req, tape

CASSETTE = tape(
    *LEGACY_INIT,
    ("c", call(2, "add", {"a": 1})), ("s", ok(2, {"n": "first"})),
    ("c", call(3, "add", {"a": 1})), ("s", ok(3, {"n": "second"})),
    ("c", call(4, "add", {"a": 2})), ("s", ok(4, {"n": "other"})),
    ("c", req(5, "ping")), ("s", ok(5, {})),
)  # fmt: skip


def played(index: ReplayIndex, found: Entry | Miss) -> object:
    assert isinstance(found, Entry), found
    return found.exchange.result["n"]


def subject(index: ReplayIndex, a: int, msg_id: int = 99) -> Subject:
    return index.subject(call(msg_id, "add", {"a": a}))


def test_each_recording_plays_once_in_recorded_order_per_key() -> None:
    index = ReplayIndex(CASSETTE)
    p = index.new_pass()
    assert played(index, p.take(subject(index, 2))) == "other"
    assert played(index, p.take(subject(index, 1))) == "first"
    assert played(index, p.take(subject(index, 1))) == "second"
    miss = p.take(subject(index, 1))
    assert isinstance(miss, Miss) and miss.played == 2


def test_repeats_replay_the_last_recording_when_allowed() -> None:
    index = ReplayIndex(CASSETTE)
    p = index.new_pass(allow_repeats=True)
    results = [played(index, p.take(subject(index, 1))) for _ in range(4)]
    assert results == ["first", "second", "second", "second"]


def test_never_recorded_is_a_miss_with_no_plays() -> None:
    index = ReplayIndex(CASSETTE)
    miss = index.new_pass().take(subject(index, 3))
    assert isinstance(miss, Miss) and miss.played == 0


def test_a_new_pass_starts_from_the_top_and_the_index_is_shared() -> None:
    index = ReplayIndex(CASSETTE)
    first = index.new_pass()
    first.take(subject(index, 1))
    assert played(index, index.new_pass().take(subject(index, 1))) == "first"
    assert [e.exchange.name for e in first.unplayed()] == ["add", "add"]


def test_initialize_and_ping_are_not_indexed() -> None:
    index = ReplayIndex(CASSETTE)
    assert [e.subject.method for e in index.entries] == ["tools/call"] * 3
    assert len(index.initialize) == 1 and index.legacy and not index.modern


def test_ignored_pointer_merges_keys() -> None:
    index = ReplayIndex(CASSETTE, MatchPolicy(ignore=("/arguments/a",)))
    p = index.new_pass()
    assert [played(index, p.take(subject(index, 7))) for _ in range(3)] == [
        "first",
        "second",
        "other",
    ]


def test_values_redacted_at_record_time_do_not_take_part() -> None:
    cas = tape(
        ("c", call(1, "login", {"user": "u", "token": "[REDACTED]"})),
        ("s", ok(1, {"n": "in"})),
        redacted={0: ("/params/arguments/token",)},
    )
    index = ReplayIndex(cas)
    assert (
        played(
            index,
            index.new_pass().take(
                index.subject(call(9, "login", {"user": "u", "token": "s3cret"}))
            ),
        )
        == "in"
    )


def test_extra_matchers_filter_the_queue_in_order() -> None:
    def odd_id(rec: Subject, got: Subject) -> str | None:
        return None if rec.msg["id"] % 2 else "even id"

    index = ReplayIndex(CASSETTE, MatchPolicy(matchers=(m.method, m.params, odd_id)))
    p = index.new_pass()
    assert played(index, p.take(subject(index, 1))) == "second"
    miss = p.take(subject(index, 1))
    assert isinstance(miss, Miss) and [r for _, r in miss.rejected] == [["even id"]]


def test_without_the_params_matcher_candidates_are_the_method_in_order() -> None:
    index = ReplayIndex(CASSETTE, MatchPolicy(matchers=(m.method, m.name)))
    p = index.new_pass()
    assert [played(index, p.take(subject(index, 42))) for _ in range(3)] == [
        "first",
        "second",
        "other",
    ]


def test_after_the_client_hung_up_answers_are_played_and_server_requests_are_not() -> None:
    # A server that finishes its work at end of input answers after the client's EOF; the
    # client still reads its stdout, so the answer is played. A request it sends then could
    # not be answered (the client's input is closed), and an error then says the connection
    # closed: neither is played.
    cas = tape(("c", req(1, "tools/list")), ("c", req(2, "tools/call")), HANGUP, ("s", ok(1, {})),
               ("s", req(9, "sampling/createMessage")), ("s", err(2, -32000, "Connection closed")))  # fmt: skip
    index = ReplayIndex(cas)
    answer, closed = (e.exchange.response for e in index.entries)
    assert answer is not None and not index.played_out(answer)
    assert closed is not None and index.played_out(closed)
    items = [
        *(i for ex in index.session.exchanges for i in ex.items),
        *(i for v in index.after.values() for i in v),
    ]
    (late,) = [
        i
        for i in items
        if isinstance(i.msg, dict) and i.msg.get("method") == "sampling/createMessage"
    ]
    assert index.played_out(late)


def test_an_index_holds_its_keys_at_their_size() -> None:
    """orjson hands back its whole write buffer (4 KiB for a short key): an index of 2,000
    requests that kept those held 8 MB of keys; right-sized, well under 1 MB."""
    import tracemalloc

    steps = []
    for i in range(2000):
        steps += [("c", call(10 + i, "add", {"a": i})), ("s", ok(10 + i, {"n": i}))]
    cas = tape(*LEGACY_INIT, *steps)
    tracemalloc.start()
    try:
        index = ReplayIndex(cas)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert len(index.by_key) == 2000
    assert held < 2000 * 1500, f"{held / 2000:.0f} bytes per indexed request"
