"""Faults of HTTP recording end to end: the recorder SIGKILLed mid-session, the upstream resetting
an SSE stream midway. A stdlib upstream on 127.0.0.1, `mcptape record --http` in front of it."""

from __future__ import annotations

import http.client
import socket
import struct
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
import pytest

from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source
from tests.conftest import mcptape_cmd

from .helpers import start_recorder

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(
        not Path(sys.executable).with_name("mitmdump").exists(),
        reason="HTTP capture needs the mitm extra (mitmproxy)",
    ),
]


class Flaky(BaseHTTPRequestHandler):
    """Answers `tools/list` with JSON; `tools/call` with an SSE stream whose connection is reset
    (TCP RST) after its first event."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *_: Any) -> None:
        return

    def do_POST(self) -> None:
        body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if body["method"] != "tools/call":
            payload = orjson.dumps({"jsonrpc": "2.0", "id": body["id"], "result": {"tools": []}})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 1},
        }
        event = b"event: message\ndata: " + orjson.dumps(note) + b"\n\n"
        self.wfile.write(b"%x\r\n%s\r\n" % (len(event), event))
        self.wfile.flush()
        self.server.sent.set()  # type: ignore[attr-defined]
        self.server.reset.wait(30)  # type: ignore[attr-defined]  # until the client has seen the event
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()  # RST mid-stream: no last chunk
        self.close_connection = True


@pytest.fixture
def upstream() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    srv.sent, srv.reset = threading.Event(), threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.reset.set()  # type: ignore[attr-defined]
    srv.shutdown()
    srv.server_close()


def connect(url: str) -> tuple[http.client.HTTPConnection, str]:
    parts = urlsplit(url)
    return http.client.HTTPConnection(parts.hostname, parts.port, timeout=30), parts.path


def post(
    conn: http.client.HTTPConnection, path: str, msg: dict[str, Any]
) -> http.client.HTTPResponse:
    conn.request(
        "POST",
        path,
        orjson.dumps(msg),
        {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
    )
    return conn.getresponse()


def test_an_http_recorder_killed_mid_session_leaves_a_readable_cassette(
    tmp_path: Path, upstream: ThreadingHTTPServer
) -> None:
    cassette = tmp_path / "http.jsonl"
    proc, url = start_recorder(f"http://127.0.0.1:{upstream.server_address[1]}/mcp", cassette)
    conn, path = connect(url)
    for i in (1, 2):
        assert (
            orjson.loads(
                post(conn, path, {"jsonrpc": "2.0", "id": i, "method": "tools/list"}).read()
            )["id"]
            == i
        )
    conn.close()
    proc.kill()
    proc.wait(timeout=30)
    assert not cassette.exists(), "a killed recording does not take the cassette's place"
    partial = cassette.with_name(cassette.name + ".partial")
    cas = load(partial)
    assert any("cut short" in w for w in cas.warnings)
    ids = [(e.src, e.msg["id"]) for e in cas.events if e.kind is Kind.MESSAGE]
    assert ids == [(Source.CLIENT, 1), (Source.SERVER, 1), (Source.CLIENT, 2), (Source.SERVER, 2)]
    show = subprocess.run(mcptape_cmd("show", str(partial)), capture_output=True, timeout=60)
    assert show.returncode == 0 and b"cut short" in show.stderr and b"tools/list" in show.stdout


def test_an_upstream_reset_mid_sse_reaches_the_client_and_is_recorded(
    tmp_path: Path, upstream: ThreadingHTTPServer
) -> None:
    cassette = tmp_path / "http.jsonl"
    proc, url = start_recorder(f"http://127.0.0.1:{upstream.server_address[1]}/mcp", cassette)
    try:
        conn, path = connect(url)
        resp = post(
            conn,
            path,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {}},
            },
        )
        assert resp.status == 200
        first = resp.readline()
        assert first == b"event: message\n"
        assert upstream.sent.wait(30)  # type: ignore[attr-defined]
        upstream.reset.set()  # type: ignore[attr-defined]
        with pytest.raises((http.client.IncompleteRead, ConnectionError)):
            while resp.read(65536):  # the client sees the stream break, never a clean end
                pass
        conn.close()
    finally:
        proc.send_signal(2)
        assert proc.wait(timeout=30) == 0
    cas = load(cassette)
    assert cas.warnings == []
    phases = [(e.kind, (e.http or {}).get("phase")) for e in cas.events]
    assert (Kind.MESSAGE, "sse") in phases, "the event that passed is recorded"
    errors = [
        e
        for e in cas.events
        if e.kind is Kind.HTTP and e.http and e.http.get("phase") in ("error", "disconnect")
    ]
    assert errors and all(isinstance(e.info, dict) and e.info.get("error") for e in errors), phases
