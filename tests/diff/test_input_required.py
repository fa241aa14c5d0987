"""A 2026-07-28 call that asks the user for input: `input_required`, the retry with
`inputResponses`, then the final result. The diff compares the final results, and the
HTML page shows the chain ending with them (as in cassettes/python-sdk/2026-07-28)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner

from mcptape.cassette import dumps, load
from mcptape.cli.diff import diff
from mcptape.diff.engine import diff_cassettes
from mcptape.views.diff_data import page_data

from .builders import cassette, meta, modern_handshake, req, res, text_result

ASK = {
    "method": "elicitation/create",
    "params": {
        "message": "What is your name?",
        "mode": "form",
        "requestedSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
    },
}


def greeting(greeting: str, state: str) -> list[tuple[str, Any]]:
    """A session whose `greet` asks for a name, gets "Ada", and answers `greeting`."""
    call = {"name": "greet", "arguments": {}, "_meta": meta("info")}
    return [
        *modern_handshake(),
        req(7, "tools/call", call),
        res(7, {"resultType": "input_required", "inputRequests": {"app:ask_name": ASK}, "requestState": state}),
        req(8, "tools/call", {**call, "inputResponses": {"app:ask_name": {"action": "accept", "content": {"name": "Ada"}}},
                              "requestState": state}),
        res(8, {"resultType": "complete", **text_result(greeting)}),
    ]  # fmt: skip


def write(path: Path, wire: list[tuple[str, Any]]) -> Path:
    path.write_bytes(dumps(cassette(*wire)))
    return path


def pair(tmp_path: Path) -> tuple[Path, Path]:
    return (
        write(tmp_path / "hello.jsonl", greeting("Hello, Ada!", "sealed-1")),
        write(tmp_path / "hi.jsonl", greeting("Hi, Ada!", "sealed-2")),
    )


def test_the_text_report_compares_the_final_results(tmp_path: Path) -> None:
    a, b = pair(tmp_path)
    result = CliRunner().invoke(diff, [str(a), str(b), "--format", "json"])
    data = orjson.loads(result.output)
    assert result.exit_code == 1 and data["summary"] == "behaviour differs: 1 changed"
    (row,) = data["differences"]
    assert (row["exchange"], row["path"], row["a"], row["b"]) == (
        "tools/call greet", "/result/content/0/text", "Hello, Ada!", "Hi, Ada!",
    )  # fmt: skip
    text = CliRunner().invoke(diff, [str(a), str(b)]).output
    assert '"Hello, Ada!"' in text and '"Hi, Ada!"' in text


def test_the_same_answer_after_input_is_equivalent(tmp_path: Path) -> None:
    a = write(tmp_path / "a.jsonl", greeting("Hello, Ada!", "sealed-1"))
    b = write(tmp_path / "b.jsonl", greeting("Hello, Ada!", "sealed-2"))
    assert CliRunner().invoke(diff, [str(a), str(b)]).exit_code == 0


def test_the_page_shows_the_chain_ending_with_the_final_result(tmp_path: Path) -> None:
    a, b = (load(p) for p in pair(tmp_path))
    data = page_data(diff_cassettes(a, b), a, b, ("hello.jsonl", "hi.jsonl"))
    (row,) = data["differences"]
    for side, text, state in (("a", "Hello, Ada!", "sealed-1"), ("b", "Hi, Ada!", "sealed-2")):
        shown = data["exchanges"][side][str(row[f"{side}_seq"])]
        assert shown["request"]["id"] == 7
        assert (
            shown["response"]["id"] == 8
        )  # the final answer, where /result/content/0/text is marked
        assert shown["response"]["result"]["content"][0]["text"] == text
        (round_,) = shown["rounds"]
        assert round_["input_required"]["result"]["resultType"] == "input_required"
        assert round_["retry"]["params"]["inputResponses"]["app:ask_name"]["content"] == {
            "name": "Ada"
        }
        assert round_["retry"]["params"]["requestState"] == state
