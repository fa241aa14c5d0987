"""Integer ids beyond JavaScript's safe range are valid JSON-RPC ids: `mcptape replay` (stdio)
and `mcptape serve` (HTTP) answer them, echoing the id exactly as sent. An integer beyond what
the JSON parser reads exactly gets a JSON-RPC error with a null id, never a crash."""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import orjson
import pytest

from mcptape.replay import ReplayConfig
from mcptape.replay.http.app import HttpReplayApp
from tests.conftest import mcptape_cmd
from tests.reliability.helpers import client, server, write_cassette
from tests.replay.tape import req
from tests.replay.test_server_http_support import ACCEPT, legacy_streamable, served, sse_messages

from .test_server_http import INIT

LARGE = [2**53, 2**63 - 1, 2**64 - 1, -(2**63)]
"""Ids that were refused -32600 while ids stopped at 2**53 - 1."""
TOO_LARGE = [b"18446744073709551616", b"-9223372036854775809", b"100000000000000000000000000"]
"""Integers the parser cannot read exactly (they arrive as floats)."""


def test_stdio_replay_echoes_large_integer_ids_exactly(tmp_path: Path) -> None:
    cassette = write_cassette(
        tmp_path / "c.jsonl",
        client(req(1, "tools/list")),
        server({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
    )
    sent = b"".join(orjson.dumps(req(i, "tools/list")) + b"\n" for i in LARGE)
    sent += b"".join(b'{"jsonrpc":"2.0","id":%s,"method":"ping"}\n' % raw for raw in TOO_LARGE)
    proc = subprocess.run(mcptape_cmd("replay", "--allow-repeats", str(cassette)), input=sent,
                          capture_output=True, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[: len(LARGE)] == [
        b'{"jsonrpc":"2.0","id":%d,"result":{"tools":[]}}' % i for i in LARGE
    ], "the id comes back digit for digit"
    for line in lines[len(LARGE) :]:
        answer = orjson.loads(line)
        assert answer["id"] is None and answer["error"]["code"] == -32600
        assert "out of range" in answer["error"]["message"]
    assert len(lines) == len(LARGE) + len(TOO_LARGE)


@pytest.mark.anyio
async def test_http_replay_echoes_large_integer_ids_exactly() -> None:
    app = HttpReplayApp(legacy_streamable(), ReplayConfig(allow_repeats=True), on_note=None)
    async with served(app) as http:
        with anyio.fail_after(10):
            opened = await http.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
            await sse_messages(opened, 1)
            hs = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"]}
            answers = [
                await http.post("/mcp", content=orjson.dumps(req(i, "tools/list")), headers=hs)
                for i in LARGE
            ]
            refused = [
                await http.post(
                    "/mcp", content=b'{"jsonrpc":"2.0","id":%s,"method":"ping"}' % raw, headers=hs
                )
                for raw in TOO_LARGE
            ]
    for i, r in zip(LARGE, answers, strict=True):
        assert r.status_code == 200
        assert b'"id":%d,' % i in r.content, "the id comes back digit for digit"
        assert "result" in r.json()
    for r in refused:
        assert r.status_code == 400
        assert r.json()["id"] is None and r.json()["error"]["code"] == -32600
