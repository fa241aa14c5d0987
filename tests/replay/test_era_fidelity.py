"""A cassette of one era served to a client of the other: each answer carries that era's members
only (`mcptape.eras.ERA_MEMBERS`) and is valid MCP of the client's version, as `mcptape check`
sees a cassette recorded from those answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mcptape.cassette import dumps, load
from mcptape.check import check_bytes
from mcptape.eras import LEGACY, MODERN_ERA, members, modern_result, reserved
from mcptape.replay import ReplayEngine, Send
from mcptape.versions import META_SERVER_INFO
from tests.replay.tape import call, meta, note, req, tape

CASSETTES = Path(__file__).parents[2] / "cassettes" / "python-sdk"
LEGACY_VERSION = "2025-11-25"
INIT = req(1, "initialize", {"protocolVersion": LEGACY_VERSION, "capabilities": {},
                             "clientInfo": {"name": "inspector", "version": "1"}})  # fmt: skip
READ = {"uri": "demo://readme"}
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    ("tools/list", {}),
    ("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}),
    ("tools/call", {"name": "echo", "arguments": {"message": "hello"}}),
    ("resources/list", {}),
    ("resources/read", READ),
    ("prompts/list", {}),
    ("prompts/get", {"name": "review", "arguments": {"code": "print(1)"}}),
]
"""What the demo's cassettes recorded (both eras), asked by a client of the other era."""


def has(body: Any, path: tuple[str, ...]) -> bool:
    """True when `body` holds something at `path` (`"*"`: in any item of a list)."""
    if not path:
        return True
    if path[0] == "*":
        return isinstance(body, list) and any(has(v, path[1:]) for v in body)
    return isinstance(body, dict) and path[0] in body and has(body[path[0]], path[1:])


def served(path: Path, client: list[dict[str, Any]]) -> list[tuple[dict[str, Any], Any]]:
    """Each client message with the engine's answer to it (None for a notification)."""
    engine = ReplayEngine.from_cassette(load(path))
    out = []
    for msg in client:
        answers = [o.msg for o in engine.receive(msg) if isinstance(o, Send) and o.final]
        out.append((msg, answers[0] if answers else None))
    return out


def checked(pairs: list[tuple[dict[str, Any], Any]]) -> list[str]:
    """What `mcptape check` finds in a cassette that recorded these messages."""
    steps = [step for msg, answer in pairs for step in (("c", msg), ("s", answer)) if step[1]]
    report = check_bytes(dumps(tape(*steps)))
    return [f.what for f in report.findings]


def test_a_2026_cassette_answers_a_legacy_client_with_legacy_results_only() -> None:
    pytest.importorskip("mcp_types")
    client = [INIT, note("notifications/initialized")]
    client += [req(i, method, params or None) for i, (method, params) in enumerate(REQUESTS, 2)]
    pairs = served(CASSETTES / "2026-07-28" / "stdio.jsonl", client)
    for msg, answer in pairs[2:]:
        result = answer["result"]
        for m in members(MODERN_ERA, "result", msg["method"]):
            assert not has(result, m.path), (msg["method"], m.path, result)
        assert not any(reserved(k) for k in result.get("_meta", {})), result
    assert pairs[0][1]["result"]["serverInfo"] == {"name": "mcptape-demo", "version": "1.0.0"}
    assert checked(pairs) == []


def test_a_legacy_cassette_answers_a_2026_client_with_the_servers_info_on_every_result() -> None:
    pytest.importorskip("mcp_types")
    client = [req(i, method, {**params, "_meta": meta()}) for i, (method, params) in enumerate(REQUESTS, 2)]  # fmt: skip
    pairs = served(CASSETTES / "2025-11-25" / "stdio.jsonl", client)
    recorded_info = {"name": "mcptape-demo", "version": "1.0.0"}
    for msg, answer in pairs:
        result = answer["result"]
        assert result["_meta"][META_SERVER_INFO] == recorded_info, (msg["method"], result)
        assert result["resultType"] == "complete"
        for m in members(MODERN_ERA, "result", msg["method"]):
            assert has(result, m.path), (msg["method"], m.path, result)
        for m in members(LEGACY, "result", msg["method"]):
            assert not has(result, m.path), (msg["method"], m.path, result)
    assert checked(pairs) == []


def test_server_discover_on_a_legacy_cassette_is_a_valid_2026_answer() -> None:
    pytest.importorskip("mcp_types")
    pairs = served(CASSETTES / "2025-11-25" / "stdio.jsonl", [req(1, "server/discover", {"_meta": meta()})])  # fmt: skip
    result = pairs[0][1]["result"]
    assert result["_meta"][META_SERVER_INFO] == {"name": "mcptape-demo", "version": "1.0.0"}
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")
    assert checked(pairs) == []


def test_a_legacy_only_member_comes_off_for_a_2026_client() -> None:
    """`Tool.execution` (2025-11-25 only) is gone from 2026-07-28 tools."""
    tool = {
        "name": "t",
        "inputSchema": {"type": "object"},
        "execution": {"taskSupport": "optional"},
    }
    cassette = tape(
        ("c", INIT),
        ("s", {"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": LEGACY_VERSION, "capabilities": {"tools": {}},
                                                      "serverInfo": {"name": "srv", "version": "1"}}}),
        ("c", req(2, "tools/list")),
        ("s", {"jsonrpc": "2.0", "id": 2, "result": {"tools": [tool]}}),
    )  # fmt: skip
    engine = ReplayEngine.from_cassette(cassette)
    (answer,) = [
        o.msg
        for o in engine.receive(req(3, "tools/list", {"_meta": meta()}))
        if isinstance(o, Send)
    ]
    assert answer["result"]["tools"] == [{"name": "t", "inputSchema": {"type": "object"}}]  # fmt: skip


def test_a_call_on_a_cassette_with_no_handshake_carries_no_made_up_server_info() -> None:
    cassette = tape(
        ("c", call(1, "add")), ("s", {"jsonrpc": "2.0", "id": 1, "result": {"content": []}})
    )
    engine = ReplayEngine.from_cassette(cassette)
    (answer,) = [o.msg for o in engine.receive(call(2, "add", _meta=meta())) if isinstance(o, Send)]
    assert answer["result"] == {"resultType": "complete", "content": []}


def test_an_input_required_result_gets_no_caching_hints_but_the_servers_info() -> None:
    info = {"name": "srv", "version": "1"}
    asked = modern_result(
        "resources/read", {"resultType": "input_required", "inputRequests": {}}, info
    )
    assert asked == {
        "resultType": "input_required",
        "inputRequests": {},
        "_meta": {META_SERVER_INFO: info},
    }
    read = modern_result("resources/read", {"contents": [], "_meta": {"mine": 1}}, info)
    assert read == {"resultType": "complete", "contents": [], "ttlMs": 0, "cacheScope": "private",
                    "_meta": {"mine": 1, META_SERVER_INFO: info}}  # fmt: skip
