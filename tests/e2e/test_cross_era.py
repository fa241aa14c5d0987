"""End to end: the official `mcp` SDK client replays a cassette recorded in the other protocol era,
in process and through `mcptape replay` (stdio), and a client declaring other capabilities."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import pytest
from mcp import Client

import mcptape
from mcptape.eras import strip_envelope
from mcptape.replay import Note
from mcptape.replay.memory import replay_transport
from tests.conftest import mcptape_cmd
from tests.replay.recorded import ERAS, OTHER_CLIENT, Recording, record_demo, stdio
from tests.sdk_helpers import Outcome, accept_name, demo_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture(scope="module")
def tapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recording]:
    where = tmp_path_factory.mktemp("tape")
    return {mode: record_demo(where / f"{mode}.jsonl", mode) for mode in ERAS}


def legacy_client(transport: Any, **kw: Any) -> Client:
    opts: dict[str, Any] = {
        "mode": "legacy",
        "elicitation_callback": accept_name,
        "log_level": "info",
        "client_info": OTHER_CLIENT,
    }
    return Client(transport, **(opts | kw))


async def test_a_legacy_client_replays_a_2026_cassette_in_process(
    tapes: dict[str, Recording],
) -> None:
    rec = tapes["auto"]
    notes: list[Note] = []
    with anyio.fail_after(20):
        async with legacy_client(replay_transport(rec.path, on_note=notes.append)) as c:
            got = await demo_session(c)
    assert got.protocol_version == "2025-11-25"
    assert replace(got, protocol_version=rec.outcome.protocol_version) == rec.outcome
    assert got.progress and got.progress == rec.outcome.progress
    assert any("handshake made from the recorded server/discover" in n.text for n in notes)


async def test_a_legacy_client_replays_a_2026_cassette_through_mcptape_replay(
    tapes: dict[str, Recording],
) -> None:
    rec = tapes["auto"]
    with anyio.fail_after(30):
        async with legacy_client(stdio(mcptape_cmd("replay", "-q", str(rec.path)))) as c:
            got = await demo_session(c)
    assert replace(got, protocol_version=rec.outcome.protocol_version) == rec.outcome


async def test_the_readme_in_process_example_works_on_a_demo_cassette(
    tapes: dict[str, Recording],
) -> None:
    """`mcp.Client(mcptape.replay_transport("cassettes/demo.jsonl"))`, as the README shows: a client with
    its own defaults (no elicitation callback, no log level) gets the recorded answers, and a note says
    what it declared differently."""
    rec = tapes["auto"]
    notes: list[Note] = []
    with anyio.fail_after(20):
        async with Client(mcptape.replay_transport(rec.path, on_note=notes.append)) as c:
            tools = [t.name for t in (await c.list_tools()).tools]
            added = await c.call_tool("add", {"a": 1, "b": 2})
    assert tools == rec.outcome.tools
    assert (
        added.model_dump(mode="json", exclude_none=True, by_alias=True)["content"]
        == rec.outcome.results[0]["content"]
    )
    assert any("declared otherwise" in n.text and "logLevel" in n.text for n in notes)


def without_envelope(outcome: Outcome) -> Outcome:
    """The outcome with the 2026-only result members taken off (what a legacy client never sees)."""
    return replace(
        outcome, protocol_version=None, results=[strip_envelope(r)[0] for r in outcome.results]
    )


async def test_a_2026_client_replays_a_legacy_cassette_in_process(
    tapes: dict[str, Recording],
) -> None:
    """The SDK's `auto` client discovers (answered from the recorded initialize) and speaks 2026-07-28:
    elicitation comes as input_required, and every result, error and progress step is the recorded one."""
    rec = tapes["legacy"]
    notes: list[Note] = []
    with anyio.fail_after(20):
        async with Client(
            replay_transport(rec.path, on_note=notes.append),
            mode="auto",
            elicitation_callback=accept_name,
            log_level="info",
        ) as c:
            got = await demo_session(c)
    assert got.protocol_version == "2026-07-28"
    assert without_envelope(got) == without_envelope(rec.outcome)
    assert got.progress and got.progress == rec.outcome.progress
    assert any("answered from the recorded initialize result" in n.text for n in notes)


async def test_a_2026_client_replays_a_legacy_cassette_through_mcptape_replay(
    tapes: dict[str, Recording],
) -> None:
    rec = tapes["legacy"]
    with anyio.fail_after(30):
        async with Client(
            stdio(mcptape_cmd("replay", "-q", str(rec.path))),
            mode="auto",
            elicitation_callback=accept_name,
            log_level="info",
        ) as c:
            got = await demo_session(c)
    assert got.protocol_version == "2026-07-28" and without_envelope(got) == without_envelope(
        rec.outcome
    )
