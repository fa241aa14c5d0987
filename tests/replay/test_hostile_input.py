"""Hostile client input on the replay shells, in process: the stdio shell over files, the HTTP
app under uvicorn on 127.0.0.1 (a handshake-era session and the 2026-07-28 path), the legacy
HTTP+SSE endpoint. Each bad payload of tests/hostile_wire.py gets the JSON-RPC answer, then a
good request is answered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mcptape.cassette import Cassette
from mcptape.replay import ReplayConfig
from mcptape.replay.http.app import HttpReplayApp
from mcptape.replay.server_stdio import StdioReplayServer
from tests.hostile_wire import (
    CASES,
    EVENTS,
    INIT,
    INITIALIZED,
    INVALID,
    LEGACY,
    MODERN,
    Case,
    check,
    echo,
    echoed,
    modern_meta,
)
from tests.replay.tape import tape
from tests.replay.test_server_http_support import ACCEPT, legacy_sse, served, sse_messages

MAX_BODY = 32 * 1024 * 1024
IDS = [c.what for c in CASES]


def cassette() -> Cassette:
    return tape(*[("c" if who == "client" else "s", msg) for who, msg in EVENTS])


def config() -> ReplayConfig:
    return ReplayConfig(allow_repeats=True)


def stdio_answers(tmp_path: Path, *payloads: bytes) -> list[bytes]:
    """The stdio shell's output lines for `payloads` (one line each), stdin and stdout files."""
    stdin, stdout = tmp_path / "in", tmp_path / "out"
    stdin.write_bytes(b"".join(p + b"\n" for p in payloads))
    with stdin.open("rb") as fin, stdout.open("wb") as fout:
        server = StdioReplayServer(
            cassette(), config(), quiet=True, stdin_fd=fin.fileno(), stdout_fd=fout.fileno()
        )
        assert server.run() == 0
    return stdout.read_bytes().splitlines()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_stdio_answers_each_bad_line_as_json_rpc_says_and_goes_on(
    case: Case, tmp_path: Path
) -> None:
    good = orjson.dumps(echo("good", None))
    lines = stdio_answers(tmp_path, orjson.dumps(INIT), case.body(None), good)
    assert orjson.loads(lines[0])["id"] == 0  # the handshake
    assert orjson.loads(lines[-1]) == echoed("good", False)  # still serving
    bad = lines[1:-1]
    check(case.stdio, [orjson.loads(ln) for ln in bad], sum(map(len, bad)))


def modern_headers(method: str, name: str | None = "echo") -> dict[str, str]:
    out = {**ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": method}
    if name is not None:
        out["mcp-name"] = name
    return out


async def post(client: Any, body: bytes, headers: dict[str, str]) -> tuple[int, list[Any], int]:
    """Status, the answers (an event stream's messages, a JSON body, or none) and their size."""
    async with client.stream("POST", "/mcp", content=body, headers=headers) as r:
        if r.headers.get("content-type") == "text/event-stream":
            return r.status_code, await sse_messages(r, 1), 0
        raw = await r.aread()
        assert b"\n" not in raw  # one line of JSON
        return r.status_code, [orjson.loads(raw)] if raw else [], len(raw)


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_http_session_answers_each_bad_body_with_a_status_that_ends_it(case: Case) -> None:
    app = HttpReplayApp(cassette(), config(), on_note=None, max_body=MAX_BODY)
    async with served(app) as client:
        with anyio.fail_after(30):
            r = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
            hs = {
                **ACCEPT,
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": LEGACY,
            }
            assert (
                await client.post("/mcp", content=orjson.dumps(INITIALIZED), headers=hs)
            ).status_code == 202
            status, answers, size = await post(client, case.body(None), hs)
            good = await client.post("/mcp", content=orjson.dumps(echo("good", None)), headers=hs)
    assert status == case.session.status
    check(case.session, answers, size)
    assert good.status_code == 200 and good.json() == echoed("good", False)


@pytest.mark.anyio
@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_http_2026_path_answers_each_bad_body_with_a_status_that_ends_it(case: Case) -> None:
    app = HttpReplayApp(cassette(), config(), on_note=None, max_body=MAX_BODY)
    async with served(app) as client:
        with anyio.fail_after(30):
            status, answers, size = await post(
                client, case.body(modern_meta()), modern_headers(case.method)
            )
            good = echo("good", modern_meta())
            r = await client.post(
                "/mcp", content=orjson.dumps(good), headers=modern_headers("tools/call")
            )
    assert status == case.modern.status
    check(case.modern, answers, size)
    assert r.status_code == 200 and r.json() == echoed("good", True)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("body", "msg_id", "says"),
    [
        (b"[]", None, "empty batch"),
        (b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', None, "string or an integer"),
        (b'{"jsonrpc":"1.0","id":3,"method":"tools/list"}', 3, '"jsonrpc" must be "2.0"'),
    ],
)
async def test_the_legacy_sse_endpoint_answers_an_invalid_message_400_with_its_error(
    body: bytes, msg_id: Any, says: str
) -> None:
    app = HttpReplayApp(legacy_sse(), on_note=None)
    async with served(app) as client:
        with anyio.fail_after(10):
            async with client.stream("GET", "/sse") as stream:
                endpoint = str((await sse_messages(stream, 1))[0])
                bad = await client.post(endpoint, content=body, headers=ACCEPT)
                good = await client.post(endpoint, content=orjson.dumps(INIT), headers=ACCEPT)
                answer = (await sse_messages(stream, 1))[0]
    assert bad.status_code == 400 and bad.headers["content-type"] == "application/json"
    error = bad.json()
    assert error["id"] == msg_id and error["error"]["code"] == INVALID
    assert says in error["error"]["message"]
    assert good.status_code == 202 and answer["id"] == INIT["id"] and "result" in answer
