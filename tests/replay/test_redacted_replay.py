"""Replay through redaction (issue 14): a request argument redacted at record time matches ANY
value the client sends at that place (docs/replay.md#redacted-arguments), on stdio, over HTTP and
in process, alone and inside a JSON-RPC batch; every other argument still has to match. And the
pagination cursors, never redacted, replay page after page."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mcptape.capture.recorder import Recorder
from mcptape.cassette import CassetteWriter, new_header
from mcptape.cassette.model import Source, Transport
from mcptape.redaction.redact import REDACTED, RedactConfig, Redactor
from mcptape.replay import ReplayConfig

try:  # (the HTTP replay is moving into the replay/http subpackage)
    from mcptape.replay.http.app import HttpReplayApp
except ImportError:  # pragma: no cover
    from mcptape.replay.server_http import HttpReplayApp  # type: ignore[no-redef]
from tests.conftest import mcptape_cmd
from tests.maintain.replaying import results
from tests.replay.tape import LEGACY_INIT, call, ok, req
from tests.replay.test_server_http_support import ACCEPT, served, sse_messages

RECORDED = "at-" + "q7Rz2Lm9Xv4Tn8Kp"
PAGE_2 = "pg-" + "W3eY6uI1oP5aS0dF"
PAGE_3 = "np-" + "Zq8xP2vL9mK4wR7t"
TOOL = {
    "name": "login",
    "inputSchema": {
        "type": "object",
        "properties": {"api_token": {"type": "string"}, "city": {"type": "string"}},
    },
}


def record(path: Path) -> Path:
    """A session written through the real recorder and its default redaction."""
    redactor = Redactor(RedactConfig())
    rec = Recorder(
        CassetteWriter(
            path, new_header(Transport.STDIO, {"command": ["srv"]}, RedactConfig().describe())
        ),
        redactor,
    )
    steps: list[tuple[Source, Any]] = [
        (Source.CLIENT, LEGACY_INIT[0][1]), (Source.SERVER, LEGACY_INIT[1][1]), (Source.CLIENT, LEGACY_INIT[2][1]),
        (Source.CLIENT, req(2, "tools/list")), (Source.SERVER, ok(2, {"tools": [TOOL], "nextCursor": PAGE_2})),
        (Source.CLIENT, req(3, "tools/list", {"cursor": PAGE_2})),
        (Source.SERVER, ok(3, {"tools": [{**TOOL, "name": "other"}], "nextCursor": PAGE_3, "nextPageToken": PAGE_3})),
        (Source.CLIENT, call(4, "login", {"api_token": RECORDED, "city": "Paris"})),
        (Source.SERVER, ok(4, {"content": [{"type": "text", "text": "hello Paris"}]})),
        (Source.CLIENT, [call(5, "login", {"api_key": RECORDED, "city": "Rome"}), req(6, "ping")]),  # redacted only here
        (Source.SERVER, [ok(5, {"content": [{"type": "text", "text": "hello Rome"}]}), ok(6, {})]),
    ]  # fmt: skip
    for src, msg in steps:
        rec.payload(src, orjson.dumps(msg))
    rec.end()
    rec.writer.close()
    return path


@pytest.fixture
def cassette(tmp_path: Path) -> Path:
    path = record(tmp_path / "c.jsonl")
    data = path.read_bytes()
    assert (
        RECORDED.encode() not in data and data.count(REDACTED.encode()) == 3
    )  # the header's marker, twice replaced
    assert b'"/0/params/arguments/api_key"' in data, "the batch's pointer starts with its position"
    assert PAGE_2.encode() in data and PAGE_3.encode() in data, "cursors are not secrets"
    return path


def text_of(answer: dict[str, Any]) -> str:
    return str(answer["result"]["content"][0]["text"])


def test_stdio_replay_matches_any_value_at_a_redacted_place_alone_and_in_a_batch(
    cassette: Path,
) -> None:
    lines = [
        LEGACY_INIT[0][1], LEGACY_INIT[2][1], req(2, "tools/list"), req(3, "tools/list", {"cursor": PAGE_2}),
        call(4, "login", {"api_token": "the-real-one", "city": "Paris"}),
        [call(5, "login", {"api_key": "another-value", "city": "Rome"}), req(6, "ping")],
    ]  # fmt: skip
    stdin = b"".join(orjson.dumps(m) + b"\n" for m in lines)
    proc = subprocess.run(
        mcptape_cmd("replay", str(cassette)),
        input=stdin,
        check=False,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = [orjson.loads(ln) for ln in proc.stdout.splitlines()]
    assert (
        out[1]["result"]["nextCursor"] == PAGE_2 and out[2]["result"]["nextPageToken"] == PAGE_3
    ), "paginated"
    assert text_of(out[3]) == "hello Paris"
    assert [text_of(out[4][0]), out[4][1]["result"]] == ["hello Rome", {}], "inside a batch too"


def test_stdio_replay_still_needs_the_arguments_that_were_not_redacted(cassette: Path) -> None:
    lines = [
        LEGACY_INIT[0][1],
        LEGACY_INIT[2][1],
        [call(5, "login", {"api_key": RECORDED, "city": "Oslo"})],
    ]
    stdin = b"".join(orjson.dumps(m) + b"\n" for m in lines)
    proc = subprocess.run(
        mcptape_cmd("replay", str(cassette)),
        input=stdin,
        check=False,
        capture_output=True,
        timeout=60,
    )
    out = [orjson.loads(ln) for ln in proc.stdout.splitlines()]
    error = out[1][0]["error"]
    assert (
        error["code"] == -32010
        and "arguments/city is" in error["message"]
        and "Oslo" in error["message"]
    )
    assert "api_key" not in orjson.dumps(error["data"]["request"]).decode(), (
        "nor is the client's value echoed"
    )


@pytest.mark.anyio
async def test_in_process_replay_matches_the_real_value_and_pages(cassette: Path) -> None:
    got = await results(cassette, [
        ("tools/list", {}), ("tools/list", {"cursor": PAGE_2}),
        ("tools/call", {"name": "login", "arguments": {"api_token": "the-real-one", "city": "Paris"}}),
    ])  # fmt: skip
    assert [t["name"] for t in got[0]["tools"]] == ["login"] and got[0]["nextCursor"] == PAGE_2
    assert [t["name"] for t in got[1]["tools"]] == ["other"]
    assert got[2]["content"][0]["text"] == "hello Paris"


@pytest.mark.anyio
async def test_http_replay_matches_the_real_value_alone_and_in_a_batch(cassette: Path) -> None:
    from mcptape.cassette import load

    app = HttpReplayApp(load(cassette), ReplayConfig(), on_note=None)
    async with served(app) as client:
        with anyio.fail_after(10):
            r = await client.post("/mcp", content=orjson.dumps(LEGACY_INIT[0][1]), headers=ACCEPT)
            await sse_messages(r, 1)
            hs = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"]}
            await client.post("/mcp", content=orjson.dumps(LEGACY_INIT[2][1]), headers=hs)
            one = await client.post(
                "/mcp",
                content=orjson.dumps(call(4, "login", {"api_token": "real", "city": "Paris"})),
                headers=hs,
            )
            answers = (
                await sse_messages(one, 1)
                if one.headers["content-type"].startswith("text/event-stream")
                else [one.json()]
            )
            batch = [call(5, "login", {"api_key": "the-real-key", "city": "Rome"}), req(6, "ping")]
            many = await client.post("/mcp", content=orjson.dumps(batch), headers=hs)
    assert text_of(answers[0]) == "hello Paris"
    assert [text_of(many.json()[0]), many.json()[1]["result"]] == ["hello Rome", {}], (
        "inside a batch too"
    )


def test_a_no_match_error_names_the_cassette_file_but_not_where_it_lives(cassette: Path) -> None:
    lines = [LEGACY_INIT[0][1], LEGACY_INIT[2][1], call(9, "nope", {})]
    stdin = b"".join(orjson.dumps(m) + b"\n" for m in lines)
    proc = subprocess.run(
        mcptape_cmd("replay", str(cassette)),
        input=stdin,
        check=False,
        capture_output=True,
        timeout=60,
    )
    error = orjson.loads(proc.stdout.splitlines()[1])["error"]
    assert error["data"]["cassette"] == "c.jsonl" and "c.jsonl" in error["message"]
    assert str(cassette.parent).encode() not in proc.stdout, "no filesystem path in the error body"
