"""End to end: a real `mitmdump -w` capture of an SDK session over Streamable HTTP, imported.

The official `mcp` SDK client talks to the demo server through two proxies in a row:
`mitmdump -w flows.mitm --set hardump=flows.har` (a plain mitmproxy capture, flow file and
HAR), then `mcptape record --http` (the live addon). `mcptape import` of the flow file and
of the HAR must give the events the live addon wrote, exchange by exchange, and the
imported cassettes must replay for the SDK client with the results the client got live.
Processes listen on 127.0.0.1; ports are awaited with bounded polls, never sleeps.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
import orjson
import pytest
from mcp import Client, MCPError

from mcptape.cassette import Cassette, load
from mcptape.cassette.model import Event, Kind, Transport
from mcptape.pairing import pair
from mcptape.replay.memory import replay_transport
from mcptape.schema import cassette_schema
from tests.conftest import demo_server_cmd, free_port, mcptape_cmd
from tests.e2e.procs import Recorder, stop, wait_port
from tests.sdk_helpers import Outcome, _plain, accept_name, demo_session

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

MITMDUMP = Path(sys.executable).with_name("mitmdump")
NOT_MCP = 2
"""Flows the test sends through the proxy that carry no MCP: a favicon and a JSON POST that is not JSON-RPC."""


async def legacy_session(client: Client) -> Outcome:
    """The demo session without elicitation: through a buffering mitmproxy a server request inside
    an SSE response never reaches the client before the response ends, so `greet` cannot work."""
    out = Outcome(protocol_version=client.protocol_version)
    out.tools = [t.name for t in (await client.list_tools()).tools]

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        out.progress.append((progress, total, message))

    out.results.append(
        _plain(await client.call_tool("add", {"a": 1, "b": 2}, progress_callback=on_progress))
    )
    try:
        await client.call_tool("fail", {})
    except MCPError as exc:
        out.results.append({"code": exc.error.code, "message": exc.error.message})
    out.results.append(_plain(await client.call_tool("divide", {"a": 1, "b": 0})))
    out.results.append(_plain(await client.read_resource("demo://readme")))
    out.results.append(_plain(await client.get_prompt("review", {"code": "x = 1"})))
    return out


SESSIONS = {"auto": demo_session, "legacy": legacy_session}


@dataclass
class Capture:
    mode: str
    flows: Path
    har: Path
    live: Path
    """What `mcptape record --http` wrote behind mitmdump."""
    outcome: Outcome


@pytest.fixture(scope="module", params=sorted(SESSIONS))
def capture(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Capture]:
    mode = request.param
    where = tmp_path_factory.mktemp(f"capture-{mode}")
    procs: list[subprocess.Popen[Any]] = []
    try:
        port = free_port()
        server = subprocess.Popen(
            demo_server_cmd("http", str(port)), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        procs.append(server)
        wait_port(port, server)
        rec = Recorder(f"http://127.0.0.1:{port}/mcp", where / "live.jsonl")
        procs.append(rec.proc)
        listen = free_port()
        dump = subprocess.Popen(
            [str(MITMDUMP), "-q", "--mode", f"reverse:{rec.url.removesuffix('/mcp')}", "--listen-host", "127.0.0.1",
             "--listen-port", str(listen), "-w", str(where / "flows.mitm"), "--set", f"hardump={where / 'flows.har'}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        procs.append(dump)
        wait_port(listen, dump)
        url = f"http://127.0.0.1:{listen}/mcp"

        async def drive() -> Outcome:
            with anyio.fail_after(60):
                async with Client(
                    url, mode=mode, elicitation_callback=accept_name, log_level="info"
                ) as client:
                    outcome = await SESSIONS[mode](client)
                async with httpx2.AsyncClient() as http:
                    await http.get(f"http://127.0.0.1:{listen}/favicon.ico")
                    await http.post(f"http://127.0.0.1:{listen}/api/echo", json={"hello": "world"})
            return outcome

        outcome = anyio.run(drive)
        assert stop(dump) == 0
        rec.stop()
        yield Capture(
            mode, where / "flows.mitm", where / "flows.har", where / "live.jsonl", outcome
        )
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def run_import(src: Path, dest: Path, *extra: str) -> str:
    done = subprocess.run(
        mcptape_cmd("import", str(src), "-o", str(dest), *extra),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stderr


def valid(path: Path) -> Cassette:
    validator = jsonschema.Draft202012Validator(cassette_schema())
    for line in path.read_bytes().splitlines():
        validator.validate(orjson.loads(line))
    cas = load(path)
    assert cas.warnings == []
    assert [e.seq for e in cas.events] == list(range(1, len(cas.events) + 1))
    assert cas.events[-1].kind is Kind.END
    return cas


def get_stream_closed(ev: Event) -> bool:
    """The end of a GET event stream, which closes at teardown from both ends at once.

    The client closes its GET stream as the server, told by the session's DELETE, ends it: which
    one a proxy notices first is a race, and the two proxies in a row see it from different
    sides (mitmdump, next to the client, may note "Client disconnected" where the addon, next to
    the server, notes the end). A HAR file has no place for that error, so its import ends the
    stream where the response did. Every other event is compared as it is.
    """
    return (
        ev.kind is Kind.HTTP
        and ev.http is not None
        and ev.http.get("stream") == "get"
        and ev.http.get("phase") in ("end", "disconnect")
    )


def by_exchange(cas: Cassette, upto: int | None = None) -> dict[int, list[dict[str, Any]]]:
    """Each HTTP exchange's events in order, without times and headers (they differ between two
    proxies) and without the race of a GET stream's close (`get_stream_closed`)."""
    out: dict[int, list[dict[str, Any]]] = {}
    for ev in cas.events:
        if ev.http is None or (upto is not None and ev.http["exchange"] > upto):
            continue
        if get_stream_closed(ev):
            continue
        line = ev.to_json()
        del line["seq"], line["t"]
        line["http"] = {k: v for k, v in ev.http.items() if k != "headers"}
        out.setdefault(ev.http["exchange"], []).append(line)
    return out


