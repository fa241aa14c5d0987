"""A big cassette's first replay reads it in one pass (`mcptape.replay.cache.first`): the same
events, pairing and index as reading it whole, the same errors for a bad line, and every
message left in the file until played."""

from __future__ import annotations

import copy
import os
import pickle
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import Cassette, load
from mcptape.cassette import format as cassette_format
from mcptape.cassette.lazy import LazyEvent, LineSource
from mcptape.cassette.model import Kind, Source
from mcptape.errors import CassetteError
from mcptape.pairing import Item, Session, pair
from mcptape.replay import cache
from mcptape.replay.cache import first, location, open_for_replay, writing
from mcptape.replay.engine import ReplayEngine, Send
from mcptape.replay.index import ReplayIndex
from mcptape.replay.prepared import IndexedCassette, Plan, paired, parsed_lines
from tests.conftest import ROOT
from tests.test_sidecar import (
    INIT,
    _everything_pairing_meets,
    answers,
    call,
    result,
    write_cassette,
)


def read(path: Path) -> IndexedCassette | None:
    return first.first_read(LineSource(os.open(path, os.O_RDONLY), str(path)), path)


def shown(item: Item | None) -> Any:
    return None if item is None else (item.src, item.type, item.msg, item.event.seq)


@pytest.fixture(autouse=True)
def no_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPTAPE_INDEX_CACHE", "0")


def plan_of(cassette: Cassette) -> Plan:
    """The `Plan` of the cassette's pairing as the default policy indexes it: the reference the
    first read's plan is held to."""
    index = ReplayIndex(cassette)
    count = len(index.session.exchanges)
    keys: list[bytes | None] = [None] * count
    declared: list[dict[str, Any]] = [{}] * count  # (read only; an entry's own where it has one)
    for entry in index.entries:
        keys[entry.exchange.index] = entry.key
        declared[entry.exchange.index] = entry.declared
    return Plan(index.session, index.methods, keys, declared)


def indexed(cassette: Cassette, session: Session, plan: Plan | None) -> IndexedCassette:
    """`cassette` with the pairing and plan made of its events."""
    return IndexedCassette(
        cassette.header,
        cassette.events,
        cassette.path,
        cassette.warnings,
        cassette.truncated,
        cassette.lines,
        (cassette.events, len(cassette.events), session),
        plan,
    )


def test_the_first_read_is_what_load_and_pair_make(tmp_path: Path) -> None:
    """Every bundled cassette (batches, HTTP metadata, stderr, redactions, both eras) and one of
    every case pairing meets: the same events, pairing and plan."""
    paths = sorted((ROOT / "cassettes").rglob("*.jsonl"))
    assert len(paths) >= 10
    for path in [*paths, _everything_pairing_meets(tmp_path)]:
        whole = load(path)
        cas = read(path)
        if cas is None:  # an older format: migrated in memory, read whole
            continue
        assert parsed_lines(cas) == 0
        assert (cas.header, cas.lines, cas.warnings, cas.truncated) == (
            whole.header,
            whole.lines,
            whole.warnings,
            whole.truncated,
        ), path
        assert [e.to_json() for e in cas.events] == [e.to_json() for e in whole.events], path
        mine, theirs = paired(cas), pair(whole.events)
        assert [(x.index, shown(x.request), shown(x.response), [shown(i) for i in x.items], x.session,
                 x.protocol_version, x.retry_of, x.http_exchange) for x in mine.exchanges] == [
            (x.index, shown(x.request), shown(x.response), [shown(i) for i in x.items], x.session,
             x.protocol_version, x.retry_of, x.http_exchange) for x in theirs.exchanges], path  # fmt: skip
        assert [(n, shown(i)) for n, i in mine.unsolicited] == [
            (n, shown(i)) for n, i in theirs.unsolicited
        ]
        assert [(shown(a), shown(b)) for a, b in mine.replies] == [
            (shown(a), shown(b)) for a, b in theirs.replies
        ]
        assert [shown(i) for i in mine.orphans] == [shown(i) for i in theirs.orphans], path
        assert [e.seq for e in mine.others] == [e.seq for e in theirs.others]
        # an unsolicited server request is the same item as the one its answer pairs with
        asked = {id(i) for _, i in mine.unsolicited}
        assert all(id(a) in asked for a, _ in mine.replies)
        assert cas.plan is not None
        plan = plan_of(indexed(whole, theirs, None))
        assert cas.plan.methods == plan.methods, path
        entries = ReplayIndex(indexed(whole, theirs, None)).entries
        for entry in entries:
            at = entry.exchange.index
            assert cas.plan.keys[at] in (None, plan.keys[at]), path
            assert cas.plan.declared[at] == plan.declared[at], path


def test_a_first_replay_plays_from_the_file(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "big.jsonl", 3_000)
    cas = open_for_replay(path)
    assert isinstance(cas, IndexedCassette)
    assert sum(type(e) is LazyEvent for e in cas.events) == 6_003  # every message
    index = ReplayIndex(cas)
    assert parsed_lines(cas) == 1  # the recorded initialize result
    assert answers(index, INIT, call(7))[1] == result(7)
    assert parsed_lines(cas) == 3


def _broken(tmp_path: Path, line: int, content: bytes) -> Path:
    path = write_cassette(tmp_path / "big.jsonl", 3_000)
    lines = path.read_bytes().split(b"\n")
    lines[line - 1] = content
    path.write_bytes(b"\n".join(lines))
    return path


