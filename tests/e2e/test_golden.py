"""Every golden cassette in cassettes/ replays for the official SDK client with the recorded results.

The client's calls are taken from the cassette itself: each recorded tools/call,
resources/read, prompts/get and list request is made again through the SDK `Client` over
the in-process replay, and what the client gets back must equal what the server answered
when recording (results, isError results, and JSON-RPC errors). No node, no server needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError
from mcp.types import ElicitResult

from mcptape.cassette import load
from mcptape.eras import ENVELOPE_RESULT_KEYS
from mcptape.pairing import Exchange, Session, pair
from mcptape.replay.memory import replay_transport
from mcptape.versions import META_SERVER_INFO
from tests.conftest import ROOT

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
GOLDEN = sorted((ROOT / "cassettes").glob("*/*/*.jsonl"))


async def answer(_ctx: Any, _params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


def plain(value: Any) -> Any:
    """A result as comparable JSON: no server info, no resultType 'complete' the SDK may add, no
    caching hints (a 2026-07-28 client replaying a legacy cassette gets them, as from a 2026 server)."""
    data = (
        value.model_dump(mode="json", by_alias=True, exclude_unset=True)
        if hasattr(value, "model_dump")
        else value
    )
    if isinstance(data, dict):
        data = dict(data)
        meta = {k: v for k, v in (data.pop("_meta", None) or {}).items() if k != META_SERVER_INFO}
        if meta:
            data["_meta"] = meta
        if data.get("resultType") == "complete":
            del data["resultType"]
        for hint in ENVELOPE_RESULT_KEYS:
            data.pop(hint, None)
    return data


def normalize_recorded(result: Any) -> Any:
    return plain(dict(result)) if isinstance(result, dict) else result


async def redo(client: Client, ex: Exchange) -> Any:
    p = ex.msg.get("params") or {}
    method = ex.method
    if method == "tools/call":
        return await client.call_tool(p["name"], p.get("arguments"))
    if method == "resources/read":
        return await client.read_resource(p["uri"])
    if method == "prompts/get":
        return await client.get_prompt(p["name"], p.get("arguments"))
    if method == "tools/list":
        return await client.list_tools(cursor=p.get("cursor"))
    if method == "resources/list":
        return await client.list_resources(cursor=p.get("cursor"))
    if method == "prompts/list":
        return await client.list_prompts(cursor=p.get("cursor"))
    raise AssertionError(method)


OPS = {
    "tools/call",
    "resources/read",
    "prompts/get",
    "tools/list",
    "resources/list",
    "prompts/list",
}


@pytest.mark.parametrize(
    "path", GOLDEN, ids=[str(p.relative_to(ROOT / "cassettes")) for p in GOLDEN]
)
async def test_golden_cassette_replays_for_the_sdk_client(path: Path) -> None:
    cassette = load(path)
    assert cassette.warnings == []
    session = pair(cassette.events)
    exchanges = [ex for ex in session.exchanges if ex.method in OPS and ex.retry_of is None]
    # the SDK client re-lists tools on its own to validate structured output; only compare
    # what the session asked for
    assert exchanges, "a golden cassette has calls"
    checked = 0
    with anyio.fail_after(60):
        async with Client(replay_transport(cassette, allow_repeats=True), mode="auto", elicitation_callback=answer,
                          log_level="info", cache=None) as client:  # fmt: skip
            for ex in exchanges:
                final = _final(ex, session)
                try:
                    got = plain(await redo(client, ex))
                except MCPError as exc:
                    got = {"error": exc.error.code, "message": exc.error.message}
                want = ({"error": final.error["code"], "message": final.error["message"]} if final.error is not None
                        else normalize_recorded(final.result))  # fmt: skip
                if ex.method.endswith("/list"):
                    assert [x.get("name") or x.get("uri") for x in got[ex.method.split("/")[0]]] == \
                        [x.get("name") or x.get("uri") for x in want[ex.method.split("/")[0]]]  # fmt: skip
                else:
                    assert got == want, (ex.method, ex.name)
                checked += 1
    assert checked == len(exchanges)


def _final(ex: Exchange, session: Session) -> Exchange:
    """For a 2026 input_required call, the retry that completed it."""
    retries = [r for r in session.exchanges if r.retry_of == ex.index]
    return retries[-1] if retries else ex


async def test_a_null_id_http_error_answers_the_request_it_came_back_on() -> None:
    """server-everything rejects the discover probe with HTTP 400 and `"id": null`: the replay
    answers it at once (the SDK then falls back to initialize) instead of leaving it hanging."""
    path = ROOT / "cassettes" / "everything" / "2025-11-25" / "streamable-http.jsonl"
    discover = pair(load(path).events).exchanges[0]
    assert discover.method == "server/discover" and discover.error is not None
    with anyio.fail_after(5):
        async with Client(
            replay_transport(path), mode="auto", elicitation_callback=answer, cache=None
        ) as client:
            assert client.protocol_version == "2025-11-25"
