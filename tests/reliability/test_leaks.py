"""Nothing leaked (issue 14): the corpus of planted secrets (tests/leak_corpus.py) recorded on
stdio, over HTTP through the mitmproxy reverse proxy (the addon) and through `mcptape import`:
none survives, the peers still get every byte, and `mcptape check` agrees; planted by hand
into a cassette, `check` flags every one; the false positives stay as they are."""

from __future__ import annotations

import base64
import http.client
import signal
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

from mcptape.capture.importer import import_file
from mcptape.check import check_bytes
from tests.conftest import ROOT, mcptape_cmd
from tests.e2e.test_import_formats import entry, har
from tests.leak_corpus import (
    FALSE_POSITIVES,
    KEPT_TEXTS,
    PEM_RSA,
    PEM_SSH,
    SECRETS,
    error_body,
    leaked,
    member_secrets,
    members,
    text_secrets,
    texts,
)

from .helpers import client, server, start_recorder, write_cassette

ECHO = str(ROOT / "tests" / "capture" / "echo_server.py")
PEM_BODIES = [PEM_RSA[1], PEM_RSA[2], PEM_SSH[1]]
ALL_TEXT = [*text_secrets(), *PEM_BODIES]


def call_with_everything(msg_id: int) -> dict[str, Any]:
    args = {**members(), **{f"note{i}": t for i, t in enumerate(texts())}, **FALSE_POSITIVES}
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {"name": "leak", "arguments": args},
    }


def error_answer(msg_id: int, text: str) -> dict[str, Any]:
    """A JSON-RPC error whose message and data carry `text` (as a server's failure reports do)."""
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32000, "message": f"failed: {text}",
                                                      "data": {"detail": text}}}  # fmt: skip


def assert_clean(data: bytes, secrets: list[str]) -> None:
    assert leaked(data, secrets) == [], "planted secrets in the cassette"
    findings = [f.render("c") for f in check_bytes(data).findings if f.check == "secrets"]
    assert findings == [], "mcptape check agrees: nothing escaped"


def false_positives_intact(data: bytes) -> None:
    for name, value in FALSE_POSITIVES.items():
        assert orjson.dumps({name: value})[1:-1] in data, f"{name} was changed"


@pytest.mark.e2e
def test_stdio_recording_keeps_none_of_the_planted_secrets(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    batch = [call_with_everything(2), {"jsonrpc": "2.0", "id": 3, "method": "ping"}]
    lines = [
        orjson.dumps(call_with_everything(1)),
        orjson.dumps(batch),
        *(orjson.dumps(error_answer(10 + i, t)) for i, t in enumerate(texts())),  # error messages
        *(b"stderr " + t.encode() for t in KEPT_TEXTS),
        *(
            t.encode() for t in texts()
        ),  # non-JSON lines, both ways (the echo server sends them back)
        *(ln.encode() for ln in PEM_RSA + PEM_SSH),  # a PEM key split over non-JSON lines
        *(b"stderr " + t.encode() for t in texts()),
        *(b"stderr " + ln.encode() for ln in PEM_RSA + PEM_SSH),  # and over stderr lines
        *(b"\xff\xfe " + t.encode() for t in texts()),  # lines that are not UTF-8 (kept as base64)
        *(b"stderr \xff " + t.encode() for t in texts()),
    ]
    stdin = b"\n".join(lines) + b"\n"
    proc = subprocess.run(mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, ECHO), input=stdin,
                          check=False, capture_output=True, timeout=60)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    stdout_lines = [ln for ln in lines if not ln.startswith(b"stderr ")]
    assert proc.stdout == b"\n".join(stdout_lines) + b"\n", "the client gets every byte unchanged"
    assert all(ln[7:] in proc.stderr for ln in lines if ln.startswith(b"stderr ")), (
        "stderr passes unchanged"
    )
    data = out.read_bytes()
    assert_clean(data, [*ALL_TEXT, *member_secrets()])
    false_positives_intact(data)
    assert all(orjson.dumps(t) in data for t in KEPT_TEXTS), "cursors in free text stay"


