"""End to end: the official `mcp` SDK client talks to SDK servers through `mcptape record --http`.

Every process is real and listens on 127.0.0.1 on a free port. Nothing waits by sleeping:
servers are awaited by polling their port in a bounded loop, the recorder by its
"mcptape record: proxying URL -> UPSTREAM" line on stderr.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
import orjson
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client

from mcptape.cassette import Cassette, load
from mcptape.cassette.model import Kind, Source, Transport
from mcptape.pairing import pair
from mcptape.redaction.redact import REDACTED
from mcptape.schema import cassette_schema
from tests.conftest import ROOT, demo_server_cmd, free_port, mcptape_cmd
from tests.e2e.procs import Recorder, stop, wait_port
from tests.sdk_helpers import accept_name, demo_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

GATED_SERVER = ROOT / "tests" / "e2e" / "gated_server.py"
MITMDUMP = Path(sys.executable).with_name("mitmdump")


@pytest.fixture
def start() -> Iterator[Callable[..., Any]]:
    """Starts servers and recorders; stops whatever is still running at the end."""
    procs: list[subprocess.Popen[Any]] = []

    def server(cmd: list[str], port: int) -> str:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        procs.append(proc)
        wait_port(port, proc)
        return f"http://127.0.0.1:{port}"

    def recorder(upstream: str, cassette: Path, *extra: str) -> Recorder:
        rec = Recorder(upstream, cassette, *extra)
        procs.append(rec.proc)
        return rec

    server.recorder = recorder  # type: ignore[attr-defined]
    yield server
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def demo_http(start: Any, transport: str = "http") -> str:
    port = free_port()
    base = start(demo_server_cmd(transport, str(port)), port)
    return f"{base}/mcp" if transport == "http" else f"{base}/sse"


def complete(path: Path) -> Cassette:
    """The cassette, checked: every line valid against the shipped schema, numbered, ended."""
    validator = jsonschema.Draft202012Validator(cassette_schema())
    for line in path.read_bytes().splitlines():
        validator.validate(orjson.loads(line))
    cas = load(path)
    assert cas.warnings == []
    assert [e.seq for e in cas.events] == list(range(1, len(cas.events) + 1))
    assert cas.events[-1].kind is Kind.END
    return cas


def check_demo_pairing(cas: Cassette, modern: bool) -> None:
    """The demo session's exchanges are all there, answered, with their notifications."""
    session = pair(cas.events)
    methods = [ex.method for ex in session.exchanges]
    calls = [ex.name for ex in session.exchanges if ex.method == "tools/call"]
    if modern:
        assert methods[0] == "server/discover"
        assert calls == ["add", "fail", "divide", "greet", "greet"]
        assert [ex.name for ex in session.exchanges if ex.retry_of is not None] == ["greet"]
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
    assert all(
        e.http and isinstance(e.http.get("exchange"), int)
        for e in cas.events
        if e.kind is Kind.MESSAGE
    )


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_streamable_http_client_sees_the_same_session_through_the_recorder(
    tmp_path: Path, start: Any, mode: str
) -> None:
    upstream = demo_http(start)
    cassette = tmp_path / "http.jsonl"
    rec = start.recorder(upstream, cassette)
    assert rec.url.endswith("/mcp") and rec.url != upstream
    with anyio.fail_after(60):
        async with Client(
            upstream, mode=mode, elicitation_callback=accept_name, log_level="info"
        ) as c:
            want = await demo_session(c)
        async with Client(
            rec.url, mode=mode, elicitation_callback=accept_name, log_level="info"
        ) as c:
            got = await demo_session(c)
    rec.stop()
    assert re.fullmatch(  # Ctrl-C ends with one summary line
        rf"mcptape record: 1 session, \d+ exchanges, \d+ messages in {re.escape(str(cassette))}",
        rec.stderr[-1],
    ), rec.stderr
    assert got == want
    assert got.progress == [(1.0, 2.0, "adding"), (2.0, 2.0, "done")]
    assert want.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")

    cas = complete(cassette)
    assert cas.header.transport is Transport.STREAMABLE_HTTP and cas.header.target == {
        "url": upstream
    }
    check_demo_pairing(cas, modern=mode == "auto")
    heads = [e.http for e in cas.events if e.http and e.http["phase"] == "request"]
    assert all(
        h["path"] == "/mcp" and h["headers"]["Host"] == upstream.split("/")[2] for h in heads
    ), "Host rewritten"
    statuses = {e.http["status"] for e in cas.events if e.http and e.http["phase"] == "response"}
    assert 421 not in statuses and 200 in statuses
    if mode == "legacy":
        sessions = {e.http.get("session") for e in cas.events if e.http}
        assert len(sessions - {None}) == 1, "one Mcp-Session-Id, minted by the initialize response"
        assert [h["method"] for h in heads].count("DELETE") == 1
        assert any(e.http and e.http.get("stream") == "get" for e in cas.events), (
            "the standalone GET stream"
        )
        assert 202 in statuses
    else:
        assert not any(e.http and "session" in e.http for e in cas.events)
        assert all(h["headers"].get("mcp-method") or h["headers"].get("Mcp-Method") for h in heads)


