"""End to end, in process: the official `mcp` SDK client replays recorded demo sessions
through `mcptape.replay.memory` (no subprocess for the replay)."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest
from mcp import Client, MCPError

from mcptape.cassette import load
from mcptape.replay import NO_MATCH, Note
from mcptape.replay.memory import ReplayTransport, UnplayedExchangesError, replay_transport
from mcptape.replay.report import EXHAUSTED
from tests.replay.recorded import (
    ERAS,
    OTHER_CLIENT,
    Recording,
    by_operation,
    record_demo,
    reordered_session,
    unmatched_call,
)
from tests.sdk_helpers import accept_name, demo_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture(scope="module")
def tapes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Recording]:
    where = tmp_path_factory.mktemp("tape")
    return {mode: record_demo(where / f"{mode}.jsonl", mode) for mode in ERAS}


@pytest.fixture(params=sorted(ERAS))
def rec(request: pytest.FixtureRequest, tapes: dict[str, Recording]) -> Recording:
    return tapes[request.param]


def client(transport: Any, rec: Recording, **kw: Any) -> Client:
    opts: dict[str, Any] = {
        "mode": rec.mode,
        "elicitation_callback": accept_name,
        "log_level": "info",
        "client_info": OTHER_CLIENT,
    }
    return Client(transport, **(opts | kw))


class Tap:
    """Wraps a transport and keeps every message both ways, as JSON."""

    def __init__(self, inner: ReplayTransport) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []
        self.received: list[dict[str, Any]] = []

    async def __aenter__(self) -> Any:
        read, write = await self.inner.__aenter__()
        tap = self

        class W:
            async def send(self, item: Any) -> None:
                tap.sent.append(
                    item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                )
                await write.send(item)

            async def aclose(self) -> None:
                await write.aclose()

            async def __aenter__(self) -> W:
                return self

            async def __aexit__(self, *exc: Any) -> None:
                await write.aclose()

        class R:
            def __aiter__(self) -> R:
                return self

            async def __anext__(self) -> Any:
                item = await read.__anext__()
                tap.received.append(
                    item.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                )
                return item

            async def receive(self) -> Any:
                return await self.__anext__()

            async def aclose(self) -> None:
                await read.aclose()

            async def __aenter__(self) -> R:
                return self

            async def __aexit__(self, *exc: Any) -> None:
                await read.aclose()

        return R(), W()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)


async def test_the_sdk_client_sees_the_recorded_session_with_its_own_ids(rec: Recording) -> None:
    tap = Tap(replay_transport(rec.path, strict=True, on_note=None))
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    with anyio.fail_after(10):
        async with client(tap, rec, logging_callback=on_log) as c:
            miss = await unmatched_call(c)  # shifts this client's ids off the recorded ones
            got = await demo_session(c)
            if rec.mode == "auto":
                async with c.listen(tools_list_changed=True) as sub:
                    assert sub.honored.tools_list_changed
    assert got == rec.outcome
    assert got.protocol_version == ERAS[rec.mode]
    assert logs == rec.logs == ["adding 1 and 2"]
    assert miss["code"] == NO_MATCH and miss["data"]["reason"] == "never recorded"
    recorded_calls = [
        (e.msg["params"]["name"], e.msg["id"])
        for e in load(rec.path).events
        if e.msg and e.msg.get("method") == "tools/call"
    ]
    replayed_calls = [
        (m["params"]["name"], m["id"])
        for m in tap.sent
        if m.get("method") == "tools/call" and m["params"]["name"] != "weather"
    ]
    assert [n for n, _ in replayed_calls] == [n for n, _ in recorded_calls]
    assert all(a != b for (_, a), (_, b) in zip(replayed_calls, recorded_calls, strict=True))
    sent_ids = [m["id"] for m in tap.sent if "method" in m and "id" in m]
    answered = {m["id"] for m in tap.received if "method" not in m}
    assert answered <= set(sent_ids)
    tokens = [
        m["params"]["progressToken"]
        for m in tap.received
        if m.get("method") == "notifications/progress"
    ]
    assert len(tokens) == 2 and tokens[0] != 3
    first = tap.sent[0]["params"]
    infos = [first.get("clientInfo") or first["_meta"]["io.modelcontextprotocol/clientInfo"]]
    assert infos and all(i["name"] == "some-other-client" for i in infos)


async def test_another_client_in_another_order_gets_the_same_answers(rec: Recording) -> None:
    with anyio.fail_after(10):
        async with client(replay_transport(rec.path, on_note=None), rec, client_info=None) as c:
            got = await reordered_session(c)
    assert got == by_operation(rec.outcome)


async def test_each_entry_of_the_transport_is_a_new_session(rec: Recording) -> None:
    transport = replay_transport(rec.path, on_note=None)
    with anyio.fail_after(10):
        for _ in range(2):
            async with client(transport, rec) as c:
                assert await demo_session(c) == rec.outcome


async def test_repeats_are_opt_in(rec: Recording) -> None:
    notes: list[Note] = []
    with anyio.fail_after(10):
        async with client(replay_transport(rec.path, on_note=notes.append), rec) as c:
            await c.call_tool("divide", {"a": 1, "b": 0})
            with pytest.raises(MCPError) as info:
                await c.call_tool("divide", {"a": 1, "b": 0})
        assert info.value.error.code == EXHAUSTED
        assert any("--allow-repeats" in n.text for n in notes)
        async with client(replay_transport(rec.path, allow_repeats=True, on_note=None), rec) as c:
            results = [(await c.call_tool("divide", {"a": 1, "b": 0})).is_error for _ in range(3)]
        assert results == [True, True, True]


async def test_strict_raises_when_recorded_exchanges_never_played(rec: Recording) -> None:
    with anyio.fail_after(10), pytest.raises(UnplayedExchangesError, match="never played") as info:
        async with client(replay_transport(rec.path, strict=True, on_note=None), rec) as c:
            await c.list_tools()
    assert "tools/call 'greet'" in str(info.value)


async def test_unmatched_arguments_name_the_field_and_the_ignore_option(rec: Recording) -> None:
    with anyio.fail_after(10):
        async with client(replay_transport(rec.path, on_note=None), rec) as c:
            with pytest.raises(MCPError) as info:
                await c.call_tool("add", {"a": 1, "b": 5})
            async with client(
                replay_transport(rec.path, ignore=["/arguments/b"], on_note=None), rec
            ) as c2:
                assert (await c2.call_tool("add", {"a": 1, "b": 5})).structured_content == {
                    "result": "3"
                }
    error = info.value.error
    assert error.code == NO_MATCH
    assert "arguments/b is 5 (recorded 2)" in error.message
    assert error.data["nearest"][0]["diff"] == [
        {"path": "/arguments/b", "recorded": 2, "incoming": 5}
    ]
    assert "--ignore /arguments/b" in error.data["hint"]


async def test_an_auto_client_falls_back_to_initialize_on_a_legacy_cassette_with_same_era(
    tapes: dict[str, Recording],
) -> None:
    legacy = tapes["legacy"]
    with anyio.fail_after(10):
        async with Client(
            replay_transport(legacy.path, on_note=None, same_era=True),
            mode="auto",
            elicitation_callback=accept_name,
            log_level="info",
        ) as c:
            assert c.protocol_version == "2025-11-25"
            assert await demo_session(c) == legacy.outcome


async def test_recorded_timing_replays_the_same_session(rec: Recording) -> None:
    with anyio.fail_after(20):
        async with client(replay_transport(rec.path, timing=50.0, on_note=None), rec) as c:
            assert await demo_session(c) == rec.outcome


async def test_a_call_the_client_cancels_mid_elicitation_is_dropped(
    tapes: dict[str, Recording],
) -> None:
    rec = tapes["legacy"]
    transport = replay_transport(rec.path, on_note=None)
    scope = anyio.CancelScope()

    async def give_up(_ctx: Any, _params: Any) -> Any:
        scope.cancel()  # the user walks away while the server waits for the answer
        await anyio.sleep_forever()

    with anyio.fail_after(10):
        async with client(transport, rec, elicitation_callback=give_up) as c:
            with scope:
                await c.call_tool("greet", {})
            assert scope.cancelled_caught
            await (
                c.list_tools()
            )  # answered after the client's notifications/cancelled was processed
            assert transport.engine is not None and transport.engine.in_flight == 0
            assert (await c.call_tool("divide", {"a": 1, "b": 0})).is_error


async def test_the_transport_fits_the_sdks_public_transport_protocol(rec: Recording) -> None:
    """memory.py relies only on the public `mcp.client.Transport`: if the SDK changes what a transport
    yields (the stream methods its session calls), this fails before any client does."""
    import typing

    from mcp.client import Transport

    (streams,) = next(typing.get_args(b) for b in Transport.__orig_bases__ if typing.get_args(b))  # type: ignore[attr-defined]
    protocols = [typing.get_origin(t) or t for t in typing.get_args(streams)]
    members = [
        set(getattr(typing, "get_protocol_members", lambda p: p.__protocol_attrs__)(p))
        for p in protocols
    ]
    assert members[0] >= {"receive", "aclose", "__anext__"} and members[1] >= {"send", "aclose"}
    with anyio.fail_after(10):
        async with replay_transport(rec.path) as (read, write):
            for wanted, stream in zip(members, (read, write), strict=True):
                assert all(callable(getattr(stream, name, None)) for name in wanted), (
                    stream,
                    wanted,
                )


async def test_hostile_arguments_get_bounded_errors_and_the_session_goes_on(
    rec: Recording,
) -> None:
    deep: Any = []
    for _ in range(210):  # deeper than mcptape serves, not so deep that pydantic refuses to send it
        deep = [deep]
    with anyio.fail_after(30):
        async with client(replay_transport(rec.path, on_note=None), rec) as c:
            with pytest.raises(MCPError) as nested:
                await c.call_tool("add", {"a": 1, "b": deep})
            with pytest.raises(MCPError) as big:
                await c.call_tool("add", {"a": 1, "b": "x" * 2_000_000})
            added = await c.call_tool("add", {"a": 1, "b": 2})
    assert nested.value.error.code == -32600
    assert "more than 200 levels" in nested.value.error.message
    assert big.value.error.code == NO_MATCH and "(2000002 bytes)" in big.value.error.message
    assert len(orjson.dumps(big.value.error.model_dump(mode="json"))) < 16 * 1024
    assert added.structured_content == {"result": "3"}
