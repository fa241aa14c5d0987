"""End to end: the official `mcp` SDK client talks to the SDK server through `mcptape record`."""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source
from mcptape.pairing import pair
from tests.conftest import DEMO_SERVER, mcptape_cmd
from tests.sdk_helpers import accept_name, demo_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


def direct() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[str(DEMO_SERVER)])


def recorded(path: Path) -> StdioServerParameters:
    cmd = mcptape_cmd("record", "-q", "-o", str(path), "--", sys.executable, str(DEMO_SERVER))
    return StdioServerParameters(command=cmd[0], args=cmd[1:])


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_client_sees_the_same_session_through_the_recorder(tmp_path: Path, mode: str) -> None:
    with anyio.fail_after(60):
        async with Client(
            direct(), mode=mode, elicitation_callback=accept_name, log_level="info"
        ) as c:
            want = await demo_session(c)
        cassette = tmp_path / "s.jsonl"
        async with Client(
            recorded(cassette), mode=mode, elicitation_callback=accept_name, log_level="info"
        ) as c:
            got = await demo_session(c)
    assert got == want
    assert got.progress == [(1.0, 2.0, "adding"), (2.0, 2.0, "done")]
    assert want.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")

    cas = load(cassette)
    assert cas.warnings == []
    assert [e.seq for e in cas.events] == list(range(1, len(cas.events) + 1))
    assert cas.events[-1].kind is Kind.END
    assert cas.events[-2].kind is Kind.EXIT and cas.events[-2].info == {"code": 0}
    session = pair(cas.events)
    methods = [ex.method for ex in session.exchanges]
    calls = [ex.name for ex in session.exchanges if ex.method == "tools/call"]
    if mode == "auto":
        assert methods[0] == "server/discover"
        assert calls == [
            "add",
            "fail",
            "divide",
            "greet",
            "greet",
        ]  # greet: input_required, then the retry
        retry = [ex for ex in session.exchanges if ex.retry_of is not None]
        assert len(retry) == 1 and retry[0].name == "greet"
    else:
        assert methods[:2] == ["initialize", "notifications/initialized"]
        assert calls == ["add", "fail", "divide", "greet"]
        greet = next(ex for ex in session.exchanges if ex.name == "greet")
        assert [it.msg.get("method", "answer") for it in greet.items] == [
            "elicitation/create",
            "answer",
        ]
    add = next(ex for ex in session.exchanges if ex.name == "add")
    assert [it.msg["method"] for it in add.items] == [
        "notifications/progress", "notifications/message", "notifications/progress",
    ]  # fmt: skip
    for ex in session.exchanges:
        assert ex.is_notification or ex.response is not None, ex.method
    assert session.orphans == []
    client_msgs = [e for e in cas.events if e.kind is Kind.MESSAGE and e.src is Source.CLIENT]
    assert client_msgs, "client messages recorded"
