"""End to end: replays that keep to what the recorded server did (issue 15, point 5).

A server that asks `roots/list` right after the client's `notifications/initialized`, as
server-filesystem does (tests/servers/roots_server.py, on the official `mcp` SDK), recorded
through `mcptape record` with the SDK client; then checked and replayed.
"""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from anyio.abc import ByteReceiveStream, Process
from mcp import Client, MCPError
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.shared.message import SessionMessage
from mcp.types import ListRootsResult, Root
from mcp_types import jsonrpc_message_adapter

from mcptape.cassette import load
from mcptape.pairing import pair
from mcptape.replay import NO_MATCH, Note
from mcptape.replay.memory import UnplayedExchangesError, replay_transport
from tests.conftest import ROOT, demo_server_cmd, free_port, mcptape_cmd
from tests.e2e.procs import Recorder, Served, stop, wait_port
from tests.replay.recorded import stdio
from tests.replay.tape import note as note_msg
from tests.replay.tape import ok as ok_msg
from tests.replay.tape import req as req_msg
from tests.replay.tape import tape

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

ROOTS_SERVER = ROOT / "tests" / "servers" / "roots_server.py"
WORK = Root(uri="file:///work", name="work")


async def give_no_roots(_ctx: Any) -> ListRootsResult:
    return ListRootsResult(roots=[])


def record_roots(path: Path) -> None:
    """Records a session in which `roots/list` arrives while no client request is in flight."""
    asked = anyio.Event()

    async def give_roots(_ctx: Any) -> ListRootsResult:
        asked.set()
        return ListRootsResult(roots=[WORK])

    async def run() -> None:
        cmd = mcptape_cmd("record", "-q", "-o", str(path), "--", sys.executable, str(ROOTS_SERVER))
        with anyio.fail_after(60):
            async with Client(stdio(cmd), mode="legacy", list_roots_callback=give_roots) as c:
                await asked.wait()  # nothing in flight when the server asks
                result = await c.call_tool("roots", {})
                assert result.structured_content == {"result": "file:///work"}

    anyio.run(run)


