"""HTTP: the mitmproxy recorder's overhead, and `mcptape serve` against the SDK's own server."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx
import orjson

from .common import DEMO_SERVER, Row, interleaved, mcptape, pick, scratch


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[Any], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args} exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.02)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


def _answer(resp: httpx.Response) -> dict[str, Any]:
    if resp.headers.get("content-type", "").startswith("text/event-stream"):
        for line in resp.text.splitlines():
            if line.startswith("data:") and '"id"' in line:
                return orjson.loads(line[5:])  # type: ignore[no-any-return]
        raise RuntimeError("no answer in the event stream")
    return resp.json()  # type: ignore[no-any-return]


class LegacyHttpClient:
    """A minimal keep-alive Streamable HTTP client: a legacy session, then sequential calls."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = httpx.Client(
            timeout=30, headers={"accept": "application/json, text/event-stream"}
        )
        self.next_id = 0
        init = self.post({"method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                               "clientInfo": {"name": "bench", "version": "1"}}})  # fmt: skip
        self.session = init.headers.get("mcp-session-id")
        self.http.headers.update(
            {
                "mcp-protocol-version": "2025-11-25",
                **({"mcp-session-id": self.session} if self.session else {}),
            }
        )
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, body: dict[str, Any]) -> httpx.Response:
        self.next_id += 1
        resp = self.http.post(self.url, json={"jsonrpc": "2.0", "id": self.next_id, **body})
        resp.raise_for_status()
        return resp

    def call(self) -> dict[str, Any]:
        return _answer(
            self.post(
                {"method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}}
            )
        )

    def close(self) -> None:
        self.http.close()


def _rps(url: str, n: int) -> float:
    client = LegacyHttpClient(url)
    try:
        for _ in range(10):
            client.call()
        t0 = time.perf_counter()
        for _ in range(n):
            client.call()
        return n / (time.perf_counter() - t0)
    finally:
        client.close()


def http_suite(level: int) -> list[Row]:
    n, runs = pick(level, (20, 1), (200, 3), (500, 5))
    tmp = scratch()
    port, proxy = _free_port(), _free_port()
    server = subprocess.Popen(
        [*DEMO_SERVER, "http", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    rows: list[Row] = []
    try:
        _wait_port(port, server)
        cassette = tmp / "http.jsonl"
        recorder = subprocess.Popen(mcptape("record", "--http", "-q", "-o", str(cassette), "--upstream", f"http://127.0.0.1:{port}/mcp",
                                            "--listen", f"127.0.0.1:{proxy}"), stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            _wait_port(proxy, recorder)
            med = interleaved(runs, {"direct": lambda: _rps(f"http://127.0.0.1:{port}/mcp", n),
                                     "recorded": lambda: _rps(f"http://127.0.0.1:{proxy}/mcp", n)})  # fmt: skip
        finally:
            recorder.send_signal(signal.SIGINT)
            recorder.wait(timeout=30)
        ratio = med["recorded"] / med["direct"]
        rows.append(Row("record http: round trips/s vs SDK Streamable HTTP server", med["recorded"], med["direct"], "req/s",
                        ">= 0.8x", ratio >= 0.8, ratio, spread=med.spread("recorded", "direct")))  # fmt: skip
        rows.extend(_serve(cassette, port, n, runs, level))
    finally:
        server.terminate()
        server.wait(timeout=30)
    return rows


def _serve(cassette: Path, port: int, n: int, runs: int, level: int) -> list[Row]:
    """`mcptape serve` (repeats on) against the SDK server it was recorded from, and many sessions at once."""
    proc = subprocess.Popen(
        mcptape("serve", "--allow-repeats", "-q", "--port", "0", str(cassette)),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr
        url = None
        for _ in range(20):
            found = re.search(r"(http://127\.0\.0\.1:\d+/\S*)", proc.stderr.readline())
            if found:
                url = found.group(1)
                break
        if url is None:
            raise RuntimeError("mcptape serve printed no URL")
        med = interleaved(
            runs,
            {"sdk": lambda: _rps(f"http://127.0.0.1:{port}/mcp", n), "serve": lambda: _rps(url, n)},
        )
        ratio = med["serve"] / med["sdk"]
        sessions = pick(level, 10, 100, 100)
        ok, secs = _concurrent(url, sessions)
        return [
            Row("serve http: round trips/s vs the SDK's Streamable HTTP server", med["serve"], med["sdk"], "req/s", ">= 3x",
                ratio >= 3, ratio, spread=med.spread("serve", "sdk")),
            Row(f"serve http: {sessions} concurrent legacy sessions", ok, float(sessions), "sessions", "all served", ok == sessions,
                ok / sessions, f"{secs:.1f} s"),
        ]  # fmt: skip
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def _concurrent(url: str, sessions: int) -> tuple[int, float]:
    """Opens `sessions` sessions at once, each making 5 calls; how many got every answer right."""
    import anyio

    async def one(results: list[bool]) -> None:
        async with httpx.AsyncClient(
            timeout=60, headers={"accept": "application/json, text/event-stream"}
        ) as http:
            r = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}})  # fmt: skip
            headers = {
                "mcp-session-id": r.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-11-25",
            }
            good = r.status_code == 200
            for i in range(5):
                r = await http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                                                                "params": {"name": "echo", "arguments": {"message": "hi"}}})  # fmt: skip
                good = good and r.status_code == 200 and _answer(r).get("id") == 100 + i
            results.append(good)

    async def main() -> list[bool]:
        results: list[bool] = []
        async with anyio.create_task_group() as tg:
            for _ in range(sessions):
                tg.start_soon(one, results)
        return results

    t0 = time.perf_counter()
    results = anyio.run(main)
    return sum(results), time.perf_counter() - t0
