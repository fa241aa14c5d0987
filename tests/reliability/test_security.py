"""Security: secrets planted on every path (stdio bodies both ways, raw lines, stderr, the command
line, HTTP headers both ways, query strings, JSON and SSE bodies) never reach the cassette, while
the peers still get them; and nothing in a cassette is ever executed or evaluated."""

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
from urllib.parse import urlsplit

import orjson
import pytest

from mcptape.check import check_bytes
from mcptape.redaction.redact import REDACTED, Redactor
from tests.conftest import ROOT, mcptape_cmd

from .helpers import client, server, start_recorder, write_cassette

pytestmark = pytest.mark.e2e
ECHO = str(ROOT / "tests" / "capture" / "echo_server.py")

# Fake secrets, built in pieces so that no scanner mistakes this file for a leak.
A = "q7Rz2Lm9Xv4Tn8Kp"
S = {
    "named": "nm-" + A,                                                     # in members/headers named like secrets
    "github": "gh" + "p_" + A + A + "w3",
    "openai": "sk-" + "proj-" + A + A,
    "aws": "AK" + "IA" + "QWERTYUI12345678",
    "jwt": "ey" + "J" + A + ".ey" + "J" + A + "." + A,
    "bearer": "bt-" + A + "x",                                              # after "Bearer "
    "pem": "MIIEpA" + A + A,                                               # the body of a private key
    "arg": "cli-" + A,                                                      # on the server's command line
    "cookie": "ck-" + A,
    "query": "qs-" + A,
}  # fmt: skip
PEM = "-----BEGIN PRIVATE " + "KEY-----\n" + S["pem"] + "\n-----END PRIVATE " + "KEY-----"


def assert_no_secret(data: bytes, names: list[str]) -> None:
    leaked = [name for name in names if S[name].encode() in data]
    assert leaked == [], f"secrets in the cassette: {leaked}"
    assert REDACTED.encode() in data
    report = check_bytes(data)
    assert [f for f in report.findings if f.check == "secrets"] == [], (
        "mcptape check agrees: nothing escaped"
    )


def test_stdio_secrets_pass_through_but_never_reach_the_cassette(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "login", "arguments": {"api_key": S["named"], "note": f"use {S['github']} or {S['openai']}", "pem": PEM},
        "_meta": {"progressToken": "keep-" + A}}}  # fmt: skip
    result = {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {
            "content": [{"type": "text", "text": f"Bearer {S['bearer']} {S['jwt']}"}],
            "password": S["named"],
        },
    }
    stdin = b"\n".join([
        orjson.dumps(call), orjson.dumps(result), f"not json: {S['aws']}".encode(), f"stderr debug: {S['openai']} {S['jwt']}".encode(), b"",
    ])  # fmt: skip
    cmd = mcptape_cmd(
        "record",
        "-q",
        "-o",
        str(out),
        "--",
        sys.executable,
        ECHO,
        "--api-key",
        S["arg"],
        f"--token={S['arg']}",
    )
    proc = subprocess.run(cmd, input=stdin, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b"\n".join(stdin.split(b"\n")[:3]) + b"\n", (
        "the client gets the bytes unchanged"
    )
    assert S["openai"].encode() in proc.stderr, "stderr passes through unchanged"
    data = out.read_bytes()
    assert_no_secret(data, ["named", "github", "openai", "aws", "jwt", "bearer", "pem", "arg"])
    assert b'"progressToken":"keep-' in data, "protocol fields are not secrets"


class Upstream(BaseHTTPRequestHandler):
    """A stand-in MCP HTTP server that answers with secrets in headers, a JSON body and SSE events."""

    def log_message(self, *_: Any) -> None:
        return

    def do_POST(self) -> None:
        body = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.seen.append((self.path, dict(self.headers), body))  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Set-Cookie", f"session={S['cookie']}; HttpOnly")
        self.send_header("X-Api-Key", S["named"])
        if body["method"] == "tools/call":
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            progress = {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": f"token {S['github']}"},
            }
            answer = {
                "jsonrpc": "2.0",
                "id": body["id"],
                "result": {
                    "content": [{"type": "text", "text": S["jwt"]}],
                    "client_secret": S["named"],
                },
            }
            for msg in (progress, answer):
                self.wfile.write(b"event: message\ndata: " + orjson.dumps(msg) + b"\n\n")
                self.wfile.flush()
        else:
            payload = orjson.dumps(
                {
                    "jsonrpc": "2.0",
                    "id": body["id"],
                    "result": {"tools": [], "note": f"AWS {S['aws']}"},
                }
            )
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)


@pytest.fixture
def upstream() -> Iterator[ThreadingHTTPServer]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    srv.seen = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()


def post(url: str, msg: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {S['bearer']}", "Cookie": f"sid={S['cookie']}", "X-Api-Key": S["named"],
    }  # fmt: skip
    conn.request(
        "POST", f"{parts.path}?access_token={S['query']}&page=1", orjson.dumps(msg), headers
    )
    resp = conn.getresponse()
    data = resp.read()
    conn.close()
    return resp.status, dict(resp.getheaders()), data


