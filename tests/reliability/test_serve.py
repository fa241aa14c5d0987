"""`mcptape serve` under bad HTTP input and under load: real server processes on 127.0.0.1.

Bad input: every malformed request gets the status and JSON-RPC error a real server gives, and
the server goes on serving. Load: many legacy sessions and 2026-07-28 clients at once, each
getting exactly its own answers (its ids, its arguments' results): no cross-talk. The quick load
variant runs in CI; the full one (100 + 100 clients x 200 requests) needs MCPTAPE_SLOW=1.
"""

from __future__ import annotations

import random
import re
import signal
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import orjson
import pytest

from tests.conftest import mcptape_cmd
from tests.hostile_wire import INIT, INIT_RESULT, INITIALIZED, LEGACY, MODERN

from .helpers import SLOW_REASON, client, server, slow_enabled, write_cassette

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

CALLS = 200
"""Distinct recorded tools/call requests: `echo` with {"k": 0..199} answers "k"."""
ACCEPT = "application/json, text/event-stream"


def modern_meta() -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientInfo": {"name": "load", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}  # fmt: skip


def call(msg_id: Any, k: int, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": {"k": k}}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def answer(msg_id: Any, k: int, modern: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "content": [{"type": "text", "text": f"answer {k}"}],
        "isError": False,
    }
    if modern:
        result["resultType"] = "complete"
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def legacy_cassette(path: Path) -> Path:
    events = [client(INIT), server(INIT_RESULT), client(INITIALIZED)]
    for k in range(CALLS):
        events += [client(call(k + 1, k)), server(answer(k + 1, k, modern=False))]
    return write_cassette(path, *events)


def modern_cassette(path: Path) -> Path:
    events = []
    for k in range(CALLS):
        events += [client(call(k + 1, k, modern_meta())), server(answer(k + 1, k, modern=True))]
    return write_cassette(path, *events)


class Served:
    """`mcptape serve` as a subprocess; `url` is its MCP endpoint."""

    def __init__(self, cassette: Path, *extra: str) -> None:
        self.proc = subprocess.Popen(
            mcptape_cmd("serve", "-q", str(cassette), *extra),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stderr is not None
        self.url = ""
        for line in self.proc.stderr:  # bounded by the server: it prints the URL or exits
            m = re.match(r"^mcptape serve: serving \S+ at (\S+) ", line)
            if m:
                self.url = m.group(1)
                break
        assert self.url, f"mcptape serve exited with {self.proc.wait()} before serving"

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., Served]]:
    started: list[Served] = []

    def start(kind: str, *extra: str) -> Served:
        cassette = (legacy_cassette if kind == "legacy" else modern_cassette)(
            tmp_path / f"{kind}.jsonl"
        )
        s = Served(cassette, *extra)
        started.append(s)
        return s

    yield start
    for s in started:
        if s.proc.poll() is None:
            s.stop()


# -- bad HTTP input ---------------------------------------------------------------------------

JSON_HEADERS = {"content-type": "application/json", "accept": ACCEPT}

BAD_REQUESTS: list[tuple[str, str, dict[str, str], bytes, int, int | None]] = [
    # (what, method, headers, body, status, JSON-RPC error code or None)
    ("wrong content type", "POST", {"content-type": "text/plain", "accept": ACCEPT}, orjson.dumps(INIT), 415, -32600),
    ("Accept of something else", "POST", {"content-type": "application/json", "accept": "text/html"}, orjson.dumps(INIT), 406, -32600),
    ("Accept without event streams", "POST", {"content-type": "application/json", "accept": "application/json"}, orjson.dumps(INIT), 406, -32600),
    ("malformed JSON", "POST", JSON_HEADERS, b'{"jsonrpc": "2.0", "id": 1,', 400, -32700),
    ("invalid UTF-8", "POST", JSON_HEADERS, b'{"jsonrpc":"2.0","id":1,"method":"p\xff\xfe"}', 400, -32700),
    ("not JSON-RPC", "POST", JSON_HEADERS, b'{"hello": "world"}', 400, -32600),
    ("a body over --max-body", "POST", JSON_HEADERS, orjson.dumps({**INIT, "pad": "x" * 5000}), 413, -32600),
    ("a foreign Origin", "POST", {**JSON_HEADERS, "origin": "http://evil.example"}, orjson.dumps(INIT), 403, -32600),
    ("a foreign Host", "POST", {**JSON_HEADERS, "host": "evil.example"}, orjson.dumps(INIT), 421, None),
    ("an unknown session", "POST", {**JSON_HEADERS, "mcp-session-id": "no-such-session"}, orjson.dumps(call(1, 1)), 404, -32600),
    ("no session", "POST", JSON_HEADERS, orjson.dumps(call(1, 1)), 400, -32600),
    ("an unsupported protocol version", "POST", {**JSON_HEADERS, "mcp-protocol-version": "1999-01-01"}, orjson.dumps(INIT), 400, -32600),
    ("an unknown HTTP method", "PUT", JSON_HEADERS, orjson.dumps(INIT), 405, -32600),
    ("an unknown path", "POST:/elsewhere", JSON_HEADERS, orjson.dumps(INIT), 404, None),
    ("2026 headers that disagree with the body", "POST", {**JSON_HEADERS, "mcp-protocol-version": MODERN, "mcp-method": "tools/list"},
     orjson.dumps(call(5, 1, modern_meta())), 400, -32020),
]  # fmt: skip