async def test_legacy_http_sse_client_sees_the_same_session_through_the_recorder(
    tmp_path: Path, start: Any
) -> None:
    upstream = demo_http(start, "sse")
    cassette = tmp_path / "sse.jsonl"
    rec = start.recorder(upstream, cassette)
    with anyio.fail_after(60):
        async with Client(
            sse_client(upstream), mode="legacy", elicitation_callback=accept_name, log_level="info"
        ) as c:
            want = await demo_session(c)
        async with Client(
            sse_client(rec.url), mode="legacy", elicitation_callback=accept_name, log_level="info"
        ) as c:
            got = await demo_session(c)
    rec.stop()
    assert got == want and got.progress == [(1.0, 2.0, "adding"), (2.0, 2.0, "done")]

    cas = complete(cassette)
    assert cas.header.transport is Transport.SSE
    check_demo_pairing(cas, modern=False)
    endpoint = next(
        e for e in cas.events if e.http and e.http.get("sse", {}).get("event") == "endpoint"
    )
    session = endpoint.http["session"]
    assert endpoint.http["legacy"] is True and session in endpoint.http["sse"]["data"]
    posts = [e for e in cas.events if e.src is Source.CLIENT and e.kind is Kind.MESSAGE]
    assert posts and all(e.http["session"] == session and e.http["legacy"] for e in posts)
    assert all(e.http["path"] == endpoint.http["sse"]["data"] for e in posts)
    answers = [e for e in cas.events if e.src is Source.SERVER and e.kind is Kind.MESSAGE]
    assert {e.http["exchange"] for e in answers} == {endpoint.http["exchange"]}, (
        "all answers arrive on the GET stream"
    )
    assert {
        e.http["status"]
        for e in cas.events
        if e.http
        and e.http["phase"] == "response"
        and e.http["exchange"] != endpoint.http["exchange"]
    } == {202}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_progress_reaches_the_client_before_the_server_finishes(
    tmp_path: Path, start: Any, mode: str
) -> None:
    """The server answers only after the test saw its progress: a buffering proxy deadlocks here."""
    port = free_port()
    base = start([sys.executable, str(GATED_SERVER), str(port)], port)
    cassette = tmp_path / "gated.jsonl"
    rec = start.recorder(f"{base}/mcp", cassette)
    seen = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.set()

    async def release_when_seen() -> None:
        await seen.wait()
        async with httpx2.AsyncClient() as http:
            (await http.post(f"{base}/release")).raise_for_status()

    with anyio.fail_after(30):
        async with Client(rec.url, mode=mode) as c, anyio.create_task_group() as tg:
            tg.start_soon(release_when_seen)
            result = await c.call_tool("gated", {}, progress_callback=on_progress)
    rec.stop()
    assert result.content[0].text == "released"  # type: ignore[union-attr]
    cas = complete(cassette)
    call_ev = next(
        e for e in cas.events if e.kind is Kind.MESSAGE and e.msg.get("method") == "tools/call"
    )
    flow = [e for e in cas.events if e.http and e.http["exchange"] == call_ev.http["exchange"]]
    assert [e.msg.get("method", "result") if e.kind is Kind.MESSAGE else e.http["phase"] for e in flow[1:4]] == [
        "response", "notifications/progress", "result",
    ]  # fmt: skip
    assert len(flow) == 5 and flow[4].http["phase"] in ("end", "disconnect"), (
        "the server or the client closed it"
    )


async def test_a_client_abandoning_a_2026_call_is_recorded_as_a_cancel(
    tmp_path: Path, start: Any
) -> None:
    port = free_port()
    base = start([sys.executable, str(GATED_SERVER), str(port)], port)
    cassette = tmp_path / "cancel.jsonl"
    rec = start.recorder(f"{base}/mcp", cassette)
    seen = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.set()

    with anyio.fail_after(30):
        async with Client(rec.url, mode="auto") as c:
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await c.call_tool("gated", {}, progress_callback=on_progress)

                tg.start_soon(call)
                await seen.wait()
                tg.cancel_scope.cancel()
            partial = cassette.with_name(
                cassette.name + ".partial"
            )  # where the recording goes until it ends
            while (
                '"phase":"disconnect"' not in partial.read_text()
            ):  # the recorder's own process: poll, bounded
                await anyio.sleep(0.02)
    rec.stop()
    cas = complete(cassette)
    call_ev = next(
        e for e in cas.events if e.kind is Kind.MESSAGE and e.msg.get("method") == "tools/call"
    )
    closed = [e for e in cas.events if e.http and e.http["phase"] == "disconnect"]
    assert len(closed) == 1 and closed[0].src is Source.CLIENT
    assert (
        closed[0].http["exchange"] == call_ev.http["exchange"]
        and closed[0].http["stream"] == "post"
    )
    assert closed[0].info is not None and closed[0].info["cancel"] is True


