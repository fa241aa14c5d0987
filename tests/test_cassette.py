"""Cassette files: round trips, tolerance of a truncated last line, one-line errors for bad files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from mcptape.cassette import (
    Cassette,
    CassetteWriter,
    dumps,
    load,
    loads,
    new_header,
    save,
)
from mcptape.cassette.model import Event, Kind, Source, Transport
from mcptape.errors import CassetteError, CassetteVersionError


def sample_events() -> list[Event]:
    return [
        Event(
            1,
            0.001,
            Kind.MESSAGE,
            Source.CLIENT,
            msg={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        ),
        Event(
            2,
            0.002,
            Kind.MESSAGE,
            Source.SERVER,
            msg={"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
        ),
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
        (
            b'{"mcptape_cassette": 1, "transport": "stdio"}\nnot json\n{"seq":2,"t":0,"kind":"end"}\n',
            ":2: corrupt line",
        ),
        (b'{"mcptape_cassette": 1, "transport": "stdio"}\n[1,2]\n', ":2: not a cassette event"),
    ],
)
def test_bad_files_give_one_line_errors_naming_file_and_line(
    tmp_path: Path, content: bytes, message: str
) -> None:
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


def test_writer_refuses_a_path_that_is_not_a_regular_file() -> None:
    with pytest.raises(
        CassetteError, match="/dev/full: cannot write the cassette: not a regular file"
    ):
        CassetteWriter("/dev/full", new_header(Transport.STDIO, {}, {}))
    assert not Path("/dev/full.partial").exists()


def test_writer_disk_full_raises(tmp_path: Path) -> None:
    """A write the file system refuses (a file-size limit, in a child) raises at once."""
    code = f"""
import resource, signal
from mcptape.cassette import CassetteWriter, new_header
from mcptape.errors import CassetteError
from mcptape.cassette.model import Transport
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
w = CassetteWriter({str(tmp_path / "c.jsonl")!r}, new_header(Transport.STDIO, {{}}, {{}}))
try:
    for _ in range(100):
        w.write_line(b"x" * 100 + b"\\n")
except CassetteError as exc:
    print(exc)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (
        proc.stdout.strip()
        == f"{tmp_path / 'c.jsonl.partial'}: cannot write the cassette: File too large"
    ), proc.stderr


def test_a_recording_takes_the_cassettes_place_only_when_committed(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    p.write_bytes(b"old\n")
    w = CassetteWriter(p, new_header(Transport.STDIO, {}, {}))
    w.write(sample_events()[0])
    assert w.partial == tmp_path / "c.jsonl.partial" and p.read_bytes() == b"old\n"
    assert w.commit() == p and w.replaced
    assert load(p).events == sample_events()[:1] and not w.partial.exists()
    w = CassetteWriter(p, new_header(Transport.STDIO, {}, {}))
    w.discard()
    assert [x.name for x in tmp_path.iterdir()] == ["c.jsonl"]
    w = CassetteWriter(p, new_header(Transport.STDIO, {}, {}))
    assert w.keep() == tmp_path / "c.jsonl.partial" and load(p).events == sample_events()[:1]


def test_a_left_recording_is_never_overwritten_or_shared(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    first = CassetteWriter(p, new_header(Transport.STDIO, {}, {}))
    second = CassetteWriter(p, new_header(Transport.STDIO, {}, {}))
    assert (first.partial.name, second.partial.name) == ("c.jsonl.partial", "c.jsonl.partial-2")
    first.write(sample_events()[0])
    assert first.commit() == p
    second.write(sample_events()[1])
    moved = second.commit()  # `p` changed while `second` recorded: it keeps the other's cassette
    assert moved == tmp_path / "c-2.jsonl"
    assert load(p).events == sample_events()[:1] and load(moved).events == sample_events()[1:2]


def test_fresh_names_are_numbered_and_reserved(tmp_path: Path) -> None:
    p = tmp_path / "s-20260101-000000.jsonl"
    p.write_bytes(b"taken\n")
    writers = [CassetteWriter(p, new_header(Transport.STDIO, {}, {}), fresh=True) for _ in range(3)]
    assert [w.path.name for w in writers] == [f"s-20260101-000000-{n}.jsonl" for n in (2, 3, 4)]
    for w in writers:
        w.write(sample_events()[0])
        w.commit()
    assert p.read_bytes() == b"taken\n"


def test_a_fresh_name_never_replaces_a_cassette_committed_there_while_it_was_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two recorders started in the same second: the first commits its cassette just after the
    second found the name free and took its `.partial` (the first's had just been renamed away).
    The second then goes to the next free name; it replaced the first's cassette before (twenty
    recorders in parallel left nineteen files)."""
    import mcptape.cassette as cassette_module

    p = tmp_path / "s-20260101-000000.jsonl"
    took = cassette_module._open_sibling

    def first_commits_meanwhile(path: Path, fresh: bool) -> tuple[Path, int]:
        opened = took(path, fresh)
        p.write_bytes(b"the first recorder's cassette\n")
        return opened

    monkeypatch.setattr(cassette_module, "_open_sibling", first_commits_meanwhile)
    second = CassetteWriter(p, new_header(Transport.STDIO, {}, {}), fresh=True)
    assert second.path == p and not second.replaced
    second.write(sample_events()[0])
    assert second.commit() == tmp_path / "s-20260101-000000-2.jsonl"
    assert p.read_bytes() == b"the first recorder's cassette\n"
    assert load(tmp_path / "s-20260101-000000-2.jsonl").events == sample_events()[:1]


def test_each_line_is_one_json_object(tmp_path: Path) -> None:
    p = tmp_path / "c.jsonl"
    write(p, sample_events())
    lines = p.read_bytes().splitlines()
    assert len(lines) == 1 + len(sample_events())
    for line in lines:
        assert isinstance(orjson.loads(line), dict)


def test_line_of_names_the_real_file_line_with_blank_lines_and_repeated_seqs() -> None:
    head, *events = dumps_plain().splitlines()
    # a blank line after event 2 moves the later events down one line
    spaced = loads(b"\n".join([head, *events[:2], b"", *events[2:]]))
    assert [spaced.line_of(seq) for seq in range(1, 7)] == [2, 3, 5, 6, 7, 8]
    # seq 2 again (hand-edited): each seq names its first line, the later ones their own
    again = loads(b"\n".join([head, events[0], events[1], events[1], *events[2:]]))
    assert [again.line_of(seq) for seq in range(1, 7)] == [2, 3, 5, 6, 7, 8]
    plain = loads(b"\n".join([head, *events]))
    assert [plain.line_of(seq) for seq in range(1, 7)] == [2, 3, 4, 5, 6, 7]


def dumps_plain() -> bytes:
    header = new_header(Transport.STDIO, {"command": ["srv"]}, {"enabled": True})
    return dumps(Cassette(header, sample_events()))
