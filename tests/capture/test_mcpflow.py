"""Which HTTP flows are MCP (mcptape.capture.mcpflow): MCP by headers, method, path and option;
pages, forms, images, other JSON APIs and other JSON-RPC protocols are not, and are counted."""

from __future__ import annotations

from pathlib import Path

import orjson

from mcptape.capture.importer import import_file
from mcptape.capture.mcpflow import McpFlows
from tests.e2e.test_import_formats import entry, har

SSE = {"accept": "text/event-stream"}
JSON = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
INIT = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}})
ETH = orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "eth_blockNumber", "params": []})


def test_mcp_requests_are_mcp_and_their_path_is_remembered() -> None:
    flows = McpFlows()
    assert flows.request("POST", "/api/mcp?x=1", JSON, INIT)
    answer = orjson.dumps({"jsonrpc": "2.0", "id": 7, "result": {}})
    assert flows.request("POST", "/api/mcp", JSON, answer), "a client's answer to a server request"
    assert flows.request("DELETE", "/api/mcp/", {}, None), "the DELETE that ends the session"
    assert flows.request("GET", "/anything", {"mcp-session-id": "s1"}, None), "MCP headers"
    batch = orjson.dumps([{"jsonrpc": "2.0", "method": "notifications/initialized"}])
    assert flows.request("POST", "/other", JSON, batch), "a batch"
    assert flows.skipped == 0


def test_other_flows_are_not_mcp_and_are_counted() -> None:
    flows = McpFlows()
    others = [
        ("GET", "/index.html", {"accept": "text/html"}, None),
        (
            "POST",
            "/login",
            {"content-type": "application/x-www-form-urlencoded"},
            b"user=a&password=hunter2",
        ),
        ("GET", "/logo.png", {"accept": "image/*"}, None),
        ("POST", "/api/items", JSON, b'{"name": "x"}'),
        ("POST", "/rpc", JSON, ETH),
        ("GET", "/events", SSE, None),
    ]
    assert [flows.request(*o) for o in others] == [False] * 6
    assert flows.skipped == 6


def test_event_stream_gets_at_the_usual_paths_are_mcp() -> None:
    flows = McpFlows()
    assert flows.request("GET", "/sse", SSE, None) and flows.request("GET", "/v1/mcp", SSE, None)


def test_named_endpoints_decide_alone() -> None:
    flows = McpFlows(["/rpc"])
    assert flows.request("POST", "/rpc", JSON, ETH), "the option says so"
    assert not flows.request("POST", "/mcp", JSON, INIT), "with endpoints named, nothing else is"
    assert flows.request("POST", "/messages/?session_id=1", JSON, INIT, legacy=True), (
        "an announced legacy endpoint"
    )


def test_a_whole_flow_is_mcp_by_its_response_too() -> None:
    flows = McpFlows()
    assert flows.whole_flow(
        "GET", "http://h/stream", SSE, None, {}, [("endpoint", "/messages/?s=1")]
    )
    assert not flows.whole_flow(
        "POST", "http://h/rpc", JSON, ETH, {}, (), b'{"jsonrpc":"2.0","id":1,"result":"0x1"}'
    )
    assert flows.whole_flow("POST", "http://h/x", JSON, b"{}", {"mcp-session-id": "s"})


def test_import_keeps_only_the_mcp_flows(tmp_path: Path) -> None:
    eth_answer = '{"jsonrpc":"2.0","id":1,"result":"0x10d4f"}'
    init_answer = orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": "2025-06-18", "capabilities": {},
                                                                       "serverInfo": {"name": "s", "version": "1"}}}).decode()  # fmt: skip
    src = tmp_path / "c.har"
    src.write_bytes(har(
        entry("POST", "http://h/rpc", at=0.1, body=orjson.loads(ETH), response=eth_answer),
        entry("POST", "http://h/mcp", at=0.2, body=orjson.loads(INIT), response=init_answer),
        entry("GET", "http://h/", at=0.3, ctype="text/html", response="<html></html>"),
    ))  # fmt: skip
    stats = import_file(src, tmp_path / "out.jsonl")
    assert (stats.imported, stats.skipped) == (1, 2)
    assert b"eth_blockNumber" not in (tmp_path / "out.jsonl").read_bytes()
