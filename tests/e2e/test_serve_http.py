"""End to end: `mcptape serve` answers the official `mcp` SDK client from cassettes.

The demo server is recorded through `mcptape record --http` (Streamable HTTP in both eras,
and the legacy HTTP+SSE transport), then stopped; `mcptape serve` on the cassette must give
the SDK client the same results, progress included. Also: a stdio cassette served over
HTTP, an HTTP cassette replayed on stdio, concurrent sessions, Origin and header checks.
Every process listens on 127.0.0.1; nothing sleeps: processes are awaited by their
announcement line on stderr (or by their port, for the demo server).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.sse import sse_client

from mcptape.cassette import load
from mcptape.eras import strip_envelope
from mcptape.pairing import pair
from tests.conftest import ROOT, demo_server_cmd, free_port, mcptape_cmd
from tests.e2e.procs import Recorder, Served, stop, wait_port
from tests.e2e.test_golden import OPS, normalize_recorded, plain, redo
from tests.e2e.test_golden import _final as golden_final
from tests.e2e.test_golden import answer as golden_answer
from tests.replay.recorded import record_demo
from tests.sdk_helpers import Outcome, accept_name, demo_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
PROGRESS = [(1.0, 2.0, "adding"), (2.0, 2.0, "done")]


@pytest.fixture
def serve() -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def run(cassette: Path, *extra: str) -> Served:
        s = Served(cassette, *extra)
        started.append(s)
        return s

    yield run
    for s in started:
        if s.proc.poll() is None:
            s.stop()


async def session_over(url: str, kind: str) -> Outcome:
    """The demo session through the SDK: kind is a `Client` mode ("auto", "legacy") or "sse"."""
    target: Any = sse_client(url) if kind == "sse" else url
    mode = "legacy" if kind == "sse" else kind
    async with Client(target, mode=mode, elicitation_callback=accept_name, log_level="info") as c:
        return await demo_session(c)


class Recording:
    def __init__(self, path: Path, want: Outcome) -> None:
        self.path = path
        self.want = want


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Recording]:
    """Records the demo server over HTTP ("auto", "legacy": Streamable HTTP; "sse": HTTP+SSE), once per kind.

    It runs its own event loop: call it from a worker thread (`anyio.to_thread.run_sync`).
    """
    cache: dict[str, Recording] = {}

    def get(kind: str) -> Recording:
        if kind in cache:
            return cache[kind]
        port = free_port()
        server = subprocess.Popen(
            demo_server_cmd("sse" if kind == "sse" else "http", str(port)),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        path = tmp_path_factory.mktemp("serve") / f"{kind}.jsonl"
        try:
            wait_port(port, server)
            upstream = f"http://127.0.0.1:{port}/{'sse' if kind == 'sse' else 'mcp'}"
            rec = Recorder(upstream, path)

            async def both() -> tuple[Outcome, Outcome]:
                with anyio.fail_after(60):
                    return await session_over(upstream, kind), await session_over(rec.url, kind)

            try:
                want, through = anyio.run(both)
            finally:
                rec.stop()
        finally:
            stop(server, signal.SIGTERM)  # the upstream is gone before anything is served
        assert through == want and want.progress == PROGRESS
        cache[kind] = Recording(path, want)
        return cache[kind]

    return get


@pytest.mark.parametrize("kind", ["auto", "legacy", "sse"])
async def test_the_sdk_client_gets_the_recorded_session_from_serve(
    recorded: Any, serve: Any, kind: str
) -> None:
    rec = await anyio.to_thread.run_sync(recorded, kind)
    served = serve(rec.path, "--strict")
    assert served.url.endswith("/sse" if kind == "sse" else "/mcp") and served.url.startswith(
        "http://127.0.0.1:"
    )
    with anyio.fail_after(30):
        got = await session_over(served.url, kind)
    assert got == rec.want
    assert got.progress == PROGRESS, (
        "progress delivered before the result (the SDK drops progress that comes after)"
    )
    assert served.stop() == 0, served.stderr  # strict: the whole recording was played


async def test_an_auto_client_falls_back_to_initialize_on_a_legacy_recording_with_same_era(
    recorded: Any, serve: Any
) -> None:
    rec = await anyio.to_thread.run_sync(recorded, "legacy")
    served = serve(rec.path, "--strict", "--same-era")
    with anyio.fail_after(30):
        got = await session_over(served.url, "auto")
    assert got == rec.want and got.protocol_version == "2025-11-25"
    assert served.stop() == 0, served.stderr


@pytest.mark.parametrize(("recorded_by", "client"), [("legacy", "auto"), ("auto", "legacy")])
async def test_a_client_of_the_other_era_gets_the_recorded_session_from_serve(
    recorded: Any, serve: Any, recorded_by: str, client: str
) -> None:
    """Streamable HTTP across eras: an `auto` client speaks 2026-07-28 to a legacy recording (discover
    from its initialize, elicitation as input_required), a legacy client the handshake to a 2026 one."""
    rec = await anyio.to_thread.run_sync(recorded, recorded_by)
    served = serve(rec.path)
    with anyio.fail_after(30):
        got = await session_over(served.url, client)
    assert got.protocol_version == ("2026-07-28" if client == "auto" else "2025-11-25")
    plain = [strip_envelope(r)[0] for r in got.results]
    assert plain == [strip_envelope(r)[0] for r in rec.want.results] and got.tools == rec.want.tools
    assert got.progress == PROGRESS
    assert served.stop() == 0, served.stderr


@pytest.mark.parametrize("kind", ["legacy", "sse"])
async def test_concurrent_sessions_each_get_their_own_answers(
    recorded: Any, serve: Any, kind: str
) -> None:
    rec = await anyio.to_thread.run_sync(recorded, kind)
    served = serve(rec.path)
    outcomes: list[Outcome] = []

    async def one() -> None:
        outcomes.append(await session_over(served.url, kind))

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(one)
    assert outcomes == [rec.want] * 4


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_stdio_cassette_is_served_over_streamable_http(
    tmp_path: Path, serve: Any, mode: str
) -> None:
    recording = await anyio.to_thread.run_sync(record_demo, tmp_path / "stdio.jsonl", mode)
    served = serve(recording.path)
    with anyio.fail_after(30):
        async with Client(
            served.url, mode=mode, elicitation_callback=accept_name, log_level="info"
        ) as c:
            got = await demo_session(c)
            if mode == "auto":
                async with c.listen(tools_list_changed=True):
                    pass  # acknowledged: the listen stream opened
    assert got == recording.outcome and got.progress == PROGRESS


@pytest.mark.parametrize("kind", ["auto", "legacy", "sse"])
async def test_an_http_cassette_replays_on_stdio(recorded: Any, kind: str) -> None:
    rec = await anyio.to_thread.run_sync(recorded, kind)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcptape", "replay", "-q", str(rec.path)]
    )
    with anyio.fail_after(30):
        async with Client(
            params,
            mode="legacy" if kind == "sse" else kind,
            elicitation_callback=accept_name,
            log_level="info",
        ) as c:
            got = await demo_session(c)
    assert got == rec.want


async def test_foreign_origins_and_mismatched_headers_are_refused(
    recorded: Any, serve: Any
) -> None:
    served = serve((await anyio.to_thread.run_sync(recorded, "auto")).path)
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}  # fmt: skip
    headers = {
        "accept": "application/json, text/event-stream",
        "content-type": "application/json",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
    }
    with anyio.fail_after(10):
        async with httpx.AsyncClient(timeout=5) as http:
            foreign = await http.post(
                served.url,
                content=orjson.dumps(msg),
                headers={**headers, "mcp-name": "add", "origin": "https://evil.example"},
            )
            wrong = await http.post(
                served.url, content=orjson.dumps(msg), headers={**headers, "mcp-name": "divide"}
            )
            right = await http.post(
                served.url, content=orjson.dumps(msg), headers={**headers, "mcp-name": "add"}
            )
    assert foreign.status_code == 403
    assert (wrong.status_code, wrong.json()["error"]["code"], wrong.json()["id"]) == (
        400,
        -32020,
        1,
    )
    assert right.status_code == 200 and "3" in right.text


async def test_strict_lists_what_no_session_asked_for_and_exits_1(
    recorded: Any, serve: Any
) -> None:
    served = serve((await anyio.to_thread.run_sync(recorded, "legacy")).path, "--strict")
    with anyio.fail_after(
        30
    ):  # declaring what the recording client declared: strict plays only what fits
        async with Client(served.url, mode="legacy", elicitation_callback=accept_name) as c:
            await c.list_tools()
    assert served.stop() == 1
    assert any("tools/call" in line for line in served.stderr), served.stderr


def test_serve_help_and_bad_port() -> None:
    out = subprocess.run(mcptape_cmd("serve", "--help"), capture_output=True, text=True, timeout=30)
    assert out.returncode == 0 and "--allow-repeats" in out.stdout and "Examples" in out.stdout
    bad = subprocess.run(
        mcptape_cmd("serve", "nope.jsonl", "--port", "70000"),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert bad.returncode == 2 and bad.stderr.startswith("mcptape: error:")


async def test_stopping_ends_open_streams_and_exits_0(recorded: Any, serve: Any) -> None:
    served = serve((await anyio.to_thread.run_sync(recorded, "sse")).path)
    with anyio.fail_after(30):
        async with httpx.AsyncClient(timeout=10) as http, http.stream("GET", served.url) as stream:
            lines = stream.aiter_lines()
            async for line in lines:
                if line.startswith("data: /"):
                    break  # the endpoint event: the session is open
            code = await anyio.to_thread.run_sync(served.stop)
            rest = [line async for line in lines]
    assert code == 0 and not [line for line in rest if line.startswith("data:")]


GOLDEN_HTTP = sorted((ROOT / "cassettes").glob("*/*/streamable-http.jsonl"))


@pytest.mark.parametrize(
    "path", GOLDEN_HTTP, ids=[str(p.relative_to(ROOT / "cassettes")) for p in GOLDEN_HTTP]
)
async def test_golden_http_cassettes_serve_the_recorded_results(serve: Any, path: Path) -> None:
    """Each golden Streamable HTTP cassette (real servers, both eras) answers the SDK client as recorded."""
    session = pair(load(path).events)
    exchanges = [ex for ex in session.exchanges if ex.method in OPS and ex.retry_of is None]
    served = serve(path, "--allow-repeats")
    with anyio.fail_after(60):
        async with Client(
            served.url,
            mode="auto",
            elicitation_callback=golden_answer,
            log_level="info",
            cache=None,
        ) as client:
            for ex in exchanges:
                final = golden_final(ex, session)
                try:
                    got = plain(await redo(client, ex))
                except MCPError as exc:
                    got = {"error": exc.error.code, "message": exc.error.message}
                want = ({"error": final.error["code"], "message": final.error["message"]} if final.error is not None
                        else normalize_recorded(final.result))  # fmt: skip
                if ex.method.endswith("/list"):
                    kind = ex.method.split("/")[0]
                    assert [x.get("name") or x.get("uri") for x in got[kind]] == [
                        x.get("name") or x.get("uri") for x in want[kind]
                    ]
                else:
                    assert got == want, (ex.method, ex.name)
    assert served.stop() == 0
