"""`mcptape.skeletons.outline`: one pass and a few arrays tell `prune` and `show --format json`
what pairing the whole cassette tells, in memory that does not grow with the messages."""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from mcptape.cassette import Cassette, dumps, load
from mcptape.cassette.model import Kind
from mcptape.maintenance.commands import events_of
from mcptape.pairing import Session, pair
from mcptape.skeletons import Outline, outline
from mcptape.views import timeline
from tests.reliability.helpers import GOLDEN
from tests.replay.tape import LEGACY_INIT, call, note, ok, tape


def _messages(cas: Cassette, session: Session) -> list[list[set[int]]]:
    """For each event, for each of its messages, the exchanges `pair` filed it under."""
    owner: dict[int, set[int]] = {}
    for ex in session.exchanges:
        for item in (ex.request, *ex.items, *([ex.response] if ex.response else [])):
            owner.setdefault(id(item.msg), set()).add(ex.index)
    out = []
    for ev in cas.events:
        msgs = ev.msg if isinstance(ev.msg, list) else [ev.msg]
        out.append([owner.get(id(m), set()) for m in msgs] if ev.kind is Kind.MESSAGE else [])
    return out


def _batches_and_a_cancel(tmp_path: Path) -> Path:
    steps: list[Any] = [
        *LEGACY_INIT,
        ("c", [call(2, "add", {"a": 1}), call(3, "add", {"a": 2})]),  # a batch of two requests
        ("s", ok(3, {"n": 2})),
        ("c", note("notifications/cancelled", {"requestId": 2})),  # its own exchange, and 2's
        (
            "s",
            [ok(2, {"n": 1}), {"jsonrpc": "2.0", "id": 99, "result": {}}],
        ),  # an answer, an orphan
        ("c", []),
    ]
    path = tmp_path / "batches.jsonl"
    path.write_bytes(dumps(tape(*steps)))
    return path


def _cases(tmp_path: Path) -> list[Path]:
    return [*GOLDEN, _batches_and_a_cancel(tmp_path)]


def test_an_outline_tells_what_pair_builds_for_every_bundled_cassette(tmp_path: Path) -> None:
    assert len(GOLDEN) >= 8
    for path in _cases(tmp_path):
        cas = load(path)
        whole = pair(cas.events)
        got = outline(path)
        exs = whole.exchanges
        assert got.methods == [ex.method for ex in exs], path
        assert got.names == [ex.name for ex in exs], path
        assert list(got.notification) == [ex.is_notification for ex in exs], path
        assert list(got.retry_of) == [-1 if ex.retry_of is None else ex.retry_of for ex in exs]
        assert list(got.line) == [cas.line_of(ex.request.event.seq) for ex in exs], path
        assert timeline.first_uses(got.versions) == timeline.protocol_versions(whole), path
        owners = _messages(cas, whole)
        assert len(got) == len(cas.events), path
        for pos, msgs in enumerate(owners):
            if cas.events[pos].kind is Kind.MESSAGE:
                assert [set(m) for m in got.exchanges_of(pos)] == msgs, (path, pos)
        assert list(timeline.outline_rows(got, cas.events)) == timeline.rows(cas, whole), path
        assert got.header == cas.header and got.warnings == cas.warnings, path


def test_the_batch_case_holds_what_it_is_meant_to(tmp_path: Path) -> None:
    got = outline(_batches_and_a_cancel(tmp_path))
    assert got.methods[2:] == ["tools/call", "tools/call", "notifications/cancelled"]
    cancel, answers, empty = 5, 6, 7  # places: 3 of the handshake, then one event a step
    assert [sorted(m) for m in got.exchanges_of(cancel)] == [
        [2, 4]
    ]  # the request it cancels; its own
    assert got.exchanges_of(answers) == [[2], []]  # the orphan belongs to nothing
    assert got.exchanges_of(empty) == []
    assert got.partner_apart[3, 0][0] == 7 and got.partner_apart[3, 1][0] == 5  # seq = place + 1
    assert got.partner_apart[answers, 0][0] == 4 and got.partner[4] == 4


