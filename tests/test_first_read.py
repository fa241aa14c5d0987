"""A big cassette's first replay reads it in one pass (`mcptape.replay.cache.first`): the same
events, pairing and index as reading it whole, the same errors for a bad line, and every
message left in the file until played."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load
from mcptape.cassette.lazy import LazyEvent, LineSource
from mcptape.errors import CassetteError
from mcptape.pairing import Item, pair
from mcptape.replay.cache import first, open_for_replay
from mcptape.replay.cache import writing as _writing  # noqa: F401 (the cache's modules loaded)
from mcptape.replay.index import ReplayIndex, plan_of
from mcptape.replay.prepared import IndexedCassette, indexed, paired, parsed_lines
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
