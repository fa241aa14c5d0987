"""DNS rebinding (issue 14): the HTTP replay refuses a foreign Host, a foreign Origin and an Origin
equal to a foreign Host, bound to loopback or (with its --allow-host list) to a wildcard address;
a wildcard bind without the list does not start; no error body holds a filesystem path."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mcptape.cassette import load
from mcptape.replay import ReplayConfig

try:  # (the HTTP replay is moving into the replay/http subpackage)
    from mcptape.replay.http.app import HttpReplayApp
except ImportError:  # pragma: no cover
    from mcptape.replay.server_http import HttpReplayApp  # type: ignore[no-redef]
from tests.conftest import mcptape_cmd
from tests.replay.tape import LEGACY_INIT, call
from tests.replay.test_redacted_replay import record
from tests.replay.test_server_http_support import ACCEPT, served, sse_messages

pytestmark = pytest.mark.anyio
INIT = orjson.dumps(LEGACY_INIT[0][1])
REBINDING = [
    {"host": "evil.example"},  # a foreign Host
    {
        "host": "evil.example:8000",
        "origin": "http://evil.example:8000",
    },  # an Origin equal to a foreign Host
    {"origin": "http://evil.example"},  # a foreign Origin with a good Host
    {"origin": "null"},
]


@pytest.mark.parametrize("bind", ["127.0.0.1", "0.0.0.0", "::"])
async def test_rebinding_requests_are_refused_and_allowed_names_served(
    tmp_path: Path, bind: str
) -> None:
    cassette = load(record(tmp_path / "c.jsonl"))
    app = HttpReplayApp(
        cassette, ReplayConfig(), host=bind, allowed_hosts=["replay.internal"], on_note=None
    )
    async with served(
        app
    ) as client:  # (the socket is on 127.0.0.1 whatever `bind` says: a network test stays local)
        with anyio.fail_after(10):
            refused = [
                await client.post("/mcp", content=INIT, headers={**ACCEPT, **h}) for h in REBINDING
            ]
            named = await client.post(
                "/mcp",
                content=INIT,
                headers={
                    **ACCEPT,
                    "host": "replay.internal:8000",
                    "origin": "http://replay.internal:8000",
                },
            )
            local = await client.post(
                "/mcp", content=INIT, headers={**ACCEPT, "origin": "http://localhost:5173"}
            )
            answers = [await first_message(r) for r in (named, local)]
    assert [r.status_code for r in refused] == [421, 421, 403, 403]
    assert [a["result"]["serverInfo"]["name"] for a in answers] == ["srv", "srv"]


async def first_message(r: Any) -> Any:
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        return (await sse_messages(r, 1))[0]
    return r.json()


async def test_no_error_body_holds_a_filesystem_path(tmp_path: Path) -> None:
    path = record(tmp_path / "c.jsonl")
    app = HttpReplayApp(load(path), ReplayConfig(), on_note=None)
    async with served(app) as client:
        with anyio.fail_after(10):
            r = await client.post("/mcp", content=INIT, headers=ACCEPT)
            await first_message(r)
            hs = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"]}
            bodies = [
                (
                    await client.post("/mcp", content=orjson.dumps(call(9, "nope", {})), headers=hs)
                ).content,
                (
                    await client.post(
                        "/mcp",
                        content=orjson.dumps(call(10, "login", {"city": "Oslo"})),
                        headers=hs,
                    )
                ).content,
                (await client.post("/other", content=INIT, headers=ACCEPT)).content,
                (await client.post("/mcp", content=b"{not json", headers=hs)).content,
            ]
    assert all(str(tmp_path).encode() not in b and b"/tmp" not in b for b in bodies), bodies
    assert b"c.jsonl" in bodies[0], "the file's name is enough to find it"


def test_a_wildcard_bind_without_an_allow_list_does_not_start(tmp_path: Path) -> None:
    path = record(tmp_path / "c.jsonl")
    proc = subprocess.run(
        mcptape_cmd("serve", "--host", "0.0.0.0", str(path)),
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert (
        "--allow-host NAME" in proc.stderr
        and "Traceback" not in proc.stderr
        and "mcptape serve: serving" not in proc.stderr
    )
