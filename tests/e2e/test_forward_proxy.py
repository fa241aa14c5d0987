"""The addon as a forward proxy (`mitmdump -s $(mcptape addon-path)`, real mitmproxy) for a mix
of MCP and other traffic: only the MCP session is in the cassette, and every other response is
byte-identical to the one a direct request gets (issue 14)."""

from __future__ import annotations

import http.client
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load
from mcptape.cli.addon_path import ADDON
from mcptape.pairing import pair
from tests.conftest import free_port
from tests.e2e.procs import wait_port

pytestmark = pytest.mark.e2e
MITMDUMP = Path(sys.executable).with_name("mitmdump")
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
PASSWORD = "hunter2-" + "q7Rz2Lm9"
ETH_ANSWER = b'{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}'


class Site(BaseHTTPRequestHandler):
    """One server with a web site, a JSON API, an Ethereum JSON-RPC endpoint and an MCP endpoint."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *_: Any) -> None:
        return

    def answer(
        self, status: int, ctype: str, body: bytes, extra: dict[str, str] | None = None
    ) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Served-By", "site")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        if self.path == "/":
            self.answer(
                200,
                "text/html; charset=utf-8",
                b"<html><body><form action=/login method=post></form></body></html>",
            )
        elif self.path == "/logo.png":
            self.answer(200, "image/png", PNG)
        elif self.path == "/api/items":
            self.answer(200, "application/json", b'{"items": [1, 2, 3], "next": null}')
        else:
            self.answer(404, "text/plain", b"not found")

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/login":
            self.answer(
                302,
                "text/html",
                b"<a href=/>moved</a>",
                {"Set-Cookie": "sid=abc; HttpOnly", "Location": "/"},
            )
        elif self.path == "/rpc":
            self.answer(200, "application/json", ETH_ANSWER)
        elif self.path == "/mcp":
            msg = orjson.loads(body)
            if "id" not in msg:
                self.answer(202, "text/plain", b"")
                return
            result = {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}} \
                if msg["method"] == "initialize" else {"tools": []}  # fmt: skip
            self.answer(200, "application/json", orjson.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}),
                        {"Mcp-Session-Id": "s-1"})  # fmt: skip
        else:
            self.answer(404, "text/plain", b"not found")


@pytest.fixture
def site() -> Iterator[int]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.server_address[1]
    srv.shutdown()
    srv.server_close()


OTHERS: list[tuple[str, str, bytes | None, dict[str, str]]] = [
    ("GET", "/", None, {"Accept": "text/html"}),
    (
        "POST",
        "/login",
        f"user=alice&password={PASSWORD}".encode(),
        {"Content-Type": "application/x-www-form-urlencoded"},
    ),
    ("GET", "/logo.png", None, {"Accept": "image/*"}),
    ("GET", "/api/items", None, {"Accept": "application/json"}),
    ("POST", "/api/items", b'{"name": "x"}', {"Content-Type": "application/json"}),
    (
        "POST",
        "/rpc",
        b'{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
        {"Content-Type": "application/json"},
    ),
    ("GET", "/missing", None, {}),
]
MCP = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                                   "clientInfo": {"name": "c", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]  # fmt: skip


def fetch(
    host: str, port: int, method: str, target: str, body: bytes | None, headers: dict[str, str]
) -> tuple[int, list[tuple[str, str]], bytes]:
    conn = http.client.HTTPConnection(host, port, timeout=30)
    conn.request(method, target, body, headers)
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    wire = [(k, v) for k, v in resp.getheaders() if k.lower() not in ("date", "server")]
    return resp.status, wire, data


@pytest.mark.skipif(not MITMDUMP.exists(), reason="needs the mitm extra (mitmproxy)")
def test_only_the_mcp_session_is_recorded_and_other_responses_pass_byte_identical(
    tmp_path: Path, site: int
) -> None:
    cassette = tmp_path / "fwd.jsonl"
    port = free_port()
    proc = subprocess.Popen([str(MITMDUMP), "--set", "termlog_verbosity=warn", "--set", "flow_detail=0", "-s", str(ADDON), "--listen-host", "127.0.0.1", "--listen-port", str(port),
                             "--set", f"mcptape_cassette={cassette}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    base = f"http://127.0.0.1:{site}"
    try:
        wait_port(port, proc)
        for method, path, body, headers in OTHERS:
            direct = fetch("127.0.0.1", site, method, path, body, headers)
            proxied = fetch(
                "127.0.0.1", port, method, base + path, body, headers
            )  # a forward proxy: the absolute URL
            assert proxied == direct, f"{method} {path} changed through the proxy"
        for msg in MCP:
            status, _, _ = fetch("127.0.0.1", port, "POST", base + "/mcp", orjson.dumps(msg),
                                 {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})  # fmt: skip
            assert status in (200, 202)
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
    stderr = out + err
    assert proc.returncode == 0, stderr
    assert f"{len(OTHERS)} flow(s) that are not MCP passed through unrecorded" in stderr, "counted"
    data = cassette.read_bytes()
    assert (
        PASSWORD.encode() not in data
        and b"eth_blockNumber" not in data
        and b"<html>" not in data
        and b"items" not in data
    )
    cas = load(cassette)
    assert {e.http["path"] for e in cas.events if e.http and "path" in e.http} == {"/mcp"}
    assert [ex.method for ex in pair(cas.events).exchanges] == [
        "initialize",
        "notifications/initialized",
        "tools/list",
    ]
