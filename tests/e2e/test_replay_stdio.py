"""End to end over stdio: `mcptape replay` as the server command of the official `mcp` SDK client,
and as a raw line protocol (bad input, cancellation, strict mode, timing)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import Client, MCPError

from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source
from mcptape.replay import NO_MATCH
from mcptape.replay.report import EXHAUSTED
from tests.conftest import mcptape_cmd
from tests.replay.recorded import (
    ERAS,
    OTHER_CLIENT,
    Recording,
    by_operation,
    record_demo,
    reordered_session,
    stdio,
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


def client(cmd: list[str], rec: Recording, **kw: Any) -> Client:
    opts: dict[str, Any] = {
        "mode": rec.mode,
        "elicitation_callback": accept_name,
        "log_level": "info",
        "client_info": OTHER_CLIENT,
    }
    return Client(stdio(cmd), **(opts | kw))


def client_lines(path: Path) -> list[bytes]:
    """The recorded client's messages, as the lines it sent."""
    return [
        orjson.dumps(e.msg)
        for e in load(path).events
        if e.kind is Kind.MESSAGE and e.src is Source.CLIENT
    ]


def run_replay(path: Path, lines: list[bytes], *args: str) -> tuple[int, list[Any], str]:
    """Runs `mcptape replay` on the given input lines; returns exit code, stdout messages, stderr."""
    proc = subprocess.run(
        mcptape_cmd("replay", *args, str(path)),
        input=b"".join(ln + b"\n" for ln in lines),
        capture_output=True,
        timeout=30,
    )
    return (
        proc.returncode,
        [orjson.loads(ln) for ln in proc.stdout.splitlines()],
        proc.stderr.decode(),
    )


async def test_the_sdk_client_gets_the_recorded_results_with_its_own_ids(
    rec: Recording, tmp_path: Path
) -> None:
    rerecorded = (
        tmp_path / "replayed.jsonl"
    )  # the replay session itself, recorded, to look at the wire
    cmd = mcptape_cmd(
        "record",
        "-q",
        "-o",
        str(rerecorded),
        "--",
        *mcptape_cmd("replay", "--strict", str(rec.path)),
    )
    with anyio.fail_after(30):
        async with client(cmd, rec) as c:
            miss = await unmatched_call(c)
            got = await demo_session(c)
            if rec.mode == "auto":
                async with c.listen(tools_list_changed=True) as sub:
                    assert sub.honored.tools_list_changed
    assert got == rec.outcome and got.protocol_version == ERAS[rec.mode]
    assert miss["code"] == NO_MATCH and "'weather' was never recorded" in miss["message"]
    assert miss["data"]["reason"] == "never recorded" and miss["data"]["nearest"]

    original, replayed = load(rec.path).events, load(rerecorded).events

    def calls(events: list[Any]) -> list[tuple[str, Any, Any]]:
        return [
            (e.msg["params"]["name"], e.msg["id"], e.msg["params"].get("_meta", {}).get("progressToken"))
            for e in events if e.kind is Kind.MESSAGE and e.src is Source.CLIENT and e.msg.get("method") == "tools/call" and e.msg["params"]["name"] != "weather"
        ]  # fmt: skip

    want, seen = calls(original), calls(replayed)
    assert [c[0] for c in seen] == [c[0] for c in want]
    assert all(a[1] != b[1] for a, b in zip(seen, want, strict=True))
    tokens = [
        e.msg["params"]["progressToken"]
        for e in replayed
        if e.kind is Kind.MESSAGE and e.msg.get("method") == "notifications/progress"
    ]
    assert tokens == [seen[0][2]] * 2 and seen[0][2] != want[0][2]
    first = next(
        e.msg["params"] for e in replayed if e.kind is Kind.MESSAGE and e.src is Source.CLIENT
    )
    info = first.get("clientInfo") or first["_meta"]["io.modelcontextprotocol/clientInfo"]
    assert info["name"] == "some-other-client"
    assert next(e for e in replayed if e.kind is Kind.EXIT).info == {
        "code": 0
    }  # --strict: everything played