@pytest.mark.parametrize(
    "content",
    [
        b'{"seq": 3, "kind": "message", "from": "client", "msg": {"jsonrpc"',  # not JSON
        b'{"kind": "message", "from": "client", "msg": {}}',  # no seq
        b'{"seq": 40, "t": 0.1, "kind": "message", "from": "nobody", "msg": {}}',  # no such source
        b'{"seq": 40, "t": "soon", "kind": "message", "from": "client", "msg": {}}',
        b"[1, 2]",
    ],
)
def test_a_bad_line_gives_the_error_load_gives(tmp_path: Path, content: bytes) -> None:
    path = _broken(tmp_path, 41, content)
    with pytest.raises(CassetteError) as expected:
        load(path)
    with pytest.raises(CassetteError) as got:
        open_for_replay(path)
    assert str(got.value) == str(expected.value)
    assert ":41:" in str(got.value)


def test_a_bad_header_gives_the_error_load_gives(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "big.jsonl", 3_000)
    head, rest = path.read_bytes().split(b"\n", 1)
    for header in (b"", b"{}", b"nope", orjson.dumps({**orjson.loads(head), "transport": 3})):
        path.write_bytes(header + b"\n" + rest)
        with pytest.raises(CassetteError) as expected:
            load(path)
        with pytest.raises(CassetteError) as got:
            open_for_replay(path)
        assert str(got.value) == str(expected.value)


def test_a_truncated_last_line_is_dropped_with_the_warning_load_gives(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "big.jsonl", 3_000, end=False)
    path.write_bytes(path.read_bytes() + b'{"seq": 99999, "t": 1.0, "ki')
    whole, cas = load(path), open_for_replay(path)
    assert isinstance(cas, IndexedCassette)
    assert cas.truncated == whole.truncated is not None
    assert cas.warnings == whole.warnings
    assert len(cas.events) == len(whole.events)


def _played(cas: Any, requests: list[Any]) -> list[Any]:
    """Everything an engine on `cas` sends for each of `requests`, in turn."""
    engine = ReplayEngine(ReplayIndex(cas))
    return [[o.msg for o in engine.receive(r) if isinstance(o, Send)] for r in requests]


def _asked(path: Path) -> list[Any]:
    """Every message the recorded clients sent (a batch as it was), and a call never recorded."""
    sent = [e.msg for e in load(path).events if e.kind is Kind.MESSAGE and e.src is Source.CLIENT]
    return [*sent, call(10**6)]


def test_the_second_replay_writes_the_index_from_its_one_pass_and_the_third_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPTAPE_INDEX_CACHE")
    monkeypatch.setenv("MCPTAPE_CACHE_DIR", str(tmp_path / "cache"))
    path = write_cassette(tmp_path / "big.jsonl", 6_000)
    requests = [INIT, call(7), call(3), call(7), call(10**6)]
    first_answers = _played(open_for_replay(path), requests)

    def no_whole_read(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the cassette was parsed whole")

    with monkeypatch.context() as m:
        m.setattr(cache, "loads", no_whole_read)
        m.setattr(cassette_format, "loads", no_whole_read)
        second = open_for_replay(path)
    assert isinstance(second, IndexedCassette)
    assert parsed_lines(second) == 0  # one pass, every message left in the file
    (idx,) = (tmp_path / "cache").rglob("*.idx")  # written by the second replay
    with monkeypatch.context() as m:
        m.setattr(cache, "first_read", lambda *a: pytest.fail("read the cassette, not its index"))
        third = open_for_replay(path)
    assert isinstance(third, IndexedCassette) and parsed_lines(third) == 0
    assert first_answers[1][0] == result(7)
    assert _played(second, requests) == _played(third, requests) == first_answers


def test_a_first_read_and_the_replays_from_its_index_file_answer_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every bundled cassette and one of every case pairing meets, every message lazy: what an
    engine answers to each request its client recorded is the same from the first read, from
    the replay that writes the index file and from one that reads it."""
    monkeypatch.delenv("MCPTAPE_INDEX_CACHE")
    monkeypatch.setenv("MCPTAPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache, "MIN_BYTES", 0)
    monkeypatch.setattr(writing, "WORTH", 0)
    paths = sorted((ROOT / "cassettes").rglob("*.jsonl"))
    for path in [*paths, _everything_pairing_meets(tmp_path)]:
        requests = _asked(path)
        replays = [open_for_replay(path) for _ in range(3)]
        if not isinstance(replays[0], IndexedCassette):  # an older format: read whole
            continue
        assert all(any(type(e) is LazyEvent for e in cas.events) for cas in replays), path
        assert (tmp_path / "cache" / "index" / location.index_name(path.read_bytes())).exists()
        whole = _played(load(path), requests)
        assert [_played(cas, requests) for cas in replays] == [whole] * 3, path


def test_a_lazy_event_copied_or_changed_is_the_event_load_reads(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "big.jsonl", 3_000)
    whole, cas = load(path), read(path)
    assert cas is not None
    assert [copy.copy(e) for e in cas.events] == whole.events
    assert pickle.loads(pickle.dumps(cas.events[5])) == whole.events[5]
    ev = cas.events[7]
    assert isinstance(ev, LazyEvent)
    ev.seq = -3  # a seq and an offset kept together: each changes alone
    assert (ev.seq, ev.msg) == (-3, whole.events[7].msg)
    assert ev._replace(seq=8) == whole.events[7]