@pytest.fixture(scope="module")
def roots_tape(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("roots") / "roots.jsonl"
    record_roots(path)
    return path


def recorded_methods(path: Path) -> list[tuple[str, Any]]:
    """(who, method or id) of each recorded message, in wire order."""
    out: list[tuple[str, Any]] = []
    for line in path.read_bytes().splitlines()[1:]:
        ev = orjson.loads(line)
        if ev.get("kind") == "message":
            out.append((ev["from"], ev["msg"].get("method", ev["msg"].get("id"))))
    return out


def test_the_recording_has_roots_list_outside_any_request_and_check_passes(
    roots_tape: Path,
) -> None:
    wire = recorded_methods(roots_tape)
    at = wire.index(("server", "roots/list"))
    assert wire[at - 1] == ("client", "notifications/initialized") and wire[at + 1][0] == "client"
    proc = subprocess.run(
        mcptape_cmd("check", str(roots_tape)), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "answers no request" not in proc.stdout + proc.stderr


class Lines:
    """Reads a process's stdout one JSON line at a time."""

    def __init__(self, stream: ByteReceiveStream) -> None:
        self.stream, self.buf = stream, b""

    async def next(self) -> Any:
        while b"\n" not in self.buf:
            self.buf += await self.stream.receive()
        line, self.buf = self.buf.split(b"\n", 1)
        return orjson.loads(line)


async def send(proc: Process, msg: dict[str, Any]) -> None:
    assert proc.stdin is not None
    await proc.stdin.send(orjson.dumps(msg) + b"\n")


async def test_replay_asks_roots_list_only_after_the_clients_initialized(roots_tape: Path) -> None:
    hello = {"protocolVersion": "2025-11-25", "capabilities": {"roots": {"listChanged": True}},
             "clientInfo": {"name": "raw", "version": "1"}}  # fmt: skip
    with anyio.fail_after(60):
        async with await anyio.open_process(
            mcptape_cmd("replay", "--strict", str(roots_tape)), stderr=subprocess.DEVNULL
        ) as proc:
            assert proc.stdout is not None and proc.stdin is not None
            out = Lines(proc.stdout)
            await send(proc, {"jsonrpc": "2.0", "id": "i", "method": "initialize", "params": hello})
            # the ping is a fence: its answer comes next, so nothing was sent with the handshake
            await send(proc, {"jsonrpc": "2.0", "id": "p", "method": "ping"})
            assert (await out.next())["id"] == "i"
            assert await out.next() == {"jsonrpc": "2.0", "id": "p", "result": {}}
            await send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            asked = await out.next()
            assert asked["method"] == "roots/list"
            await send(proc, {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": [
                {"uri": "file:///work", "name": "work"}]}})  # fmt: skip
            call = {"name": "roots", "arguments": {}}
            await send(proc, {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": call})
            answer = await out.next()
            assert answer["id"] == 7 and answer["result"]["structuredContent"] == {
                "result": "file:///work"
            }
            await send(proc, {"jsonrpc": "2.0", "id": 8, "method": "tools/list"})
            assert (await out.next())["id"] == 8
            await proc.stdin.aclose()
            assert await proc.wait() == 0  # --strict: every recorded exchange was played


@pytest.mark.parametrize("shell", ["stdio", "http", "memory"])
async def test_the_sdk_client_is_asked_for_its_roots_on_replay(
    roots_tape: Path, shell: str
) -> None:
    asked = anyio.Event()

    async def give_roots(_ctx: Any) -> ListRootsResult:
        asked.set()
        return ListRootsResult(roots=[WORK])

    served = Served(roots_tape, "--strict") if shell == "http" else None
    try:
        with anyio.fail_after(60):
            if served is not None:
                target: Any = served.url  # roots/list comes on the session's GET stream
            elif shell == "stdio":
                target = stdio(mcptape_cmd("replay", "--strict", str(roots_tape)))
            else:
                target = replay_transport(roots_tape, strict=True, on_note=None)
            async with Client(target, mode="legacy", list_roots_callback=give_roots) as c:
                await asked.wait()
                result = await c.call_tool("roots", {})  # (the SDK lists the tools after it)
    finally:
        if served is not None:
            assert served.stop() == 0, served.stderr  # --strict: everything was played
    assert result.structured_content == {"result": "file:///work"}


# -- housekeeping the recording client never sent ------------------------------------------------

EVERYTHING = ROOT / "cassettes" / "everything" / "2025-11-25"
"""server-everything recorded without `logging/setLevel`; it declares `logging`."""
PYTHON_SDK = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"
"""The demo server (official SDK) recorded without `logging/setLevel`; it declares no `logging`."""


def recorded_tools(path: Path) -> list[str]:
    session = pair(load(path).events)
    listed = next(ex for ex in session.exchanges if ex.method == "tools/list")
    return [t["name"] for t in listed.result["tools"]]


async def set_level_first(target: Any) -> tuple[Any, list[str]]:
    """As the Inspector does: `logging/setLevel` right after the handshake, then the tools."""
    async with Client(target, mode="legacy") as c:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            try:
                answer: Any = (await c.set_logging_level("debug")).model_dump(exclude_none=True)
            except MCPError as exc:
                answer = exc.error.model_dump(exclude_none=True)
        return answer, [t.name for t in (await c.list_tools()).tools]


@pytest.mark.parametrize("shell", ["stdio", "http", "memory"])
async def test_an_inspector_style_session_replays_on_a_cassette_recorded_without_set_level(
    shell: str,
) -> None:
    notes: list[Note] = []
    served = Served(EVERYTHING / "streamable-http.jsonl") if shell == "http" else None
    try:
        with anyio.fail_after(60):
            if served is not None:
                target: Any = served.url
            elif shell == "stdio":
                target = stdio(mcptape_cmd("replay", str(EVERYTHING / "stdio.jsonl")))
            else:
                target = replay_transport(EVERYTHING / "stdio.jsonl", on_note=notes.append)
            answer, tools = await set_level_first(target)
    finally:
        if served is not None:
            assert served.stop() == 0
    assert answer == {} and tools == recorded_tools(EVERYTHING / "stdio.jsonl")
    if shell == "memory":
        said = [n.text for n in notes if "logging/setLevel" in n.text]
        assert said == [
            "logging/setLevel was never recorded; accepted, as a server that declares logging does"
        ]


async def test_roots_list_changed_never_recorded_is_noted_once_and_the_session_goes_on() -> None:
    notes: list[Note] = []
    transport = replay_transport(EVERYTHING / "stdio.jsonl", on_note=notes.append)
    with anyio.fail_after(60):
        async with Client(transport, mode="legacy", list_roots_callback=give_no_roots) as c:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await c.send_roots_list_changed()
                await c.send_roots_list_changed()
            tools = [t.name for t in (await c.list_tools()).tools]
    assert tools == recorded_tools(EVERYTHING / "stdio.jsonl")
    said = [n.text for n in notes if "roots/list_changed" in n.text]
    assert said == [
        "notifications/roots/list_changed: the recording client never sent it; nothing answered, as a server does"
    ]


async def test_set_level_to_a_server_without_logging_is_refused_as_the_real_one_does() -> None:
    with anyio.fail_after(60):
        real = await set_level_first(stdio(demo_server_cmd()))
        replayed = await set_level_first(replay_transport(PYTHON_SDK, on_note=None))
    assert real[0]["code"] == -32601 and replayed == real


# -- subscriptions across eras --------------------------------------------------------------------

WATCH_SERVER = ROOT / "tests" / "servers" / "watch_server.py"
COUNTER = "watch://counter"


async def subscribe_legacy(target: Any) -> tuple[list[str], Any]:
    """A legacy client: `resources/subscribe`, then `bump`; returns the updates heard and the result."""
    heard: list[str] = []
    got = anyio.Event()

    async def on_message(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            heard.append(str(message.params.uri))
            got.set()

    async with Client(target, mode="legacy", message_handler=on_message) as c:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await c.subscribe_resource(COUNTER)
        result = (await c.call_tool("bump", {})).structured_content
        await got.wait()
    return heard, result


async def listen_modern(target: Any) -> tuple[list[str], Any]:
    """A 2026-07-28 client: `subscriptions/listen` on the counter, then `bump`."""
    async with Client(target, mode="auto") as c:
        async with c.listen(resource_subscriptions=[COUNTER]) as sub:
            assert list(sub.honored.resource_subscriptions or []) == [COUNTER]
            result = (await c.call_tool("bump", {})).structured_content
            async for event in sub:
                return [str(event.uri)], result  # type: ignore[union-attr]
    raise AssertionError("the listen stream ended without an update")


SUBSCRIBERS = {"legacy": subscribe_legacy, "modern": listen_modern}


@pytest.fixture(scope="module")
def watched(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The watch server recorded by each era's subscriber: `legacy` and `modern` cassettes."""
    where = tmp_path_factory.mktemp("watch")

    async def run() -> None:
        with anyio.fail_after(90):
            await record_each()

    async def record_each() -> None:
        for era, subscriber in SUBSCRIBERS.items():
            cmd = mcptape_cmd("record", "-q", "-o", str(where / f"{era}.jsonl"), "--",
                              sys.executable, str(WATCH_SERVER))  # fmt: skip
            assert await subscriber(stdio(cmd)) == ([COUNTER], {"result": "1"})

    anyio.run(run)
    return {era: where / f"{era}.jsonl" for era in SUBSCRIBERS}


@pytest.mark.parametrize("shell", ["stdio", "http", "memory"])
@pytest.mark.parametrize(
    ("client_era", "cassette_era"), [("legacy", "modern"), ("modern", "legacy")]
)
async def test_a_subscriber_of_one_era_gets_the_updates_recorded_by_the_other(
    watched: dict[str, Path], shell: str, client_era: str, cassette_era: str
) -> None:
    path = watched[cassette_era]
    served = Served(path, "--strict") if shell == "http" else None
    try:
        with anyio.fail_after(60):
            if served is not None:
                target: Any = served.url
            elif shell == "stdio":
                target = stdio(mcptape_cmd("replay", "--strict", str(path)))
            else:
                target = replay_transport(path, strict=True, on_note=None)
            heard, result = await SUBSCRIBERS[client_era](target)
    finally:
        if served is not None:
            assert served.stop() == 0, served.stderr  # --strict: every recording was played
    assert heard == [COUNTER] and result == {"result": "1"}


# -- what the client declared picks between recordings ---------------------------------------------

GATED_SERVER = ROOT / "tests" / "servers" / "roots_gated_server.py"
"""Lists its `files` tool only to clients that declare `roots`."""


async def listed(target: Any, roots: bool, mode: str = "legacy") -> list[str]:
    """The tool names a client that declares roots (or not) is given."""
    kw: dict[str, Any] = {"list_roots_callback": give_no_roots} if roots else {}
    async with Client(target, mode=mode, **kw) as c:
        return [t.name for t in (await c.list_tools()).tools]


@pytest.fixture(scope="module")
def gated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The gated server over Streamable HTTP, recorded through `mcptape record --http` with two
    clients in one cassette per era (one declaring roots, one not); and over stdio with one."""
    where = tmp_path_factory.mktemp("gated")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(GATED_SERVER), "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )

    async def both(url: str, mode: str) -> None:
        with anyio.fail_after(60):
            assert await listed(url, True, mode) == ["files", "echo"]
            assert await listed(url, False, mode) == ["echo"]

    try:
        wait_port(port, server)
        for mode in ("legacy", "auto"):
            recorder = Recorder(f"http://127.0.0.1:{port}/mcp", where / f"{mode}.jsonl")
            try:
                anyio.run(both, recorder.url, mode)
            finally:
                recorder.stop()
    finally:
        stop(server)
    one = mcptape_cmd("record", "-q", "-o", str(where / "one.jsonl"), "--",
                      sys.executable, str(GATED_SERVER))  # fmt: skip
    assert anyio.run(listed, stdio(one), True) == ["files", "echo"]
    return {name: where / f"{name}.jsonl" for name in ("legacy", "auto", "one")}


@pytest.mark.parametrize(
    ("cassette", "mode", "shell"),
    [
        ("legacy", "legacy", "stdio"), ("legacy", "legacy", "http"), ("legacy", "legacy", "memory"),
        ("auto", "auto", "stdio"), ("auto", "auto", "http"), ("auto", "auto", "memory"),
        ("legacy", "auto", "memory"), ("auto", "legacy", "memory"),  # the other era's client
    ],
)  # fmt: skip
async def test_two_recordings_that_differ_in_capabilities_serve_each_client_the_one_that_fits(
    gated: dict[str, Path], cassette: str, mode: str, shell: str
) -> None:
    path = gated[cassette]
    served = Served(path) if shell == "http" else None
    notes: list[Note] = []
    try:
        with anyio.fail_after(60):
            for roots, want in ((True, ["files", "echo"]), (False, ["echo"])):
                if served is not None:
                    target: Any = served.url
                elif shell == "stdio":
                    target = stdio(mcptape_cmd("replay", str(path)))
                else:
                    target = replay_transport(path, on_note=notes.append)
                assert await listed(target, roots, mode) == want
    finally:
        if served is not None:
            assert served.stop() == 0, served.stderr
    said = [n.text for n in notes] + (served.stderr if served is not None else [])
    assert not [t for t in said if "declared otherwise" in t]  # each fitted: nothing to say


async def test_one_recording_serves_a_client_that_declares_otherwise_with_one_line_and_strict_fails(
    gated: dict[str, Path],
) -> None:
    notes: list[Note] = []
    with anyio.fail_after(60):
        got = await listed(replay_transport(gated["one"], on_note=notes.append), False)
        assert got == ["files", "echo"]  # what the recording client (with roots) was given
        warned = [n.text for n in notes if n.level == "warning"]
        assert len(warned) == 1 and "clientCapabilities/roots is absent" in warned[0], notes
        strict = replay_transport(gated["one"], strict=True, on_note=None)
        with pytest.RaisesGroup(
            UnplayedExchangesError, allow_unwrapped=True, flatten_subgroups=True
        ):
            async with Client(strict) as c:
                with pytest.raises(MCPError) as refused:
                    await c.list_tools()
    assert refused.value.error.code == NO_MATCH and "roots" in refused.value.error.message


async def test_with_recorded_timing_a_cancelled_requests_pending_answer_is_never_sent() -> None:
    skipped = ("c", note_msg("notifications/elsewhere"))  # time passes: 0.1 s a step
    cassette = tape(
        ("c", req_msg(1, "tools/call", {"name": "slow", "arguments": {}})), skipped,
        ("s", ok_msg(1, {"content": [{"type": "text", "text": "slow"}]})),  # 0.2 s after its call
        ("c", req_msg(2, "tools/call", {"name": "slower", "arguments": {}})), skipped, skipped, skipped,
        ("s", ok_msg(2, {"content": [{"type": "text", "text": "slower"}]})),  # 0.4 s after its call
    )  # fmt: skip
    notes: list[Note] = []
    transport = replay_transport(cassette, timing=1.0, on_note=notes.append)
    cancel = note_msg("notifications/cancelled", {"requestId": 7})
    with anyio.fail_after(30):
        async with transport as (reads, writes):
            for m in (req_msg(7, "tools/call", {"name": "slow", "arguments": {}}), cancel,
                      req_msg(8, "tools/call", {"name": "slower", "arguments": {}})):  # fmt: skip
                await writes.send(SessionMessage(jsonrpc_message_adapter.validate_python(m)))
            first = await reads.receive()  # "slow" was due first: had it been sent, it came first
    assert isinstance(first, SessionMessage) and first.message.model_dump()["id"] == 8
    assert any("what is left of its answer is not sent" in n.text for n in notes)
