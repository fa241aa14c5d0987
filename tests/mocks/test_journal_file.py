"""`mcptape replay --journal FILE`: the requests a served mock or cassette received, with their
answers, as JSON lines a test in another process reads (the TypeScript helper's journal)."""

from __future__ import annotations

import io
import json
import subprocess
from pathlib import Path
from typing import Any

from mcptape.mocks.journal_file import JournalFile
from mcptape.replay.outputs import Send
from tests.conftest import ROOT, mcptape_cmd

MOCK = """
[server]
name = "demo"

[[tools]]
name = "add"

[[tools.answers]]
args = { a = 1, b = 2 }
result = 3

[[tools.answers]]
error = "only 1 + 2 is declared"

[[tools]]
name = "roll"

[[tools.answers]]
result = 4
"""

INIT = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}},
}  # fmt: skip
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(id_: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def replay(served: Path, journal: Path, *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines `mcptape replay --journal` wrote for a client that sent `messages`."""
    done = subprocess.run(
        mcptape_cmd("replay", "-q", "--journal", str(journal), str(served)),
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in journal.read_text().splitlines()]


def test_a_mock_writes_a_line_per_request_and_what_it_left_unused(tmp_path: Path) -> None:
    mock = tmp_path / "demo.toml"
    mock.write_text(MOCK)
    lines = replay(
        mock, tmp_path / "calls.jsonl",
        INIT, INITIALIZED, call(2, "add", {"a": 1, "b": 2}), call(3, "add", {"a": 5}),
    )  # fmt: skip
    calls = [line for line in lines if "method" in line]
    assert [(c["n"], c["method"], c["params"].get("arguments")) for c in calls] == [
        (0, "initialize", None),
        (1, "tools/call", {"a": 1, "b": 2}),
        (2, "tools/call", {"a": 5}),
    ], "one line per request, notifications left out"
    assert calls[1]["answer"]["result"]["content"] == [{"type": "text", "text": "3"}]
    assert calls[2]["answer"]["result"]["isError"] is True
    assert all(c["id"] == c["answer"]["id"] and c["t"] >= 0 for c in calls)
    unused = [line["unused"] for line in lines if "unused" in line]
    assert len(unused[0]) == 3, "all three declarations before the first call"
    assert unused[-1] == [f"tool roll ({mock}: tools[1].answers[0])"]


def test_a_cassette_writes_its_calls_and_no_unused_line(tmp_path: Path) -> None:
    golden = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"
    lines = replay(
        golden, tmp_path / "calls.jsonl", INIT, INITIALIZED, call(2, "add", {"a": 1, "b": 2})
    )
    assert [line["method"] for line in lines] == ["initialize", "tools/call"]
    assert lines[1]["answer"]["result"]["content"][0]["text"] == "3"


def test_a_journal_in_a_missing_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    cmd = mcptape_cmd(
        "replay", "--journal", str(tmp_path / "no" / "j.jsonl"), str(tmp_path / "m.toml")
    )
    (tmp_path / "m.toml").write_text(MOCK)
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "--journal" in done.stderr and "j.jsonl" in done.stderr


def _answer(id_: int, result: dict[str, Any]) -> list[Send]:
    return [Send({"jsonrpc": "2.0", "id": id_, "result": result}, request_id=id_, final=True)]


def test_a_call_that_asks_for_input_is_written_with_its_final_answer() -> None:
    """A 2026-07-28 `input_required` answer is not the call's last: its line waits for the
    retry's answer, and the retry (on the wire too) gets its own line."""
    out = io.StringIO()
    journal = JournalFile(out)
    asked = call(7, "greet", {})
    journal.saw(asked, _answer(7, {"resultType": "input_required", "requestState": "s1"}))
    assert out.getvalue() == ""
    retry = call(8, "greet", {})
    retry["params"]["requestState"] = "s1"
    journal.saw(retry, _answer(8, {"content": [{"type": "text", "text": "Hello"}]}))
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(line["n"], line["id"]) for line in lines] == [(0, 7), (1, 8)]
    assert all(line["answer"]["result"]["content"][0]["text"] == "Hello" for line in lines)


def test_a_call_never_answered_is_written_when_the_replay_ends(tmp_path: Path) -> None:
    journal = JournalFile.open(tmp_path / "calls.jsonl")
    journal.saw(call(1, "slow", {}), [])
    assert (tmp_path / "calls.jsonl").read_text() == ""
    journal.close()
    assert json.loads((tmp_path / "calls.jsonl").read_text())["answer"] is None
