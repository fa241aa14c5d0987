"""The unplayed-exchanges report: one value that `--strict` prints, `--report` writes and `prune` reads back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import orjson

from mcptape.cassette import loads, save
from mcptape.check import check_bytes
from mcptape.replay import ReplayConfig, ReplayEngine, Send
from mcptape.replay.report import UnplayedReport
from tests.replay.tape import call, ok, req, tape

CASSETTE = tape(("c", call(1, "add", {"a": 1})), ("s", ok(1, {})), ("c", req(2, "resources/read", {"uri": "demo://it's"})), ("s", ok(2, {})),
                ("c", req(3, "tools/list")), ("s", ok(3, {"tools": []})))  # fmt: skip


def test_what_strict_prints_and_report_writes_read_back_as_the_same_report() -> None:
    engine = ReplayEngine.from_cassette(CASSETTE, ReplayConfig())
    report = UnplayedReport.of(replace(CASSETTE, path=Path("cassettes/a.jsonl")), engine.unplayed())
    assert [(m, n) for _, m, n in report.unplayed] == [
        ("tools/call", "add"),
        ("resources/read", "demo://it's"),
        ("tools/list", None),
    ]
    text = report.text()
    assert (
        text.splitlines()[0]
        == "mcptape replay: --strict: 3 recorded exchange(s) of cassettes/a.jsonl were never played:"
    )
    assert text.splitlines()[2].endswith('resources/read "demo://it\'s"')
    assert UnplayedReport.find_all(f"noise\nE   {text}\nmore noise\n") == [report]
    assert UnplayedReport.find_all(orjson.dumps(report.to_json()).decode()) == [report]
    assert UnplayedReport.from_json({"unplayed": "no"}) is None


def test_a_truncated_last_line_is_flagged_on_the_cassette_not_only_in_its_warnings() -> None:
    whole = orjson.dumps({"mcptape_cassette": 1, "transport": "stdio"}) + b"\n"
    cut = loads(whole + b'{"seq":1,"t":0,"kind":"mess', name="x.jsonl")
    assert (
        cut.truncated is not None
        and cut.truncated.startswith("x.jsonl:2: last line is truncated")
        and cut.truncated in cut.warnings
    )
    assert loads(whole, name="x.jsonl").truncated is None


def test_every_message_that_cites_a_line_cites_the_file_line(tmp_path: Path) -> None:
    """A cassette whose lines are not `seq + 1` (a blank line, then seq numbers from 10): the
    no-match error, the strict report and `--report` name the lines an editor shows."""
    path = tmp_path / "c.jsonl"
    save(CASSETTE, path)
    header, *events = path.read_bytes().splitlines()
    renumbered = [b'{"seq":%d' % (10 + i) + e[e.index(b",") :] for i, e in enumerate(events)]
    path.write_bytes(b"\n".join([header, b"", *renumbered]) + b"\n")
    lines = path.read_bytes().splitlines()
    add_line = 1 + next(i for i, ln in enumerate(lines) if b'"name":"add"' in ln)
    read_line = 1 + next(i for i, ln in enumerate(lines) if b"resources/read" in ln)
    assert (add_line, read_line) == (3, 5)  # seq 10 and 12
    cassette = loads(path.read_bytes(), name=str(path), path=path)
    engine = ReplayEngine.from_cassette(cassette, ReplayConfig())
    error = next(o.msg for o in engine.receive(call(7, "add", {"a": 2})) if isinstance(o, Send))[
        "error"
    ]
    assert error["message"].endswith(
        f"compared with the nearest recorded request (line {add_line})"
    )
    assert error["data"]["nearest"][0]["line"] == add_line
    report = UnplayedReport.of(cassette, engine.unplayed())
    assert f"  line {add_line}: tools/call 'add'" in report.text().splitlines()
    assert report.to_json()["unplayed"][1] == {
        "line": read_line,
        "method": "resources/read",
        "name": "demo://it's",
    }
    assert check_bytes(path.read_bytes()).findings == []  # check reads the same file: clean
