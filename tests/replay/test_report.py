"""The unplayed-exchanges report: one value that `--strict` prints, `--report` writes and `prune` reads back."""

from __future__ import annotations

import orjson

from mcptape.cassette import loads
from mcptape.replay import ReplayConfig, ReplayEngine
from mcptape.replay.report import UnplayedReport
from tests.replay.tape import call, ok, req, tape

CASSETTE = tape(("c", call(1, "add", {"a": 1})), ("s", ok(1, {})), ("c", req(2, "resources/read", {"uri": "demo://it's"})), ("s", ok(2, {})),
                ("c", req(3, "tools/list")), ("s", ok(3, {"tools": []})))  # fmt: skip


def test_what_strict_prints_and_report_writes_read_back_as_the_same_report() -> None:
    engine = ReplayEngine.from_cassette(CASSETTE, ReplayConfig())
    report = UnplayedReport.of("cassettes/a.jsonl", engine.unplayed())
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