def _oracle_gone(cas: Cassette, whole: Session, drop: set[int]) -> list[int]:
    """Which events prune drops, told from the whole session: an event whose every message
    belongs to a dropped exchange (or a retry of one), and on HTTP the rest of an HTTP exchange
    all of whose message events went."""
    doomed = drop | {ex.index for ex in whole.exchanges if ex.retry_of in drop}
    owners = _messages(cas, whole)
    gone = [bool(m) and all(o & doomed for o in m) for m in owners]
    http: dict[int, list[bool]] = {}
    for ev, g in zip(cas.events, gone, strict=True):
        if ev.kind is Kind.MESSAGE and ev.http and ev.http.get("exchange") is not None:
            http.setdefault(ev.http["exchange"], []).append(g)
    went = {n for n, flags in http.items() if all(flags)}
    return [
        int(g or bool(ev.http and ev.http.get("exchange") in went))
        for ev, g in zip(cas.events, gone, strict=True)
    ]


@pytest.mark.parametrize("every", [1, 2, 3])
def test_prune_drops_exactly_the_events_of_what_it_drops(tmp_path: Path, every: int) -> None:
    for path in _cases(tmp_path):
        cas = load(path)
        whole = pair(cas.events)
        drop = {ex.index for ex in whole.exchanges if ex.index % every == 0}
        got = outline(path)
        assert list(events_of(got, sorted(drop))) == _oracle_gone(cas, whole, drop), path


def _bulk(path: Path, calls: int) -> Path:
    steps: list[Any] = list(LEGACY_INIT)
    for i in range(calls):
        steps += [
            ("c", call(10 + i, "add", {"a": i, "note": "x" * 200})),
            ("s", note("notifications/message", {"level": "info", "data": "working " * 20})),
            ("s", ok(10 + i, {"content": [{"type": "text", "text": "y" * 300}]})),
        ]
    path.write_bytes(dumps(tape(*steps)))
    return path


def _held(path: Path) -> tuple[Outline, int]:
    tracemalloc.start()
    try:
        got = outline(path)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return got, held


def test_an_outline_holds_a_few_numbers_per_event_not_its_messages(tmp_path: Path) -> None:
    """The skeletons of these 9,000 events, paired, held 640 bytes an event (measured on
    2026-12-03, before the outline); the outline's arrays, lists and shared strings, about 50."""
    small, small_held = _held(_bulk(tmp_path / "small.jsonl", 500))
    big, big_held = _held(_bulk(tmp_path / "big.jsonl", 3_000))
    assert len(big.methods) == 3_002 and big.methods[-1] == "tools/call"
    per_event = (big_held - small_held) / (len(big) - len(small))
    assert per_event < 64, f"{per_event:.0f} bytes held per event"


def test_numbers_beyond_64_bits_are_told_as_they_are(tmp_path: Path) -> None:
    """A hand-edited cassette's `seq` or HTTP exchange may be any JSON integer orjson reads
    (up to 2**64 - 1, and -2**63 is what the array uses for no partner)."""
    cas = tape(
        *LEGACY_INIT,
        ("c", call(2, "add")),
        ("s", ok(2, {})),
        ("c", call(3, "add")),
        ("s", ok(3, {})),
    )
    huge, lowest = 2**64 - 1, -(2**63)
    seqs = {3: huge, 4: lowest, 5: huge - 1}
    events = [ev._replace(seq=seqs.get(pos, ev.seq)) for pos, ev in enumerate(cas.events)]
    events = [
        ev._replace(http={"exchange": huge}) if pos >= 3 else ev for pos, ev in enumerate(events)
    ]
    path = tmp_path / "huge.jsonl"
    path.write_bytes(dumps(Cassette(cas.header, events)))
    whole = load(path)
    got = outline(path)
    assert list(timeline.outline_rows(got, whole.events)) == timeline.rows(
        whole, pair(whole.events)
    )
    assert [r.pair for r in timeline.outline_rows(got, whole.events)][3:7] == [
        lowest,
        huge,
        7,
        huge - 1,
    ]
    assert list(events_of(got, [2])) == [0, 0, 0, 1, 1, 0, 0, 0]
    assert list(events_of(got, [2, 3])) == [
        0,
        0,
        0,
        1,
        1,
        1,
        1,
        1,
    ]  # the end: HTTP exchange 2**64 - 1


def test_an_initialize_takes_the_version_its_answer_names_even_an_empty_one(tmp_path: Path) -> None:
    steps: list[Any] = [
        LEGACY_INIT[0],
        ("s", ok(1, {"protocolVersion": ""})),
        ("c", call(6, "add")),
    ]
    path = tmp_path / "versions.jsonl"
    path.write_bytes(dumps(tape(*steps)))
    whole = load(path)
    assert (
        timeline.first_uses(outline(path).versions)
        == timeline.protocol_versions(pair(whole.events))
        == []
    )
