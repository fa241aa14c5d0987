"""`mcptape check`: the golden cassettes are clean; every kind of problem is found on its line."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.check import check_bytes, check_file
from tests.conftest import ROOT

from .helpers import GOLDEN, HEADER, client, event_lines, run_cli, server, write_cassette

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
PONG = {"jsonrpc": "2.0", "id": 1, "result": {}}

# Fake secrets of every shape, built in pieces so no scanner mistakes this file for a leak.
A = "a1B2c3D4e5F6g7H8"
SECRETS: dict[str, str] = {
    "bearer token": "Bearer " + A + A,
    "sk- API key": "sk-" + "proj-" + A + A,
    "GitHub token": "gh" + "p_" + A + A + "z9",
    "GitHub fine-grained token": "github" + "_pat_" + A * 3,
    "Slack token": "xo" + "xb-" + "1234567890-" + A,
    "AWS access key id": "AK" + "IA" + "ABCDEFGH12345678",
    "Google API key": "AI" + "za" + "Sy" + A + A + "a",
    "JWT": "ey" + "J" + A + ".ey" + "J" + A + "." + A,
    "private key": "-----BEGIN RSA "
    + "PRIVATE KEY-----\nMIIEow"
    + A
    + "\n-----END RSA "
    + "PRIVATE KEY-----",
    "Stripe key": "sk" + "_live_" + A + A,
    "GitLab token": "gl" + "pat-" + A + "xyzw",
    "Hugging Face token": "hf" + "_" + "abcdefghijABCDEFGHIJabcdefghijKLMN",
    "npm token": "np" + "m_" + A + A + "abcd",
}
RANDOM = "Zq8" + "xP2vL9mK4wR7tY1u"  # high entropy, in no known token shape


def test_every_golden_cassette_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert len(GOLDEN) >= 8
    for path in GOLDEN:
        report = check_bytes(path.read_bytes())
        assert report.findings == [], path
    code, out, err = run_cli(capsys, "check", *map(str, GOLDEN))
    assert (code, out) == (0, ""), err
    assert f"{len(GOLDEN)} cassette(s) clean" in err


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_token_shape_is_found_on_its_line_in_every_place(
    tmp_path: Path, kind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = SECRETS[kind]
    path = write_cassette(
        tmp_path / "leak.jsonl",
        client(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "t", "arguments": {"note": f"use {secret} now"}},
            }
        ),
        server(
            {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": secret}]}}
        ),
        {"kind": "stderr", "from": "server", "text": f"debug: {secret}"},
        {
            "kind": "raw",
            "from": "client",
            "b64": base64.b64encode(b"\xff" + secret.encode()).decode(),
        },
    )
    report = check_bytes(path.read_bytes())
    found = {(f.line, f.check) for f in report.findings}
    assert found == {(2, "secrets"), (3, "secrets"), (4, "secrets"), (5, "secrets")}
    assert all(kind in f.what for f in report.findings)
    code, out, _ = run_cli(capsys, "check", str(path))
    assert code == 1
    assert [ln.split(": ")[0] for ln in out.splitlines()] == [f"{path}:{n}" for n in (2, 3, 4, 5)]
    assert secret not in out and secret[8:] not in out, "a finding never prints the secret"


def test_random_values_in_secret_places_are_found(tmp_path: Path) -> None:
    http = {"exchange": 1, "phase": "request", "method": "POST", "path": f"/mcp?access_token={RANDOM}&page=2",
            "headers": {"X-Api-Key": RANDOM, "Mcp-Session-Id": RANDOM}}  # fmt: skip
    path = write_cassette(
        tmp_path / "leak.jsonl",
        client(PING, http=http),
        server(
            PONG,
            http={
                "exchange": 1,
                "phase": "response",
                "status": 200,
                "headers": {"Set-Cookie": f"sid={RANDOM}"},
            },
        ),
        client(
            {
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "login",
                    "arguments": {"password": RANDOM, "progressToken": RANDOM},
                },
            }
        ),
        server({"jsonrpc": "2.0", "id": 2, "result": {"content": []}}),
        {
            "kind": "stderr",
            "from": "server",
            "text": f"starting with GITHUB_TOKEN={RANDOM} and --api-key {RANDOM}",
        },
    )
    findings = check_bytes(path.read_bytes()).findings
    where = sorted((f.line, f.what.rsplit(" at ", 1)[1]) for f in findings)
    assert where == [
        (2, "/http/headers/X-Api-Key"), (2, "/http/path"), (3, "/http/headers/Set-Cookie"),
        (4, "/msg/params/arguments/password"), (6, "/text"),
    ]  # fmt: skip


def test_redacted_and_harmless_values_are_not_findings(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "ok.jsonl",
        client({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "t", "arguments": {"token": "[REDACTED]", "password": "hunter2hunter2"}, "_meta": {"progressToken": RANDOM}}},
               http={"exchange": 1, "phase": "request", "path": "/mcp?token=%5BREDACTED%5D", "headers": {"Authorization": "[REDACTED]", "Mcp-Session-Id": RANDOM}}),
        server({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "Bearer [REDACTED] and a token: none; key=value"}], "nextCursor": RANDOM}}),
    )  # fmt: skip
    assert check_bytes(path.read_bytes()).findings == []


def test_broken_pairing_is_found(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "pairs.jsonl",
        client(PING),
        client({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        server(PONG),
        server({"jsonrpc": "2.0", "id": 7, "result": {}}),
    )
    findings = [(f.line, f.check) for f in check_bytes(path.read_bytes()).findings]
    assert findings == [(5, "pairing"), (3, "pairing")]
    text = [f.what for f in check_bytes(path.read_bytes()).findings]
    assert "answers no request" in text[0] and "tools/list (id 2) was never answered" in text[1]


def test_unanswered_requests_with_a_reason_are_warnings(tmp_path: Path) -> None:
    path = write_cassette(
        tmp_path / "crash.jsonl",
        client(PING),
        {"kind": "exit", "from": "server", "info": {"code": -9, "signal": "SIGKILL"}},
    )
    report = check_bytes(path.read_bytes())
    assert report.findings == []
    assert [w.what for w in report.warnings] == [
        "ping (id 1) was never answered: the server exited first"
    ]


@pytest.mark.parametrize(
    ("line", "check", "text"),
    [
        ({"seq": "two", "t": 0, "kind": "message", "from": "client", "msg": PING}, "format", "seq: 'two' is not of type 'integer'"),
        ({"seq": 2, "t": 0, "kind": "shout", "from": "client"}, "format", "kind: 'shout' is not one of"),
        ({"seq": 2, "t": 0, "kind": "message", "from": "client"}, "format", "'msg' is a required property"),
        ({"seq": 2, "t": 0, "kind": "message", "from": "client", "msg": {"jsonrpc": "1.0", "id": 1, "method": "ping"}}, "protocol", 'not JSON-RPC 2.0 ("jsonrpc" is \'1.0\')'),
        ({"seq": 2, "t": 0, "kind": "message", "from": "client", "msg": [1]}, "protocol", "not a JSON-RPC message (a JSON int)"),
        ({"seq": 2, "t": 0, "kind": "message", "from": "client", "msg": {"jsonrpc": "2.0", "id": 1.5, "method": "ping"}}, "protocol", "bad JSON-RPC id 1.5"),
    ],
)  # fmt: skip
def test_a_schema_invalid_line_is_found(
    tmp_path: Path, line: dict[str, Any], check: str, text: str
) -> None:
    data = (
        b"\n".join([orjson.dumps(HEADER), orjson.dumps(line), b'{"seq":3,"t":1,"kind":"end"}'])
        + b"\n"
    )
    findings = [f for f in check_bytes(data).findings if f.check != "pairing"]
    assert [(f.line, f.check) for f in findings] == [(2, check)], findings
    assert text in findings[0].what


def test_messages_are_checked_against_the_mcp_types_of_their_version(tmp_path: Path) -> None:
    golden = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"
    lines = golden.read_bytes().splitlines()
    broken: list[int] = []
    for n, raw in enumerate(lines, start=1):
        obj = orjson.loads(raw)
        result = obj.get("msg", {}).get("result") if isinstance(obj.get("msg"), dict) else None
        if isinstance(result, dict) and "tools" in result:
            result["tools"][0]["inputSchema"] = "not a schema"
            broken.append(n)
        lines[n - 1] = orjson.dumps(obj)
    findings = check_bytes(b"\n".join(lines) + b"\n").findings
    assert [(f.line, f.check) for f in findings] == [(broken[0], "protocol")]
    assert findings[0].what.startswith(
        "tools/list result is not valid MCP 2025-11-25: tools.0.inputSchema"
    )


def test_a_2026_result_is_checked_against_its_own_type_not_input_required(tmp_path: Path) -> None:
    golden = ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl"
    lines = golden.read_bytes().splitlines()
    for n, raw in enumerate(lines):
        obj = orjson.loads(raw)
        msg = obj.get("msg")
        if (
            isinstance(msg, dict)
            and isinstance(msg.get("result"), dict)
            and msg["result"].get("resultType") == "complete"
            and "content" in msg["result"]
        ):
            msg["result"]["content"] = [{"type": "no-such-content"}]
            lines[n] = orjson.dumps(obj)
            break
    findings = check_bytes(b"\n".join(lines) + b"\n").findings
    assert (
        len(findings) == 1 and "tools/call result is not valid MCP 2026-07-28" in findings[0].what
    )


@pytest.mark.parametrize(
    ("content", "line", "text"),
    [
        (b"", 0, "empty file"),
        (b'{"log": {"version": "1.2", "entries": []}}\n', 1, "not an mcptape cassette"),
        (b"interactions:\n- request:\n", 1, "not an mcptape cassette"),
        (orjson.dumps({**HEADER, "mcptape_cassette": 9}) + b"\n", 1, "upgrade mcptape"),
        (orjson.dumps(HEADER) + b'\n{"seq":1,"t":0,"kind":"end"}\n{oops\n{"seq":2,"t":0,"kind":"end"}\n', 3, "corrupt line (not JSON)"),
    ],
)  # fmt: skip
def test_unreadable_files_are_findings(content: bytes, line: int, text: str) -> None:
    (finding,) = check_bytes(content).findings
    assert finding.line == line and text in finding.what


def test_a_truncated_last_line_is_a_warning() -> None:
    data = (
        orjson.dumps(HEADER)
        + b"\n"
        + b"\n".join(event_lines(client(PING), server(PONG)))
        + b'\n{"seq":3,"t":0.1,"ki'
    )
    report = check_bytes(data)
    assert report.findings == []
    assert [(w.line, w.check) for w in report.warnings][0] == (4, "format")


def test_skip_leaves_a_check_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_cassette(
        tmp_path / "a.jsonl", {"kind": "stderr", "from": "server", "text": SECRETS["GitHub token"]}
    )
    assert run_cli(capsys, "check", str(path))[0] == 1
    assert run_cli(capsys, "check", "--skip", "secrets", str(path))[0] == 0


@pytest.mark.parametrize(
    "args", [[], ["does-not-exist.jsonl"], ["--skip", "everything", "x.jsonl"]]
)
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run_cli(capsys, "check", *args)
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("mcptape: error: ")


def test_the_pre_commit_hook_runs_check_on_cassettes() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert (
        "- id: mcptape-check" in text
        and "entry: mcptape check" in text
        and "language: python" in text
    )
    files = re.search(r"^\s*files: (.+)$", text, re.M)
    assert files is not None
    rx = re.compile(files.group(1))
    assert rx.search("cassettes/demo.jsonl") and rx.search(
        "tests/cassettes/test_api/test_add.jsonl"
    )
    assert not rx.search("data/events.jsonl") and not rx.search("cassettes/notes.md")


def test_a_file_checked_line_by_line_reports_what_its_bytes_do(tmp_path: Path) -> None:
    """`mcptape check` streams the file (`check_file`): same findings and warnings, same order,
    as `check_bytes` of the whole file, for every golden cassette, broken or cut short."""
    for golden in GOLDEN:
        data = golden.read_bytes()
        lines = data.split(b"\n")
        broken = b"\n".join([*lines[:3], b"{not json", *lines[3:]])
        orphan = orjson.dumps({"seq": 99, "t": 1, "kind": "message", "from": "server",
                               "msg": {"jsonrpc": "2.0", "id": 424242, "result": 7}})  # fmt: skip
        for variant in (data, broken[:-30], broken + orphan + b"\n"):
            path = tmp_path / "c.jsonl"
            path.write_bytes(variant)
            streamed, whole = check_file(path), check_bytes(variant)
            assert (streamed.findings, streamed.warnings) == (whole.findings, whole.warnings)
            if variant is not data:
                assert any(f.line == 4 and "corrupt line" in f.what for f in streamed.findings)


def test_protocol_findings_come_in_the_order_of_the_requests_not_of_the_answers(
    tmp_path: Path,
) -> None:
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}  # fmt: skip
    done = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                  "serverInfo": {"name": "s", "version": "1"}}}  # fmt: skip

    def call(i: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "t"}}

    def bad(i: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": i, "result": {"content": "not a list"}}

    path = write_cassette(
        tmp_path / "c.jsonl",
        client(init),
        server(done),
        client({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        client(call(1)),
        client(call(2)),
        server(bad(2)),  # line 7
        server(bad(1)),  # line 8
    )
    findings = check_file(path).findings
    assert [(f.line, f.check) for f in findings] == [(8, "protocol"), (7, "protocol")]
    assert all(f.what.startswith("tools/call result is not valid MCP 2025-11-25") for f in findings)
