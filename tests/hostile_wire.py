"""Hostile client input for the replay shells, as one table (no tests here).

Each `Case` is one bad payload and what JSON-RPC 2.0 (and MCP over HTTP) says it gets, on stdio
(`mcptape replay`), on Streamable HTTP in a handshake-era session, and on the 2026-07-28
stateless path. The unit tests (tests/replay/test_hostile_input.py) and the end-to-end tests
(tests/e2e/test_hostile_wire.py) both run it, each case followed by a good request that must
be answered: the server keeps serving.

The cassette they replay (`EVENTS`) recorded one `tools/call echo` (legacy and 2026-07-28);
served with allow-repeats, the good request can be asked again and again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

LEGACY = "2025-11-25"
MODERN = "2026-07-28"
PARSE, INVALID, NO_MATCH = -32700, -32600, -32010
BIG = 20 * 1024 * 1024
"""The unrecorded request's argument: 20 MiB."""
REPLY_BOUND = 16 * 1024
"""No error answer may be bigger than this (the 20 MiB request's included)."""


def modern_meta() -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "hostile", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }


def echo(msg_id: Any, meta: dict[str, Any] | None, **arguments: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "echo", "arguments": arguments or {"text": "hi"}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params}


def echoed(msg_id: Any, modern: bool) -> dict[str, Any]:
    result: dict[str, Any] = {"content": [{"type": "text", "text": "hi"}], "isError": False}
    if modern:  # as a 2026-07-28 server answers (and a legacy answer translated for its client)
        result["resultType"] = "complete"
        result["_meta"] = {"io.modelcontextprotocol/serverInfo": {"name": "echo", "version": "1"}}
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "rec", "version": "1"},
    },
}
INIT_RESULT = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {
        "protocolVersion": LEGACY,
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "echo", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
EVENTS: list[tuple[str, Any]] = [
    ("client", INIT),
    ("server", INIT_RESULT),
    ("client", INITIALIZED),
    ("client", echo(1, None)),
    ("server", echoed(1, False)),
    ("client", echo(2, modern_meta())),
    ("server", echoed(2, True)),
]
"""(from, msg) of the cassette every hostile-input test replays."""


@dataclass(frozen=True)
class Expect:
    """What one payload gets: `answers` are (id, error code or "ok") in order, `array` when they
    come as one batch array; `status` is the HTTP status (None on stdio)."""

    answers: tuple[tuple[Any, Any], ...]
    array: bool = False
    status: int | None = None
    says: str | None = None
    """Text the (first) error message must contain."""


def err(msg_id: Any, code: int, says: str | None = None, status: int | None = 400) -> Expect:
    return Expect(((msg_id, code),), status=status, says=says)


NOTHING = Expect(())


@dataclass(frozen=True)
class Case:
    what: str
    body: Callable[[dict[str, Any] | None], bytes]
    """The payload, given the request `_meta` of the era (None: handshake era)."""
    stdio: Expect
    session: Expect
    """Streamable HTTP, in a handshake-era session."""
    modern: Expect
    """Streamable HTTP, 2026-07-28 (stateless; batches are not part of that protocol)."""
    method: str = "tools/call"
    """The `Mcp-Method` header a 2026-07-28 client sends with it."""


def _raw(data: bytes) -> Callable[[dict[str, Any] | None], bytes]:
    return lambda _meta: data


def _msg(build: Callable[[dict[str, Any] | None], Any]) -> Callable[[dict[str, Any] | None], bytes]:
    return lambda meta: orjson.dumps(build(meta))


def _with_id(msg_id: Any) -> Callable[[dict[str, Any] | None], bytes]:
    return _msg(lambda meta: {**echo(0, meta), "id": msg_id})


def _nested(depth: int) -> Callable[[dict[str, Any] | None], bytes]:
    def body(meta: dict[str, Any] | None) -> bytes:
        head = orjson.dumps(echo(9, meta, deep=[])).split(b"[]")
        return head[0] + b"[" * depth + b"]" * depth + head[1]

    return body


def _big(meta: dict[str, Any] | None) -> bytes:
    return orjson.dumps(echo(10, meta, text="x" * BIG))


_NOT_BATCH = err(None, INVALID, "single JSON-RPC request")
_ID = "the id must be a string or an integer"
CASES: list[Case] = [
    Case("a batch of numbers", _raw(b"[1,2,3]"),
         Expect(((None, INVALID),) * 3, array=True),
         Expect(((None, INVALID),) * 3, array=True, status=200), _NOT_BATCH),
    Case("an empty batch", _raw(b"[]"),
         err(None, INVALID, "empty batch", None), err(None, INVALID, "empty batch"),
         err(None, INVALID, "empty batch")),
    Case("a batch of notifications only", _raw(orjson.dumps([INITIALIZED, INITIALIZED])),
         NOTHING, Expect((), status=202), _NOT_BATCH),
    Case("a batch of a request, a notification and a number",
         _msg(lambda meta: [echo("b1", meta), INITIALIZED, 7]),
         Expect((("b1", "ok"), (None, INVALID)), array=True),
         Expect((("b1", "ok"), (None, INVALID)), array=True, status=200), _NOT_BATCH),
    Case("a float id", _with_id(1.5), err(None, INVALID, _ID, None), err(None, INVALID, _ID),
         err(None, INVALID, _ID)),
    Case("a null id", _with_id(None), err(None, INVALID, _ID, None), err(None, INVALID, _ID),
         err(None, INVALID, _ID)),
    Case("a boolean id", _with_id(True), err(None, INVALID, _ID, None), err(None, INVALID, _ID),
         err(None, INVALID, _ID)),
    Case("an object id", _with_id({"x": 1}), err(None, INVALID, _ID, None),
         err(None, INVALID, _ID), err(None, INVALID, _ID)),
    Case("an array id", _with_id([1]), err(None, INVALID, _ID, None), err(None, INVALID, _ID),
         err(None, INVALID, _ID)),
    Case("an id of 10^30", _raw(b'{"jsonrpc":"2.0","id":1000000000000000000000000000000,"method":"tools/call"}'),
         err(None, INVALID, "out of range", None), err(None, INVALID, "out of range"),
         err(None, INVALID, "out of range")),
    Case("an id of 2^64 (beyond what the parser reads exactly)",
         _raw(b'{"jsonrpc":"2.0","id":18446744073709551616,"method":"tools/call"}'),
         err(None, INVALID, "out of range", None), err(None, INVALID, "out of range"),
         err(None, INVALID, "out of range")),
    Case("an id of 2^64 - 1 (a valid id: answered, echoed)", _with_id(2**64 - 1),
         Expect(((2**64 - 1, "ok"),)), Expect(((2**64 - 1, "ok"),), status=200),
         Expect(((2**64 - 1, "ok"),), status=200)),
    Case('"jsonrpc": "1.0"', _msg(lambda meta: {**echo(5, meta), "jsonrpc": "1.0"}),
         err(5, INVALID, '"jsonrpc" must be "2.0"', None), err(5, INVALID, '"jsonrpc" must be "2.0"'),
         err(5, INVALID, '"jsonrpc" must be "2.0"')),
    Case("no jsonrpc", _msg(lambda meta: {k: v for k, v in echo(6, meta).items() if k != "jsonrpc"}),
         err(6, INVALID, "missing", None), err(6, INVALID, "missing"), err(6, INVALID, "missing")),
    Case("a method that is not a string", _msg(lambda meta: {**echo(8, meta), "method": 5}),
         err(8, INVALID, '"method" must be a string', None), err(8, INVALID, '"method" must be a string'),
         err(8, INVALID, '"method" must be a string')),
    Case("not JSON", _raw(b'{"jsonrpc": "2.0", "id": 1,'), err(None, PARSE, "Parse error", None),
         err(None, PARSE, "Parse error"), err(None, PARSE, "Parse error")),
    Case("a request nested 300 deep", _nested(300), err(9, INVALID, "more than 200 levels", None),
         err(9, INVALID, "more than 200 levels"), err(9, INVALID, "more than 200 levels")),
    Case("a request nested 100,000 deep", _nested(100_000), err(None, PARSE, "1024 levels", None),
         err(None, PARSE, "1024 levels"), err(None, PARSE, "1024 levels")),
    Case("a 20 MiB request nobody recorded", _big, err(10, NO_MATCH, "bytes)", None),
         err(10, NO_MATCH, "bytes)", 200), err(10, NO_MATCH, "bytes)", 200)),
]  # fmt: skip
"""Every hostile payload, with what each transport answers."""


def check(expect: Expect, answers: list[Any], raw_size: int) -> None:
    """Asserts one payload's answers (the parsed messages or batch arrays sent for it)."""
    assert raw_size <= REPLY_BOUND or not expect.answers, f"an answer of {raw_size} bytes"
    if not expect.answers:
        assert answers == []
        return
    assert len(answers) == 1, answers
    got = answers[0]
    if expect.array:
        assert isinstance(got, list), got
    else:
        assert isinstance(got, dict), got
        got = [got]
    assert [(m["id"], "ok" if "result" in m else m["error"]["code"]) for m in got] == list(
        expect.answers
    )
    assert all(m["jsonrpc"] == "2.0" for m in got)
    if expect.says is not None:
        assert expect.says in got[0]["error"]["message"], got[0]["error"]["message"]
