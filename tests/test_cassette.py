"""Cassette files: round trips, tolerance of a truncated last line, one-line errors for bad files."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from mcptape.cassette import Cassette, CassetteWriter, dumps, load, loads, new_header, save
from mcptape.errors import CassetteError, CassetteVersionError
from mcptape.model import Event, Kind, Source, Transport


def sample_events() -> list[Event]:
    return [
        Event(1, 0.001, Kind.MESSAGE, Source.CLIENT, msg={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        Event(2, 0.002, Kind.MESSAGE, Source.SERVER, msg={"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
        Event(3, 0.003, Kind.RAW, Source.SERVER, b64="//4="),
        Event(4, 0.004, Kind.STDERR, Source.SERVER, text="log line"),
        Event(5, 0.005, Kind.EXIT, Source.SERVER, info={"code": 0}),
        Event(6, 0.005, Kind.END),
    ]


def write(path: Path, events: list[Event]) -> None:
    w = CassetteWriter(path, new_header(Transport.STDIO, {"command": ["srv"]}, {"enabled": True}))
    for e in events:
        w.write(e)
    w.close()


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write(p, sample_events())
    cas = load(p)
    assert cas.events == sample_events()
    assert cas.warnings == []
    assert cas.header.transport is Transport.STDIO and cas.header.target == {"command": ["srv"]}
    assert cas.events[2].raw_bytes == b"\xff\xfe"


def test_bytes_are_deterministic_but_for_time() -> None:
    h = new_header(Transport.STDIO, {"command": ["srv"]}, {})
    a = dumps(Cassette(h, sample_events()))
    assert a == dumps(loads(a))


def test_truncated_last_line_is_tolerated_and_reported(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write(p, sample_events()[:3])
    p.write_bytes(p.read_bytes() + b'{"seq":4,"t":0.1,"kind":"mess')
    cas = load(p)
    assert len(cas.events) == 3
    assert any("line 5" in w or ":5:" in w for w in cas.warnings)
    assert any("cut short" in w for w in cas.warnings)


def test_missing_end_marker_warns(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write(p, sample_events()[:2])
    assert any("cut short" in w for w in load(p).warnings)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "empty file"),
        (b"\n\n", "empty file"),
        (b"hello\n", ":1: not an mcptape cassette (line 1 is not JSON)"),
        (b'{"log": {"version": "1.2"}}\n', ":1: not an mcptape cassette"),
        (b'{"mcptape_cassette": 1, "transport": "stdio"}\nnot json\n{"seq":2,"t":0,"kind":"end"}\n', ":2: corrupt line"),
        (b'{"mcptape_cassette": 1, "transport": "stdio"}\n[1,2]\n', ":2: not a cassette event"),
    ],
)
def test_bad_files_give_one_line_errors_naming_file_and_line(tmp_path: Path, content: bytes, message: str) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_bytes(content)
    with pytest.raises(CassetteError) as info:
        load(p)
    text = str(info.value)
    assert message in text and str(p) in text and "\n" not in text


def test_newer_format_says_upgrade(tmp_path: Path) -> None:
    p = tmp_path / "new.jsonl"
    p.write_bytes(b'{"mcptape_cassette": 99}\n')
    with pytest.raises(CassetteVersionError, match="upgrade mcptape"):
        load(p)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="no such cassette"):
        load(tmp_path / "nope.jsonl")


def test_save_is_atomic_and_loadable(tmp_path: Path) -> None:
    h = new_header(Transport.STDIO, {"command": ["srv"]}, {})
    p = tmp_path / "sub" / "c.jsonl"
    save(Cassette(h, sample_events()), p)
    assert load(p).events == sample_events()
    assert [x.name for x in p.parent.iterdir()] == ["c.jsonl"]


def test_writer_on_unwritable_path_fails_at_once(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    with pytest.raises(CassetteError, match="cannot write"):
        CassetteWriter(blocker / "c.jsonl", new_header(Transport.STDIO, {}, {}))


def test_writer_disk_full_raises() -> None:
    with pytest.raises(CassetteError, match="cannot write the cassette: No space left on device"):
        CassetteWriter("/dev/full", new_header(Transport.STDIO, {}, {}))


def test_each_line_is_one_json_object(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write(p, sample_events())
    lines = p.read_bytes().splitlines()
    assert len(lines) == 1 + len(sample_events())
    for line in lines:
        assert isinstance(orjson.loads(line), dict)