class Upstream(BaseHTTPRequestHandler):
    """A stand-in MCP server whose answers carry the corpus in headers, JSON and SSE fields."""

    def log_message(self, *_: Any) -> None:
        return

    def do_POST(self) -> None:
        body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, dict(self.headers), body))  # type: ignore[attr-defined]
        if body.get("id") == UNAUTHORIZED:
            text = error_body().encode()
            self.send_response(401)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(text)))
            self.end_headers()
            self.wfile.write(text)
            return
        self.send_response(200)
        for name, value in response_headers().items():
            self.send_header(name, value)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        result = {"jsonrpc": "2.0", "id": body["id"], "result": {"content": [{"type": "text", "text": t} for t in texts()],
                                                                  "structuredContent": {**members(), **FALSE_POSITIVES}}}  # fmt: skip
        self.wfile.write(sse_stream(result))
        self.wfile.flush()


def response_headers() -> dict[str, str]:
    return {
        "Set-Cookie": f"session={SECRETS['cookie']}; HttpOnly",
        "X-Secret-Key": SECRETS["secret_header"],
        "Location": f"http://127.0.0.1/callback?access_token={SECRETS['location']}&state=1",
        "WWW-Authenticate": f'Bearer realm="mcp", error="invalid_token", token="{SECRETS["www_auth"]}"',
        "X-Debug": texts()[6],
    }


UNAUTHORIZED = 2
"""The request id the stand-in server answers 401 with a plain-text body (`error_body()`)."""


def sse_stream(result: dict[str, Any]) -> bytes:
    errors = b"".join(
        b"data: " + orjson.dumps(error_answer(100 + i, t)) + b"\n\n" for i, t in enumerate(texts())
    )
    return (f": api_key={SECRETS['sse_comment']}\n\n".encode()
            + f"id: {SECRETS['sse_id']}\nevent: message\ndata: ".encode() + orjson.dumps(result) + b"\n\n"
            + f"id: token={SECRETS['sse_id_named']}\ndata: \n\n".encode()
            + errors + f"data: {texts()[0]}\n\n".encode())  # fmt: skip


def request_path() -> str:
    return (f"/mcp?sig={SECRETS['sig']}&X-Amz-Signature={SECRETS['amz_sig']}&access_token={SECRETS['query']}"
            "&pageToken=p2&cursor=c1")  # fmt: skip


def request_headers() -> dict[str, str]:
    return {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {SECRETS['bearer']}", "Cookie": f"sid={SECRETS['cookie']}",
        "X-Secret-Key": SECRETS["secret_header"], "X-Note": texts()[1],
    }  # fmt: skip


HTTP_SECRETS = [*text_secrets(), *member_secrets(), *(SECRETS[n] for n in (
    "cookie", "secret_header", "location", "www_auth", "sse_comment", "sse_id", "sig", "amz_sig", "query",
    "sse_id_named", "body_bearer", "body_token"))]  # fmt: skip


@pytest.fixture
def upstream() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    srv.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.mark.e2e
@pytest.mark.skipif(
    not (Path(sys.executable).with_name("mitmdump")).exists(),
    reason="HTTP capture needs the mitm extra (mitmproxy)",
)
def test_http_recording_through_the_addon_keeps_none_of_the_planted_secrets(
    tmp_path: Path, upstream: ThreadingHTTPServer
) -> None:
    cassette = tmp_path / "http.jsonl"
    proc, url = start_recorder(f"http://127.0.0.1:{upstream.server_address[1]}/mcp", cassette)
    try:
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        conn.request(
            "POST", request_path(), orjson.dumps(call_with_everything(1)), request_headers()
        )
        resp = conn.getresponse()
        body = resp.read()
        headers = dict(resp.getheaders())
        conn.request(
            "POST", "/mcp", orjson.dumps(call_with_everything(UNAUTHORIZED)), request_headers()
        )
        refused = conn.getresponse()
        refused_body = refused.read()
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    assert refused.status == 401 and refused_body == error_body().encode(), (
        "the client gets the 401 as sent"
    )
    assert resp.status == 200 and body == sse_stream(
        orjson.loads(body.split(b"data: ", 1)[1].split(b"\n", 1)[0])
    )
    assert headers["X-Secret-Key"] == SECRETS["secret_header"], (
        "the client gets the headers unchanged"
    )
    ((path, sent, call), _) = upstream.seen  # type: ignore[attr-defined]
    assert path == request_path() and sent["Authorization"] == f"Bearer {SECRETS['bearer']}", (
        "upstream gets it all"
    )
    assert call == call_with_everything(1)
    data = cassette.read_bytes()
    assert_clean(data, HTTP_SECRETS)
    false_positives_intact(data)