async def test_bad_http_requests_get_real_server_errors_and_the_server_goes_on(
    serve: Callable[..., Served],
) -> None:
    served = serve("legacy", "--max-body", "4096")
    with anyio.fail_after(60):
        async with httpx.AsyncClient(timeout=30) as http:
            for what, method, headers, body, status, code in BAD_REQUESTS:
                verb, _, path = method.partition(":")
                url = served.url.replace("/mcp", path) if path else served.url
                resp = await http.request(verb, url, headers=headers, content=body)
                assert resp.status_code == status, (what, resp.status_code, resp.text)
                if code is not None:
                    assert resp.json()["error"]["code"] == code, what
            # and a well-behaved client is still served, from the top of the cassette
            answers = await legacy_session(http, served.url, 1, [0, 1, 2])
    assert answers == [(1_000_001, "answer 0"), (1_000_002, "answer 1"), (1_000_003, "answer 2")]
    assert served.stop() == 0


# -- load -----------------------------------------------------------------------------------


async def legacy_session(
    http: httpx.AsyncClient, url: str, n: int, ks: list[int]
) -> list[tuple[Any, str]]:
    """One handshake session asking for `ks`; (id, text) of each answer."""
    resp = await http.post(url, headers=JSON_HEADERS, content=orjson.dumps(INIT))
    assert resp.status_code == 200, resp.text
    sid = resp.headers["mcp-session-id"]
    headers = {**JSON_HEADERS, "mcp-session-id": sid, "mcp-protocol-version": LEGACY}
    resp = await http.post(
        url,
        headers=headers,
        content=orjson.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    assert resp.status_code == 202
    out = []
    for j, k in enumerate(ks):
        msg_id = n * 1_000_000 + j + 1
        resp = await http.post(url, headers=headers, content=orjson.dumps(call(msg_id, k)))
        assert resp.status_code == 200, resp.text
        body = resp.json()
        out.append((body["id"], body["result"]["content"][0]["text"]))
    await http.delete(url, headers={"mcp-session-id": sid})
    return out


async def modern_client(
    http: httpx.AsyncClient, url: str, n: int, ks: list[int]
) -> list[tuple[Any, str]]:
    """One stateless 2026-07-28 client asking for `ks` (string ids, its own)."""
    out = []
    for j, k in enumerate(ks):
        msg_id = f"client-{n}-{j}"
        headers = {
            **JSON_HEADERS,
            "mcp-protocol-version": MODERN,
            "mcp-method": "tools/call",
            "mcp-name": "echo",
        }
        resp = await http.post(
            url, headers=headers, content=orjson.dumps(call(msg_id, k, modern_meta()))
        )
        assert resp.status_code == 200, resp.text
        body = resp.json()
        out.append((body["id"], body["result"]["content"][0]["text"]))
    return out


async def load(serve: Callable[..., Served], clients: int, requests: int) -> None:
    legacy, modern = serve("legacy"), serve("modern", "--allow-repeats")
    rng = random.Random(8)
    plans = {("legacy", n): rng.sample(range(CALLS), requests) for n in range(clients)}
    plans |= {
        ("modern", n): [rng.randrange(CALLS) for _ in range(requests)] for n in range(clients)
    }
    got: dict[tuple[str, int], list[tuple[Any, str]]] = {}

    async def one(kind: str, n: int) -> None:
        limits = httpx.Limits(
            max_connections=1
        )  # each client its own connection, as separate processes would
        async with httpx.AsyncClient(timeout=120, limits=limits) as http:
            if kind == "legacy":
                got[(kind, n)] = await legacy_session(http, legacy.url, n, plans[(kind, n)])
            else:
                got[(kind, n)] = await modern_client(http, modern.url, n, plans[(kind, n)])

    with anyio.fail_after(900):
        async with anyio.create_task_group() as tg:
            for kind, n in plans:
                tg.start_soon(one, kind, n)
    for (kind, n), ks in plans.items():
        ids = (
            [n * 1_000_000 + j + 1 for j in range(requests)]
            if kind == "legacy"
            else [f"client-{n}-{j}" for j in range(requests)]
        )
        assert got[(kind, n)] == [(i, f"answer {k}") for i, k in zip(ids, ks, strict=True)], (
            kind,
            n,
        )
    assert legacy.stop() == 0 and modern.stop() == 0
    print(
        f"\nserve load: {clients} legacy sessions + {clients} {MODERN} clients x {requests} requests, all answered, no cross-talk"
    )


async def test_concurrent_sessions_each_get_their_own_answers(serve: Callable[..., Served]) -> None:
    await load(serve, clients=10, requests=20)


@pytest.mark.slow
@pytest.mark.skipif(not slow_enabled(), reason=SLOW_REASON)
async def test_100_legacy_and_100_modern_clients_doing_200_requests_each(
    serve: Callable[..., Served],
) -> None:
    await load(serve, clients=100, requests=CALLS)