async def replayed(path: Path, mode: str) -> Outcome:
    with anyio.fail_after(30):
        async with Client(
            replay_transport(path, strict=True),
            mode=mode,
            elicitation_callback=accept_name,
            log_level="info",
        ) as client:
            return await SESSIONS[mode](client)


async def test_flow_file_import_has_the_live_addons_events_and_replays_for_the_sdk_client(
    capture: Capture, tmp_path: Path
) -> None:
    cassette = tmp_path / "imported.jsonl"
    said = run_import(capture.flows, cassette)
    cas = valid(cassette)
    mcp_flows = max(e.http["exchange"] for e in cas.events if e.http)
    assert f"imported {mcp_flows} flows, skipped {NOT_MCP} that are not MCP" in said
    assert cas.header.transport is Transport.STREAMABLE_HTTP
    imported = by_exchange(cas)
    assert sorted(imported) == list(range(1, mcp_flows + 1))
    assert imported == by_exchange(load(capture.live), upto=mcp_flows)
    for closed in (cas, load(capture.live)):  # each GET stream closed once, however it was seen
        gets = {
            e.http["exchange"] for e in closed.events if e.http and e.http.get("stream") == "get"
        }
        ends = [e.http["exchange"] for e in closed.events if get_stream_closed(e)]
        assert sorted(ends) == sorted(gets)
    session = pair(cas.events)
    assert session.orphans == []
    assert all(ex.is_notification or ex.response is not None for ex in session.exchanges)
    if capture.mode == "legacy":
        assert len({e.http.get("session") for e in cas.events if e.http} - {None}) == 1
    assert await replayed(cassette, capture.mode) == capture.outcome
    assert capture.outcome.progress == [(1.0, 2.0, "adding"), (2.0, 2.0, "done")]


async def test_har_import_gives_the_same_cassette_as_the_flow_file_and_replays(
    capture: Capture, tmp_path: Path
) -> None:
    from_flows, from_har = tmp_path / "flows.jsonl", tmp_path / "har.jsonl"
    run_import(capture.flows, from_flows)
    said = run_import(capture.har, from_har)
    assert f"skipped {NOT_MCP} that are not MCP" in said and "(har ->" in said

    def untimed(cas: Cassette) -> list[dict[str, Any]]:
        return [
            {k: v for k, v in e.to_json().items() if k not in ("t", "seq")}
            for e in cas.events
            if not get_stream_closed(e)
        ]

    flows_cas, har_cas = valid(from_flows), valid(from_har)
    assert untimed(har_cas) == untimed(flows_cas)
    # HAR keeps times to the millisecond: the same instants, within that resolution. But for
    # the end marker: it is the capture's last moment, a GET stream's close, whose time is the
    # race `get_stream_closed` leaves out (6.3 ms apart once, on a loaded machine); it is still
    # the last moment in each.
    kept = [e for e in har_cas.events if not get_stream_closed(e)]
    flows_kept = [e for e in flows_cas.events if not get_stream_closed(e)]
    assert kept[-1].kind is Kind.END and flows_kept[-1].kind is Kind.END
    assert all(abs(h.t - f.t) <= 0.0015 for h, f in zip(kept[:-1], flows_kept[:-1], strict=True))
    for cas in (har_cas, flows_cas):
        assert cas.events[-1].kind is Kind.END
        assert cas.events[-1].t == max(e.t for e in cas.events)
    assert await replayed(from_har, capture.mode) == capture.outcome


async def test_import_redacts_like_the_recorder(capture: Capture, tmp_path: Path) -> None:
    cassette = tmp_path / "red.jsonl"
    run_import(
        capture.flows, cassette, "--redact-key", "user-agent", "--redact-pattern", r"mcptape-demo"
    )
    events = cassette.read_text().split("\n", 1)[1]
    assert "python-httpx2" not in events and "mcptape-demo" not in events
    cas = load(cassette)
    assert (
        "user-agent" in cas.header.redaction["keys"]
        and "mcptape-demo" in cas.header.redaction["patterns"]
    )
    assert any(e.redacted for e in cas.events)
    clear = tmp_path / "clear.jsonl"
    run_import(capture.flows, clear, "--no-redact")
    assert load(clear).header.redaction["enabled"] is False