@pytest.mark.skipif(
    not (Path(sys.executable).with_name("mitmdump")).exists(),
    reason="HTTP capture needs the mitm extra (mitmproxy)",
)
def test_http_secrets_in_headers_query_json_and_sse_never_reach_the_cassette(
    tmp_path: Path, upstream: ThreadingHTTPServer
) -> None:
    cassette = tmp_path / "http.jsonl"
    proc, url = start_recorder(f"http://127.0.0.1:{upstream.server_address[1]}/mcp", cassette)
    try:
        args = {"name": "t", "arguments": {"token": S["named"], "text": f"key {S['openai']}"}}
        status, headers, body = post(
            url, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": args}
        )
        assert status == 200 and S["jwt"].encode() in body and S["github"].encode() in body, (
            "SSE passes unchanged"
        )
        assert S["cookie"] in headers["Set-Cookie"]
        status, _, body = post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert status == 200 and S["aws"].encode() in body
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    (path, sent, call), _ = upstream.seen  # type: ignore[attr-defined]
    assert (
        S["query"] in path
        and sent["Authorization"] == f"Bearer {S['bearer']}"
        and call["params"] == args
    ), "upstream gets it all"
    assert_no_secret(cassette.read_bytes(), list(S))


EVIL = [
    "__import__('os').system('touch pwned-py')",
    "$(touch pwned-sh)", "`touch pwned-tick`", "; touch pwned-semi", "{{ cycler.__init__.__globals__.os.system('touch pwned-j2') }}",
    "${jndi:ldap://127.0.0.1/a}", "!!python/object/apply:os.system ['touch pwned-yaml']", "\x1b]0;title\x07\x1b[2J",
]  # fmt: skip


def test_nothing_in_a_cassette_is_executed_or_evaluated(tmp_path: Path) -> None:
    evil_params = {"name": EVIL[0], "arguments": {str(i): s for i, s in enumerate(EVIL)}}
    evil_result = {
        "content": [{"type": "text", "text": s} for s in EVIL],
        "structuredContent": {"eval": EVIL[0]},
    }
    header = {"mcptape_cassette": 1, "mcptape_version": EVIL[1], "transport": "stdio", "target": {"command": ["sh", "-c", "touch pwned-target"]},
              "recorded_at": EVIL[4], "redaction": {"enabled": True, "marker": EVIL[0], "keys": [EVIL[2]], "patterns": ["(a+)+$"]}}  # fmt: skip
    cassette = write_cassette(
        tmp_path / "evil.jsonl",
        client({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": evil_params}),
        server({"jsonrpc": "2.0", "id": 1, "result": evil_result}),
        {"kind": "stderr", "from": "server", "text": EVIL[1]},
        {"kind": "raw", "from": "server", "text": EVIL[2]},
        header=header,
    )
    request = (
        orjson.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": evil_params})
        + b"\n"
    )
    runs = [
        subprocess.run(mcptape_cmd("replay", str(cassette)), input=request, capture_output=True, timeout=60, cwd=tmp_path),
        *(subprocess.run(mcptape_cmd("show", "-f", fmt, str(cassette)), capture_output=True, timeout=60, cwd=tmp_path) for fmt in ("table", "json", "mermaid")),
        subprocess.run(mcptape_cmd("diff", str(cassette), str(cassette)), capture_output=True, timeout=60, cwd=tmp_path),
        subprocess.run(mcptape_cmd("check", str(cassette)), capture_output=True, timeout=60, cwd=tmp_path),
    ]  # fmt: skip
    assert [r.returncode for r in runs] == [0, 0, 0, 0, 0, 0], [r.stderr for r in runs]
    assert orjson.loads(runs[0].stdout) == {"jsonrpc": "2.0", "id": 7, "result": evil_result}, (
        "replayed as plain data"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.jsonl"], "nothing was run"


def test_the_header_target_loses_its_secrets_but_keeps_its_shape() -> None:
    argv = ["server", "--api-key", S["arg"], f"--token={S['arg']}", f"GITHUB_TOKEN={S['github']}", "-p", "8000",
            f"http://user:{S['named']}@127.0.0.1/mcp?access_token={S['query']}&page=2", "--password-file", "pw.txt"]  # fmt: skip
    assert Redactor().target({"command": argv}) == {"command": [
        "server", "--api-key", REDACTED, f"--token={REDACTED}", f"GITHUB_TOKEN={REDACTED}", "-p", "8000",
        "http://user:[REDACTED]@127.0.0.1/mcp?access_token=%5BREDACTED%5D&page=2", "--password-file", "pw.txt",
    ]}  # fmt: skip
    assert Redactor().target({"url": f"https://127.0.0.1/mcp?api_key={S['query']}"}) == {
        "url": "https://127.0.0.1/mcp?api_key=%5BREDACTED%5D"
    }
