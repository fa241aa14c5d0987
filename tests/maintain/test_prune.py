"""`mcptape prune`: drop what a test suite never plays, or keep only what it needs; replay is unchanged."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import Client, StdioServerParameters

from mcptape.cassette import dumps, load
from mcptape.cassette.model import Kind
from mcptape.errors import ConfigError
from mcptape.maintenance.commands import UnplayedReport, parse_run_log, unused_exchanges
from mcptape.pairing import pair
from mcptape.replay.memory import UnplayedExchangesError
from mcptape.skeletons import outline
from tests.conftest import mcptape_cmd
from tests.maintain.replaying import GOLDEN, ROOT, calls_of, results
from tests.replay.tape import LEGACY_INIT, call, ok, tape
from tests.sdk_helpers import accept_name

pytestmark = [pytest.mark.anyio]
IDS = [str(p.relative_to(ROOT / "cassettes")) for p in GOLDEN]
HTTP_SDK = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "streamable-http.jsonl"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(mcptape_cmd(*args), capture_output=True, text=True, timeout=60)


def some_calls(path: Path) -> list[str]:
    """Two names a small test would use: the first and the last tool/resource/prompt the cassette calls."""
    named = [
        p.get("name") or p.get("uri")
        for m, p in calls_of(path)
        if m in ("tools/call", "resources/read", "prompts/get")
    ]
    return [named[0], named[-1]]


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
async def test_pruning_what_a_strict_run_never_played_leaves_its_replay_unchanged(
    golden: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / golden.name
    shutil.copy(golden, cassette)
    calls = calls_of(cassette, some_calls(cassette))
    before = await results(cassette, calls)
    with pytest.raises(UnplayedExchangesError) as caught:
        await results(cassette, calls, strict=True)
    log = tmp_path / "run.log"
    log.write_text(
        f"tests/test_x.py F\nE   {type(caught.value).__name__}: "
        + str(caught.value).replace("\n", "\nE   ")
        + "\n1 failed\n"
    )
    done = cli("prune", str(cassette), "--unused-from", str(log))
    assert done.returncode == 0, done.stderr
    assert (
        f"mcptape prune: pruned {len(parse_run_log(log.read_text())[0].unplayed)} exchange(s)"
        in done.stderr
    )
    assert (
        await results(cassette, calls, strict=True) == before
    )  # nothing unplayed any more, same answers
    pruned = load(cassette)
    assert pruned.warnings == [] and [e.seq for e in pruned.events] == list(
        range(1, len(pruned.events) + 1)
    )
    assert len(pair(pruned.events).orphans) == len(pair(load(golden).events).orphans)


@pytest.mark.parametrize("golden", GOLDEN, ids=IDS)
async def test_keep_leaves_only_the_named_calls_with_the_same_answers(
    golden: Path, tmp_path: Path
) -> None:
    names = some_calls(golden)
    out = tmp_path / "small.jsonl"
    done = cli(
        "prune",
        str(golden),
        "--keep",
        names[0],
        "--keep",
        names[1],
        "--keep",
        "tools/list",
        "-o",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    calls = calls_of(golden, [*names, "tools/list"])
    assert await results(out, calls) == await results(golden, calls)
    kept = {ex.method if ex.name is None else ex.name for ex in pair(load(out).events).exchanges}
    assert kept - {
        "initialize",
        "server/discover",
        "notifications/initialized",
        "tools/list",
    } == set(names)


def test_pruned_http_cassette_loses_the_http_exchanges_of_dropped_calls_and_keeps_other_lines_verbatim(
    tmp_path: Path,
) -> None:
    out = tmp_path / "add.jsonl"
    assert cli("prune", str(HTTP_SDK), "--keep", "add", "-o", str(out)).returncode == 0
    before, after = load(HTTP_SDK), load(out)
    keep_msgs = {
        ex.request.event.seq
        for ex in pair(before.events).exchanges
        if ex.method in ("initialize", "notifications/initialized") or ex.name == "add"
    }
    with_msgs = {e.http["exchange"] for e in before.events if e.kind is Kind.MESSAGE and e.http}
    wanted = {e.http["exchange"] for e in before.events if e.seq in keep_msgs and e.http} | {
        e.http["exchange"] for e in before.events if e.http and e.http["exchange"] not in with_msgs
    }  # the calls kept, plus exchanges without messages (the GET stream, DELETE)
    assert {e.http["exchange"] for e in after.events if e.http} == wanted
    assert not any(
        e.kind is Kind.MESSAGE
        and isinstance(e.msg, dict)
        and e.msg.get("method") == "elicitation/create"
        for e in after.events
    )
    old = {line.split(b",", 1)[1] for line in HTTP_SDK.read_bytes().splitlines()[1:]}
    new = out.read_bytes().splitlines()
    assert new[0] == HTTP_SDK.read_bytes().splitlines()[0]
    assert all(line.split(b",", 1)[1] in old for line in new[1:]), (
        "only seq changes on the lines kept"
    )


async def test_replay_report_of_the_stdio_server_feeds_prune(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    shutil.copy(ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl", cassette)
    report = tmp_path / "unplayed.jsonl"
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcptape", "replay", "-q", "--report", str(report), str(cassette)],
    )
    for _ in range(2):  # two sessions of a suite: one line each; an exchange either played is kept
        with anyio.fail_after(30):
            async with Client(
                params, mode="auto", elicitation_callback=accept_name, log_level="info"
            ) as client:
                await client.call_tool("echo", {"message": "hello"})
    lines = [orjson.loads(line) for line in report.read_bytes().splitlines()]
    assert len(lines) == 2 and lines[0]["cassette"] == str(cassette)
    assert {"line": 31, "method": "prompts/get", "name": "review"} in lines[0]["unplayed"]
    assert (
        b'"method":"prompts/get","params":{"name":"review"'
        in cassette.read_bytes().splitlines()[30]
    )
    done = cli("prune", str(cassette), "--unused-from", str(report))
    assert done.returncode == 0, done.stderr
    left = [(ex.method, ex.name) for ex in pair(load(cassette).events).exchanges]
    assert left == [("server/discover", None), ("tools/list", None), ("tools/call", "echo")]


STRICT = """\
mcptape replay: --strict: 3 recorded exchange(s) of cassettes/a.jsonl were never played:
  line 5: tools/call 'add'
  line 9: resources/read 'demo://it''s'
  line 12: tools/list