def test_import_keeps_none_of_the_planted_secrets(tmp_path: Path) -> None:
    result = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": t} for t in texts()],
                                                     "structuredContent": {**members(), **FALSE_POSITIVES}}}  # fmt: skip
    flow = entry("POST", "http://127.0.0.1:8000" + request_path(), at=0.1, body=call_with_everything(1),
                 headers=request_headers(), ctype="text/event-stream", response=sse_stream(result))  # fmt: skip
    flow["response"]["headers"] += [{"name": k, "value": v} for k, v in response_headers().items()]
    refused = entry("POST", "http://127.0.0.1:8000/mcp", at=0.2, body=call_with_everything(UNAUTHORIZED),
                    headers=request_headers(), status=401, ctype="text/plain", response=error_body())  # fmt: skip
    failed = entry(
        "POST",
        "http://127.0.0.1:8000/mcp",
        at=0.3,
        body=call_with_everything(3),
        error=f"connection reset by peer; {texts()[-4]}",
    )  # (a capture's own error text)
    src = tmp_path / "c.har"
    src.write_bytes(har(flow, refused, failed))
    out = tmp_path / "out.jsonl"
    stats = import_file(src, out)
    assert stats.imported == 3
    data = out.read_bytes()
    assert b'"status":401' in data and b"connection reset by peer" in data
    assert_clean(data, HTTP_SECRETS)
    false_positives_intact(data)


def test_import_redacts_credentials_in_the_captured_url(tmp_path: Path) -> None:
    """The header's target names the server: a user:password in the captured URL never reaches it."""
    ok = {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}
    flow = entry("POST", "http://ada:Pl4nted-Passw0rd@127.0.0.1:8000/mcp", at=0.1, ctype="application/json",
                 body={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, response=orjson.dumps(ok))  # fmt: skip
    src = tmp_path / "c.har"
    src.write_bytes(har(flow))
    out = tmp_path / "out.jsonl"
    import_file(src, out)
    data = out.read_bytes()
    assert b"Pl4nted-Passw0rd" not in data
    assert b"127.0.0.1:8000/mcp" in data.split(b"\n", 1)[0]  # the header still names the server


def test_check_flags_every_planted_secret_in_every_place(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    for t in texts():
        events += [
            client(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"data": {"deep": [[{"x": t}]]}},
                }
            ),
            {"kind": "stderr", "from": "server", "text": f"log: {t}"},
            {"kind": "raw", "from": "server", "text": t},
            {
                "kind": "raw",
                "from": "client",
                "b64": base64.b64encode(b"\xff" + t.encode()).decode(),
            },
            {
                "kind": "http",
                "from": "server",
                "http": {
                    "exchange": 1,
                    "phase": "response",
                    "status": 200,
                    "headers": {"X-Debug": t},
                },
            },
            {
                "kind": "http",
                "from": "server",
                "http": {"exchange": 1, "phase": "sse", "sse": {"comment": t}},
            },
            {
                "kind": "http",
                "from": "server",
                "http": {"exchange": 1, "phase": "sse", "sse": {"id": t, "data": ""}},
            },
        ]
    for name, value in members().items():
        events.append(
            server(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/message",
                    "params": {"data": {name: value}},
                }
            )
        )
    for name, value in response_headers().items():
        events.append(
            {
                "kind": "http",
                "from": "server",
                "http": {
                    "exchange": 2,
                    "phase": "response",
                    "status": 200,
                    "headers": {name: value},
                },
            }
        )
    events.append(
        {
            "kind": "http",
            "from": "client",
            "http": {"exchange": 2, "phase": "request", "method": "POST", "path": request_path()},
        }
    )
    events += http_leaks(3)
    pem = [{"kind": "stderr", "from": "server", "text": ln} for ln in PEM_RSA[:3] + PEM_SSH[:2]]
    path = write_cassette(tmp_path / "leak.jsonl", *events, *pem)
    findings = check_bytes(path.read_bytes()).findings
    flagged = {f.line for f in findings if f.check == "secrets"}
    pem_end = len(events) + 1 + len(pem)
    planted = set(range(2, len(events) + 2)) | {len(events) + 2 + i for i in (0, 1, 2, 3, 4)}
    assert planted - flagged == set(), [
        orjson.loads(path.read_bytes().splitlines()[n - 1]) for n in sorted(planted - flagged)
    ]
    assert pem_end in flagged
    assert check_bytes(path.read_bytes().replace(b"\xff", b"")).findings  # (sanity: still a leak)