async def test_another_client_in_another_order_gets_the_same_answers(rec: Recording) -> None:
    with anyio.fail_after(30):
        async with client(mcptape_cmd("replay", str(rec.path)), rec, client_info=None) as c:
            got = await reordered_session(c)
    assert got == by_operation(rec.outcome)


async def test_repeats_need_allow_repeats(rec: Recording) -> None:
    with anyio.fail_after(30):
        async with client(mcptape_cmd("replay", "-q", str(rec.path)), rec) as c:
            await c.read_resource("demo://readme")
            with pytest.raises(MCPError) as info:
                await c.read_resource("demo://readme")
        assert info.value.error.code == EXHAUSTED
        async with client(mcptape_cmd("replay", "--allow-repeats", str(rec.path)), rec) as c:
            texts = [(await c.read_resource("demo://readme")).contents[0].text for _ in range(3)]  # type: ignore[union-attr]
    assert texts == ["mcptape demo resource"] * 3


def test_strict_exits_1_listing_what_never_played(rec: Recording) -> None:
    lines = client_lines(rec.path)
    code, out, err = run_replay(rec.path, lines, "--strict")
    assert code == 0, err
    code, out, err = run_replay(rec.path, lines[:3], "--strict")
    assert code == 1
    assert "--strict:" in err and "never played" in err and "prompts/get 'review'" in err


def test_bad_input_lines_are_answered_and_the_server_goes_on(rec: Recording) -> None:
    lines = [
        b"this is not json",
        b'{"hello": "world"}',
        b"[1, 2]",
        b"",
        *client_lines(rec.path)[:1],
    ]
    code, out, err = run_replay(rec.path, lines)
    assert code == 0
    assert [m.get("error", {}).get("code") for m in out[:2]] == [-32700, -32600]
    # a batch is answered with one array (JSON-RPC 2.0 section 6): one -32600 per element
    assert [(m["id"], m["error"]["code"]) for m in out[2]] == [(None, -32600), (None, -32600)]
    assert out[3]["id"] == 1 and "result" in out[3] and len(out) == 4
    assert "not JSON" in err


def test_listen_is_acknowledged_then_cancelled_without_an_answer(
    tapes: dict[str, Recording],
) -> None:
    rec = tapes["auto"]
    listen = next(
        orjson.loads(ln)
        for ln in client_lines(rec.path)
        if orjson.loads(ln).get("method") == "subscriptions/listen"
    )
    mine = {**listen, "id": "my-listen"}
    cancel = {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "my-listen", "reason": "done"},
    }
    ping = {"jsonrpc": "2.0", "id": 99, "method": "ping"}
    code, out, _ = run_replay(rec.path, [orjson.dumps(m) for m in (mine, cancel, ping)])
    assert code == 0
    assert out[0]["method"] == "notifications/subscriptions/acknowledged"
    assert out[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "my-listen"
    # the ping is a fence: the next line is its answer (a 2026-07-28 server refuses ping), none to the cancelled listen
    assert [m["id"] for m in out[1:]] == [99] and out[1]["error"]["code"] == -32602


def test_timing_delays_each_exchange_on_its_own_keeping_its_order(rec: Recording) -> None:
    lines = client_lines(rec.path)  # pipelined: every request arrives at once
    _, instant, _ = run_replay(rec.path, lines)
    code, timed, _ = run_replay(rec.path, lines, "--timing", "20")
    assert code == 0 and sorted(map(orjson.dumps, timed)) == sorted(map(orjson.dumps, instant))
    add = [
        m.get("method", "response")
        for m in timed
        if m.get("method") == "notifications/progress" or m.get("id") == 3
    ]
    assert add == ["notifications/progress", "notifications/progress", "response"]
    first_in_cassette = instant[0]  # the server took its start-up time to answer the first request
    assert timed.index(first_in_cassette) > 0


def test_a_missing_cassette_is_one_line_exit_2(tmp_path: Path) -> None:
    code, out, err = run_replay(tmp_path / "nope.jsonl", [])
    assert code == 2 and out == [] and err.count("\n") == 1 and "no such cassette" in err