other output
"""


def test_run_logs_are_read_in_every_form() -> None:
    text = parse_run_log(STRICT.replace("demo://it''s", "demo://x"))
    assert text == [
        UnplayedReport(
            "cassettes/a.jsonl",
            ((5, "tools/call", "add"), (9, "resources/read", "demo://x"), (12, "tools/list", None)),
        )
    ]
    one_line = "mcptape: error: " + STRICT.replace("\n", "   ").replace("demo://it''s", "demo://x")
    assert parse_run_log(one_line) == text
    pytest_style = "\n".join(
        "E   " + line for line in STRICT.replace("demo://it''s", "demo://x").splitlines()
    )
    assert parse_run_log(pytest_style) == text
    obj = {
        "cassette": "cassettes/a.jsonl",
        "unplayed": [{"line": 5, "method": "tools/call", "name": "add"}],
    }
    assert parse_run_log(orjson.dumps(obj).decode()) == [
        UnplayedReport("cassettes/a.jsonl", ((5, "tools/call", "add"),))
    ]
    older = {
        "cassette": "cassettes/a.jsonl",
        "unplayed": [{"seq": 4, "method": "tools/call", "name": "add"}],
    }
    assert parse_run_log(orjson.dumps(older).decode()) == parse_run_log(orjson.dumps(obj).decode())
    assert len(parse_run_log(orjson.dumps([obj, obj]).decode())) == 2
    assert (
        len(
            parse_run_log(
                "noise\n" + orjson.dumps(obj).decode() + "\nnoise\n" + orjson.dumps(obj).decode()
            )
        )
        == 2
    )


def test_only_reports_about_this_cassette_count_and_a_stale_log_is_refused(tmp_path: Path) -> None:
    cassette = tmp_path / "cassettes" / "c.jsonl"
    cassette.parent.mkdir()
    shutil.copy(ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl", cassette)
    plan = outline(cassette)
    both = [UnplayedReport("cassettes/c.jsonl", ((11, "tools/call", "echo"), (13, "tools/call", "fail"))),
            UnplayedReport(str(cassette), ((13, "tools/call", "fail"),)),
            UnplayedReport("cassettes/other.jsonl", ((3, "tools/list", None),))]  # fmt: skip
    assert [plan.names[ex] for ex in unused_exchanges(plan, both)] == ["fail"]
    with pytest.raises(ConfigError, match=r"no report for .*it reports on cassettes/other.jsonl"):
        unused_exchanges(plan, both[2:])
    with pytest.raises(ConfigError, match="line 3 is not a tools/call request"):
        unused_exchanges(plan, [UnplayedReport("c.jsonl", ((3, "tools/call", "add"),))])


def test_usage_errors_exit_2_and_leave_the_file_alone(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    shutil.copy(HTTP_SDK, cassette)
    log = tmp_path / "run.log"
    log.write_text(STRICT)
    for args in (
        [],
        ["--keep", "add", "--unused-from", str(log)],
        ["--keep", "no-such-tool"],
        ["--unused-from", str(log)],
    ):
        done = cli("prune", str(cassette), *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("mcptape: error: ") and done.stderr.count("\n") == 1
    assert cassette.read_bytes() == HTTP_SDK.read_bytes()
    dry = cli("prune", str(cassette), "--keep", "add", "--dry-run")
    assert (
        dry.returncode == 0
        and "would drop 10 exchange(s)" in dry.stderr
        and cassette.read_bytes() == HTTP_SDK.read_bytes()
    )
    lines = cassette.read_bytes().splitlines()
    divide = 1 + next(
        i for i, ln in enumerate(lines) if b'"method":"tools/call","params":{"name":"divide"' in ln
    )
    assert (
        f"tools/call 'divide' (line {divide})" in dry.stderr
    )  # the file line, as an editor shows it


def test_a_long_prune_names_the_first_dropped_and_counts_the_rest(tmp_path: Path) -> None:
    steps: list[Any] = [*LEGACY_INIT]
    for i in range(26):
        steps += [("c", call(10 + i, "keep" if i == 3 else f"t{i}")), ("s", ok(10 + i, {"n": i}))]
    cassette = tmp_path / "c.jsonl"
    cassette.write_bytes(dumps(tape(*steps)))
    dry = cli("prune", str(cassette), "--keep", "keep", "--dry-run")
    assert dry.returncode == 0 and "would drop 25 exchange(s)" in dry.stderr
    assert all(f"tools/call 't{i}'" in dry.stderr for i in range(26) if i != 3)  # every one
    done = cli("prune", str(cassette), "--keep", "keep")
    assert done.returncode == 0 and done.stderr.count("\n") == 1, done.stderr
    assert "pruned 25 exchange(s), 50 event(s)" in done.stderr
    named = [i for i in range(26) if f"tools/call 't{i}' (line" in done.stderr]
    assert named == [i for i in range(21) if i != 3]  # the first 20, in cassette order
    assert done.stderr.rstrip().endswith("and 5 more (--dry-run lists every one)")
    assert [ex.name for ex in pair(load(cassette).events).exchanges if ex.method == "tools/call"] == ["keep"]  # fmt: skip