def http_leaks(exchange: int) -> list[dict[str, Any]]:
    """Events as an HTTP capture made them in clear: a token in an SSE `id:`, a 401 body in
    plain text, a JSON-RPC error whose message holds the free-text shapes."""
    sse_id = {
        "exchange": exchange,
        "phase": "sse",
        "sse": {"id": f"token={SECRETS['sse_id_named']}"},
    }
    body = {
        "exchange": exchange + 1,
        "phase": "response",
        "status": 401,
        "content_type": "text/plain",
    }
    return [
        {"kind": "http", "from": "server", "http": sse_id},
        {"kind": "raw", "from": "server", "text": error_body(), "http": body},
        *(server(error_answer(200 + i, t)) for i, t in enumerate(texts()[-5:])),
    ]  # fmt: skip


def test_false_positives_are_not_findings(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "ok.jsonl",
        client(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/list",
                "params": {"cursor": FALSE_POSITIVES["cursor"]},
            }
        ),
        server({"jsonrpc": "2.0", "id": 1, "result": {"tools": [], **FALSE_POSITIVES}}),
        *({"kind": "stderr", "from": "server", "text": t} for t in KEPT_TEXTS),
    )
    assert check_bytes(path.read_bytes()).findings == []


@pytest.mark.e2e
@pytest.mark.skipif(
    not (Path(sys.executable).with_name("mitmdump")).exists(),
    reason="HTTP capture needs the mitm extra (mitmproxy)",
)
def test_upstream_credentials_are_used_as_the_url_says_and_never_shown(
    tmp_path: Path, upstream: ThreadingHTTPServer
) -> None:
    password = "up-" + SECRETS["userinfo"]
    cassette = tmp_path / "http.jsonl"
    proc, url = start_recorder(
        f"http://deploy:{password}@127.0.0.1:{upstream.server_address[1]}/mcp", cassette
    )
    try:
        parts = urlsplit(url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        conn.request(
            "POST", "/mcp", orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}), headers
        )
        status = conn.getresponse().status
        conn.close()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    stderr = proc.stderr.read() if proc.stderr else ""
    assert status == 200
    ((_, sent, _),) = upstream.seen  # type: ignore[attr-defined]
    assert (
        sent["Authorization"] == "Basic " + base64.b64encode(f"deploy:{password}".encode()).decode()
    ), "sent upstream"
    assert password not in url and password not in stderr, "never printed"
    data = cassette.read_bytes()
    assert password.encode() not in data
    request = next(orjson.loads(ln) for ln in data.splitlines()[1:] if b'"phase":"request"' in ln)
    assert "authorization" not in {k.lower() for k in request["http"]["headers"]}, (
        "recorded as the client sent it"
    )
    assert (
        orjson.loads(data.splitlines()[0])["target"]["url"]
        == f"http://127.0.0.1:{upstream.server_address[1]}/mcp"
    )


def test_mcptape_redact_applies_the_same_table_to_a_cassette_recorded_in_clear(
    tmp_path: Path,
) -> None:
    events: list[dict[str, Any]] = [
        client(call_with_everything(1)),
        *({"kind": "stderr", "from": "server", "text": t} for t in texts()),
        *({"kind": "stderr", "from": "server", "text": ln} for ln in PEM_RSA + PEM_SSH),
        *({"kind": "raw", "from": "server", "text": ln} for ln in PEM_RSA),
        {
            "kind": "http",
            "from": "server",
            "http": {"exchange": 1, "phase": "sse", "sse": {"id": SECRETS["sse_id"], "data": ""}},
        },
        *(http_leaks(1)),
        {
            "kind": "http",
            "from": "server",
            "http": {
                "exchange": 1,
                "phase": "response",
                "status": 200,
                "headers": response_headers(),
            },
        },
        {
            "kind": "http",
            "from": "client",
            "http": {
                "exchange": 1,
                "phase": "request",
                "method": "POST",
                "path": request_path(),
                "headers": request_headers(),
            },
        },
    ]
    path = write_cassette(tmp_path / "clear.jsonl", *events)
    proc = subprocess.run(
        mcptape_cmd("redact", str(path)), check=False, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    data = path.read_bytes()
    assert_clean(data, [*HTTP_SECRETS, *PEM_BODIES])
    false_positives_intact(data)