async def test_secrets_in_headers_query_and_arguments_never_reach_the_cassette(
    tmp_path: Path, start: Any
) -> None:
    upstream = demo_http(start)
    cassette = tmp_path / "secret.jsonl"
    rec = start.recorder(upstream, cassette)
    bearer = "Bearer fake-token-0123456789abcdef"
    secret = "sk-test-THISISNOTAREALKEY0123456789"
    with anyio.fail_after(60):
        async with httpx2.AsyncClient(
            headers={"Authorization": bearer, "X-Api-Key": "key-42-secret"}
        ) as http:
            transport = streamable_http_client(
                f"{rec.url}?access_token=query-secret-77", http_client=http
            )
            async with Client(transport, mode="legacy") as c:
                result = await c.call_tool("echo", {"message": f"my key is {secret}"})
    rec.stop(signal.SIGTERM)
    assert result.content[0].text == f"my key is {secret}", "the client still sees the real value"  # type: ignore[union-attr]
    text = cassette.read_text()
    for leaked in ("fake-token-0123456789abcdef", secret, "key-42-secret", "query-secret-77"):
        assert leaked not in text
    cas = complete(cassette)
    heads = [e.http for e in cas.events if e.http and e.http["phase"] == "request"]
    assert all(
        h["headers"]["Authorization"] == REDACTED and "access_token=" in h["path"] for h in heads
    )
    call_ev = next(
        e for e in cas.events if e.kind is Kind.MESSAGE and e.msg.get("method") == "tools/call"
    )
    assert call_ev.msg["params"]["arguments"]["message"] == f"my key is {REDACTED}"


async def test_mitmdump_with_the_addon_path_records_a_session(tmp_path: Path, start: Any) -> None:
    upstream = demo_http(start)
    addon = subprocess.run(
        mcptape_cmd("addon-path"), capture_output=True, text=True, check=True
    ).stdout.strip()
    assert Path(addon).is_file()
    cassette = tmp_path / "dump.jsonl"
    port = free_port()
    cmd = [
        str(MITMDUMP), "-q", "-s", addon, "--set", f"mcptape_cassette={cassette}", "--set", "mcptape_redact_keys=x-tenant",
        "--mode", f"reverse:{upstream.removesuffix('/mcp')}", "--listen-host", "127.0.0.1", "--listen-port", str(port),
    ]  # fmt: skip
    dump = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=tmp_path
    )
    try:
        wait_port(port, dump)
        with anyio.fail_after(60):
            async with Client(
                f"http://127.0.0.1:{port}/mcp",
                mode="auto",
                elicitation_callback=accept_name,
                log_level="info",
            ) as c:
                got = await demo_session(c)
    finally:
        code = stop(dump)
    assert code == 0, dump.stderr.read() if dump.stderr else ""
    assert got.progress == [(1.0, 2.0, "adding"), (2.0, 2.0, "done")]
    cas = complete(cassette)
    assert cas.header.target == {"url": upstream.removesuffix("/mcp")}
    assert "x-tenant" in cas.header.redaction["keys"]
    check_demo_pairing(cas, modern=True)


async def test_stopping_the_recorder_with_a_stream_open_leaves_a_complete_cassette(
    tmp_path: Path, start: Any
) -> None:
    upstream = demo_http(start, "sse")
    cassette = tmp_path / "open.jsonl"
    rec = start.recorder(upstream, cassette)
    with anyio.fail_after(30):
        async with httpx2.AsyncClient() as http, http.stream("GET", rec.url) as resp:
            async for line in resp.aiter_lines():
                if line.startswith("data:"):
                    break  # the endpoint event passed: the stream stays open
            rec.stop(signal.SIGTERM)
    cas = complete(cassette)
    assert len(cassette.read_text().splitlines()) == len(cas.events) + 1, "one header, written once"
    phases = [e.http["phase"] for e in cas.events if e.http]
    assert phases == ["request", "response", "sse", "error"]
    assert cas.events[-2].info == {"error": "recording stopped with this exchange open"}


async def test_an_unreachable_upstream_is_a_502_and_keeps_the_old_cassette(
    tmp_path: Path, start: Any
) -> None:
    """Re-recording a server that is not there: the client gets a 502, the cassette recorded
    before stays byte for byte, and the recorder says why, exiting non-zero."""
    cassette = tmp_path / "down.jsonl"
    cassette.write_bytes(b"the previous recording\n")
    rec = start.recorder(f"http://127.0.0.1:{free_port()}/mcp", cassette)
    with anyio.fail_after(30):
        async with httpx2.AsyncClient() as http:
            resp = await http.post(rec.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert resp.status_code == 502
    assert stop(rec.proc) == 1
    assert cassette.read_bytes() == b"the previous recording\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["down.jsonl"], "no recording left behind"
    assert rec.stderr[-1] == (f"mcptape: error: the server answered nothing (no request reached it through "
                              f"the proxy), so {cassette} was left as it was")  # fmt: skip
