"""Big cassettes replayed from their index file: the server's messages read when played, and
everything else as `load` reads it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape import pairing
from mcptape.cassette import Cassette, dumps, lazy, load
from mcptape.cassette import format as cassette_module
from mcptape.cassette.lazy import LazyEvent
from mcptape.cassette.model import Event, Kind, Source
from mcptape.errors import CassetteError
from mcptape.pairing import Item, LazyItem, LazyProgress, Session, pair
from mcptape.replay import cache as sidecar
from mcptape.replay.cache import location, open_for_replay, writing
from mcptape.replay.encoded import PROGRESS, rewrite_kind
from mcptape.replay.engine import ReplayEngine, Send
from mcptape.replay.index import ReplayIndex
from mcptape.replay.matcher import MatchPolicy, name
from mcptape.replay.prepared import paired, parsed_lines
from mcptape.wire.jsonrpc import MessageType
from tests.conftest import ROOT, mcptape_cmd
from tests.replay.tape import LEGACY_INIT, note, ok, req, tape
from tests.replay.tape import call as tape_call

HEADER = {"mcptape_cassette": 1, "mcptape_version": "0.1.0", "transport": "stdio",
          "target": {"command": ["srv"]}, "recorded_at": "2026-01-01T00:00:00Z", "redaction": {}}  # fmt: skip
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
TEXT = "lorem ipsum dolor " * 40  # a result line of about 800 bytes: read when played


def call(i: int, note: str = "") -> dict[str, Any]:
    args: dict[str, Any] = {"i": i, "note": note} if note else {"i": i}
    return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "read", "arguments": args}}  # fmt: skip


def result(i: int, text: str = TEXT) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": i, "result": {"content": [{"type": "text", "text": f"{i}: {text}"}]}}  # fmt: skip


def write_cassette(path: Path, n: int, text: str = TEXT, end: bool = True, note: str = "") -> Path:
    lines = [orjson.dumps(HEADER)]
    seq = 0

    def event(src: str, msg: Any) -> None:
        nonlocal seq
        seq += 1
        lines.append(orjson.dumps({"seq": seq, "t": seq / 1000, "kind": "message", "from": src, "msg": msg}))  # fmt: skip

    event("client", INIT)
    event("server", {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                                                           "serverInfo": {"name": "srv", "version": "1"}}})  # fmt: skip
    event("client", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(1, n + 1):
        event("client", call(i, note))
        event("server", result(i, text))
    if end:
        lines.append(orjson.dumps({"seq": seq + 1, "t": seq / 1000, "kind": "end"}))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def replayed_twice(path: Path) -> None:
    """The first replay reads a cassette in one pass, every message lazy (`first_read`); the
    second too, and writes its index file from what that pass made."""
    directory = sidecar.cache_dir()
    assert directory is not None
    idx = directory / location.index_name(path.read_bytes())
    for _ in range(2):
        cas = open_for_replay(path)
        assert sum(type(e) is LazyEvent for e in cas.events) == sum(
            e.kind is Kind.MESSAGE and e.src is not None for e in cas.events
        )
    assert idx.exists()


def index_files() -> list[Path]:
    directory = sidecar.cache_dir()
    assert directory is not None
    return sorted(directory.glob("*.idx")) if directory.exists() else []


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPTAPE_CACHE_DIR", str(tmp_path / "cache"))


def answers(index: ReplayIndex, *requests: dict[str, Any]) -> list[Any]:
    engine = ReplayEngine(index)
    out = []
    for request in requests:
        out += [o.msg for o in engine.receive(request) if isinstance(o, Send)]
    return out


def test_a_100k_exchange_cassette_plays_its_first_answer_parsing_three_messages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_cassette(tmp_path / "big.jsonl", 100_000)
    open_for_replay(path)  # read in one pass, every message lazy
    assert index_files() == []  # (a cassette replayed once never pays for an index)
    open_for_replay(path)  # read whole again, and its index file written
    assert len(index_files()) == 1

    def no_whole_read(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the cassette was parsed whole")

    monkeypatch.setattr(sidecar, "loads", no_whole_read)
    monkeypatch.setattr(cassette_module, "loads", no_whole_read)
    cas = open_for_replay(path)
    before = parsed_lines(cas)
    assert sum(type(e) is LazyEvent for e in cas.events) == 200_003  # every message
    index = ReplayIndex(cas)
    assert len(index.entries) == 100_000
    assert parsed_lines(cas) == before + 1  # the recorded initialize result, and no other
    got = answers(index, INIT, call(7))
    assert got[1] == result(7)
    # and the request it matched (the engine compares what was recorded) and its answer
    assert parsed_lines(cas) == before + 3


def _shape(session: Session, events: list[Event]) -> Any:
    """Everything a `Session` says, each item as (its event's place, its message, kind, source),
    and which items are one object (numbered by first sight): `ReplayIndex` keys the answers to
    unsolicited requests by the request's item."""
    place = {id(ev): i for i, ev in enumerate(events)}
    seen: dict[int, int] = {}

    def item(i: Item | None) -> Any:
        if i is None:
            return None
        return (seen.setdefault(id(i), len(seen)), place[id(i.event)], i.msg, i.type, i.src)

    return (
        [
            (
                x.index,
                item(x.request),
                item(x.response),
                [item(i) for i in x.items],
                x.session,
                x.protocol_version,
                x.retry_of,
                x.http_exchange,
            )
            for x in session.exchanges
        ],
        [(before, item(i)) for before, i in session.unsolicited],
        [(item(a), item(b)) for a, b in session.replies],
        [item(i) for i in session.orphans],
        [place[id(ev)] for ev in session.others],
    )


def _everything_pairing_meets(tmp_path: Path) -> Path:
    """Batches both ways, a cancellation filed under two exchanges, progress, an unsolicited
    server request and its answer, an orphan, invalid messages, a stderr line."""
    steps: list[Any] = [
        *LEGACY_INIT,
        (
            "c",
            [
                tape_call(2, "add", {"a": 1}),
                tape_call(3, "add", {"a": 2}, _meta={"progressToken": "p"}),
            ],
        ),
        ("s", note("notifications/progress", {"progressToken": "p", "progress": 1})),
        ("s", ok(3, {"n": 2})),
        ("c", note("notifications/cancelled", {"requestId": 2})),
        ("s", [ok(2, {"n": 1}), {"jsonrpc": "2.0", "id": 99, "result": {}}, 5, {"x": 1}]),
        ("s", req("r1", "roots/list")),
        ("c", ok("r1", {"roots": []})),
        ("c", 7),
        ("s", "not a message"),
        ("c", []),
    ]
    cas = tape(*steps)
    cas.events.insert(5, Event(0, 0.5, Kind.STDERR, Source.SERVER, text="warming up"))
    path = tmp_path / "everything.jsonl"
    data = dumps(Cassette(cas.header, [e._replace(seq=i) for i, e in enumerate(cas.events, 1)]))
    at = data.index(b'{"seq":8,')  # a blank line: every later event one line further down
    path.write_bytes(data[:at] + b"\n" + data[at:])
    return path


def test_the_cassette_opened_from_its_index_is_the_cassette_load_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every bundled cassette (batches, HTTP metadata, stderr, redactions, both eras) and one of
    every case pairing meets, every server message lazy: the same events and the same pairing,
    kept in the index file (a replay from it does not pair again), its items sharing as pair's do."""
    monkeypatch.setattr(sidecar, "MIN_BYTES", 0)
    monkeypatch.setattr(writing, "WORTH", 0)
    paths = sorted((ROOT / "cassettes").rglob("*.jsonl"))
    assert len(paths) >= 10
    for path in [*paths, _everything_pairing_meets(tmp_path)]:
        whole = load(path)
        replayed_twice(path)
        cas = open_for_replay(path)
        lazies = [e for e in cas.events if type(e) is LazyEvent]
        assert lazies, path
        with monkeypatch.context() as m:
            m.setattr(pairing, "pair", lambda *a: pytest.fail("paired again"))
            kept = paired(cas)
            ReplayIndex(cas)
        assert any(type(i) is LazyItem for x in kept.exchanges for i in (x.response, *x.items)), (
            path
        )
        assert _shape(kept, cas.events) == _shape(pair(whole.events), whole.events), path
        assert [e.to_json() for e in cas.events] == [e.to_json() for e in whole.events], path
        assert (cas.header, cas.warnings, cas.lines) == (whole.header, whole.warnings, whole.lines)
        assert _shape(paired(cas), cas.events) == _shape(pair(whole.events), whole.events), path
        assert [e.line for e in lazies] == [whole.line_of(e.seq) for e in lazies]
        for x in kept.exchanges:  # the progress a client that asked for none skips unread
            for i in (*x.items, *([x.response] if x.response else [])):
                said = i.type is MessageType.NOTIFICATION and rewrite_kind(i.msg) == PROGRESS
                assert (type(i) is LazyProgress) == said, (path, i.msg)
        for policy in (None, MatchPolicy(ignore=("/arguments/a",)), MatchPolicy(matchers=(name,))):
            assert _index_shape(ReplayIndex(open_for_replay(path), policy)) == _index_shape(
                ReplayIndex(load(path), policy)
            ), (path, policy)
    assert cas.lines  # (the hand-made one has lines apart from their seq: its index says where)


def _index_shape(index: ReplayIndex) -> Any:
    """Everything a `ReplayIndex` files, each exchange by its index."""
    return (
        index.methods,
        [(e.exchange.index, e.key, e.declared, e.subject) for e in index.entries],
        {k: [e.exchange.index for e in v] for k, v in index.by_key.items()},
        [x.index for x in (*index.initialize, *index.discover, *index.pings)],
        (index.modern, index.legacy, index.hangup, index.redacted, index.notified),
        {k: [i.event.seq for i in v] for k, v in index.after.items()},
        sorted((i.event.seq, i.msg == index.replies[k].msg) for k, i in index.replies.items()),
    )


def test_a_replay_from_the_index_file_reads_no_request_to_index_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default policy's keys and what each recorded client declared are in the index file;
    a policy that keys otherwise (ignored paths) reads the requests, and finds what it ignores."""
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    cas = open_for_replay(path)
    before = parsed_lines(cas)
    index = ReplayIndex(cas)
    assert parsed_lines(cas) == before + 1  # the initialize result
    assert len(index.by_key) == 6_000
    assert answers(index, INIT, call(6_000))[1] == result(6_000)
    cas = open_for_replay(path)
    before = parsed_lines(cas)
    index = ReplayIndex(cas, MatchPolicy(ignore=("/arguments/i",)))
    assert parsed_lines(cas) == before + 6_000 + 1  # the requests it keys, the initialize result
    assert len(index.by_key) == 1
    assert answers(index, INIT, call(9))[1]["result"] == result(1)["result"]  # i is ignored


def test_a_cassette_whose_events_were_changed_is_paired_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    cas = open_for_replay(path)
    assert paired(cas) is paired(cas)
    cas.events.pop()  # the end marker
    assert len(paired(cas).exchanges) == 6_002
    assert paired(cas) is not paired(cas)
    cas = open_for_replay(path)
    cas.events = cas.events[:3]
    assert [x.method for x in paired(cas).exchanges] == ["initialize", "notifications/initialized"]


def test_an_edited_cassette_never_meets_its_old_index(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    data = path.read_bytes()
    path.write_bytes(data.replace(b'"1: lorem', b'"1: LOREM', 1))  # same size, same second
    cas = open_for_replay(path)
    got = answers(ReplayIndex(cas), INIT, call(1))
    assert got[1]["result"]["content"][0]["text"].startswith("1: LOREM")
    open_for_replay(path)
    cas = open_for_replay(path)  # now from the edited cassette's own index
    assert any(type(e) is LazyEvent for e in cas.events)
    assert answers(ReplayIndex(cas), INIT, call(1))[1] == got[1]
    assert len(index_files()) == 2


def test_a_line_changed_in_place_while_replaying_is_an_error_naming_it(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    cas = open_for_replay(path)
    index = ReplayIndex(cas)
    data = bytearray(path.read_bytes())
    at = data.index(b'{"seq":10003,')  # the answer to call 5000, on line 10004: beyond what
    data[at : at + 13] = b'{"seq":10004,'  # reading the first lines read ahead
    with open(path, "r+b") as f:  # in place, as some editors save
        f.write(data)
    with pytest.raises(CassetteError, match=rf"{path}:10004: the cassette changed on disk"):
        answers(index, INIT, call(5000))


def test_a_corrupt_or_foreign_index_file_is_read_past_and_rewritten(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    (idx,) = index_files()
    whole = idx.read_bytes()
    meta, *rest = whole.split(b"\n")
    head = orjson.loads(meta)
    miscounted = [orjson.dumps({**head, "events": head["events"] + d}) for d in (-1, 1)]
    offsets = orjson.loads(rest[0])
    short = orjson.dumps(offsets[:-1])  # a column one short
    odd = [b"\n".join((m, *rest)) for m in miscounted] + [b"\n".join((meta, short, *rest[1:]))]
    # the plan's last lines: the requests' keys one after another, what each client declared
    assert rest[-1] == b"" and rest[-4].startswith(b'{"method":"tools/call"')
    odd.append(b"\n".join((meta, *rest[:-4], rest[-4][:-1], *rest[-3:])))  # a key one byte short
    for junk in (
        b"not json",
        orjson.dumps({"layout": 99}),
        whole[:1000],
        whole[: len(whole) // 2],
        *odd,
    ):
        idx.write_bytes(junk)
        replayed_twice(path)  # read whole, the index file written again by the second
        cas = open_for_replay(path)
        assert any(type(e) is LazyEvent for e in cas.events)
        assert answers(ReplayIndex(cas), INIT, call(3))[1] == result(3)
        assert idx.read_bytes() == whole


def test_an_index_file_written_by_other_code_is_read_past_and_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An editable install keeps its version number while its code changes (a key rule, the
    pairing): its index files are its sources' too (their sizes and times)."""
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    (idx,) = index_files()
    assert orjson.loads(idx.read_bytes().split(b"\n", 1)[0])["code"] == location.code_stamp()
    assert any(type(e) is LazyEvent for e in open_for_replay(path).events)
    monkeypatch.setattr(location, "code_stamp", lambda: "another checkout's")
    replayed_twice(path)  # the old index file unused: read whole, the second time written again
    cas = open_for_replay(path)
    assert any(type(e) is LazyEvent for e in cas.events)
    assert orjson.loads(idx.read_bytes().split(b"\n", 1)[0])["code"] == "another checkout's"
    assert answers(ReplayIndex(cas), INIT, call(3))[1] == result(3)


def test_small_cassettes_are_read_whole_and_cassettes_of_requests_get_no_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = write_cassette(tmp_path / "small.jsonl", 100)
    for _ in range(3):
        assert not any(type(e) is LazyEvent for e in open_for_replay(small).events)
    assert index_files() == []
    # 6 MB, mostly the client's requests: nothing to gain from an index (every replay reads it
    # in one pass, as any cassette never replayed before)
    asks = write_cassette(tmp_path / "asks.jsonl", 10_000, text="x", note=TEXT)
    for _ in range(3):
        assert any(type(e) is LazyEvent for e in open_for_replay(asks).events)
    (idx,) = index_files()
    assert idx.stat().st_size < 1000  # "read it in one pass", not a copy of the cassette
    monkeypatch.setenv("MCPTAPE_CACHE_DIR", "off")
    assert sidecar.cache_dir() is None
    big = write_cassette(tmp_path / "big.jsonl", 6_000)
    for _ in range(3):  # no cache: read in one pass every time, every message lazy
        assert all(type(e) is LazyEvent for e in open_for_replay(big).events[:-1])


def test_without_a_writable_cache_a_big_cassette_is_read_in_one_pass_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("MCPTAPE_CACHE_DIR", str(tmp_path / "file"))  # not a directory
    for _ in range(3):
        cas = open_for_replay(path)
        assert all(type(e) is LazyEvent for e in cas.events[:-1])
        assert answers(ReplayIndex(cas), INIT, call(2))[1] == result(2)
    monkeypatch.delenv("MCPTAPE_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.delenv("HOME")
    monkeypatch.setattr(Path, "home", lambda: (_ for _ in ()).throw(RuntimeError("no home")))
    assert sidecar.cache_dir() is None
    assert all(type(e) is LazyEvent for e in open_for_replay(path).events[:-1])


def test_a_cut_short_cassette_warns_the_same_from_its_index(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", 6_000, end=False)
    with open(path, "ab") as f:
        f.write(b'{"seq": 99999, "t": 1.0, "kind": "mess')
    whole = load(path)
    replayed_twice(path)
    cas = open_for_replay(path)
    assert any(type(e) is LazyEvent for e in cas.events)
    assert cas.warnings == whole.warnings and len(cas.warnings) == 2
    assert cas.truncated == whole.truncated


def test_index_files_beyond_the_newest_are_deleted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(location, "KEEP", 2)
    for n in range(4):
        path = write_cassette(tmp_path / f"c{n}.jsonl", 6_000 + n)
        replayed_twice(path)
    assert len(index_files()) == 2


def test_mcptape_replay_answers_the_same_from_the_index(tmp_path: Path) -> None:
    """The CLI, three times on a 5 MB cassette: the third run is served from the index file."""
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    lines = b"".join(orjson.dumps(m) + b"\n" for m in (INIT, call(11), call(12)))
    env = {**os.environ, "MCPTAPE_CACHE_DIR": str(tmp_path / "cache")}
    cmd = mcptape_cmd("replay", "-q", str(path))
    run = {"input": lines, "capture_output": True, "env": env, "timeout": 120, "check": True}
    runs = [subprocess.run(cmd, **run) for _ in range(3)]  # type: ignore[call-overload]
    assert len(index_files()) == 1
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    out = [orjson.loads(line) for line in runs[2].stdout.splitlines()]
    assert out[1:] == [result(11), result(12)]


def test_lines_are_read_ahead_in_blocks_and_every_line_comes_back_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # lines of every length, some longer than a block, some across a block's end
    lines = [b"x" * (i * 37 % 900) + b"\n" for i in range(3_000)] + [
        b"y" * (lazy.BLOCK + 5) + b"\n"
    ]
    lines += [b"z" * 50 + b"\n"] * 10 + [b"w" * 30]  # the last without its newline
    path = tmp_path / "lines"
    path.write_bytes(b"".join(lines))
    reads = 0
    real = os.pread

    def counted(fd: int, n: int, offset: int) -> bytes:
        nonlocal reads
        reads += 1
        return real(fd, n, offset)

    monkeypatch.setattr(lazy.os, "pread", counted)
    source = lazy.LineSource(os.open(path, os.O_RDONLY), str(path))
    offset = 0
    for line in lines:
        assert source.line(offset) == line.removesuffix(b"\n")
        offset += len(line)
    assert reads <= len(b"".join(lines)) // (lazy.BLOCK // 2)  # a read a block, not a read a line
    assert source.line(0) == lines[0][:-1]  # and back: read again
    source.close()
    with pytest.raises(CassetteError, match="closed"):
        source.line(offset - 80)  # (though it was read ahead)


def test_a_replay_process_takes_its_cassette_out_of_the_collectors_sight(tmp_path: Path) -> None:
    path = write_cassette(tmp_path / "c.jsonl", 200)
    code = (
        "import gc, sys\n"
        "from mcptape._perf import for_command\n"
        "for_command(['replay'])  # what the command line does for its own process\n"
        "from mcptape.cassette import load\n"
        "from mcptape.replay.engine import ReplayConfig\n"
        "from mcptape.replay.server_stdio import serve_stdio\n"
        "cassette = load(sys.argv[1])\n"
        "assert gc.get_freeze_count() == 0\n"
        "serve_stdio(cassette, ReplayConfig(), quiet=True)\n"
        "print(gc.get_freeze_count(), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [*mcptape_cmd()[:1], "-c", code, str(path)],
        input=orjson.dumps(INIT) + b"\n",
        capture_output=True,
        cwd=ROOT,
        check=True,
    )
    assert orjson.loads(done.stdout)["result"]["protocolVersion"] == "2025-11-25"
    assert int(done.stderr.decode().split()[-1]) > 5 * 400  # every event's objects, at least


def test_a_replay_process_takes_the_messages_it_parses_out_of_sight_as_they_pile_up(
    tmp_path: Path,
) -> None:
    """Each full collection walked every message a replay from an index file had parsed and kept
    so far: a process that serves until it exits freezes them every `SETTLE_EVERY` parses."""
    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    code = (
        "import gc, sys\n"
        "from mcptape._perf import for_command\n"
        "for_command(['replay'])  # what the command line does for its own process\n"
        "from mcptape.replay.prepared import parsed_lines\n"
        "from mcptape.replay import server_stdio\n"
        "from mcptape.replay.engine import ReplayConfig\n"
        "from mcptape.replay.cache import open_for_replay\n"
        "server_stdio.SETTLE_EVERY = int(sys.argv[2])\n"
        "cassette = open_for_replay(sys.argv[1])\n"
        "server_stdio.serve_stdio(cassette, ReplayConfig(), quiet=True)\n"
        "print(parsed_lines(cassette), gc.get_freeze_count(), file=sys.stderr)\n"
    )
    asks = b"".join(orjson.dumps(m) + b"\n" for m in [INIT, *(call(i) for i in range(1, 201))])
    counts = []
    for every in (50, 10**9):
        done = subprocess.run(
            [*mcptape_cmd()[:1], "-c", code, str(path), str(every)],
            input=asks,
            capture_output=True,
            cwd=ROOT,
            check=True,
            env={**os.environ},
        )
        answers_ = [orjson.loads(line) for line in done.stdout.splitlines()]
        assert [a["id"] for a in answers_] == list(range(201))
        assert answers_[200] == result(200)
        parsed, frozen = map(int, done.stderr.decode().split()[-2:])
        assert parsed == 202  # each answer played (not the recorded requests: their keys match)
        counts.append(frozen)
    settled_often, settled_once = counts
    # each answer's result, its content and its text block: frozen after the chunk that played them
    assert settled_often >= settled_once + 3 * 200


def test_progress_a_client_did_not_ask_for_is_skipped_unread(tmp_path: Path) -> None:
    """An index file marks the recorded progress notifications: a replay from it reads them
    only for a client that asked for progress."""
    lines = [orjson.dumps(HEADER)]
    steps: list[tuple[str, Any]] = [("client", INIT), ("server", result(0))]
    for i in range(1, 3_001):
        ask = call(i)
        ask["params"]["_meta"] = {"progressToken": f"p{i}"}
        steps.append(("client", ask))
        for k in (1, 2):
            params = {"progressToken": f"p{i}", "progress": k, "total": 2}
            steps.append(("server", {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}))  # fmt: skip
        steps.append(("server", result(i)))
    for seq, (src, msg) in enumerate(steps, 1):
        lines.append(orjson.dumps({"seq": seq, "t": seq / 1000, "kind": "message", "from": src, "msg": msg}))  # fmt: skip
    path = tmp_path / "progress.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    replayed_twice(path)
    for token, read in ((None, 1), ("mine", 3)):
        index = ReplayIndex(open_for_replay(path))
        ask = call(7)
        if token is not None:
            ask["params"]["_meta"] = {"progressToken": token}
        answers(index, INIT)
        before = parsed_lines(index.cassette)
        got = answers(index, ask)
        assert parsed_lines(index.cassette) == before + read
        assert got[-1]["result"] == result(7)["result"]
        assert [m["params"]["progressToken"] for m in got[:-1]] == [token] * (read - 1)


def test_an_index_let_go_is_freed_at_once(tmp_path: Path) -> None:
    """Entries made without their subject keep what makes it, not the index: no reference cycle,
    so a test suite's cassettes go when their replay does, not at the next full collection."""
    import gc
    import weakref

    path = write_cassette(tmp_path / "c.jsonl", 6_000)
    replayed_twice(path)
    index = ReplayIndex(open_for_replay(path))
    assert index.entries[0]._subject is None  # (made when asked)
    gone = weakref.ref(index)
    was = gc.isenabled()
    gc.disable()
    try:
        del index
        assert gone() is None
    finally:
        if was:
            gc.enable()
