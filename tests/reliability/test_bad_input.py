"""Bad input on the `mcptape replay` stdio path: each bad line gets the JSON-RPC error a real
server gives, and the server goes on serving the lines after it."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import mcptape_cmd

from .helpers import client, server, write_cassette

pytestmark = pytest.mark.e2e

MAX_LINE = 4096
PARSE, INVALID, NO_MATCH = -32700, -32600, -32010
OK = "ok"

BAD_LINES: list[tuple[str, bytes, Any, Any]] = [
    # (what, line, expected id, expected error code, or OK with the result)
    ("not JSON", b"this is not json", None, PARSE),
    ("cut JSON", b'{"jsonrpc":"2.0","id":1,', None, PARSE),
    ("invalid UTF-8", b'\xff\xfe{"jsonrpc":"2.0","id":1,"method":"ping"}', None, PARSE),
    ("invalid UTF-8 in a string", b'{"jsonrpc":"2.0","id":1,"method":"pi\xc3\x28ng"}', None, PARSE),
    ("a NUL byte", b"\x00", None, PARSE),
    ("nesting 100000 deep", b"[" * 100_000, None, PARSE),
    ("a number", b"42", None, INVALID),
    ("a string", b'"tools/list"', None, INVALID),
    ("null", b"null", None, INVALID),
    ("an empty batch", b"[]", None, INVALID),
    ("wrong jsonrpc", b'{"jsonrpc":"1.0","id":5,"method":"ping"}', 5, INVALID),
    ("no jsonrpc", b'{"id":6,"method":"ping"}', 6, INVALID),
    ("no method", b'{"jsonrpc":"2.0","id":7}', 7, INVALID),
    ("a method that is not a string", b'{"jsonrpc":"2.0","id":8,"method":5}', 8, INVALID),
    ("an object id", b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}', None, INVALID),
    ("a null id", b'{"jsonrpc":"2.0","id":null,"method":"ping"}', None, INVALID),
    ("an unknown method", b'{"jsonrpc":"2.0","id":9,"method":"no/such/method"}', 9, NO_MATCH),
    ("over --max-line", b'{"jsonrpc":"2.0","id":10,"method":"ping","params":{"pad":"' + b"x" * (3 * MAX_LINE) + b'"}}', None, PARSE),
    ("CRLF line end", b'{"jsonrpc":"2.0","id":11,"method":"ping"}\r', 11, OK),
    ("an unknown notification", b'{"jsonrpc":"2.0","method":"notifications/no_such_thing"}', None, None),
    ("a recorded request", b'{"jsonrpc":"2.0","id":"last","method":"tools/list"}', "last", OK),
]  # fmt: skip
"""Every kind of bad line, then good ones: the server must still answer them."""


def test_every_bad_line_is_answered_and_the_server_keeps_serving(tmp_path: Path) -> None:
    cassette = write_cassette(
        tmp_path / "c.jsonl",
        client({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        server({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}),
    )
    stdin = b"".join(line + b"\n" for _, line, _, _ in BAD_LINES)
    proc = subprocess.run(
        mcptape_cmd("replay", "--max-line", str(MAX_LINE), str(cassette)),
        input=stdin,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    answers = [orjson.loads(ln) for ln in proc.stdout.splitlines()]
    expected = [(what, msg_id, code) for what, _, msg_id, code in BAD_LINES if code is not None]
    assert len(answers) == len(expected)
    for answer, (what, msg_id, code) in zip(answers, expected, strict=True):
        assert answer["jsonrpc"] == "2.0" and answer["id"] == msg_id, what
        if code == OK:
            assert "result" in answer, what
        else:
            assert answer["error"]["code"] == code, what
            assert isinstance(answer["error"]["message"], str) and answer["error"]["message"], what
    assert (
        "too long"
        in answers[[w for w, _, _ in expected].index("over --max-line")]["error"]["message"]
    )
    assert (
        "no/such/method"
        in answers[[w for w, _, _ in expected].index("an unknown method")]["error"]["message"]
    )
    assert answers[-1]["result"] == {"tools": []}
    assert b"not JSON" in proc.stderr and b"answered -32700" in proc.stderr


def test_max_line_below_a_kibibyte_is_a_usage_error(tmp_path: Path) -> None:
    cassette = write_cassette(tmp_path / "c.jsonl")
    proc = subprocess.run(
        mcptape_cmd("replay", "--max-line", "10", str(cassette)), capture_output=True, timeout=60
    )
    assert proc.returncode == 2 and proc.stdout == b"" and proc.stderr.count(b"\n") == 1
