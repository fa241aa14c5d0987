"""A cassette of many sessions: split, merged, and each replay launch served its own session."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from typing import Any

import orjson
import pytest

import mcptape
from mcptape.capture.sessions import RecordMode, SessionPolicy, _Tail, session_lines
from mcptape.cassette import Cassette, load, save
from mcptape.cassette.sessions import load_many, merge, sessions, split
from mcptape.errors import ConfigError
from mcptape.replay.engine import ReplayConfig, Send
from mcptape.replay.sessions import Claims, SessionPicker
from tests.conftest import mcptape_cmd
from tests.diff.builders import LEGACY, cassette, note, req, res

INIT = {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
SERVER_INIT = {"protocolVersion": LEGACY, "capabilities": {"tools": {}}, "serverInfo": {"name": "s", "version": "1"}}  # fmt: skip


def _session(*wire: tuple[str, Any]) -> Cassette:
    return cassette(
        req(1, "initialize", INIT), res(1, SERVER_INIT), note("notifications/initialized", who="c"),
        *wire,
    )  # fmt: skip


def _count(n: int) -> Cassette:
    return _session(req(2, "tools/call", {"name": "count"}), res(2, {"content": [{"type": "text", "text": str(n)}]}))  # fmt: skip


LISTED = _session(req(2, "tools/list"), res(2, {"tools": [{"name": "count"}]}))


def _answers(picker: SessionPicker, *msgs: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for msg in msgs:
        for o in picker.route(msg).receive(msg):
            if isinstance(o, Send):
                out.append(o.msg)
    return out


HANDSHAKE = [
    {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INIT},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
]
COUNT = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "count"}}


def test_merged_cassettes_split_back_into_their_sessions() -> None:
    merged = merge([LISTED, _count(1), _count(2)])
    assert [e.seq for e in merged.events] == list(range(1, len(merged.events) + 1))
    parts = split(merged)
    assert [len(p.events) for p in parts] == [len(LISTED.events), len(_count(1).events), len(_count(2).events)]  # fmt: skip
    infos = sessions(merged)
    assert [s.requests for s in infos] == [
        ["initialize", "tools/list"],
        ["initialize", "tools/call count"],
        ["initialize", "tools/call count"],
    ]
    assert all(s.ended for s in infos)


def test_the_first_request_picks_its_session_and_claimed_ones_are_passed_over(
    tmp_path: Path,
) -> None:
    merged = merge([LISTED, _count(1), _count(2)])
    config = ReplayConfig()
    first = SessionPicker(merged, config)
    answers = _answers(first, *HANDSHAKE, COUNT)
    assert first.chosen == 1
    assert answers[0]["result"] == SERVER_INIT
    assert answers[-1]["result"]["content"][0]["text"] == "1"
    assert first.engine.unplayed() == []  # nothing of the other sessions counts as unplayed

    second = SessionPicker(merged, config)
    assert second.pick(COUNT, taken={1}) == 2
    assert second.pick(COUNT, taken={1, 2}) == 1
    listing = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
    assert second.pick(listing, taken={0}) == 0  # the only session that fits, played or not


def test_claims_are_shared_by_the_launches_of_one_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    path = tmp_path / "c.jsonl"
    save(merge([LISTED, _count(1), _count(2)]), path)
    cas = load(path)
    got = []
    for _ in range(3):
        claims = Claims(path, "run-a")
        picker = SessionPicker(cas, ReplayConfig(), lambda c=claims: c)
        got.append(_answers(picker, *HANDSHAKE, COUNT)[-1]["result"]["content"][0]["text"])
    assert got == ["1", "2", "1"]
    assert Claims(path, "run-b").taken() == set()


def test_an_appended_session_is_marked_and_numbered_on() -> None:
    tail = _Tail(
        b"", {"recorded_at": "2026-01-01T00:00:00Z", "target": {"command": ["a"]}}, "r", 9, 4.5
    )
    lines = [
        b'{"seq":1,"t":0.5,"kind":"message","from":"client","msg":{"jsonrpc": "2.0", "id":1,"method":"x","params":{"token":"[REDACTED]"}},"redacted":["/params/token"]}',
        b'{"seq":2,"t":0.75,"kind":"end"}',
    ]
    policy = SessionPolicy(RecordMode.ALL, "r", "2026-01-01T00:00:02Z", {"command": ["b"]})
    out = session_lines(lines, tail, policy).splitlines()
    first, end = orjson.loads(out[0]), orjson.loads(out[1])
    assert (first["seq"], first["t"], end["seq"], end["t"]) == (10, 5.0, 11, 5.25)
    assert first["info"]["session"] == {"recorded_at": "2026-01-01T00:00:02Z", "run": "r", "target": {"command": ["b"]}}  # fmt: skip
    assert list(first) == ["seq", "t", "kind", "from", "msg", "info", "redacted"]
    assert b'{"jsonrpc": "2.0", "id":1' in out[0]  # the message byte for byte


def test_replay_and_use_cassette_take_a_folder_of_cassettes(tmp_path: Path) -> None:
    folder = tmp_path / "agent"
    folder.mkdir()
    save(LISTED, folder / "a.jsonl")
    save(_count(1), folder / "b.jsonl")
    assert len(split(load_many([folder]))) == 2
    lines = [*HANDSHAKE, COUNT]
    proc = subprocess.run(
        mcptape_cmd("replay", "--strict", str(folder)),
        input=b"".join(orjson.dumps(m) + b"\n" for m in lines),
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    answers = [orjson.loads(line) for line in proc.stdout.splitlines()]
    assert answers[-1]["result"]["content"][0]["text"] == "1"

    with mcptape.use_cassette([folder / "a.jsonl", folder / "b.jsonl"]) as tape:
        assert tape.path.exists()
    assert not tape.path.exists()
    with pytest.raises(ConfigError, match="replay only"):
        mcptape.use_cassette(folder, record_mode="rewrite", server=["x"])
