"""`mcptape import` on hand-made captures: the shapes a live session rarely shows.

Legacy HTTP+SSE (endpoint event, 202 answers, responses on the GET stream), pretty-printed
JSON bodies, errors and open flows, compressed HAR, non-MCP flows, files that are no
capture. HAR files are written here as JSON; flow files with mitmproxy's own test flows.
"""

from __future__ import annotations

import io
import subprocess
import zlib
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from mcptape.capture.importer import import_file, read_capture
from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source, Transport
from mcptape.errors import McpTapeError
from mcptape.pairing import pair
from mcptape.schema import cassette_schema
from tests.conftest import mcptape_cmd

SESSION = "9f00c0ffee"
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "c", "version": "1"},
    },
}
INIT_RESULT = {
    "jsonrpc": "2.0",
    "id": 0,
    "result": {
        "protocolVersion": "2024-11-05",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": "s", "version": "1"},
    },
}
CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1, "b": 2}},
}
CALL_RESULT = {"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": "3"}]}}


def entry(method: str, url: str, *, at: float, body: Any = None, status: int = 200, ctype: str = "application/json",
          response: str | bytes = "", headers: dict[str, str] | None = None, error: str | None = None, receive: float = 9.0) -> dict[str, Any]:  # fmt: skip
    """One HAR entry as mitmproxy's savehar writes it; `at` is seconds after 12:00:00, `receive` milliseconds."""
    text = response if isinstance(response, str) else response.decode()
    req: dict[str, Any] = {"method": method, "url": url, "httpVersion": "HTTP/1.1", "cookies": [], "queryString": [],
                           "headers": [{"name": k, "value": v} for k, v in (headers or {}).items()], "headersSize": 0, "bodySize": 0}  # fmt: skip
    if body is not None:
        req["postData"] = {
            "mimeType": "application/json",
            "text": body if isinstance(body, str) else orjson.dumps(body).decode(),
            "params": [],
        }
    resp: dict[str, Any] = {
        "status": 0,
        "statusText": "",
        "httpVersion": "",
        "headers": [],
        "cookies": [],
        "content": {},
        "_error": error,
    }
    if error is None:
        resp = {"status": status, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [], "redirectURL": "",
                "headers": [{"name": "content-type", "value": ctype}], "content": {"size": len(text), "mimeType": ctype, "text": text}}  # fmt: skip
    stamp = f"2026-12-01T12:00:{at:09.6f}+00:00"
    return {"startedDateTime": stamp, "time": 20.0, "request": req, "response": resp, "cache": {},
            "timings": {"connect": -1, "ssl": -1, "send": 1.0, "wait": 10.0, "receive": receive}}  # fmt: skip


def sse(*events: tuple[str, Any]) -> str:
    return "".join(
        f"event: {name}\r\ndata: {data if isinstance(data, str) else orjson.dumps(data).decode()}\r\n\r\n"
        for name, data in events
    )


def har(*entries: dict[str, Any], creator: str = "mitmproxy") -> bytes:
    return orjson.dumps(
        {
            "log": {
                "version": "1.2",
                "creator": {"name": creator, "version": "12"},
                "pages": [],
                "entries": list(entries),
            }
        }
    )


def imported(tmp_path: Path, data: bytes, name: str = "c.har") -> Any:
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out.jsonl"
    stats = import_file(src, out)
    validator = jsonschema.Draft202012Validator(cassette_schema())
    for line in out.read_bytes().splitlines():
        validator.validate(orjson.loads(line))
    return stats, load(out)


def legacy_har() -> bytes:
    base = "http://127.0.0.1:8001"
    endpoint = f"/messages/?session_id={SESSION}"
    stream = sse(("endpoint", endpoint), ("message", INIT_RESULT), ("message", CALL_RESULT))
    return har(
        entry("GET", f"{base}/sse", at=0.0, ctype="text/event-stream", response=stream, receive=900.0),  # open until the end
        entry("POST", base + endpoint, at=0.1, body=INIT, status=202, ctype="text/plain", response="Accepted"),
        entry("POST", base + endpoint, at=0.2, body={"jsonrpc": "2.0", "method": "notifications/initialized"}, status=202, ctype="text/plain", response="Accepted"),
        entry("POST", base + endpoint, at=0.3, body=CALL, status=202, ctype="text/plain", response="Accepted"),
        entry("GET", f"{base}/favicon.ico", at=0.4, status=404, ctype="text/html", response="<h1>no</h1>"),
    )  # fmt: skip


def test_legacy_http_sse_har_pairs_responses_from_the_get_stream_with_the_posts(
    tmp_path: Path,
) -> None:
    stats, cas = imported(tmp_path, legacy_har())
    assert (stats.imported, stats.skipped, stats.transport, stats.format) == (
        4,
        1,
        Transport.SSE,
        "har",
    )
    assert cas.header.target == {"url": "http://127.0.0.1:8001/sse"}
    posts = [
        e
        for e in cas.events
        if e.http and e.http["phase"] == "request" and e.http["method"] == "POST"
    ]
    assert all(e.http["session"] == SESSION and e.http["legacy"] is True for e in posts)
    endpoint = next(
        e for e in cas.events if e.http and e.http.get("sse", {}).get("event") == "endpoint"
    )
    assert (
        endpoint.kind is Kind.HTTP
        and endpoint.http["sse"]["data"] == f"/messages/?session_id={SESSION}"
    )
    assert endpoint.http["exchange"] == 1 and endpoint.http["stream"] == "get"
    accepted = [e for e in cas.events if e.kind is Kind.RAW]
    assert [e.text for e in accepted] == ["Accepted"] * 3 and all(
        e.http["status"] == 202 for e in accepted
    )
    session = pair(cas.events)
    assert [ex.method for ex in session.exchanges] == [
        "initialize",
        "notifications/initialized",
        "tools/call",
    ]
    assert (
        session.exchanges[2].response is not None
        and session.exchanges[2].result == CALL_RESULT["result"]
    )
    assert session.orphans == []


def test_pretty_printed_json_bodies_become_one_line_messages_with_the_same_value(
    tmp_path: Path,
) -> None:
    pretty = orjson.dumps(CALL, option=orjson.OPT_INDENT_2).decode()
    answer = orjson.dumps(CALL_RESULT, option=orjson.OPT_INDENT_2).decode()
    _, cas = imported(
        tmp_path, har(entry("POST", "http://h/mcp", at=0.0, body=pretty, response=answer))
    )
    msgs = [e.msg for e in cas.events if e.kind is Kind.MESSAGE]
    assert msgs == [CALL, CALL_RESULT]


def test_a_failed_request_is_a_disconnect_or_an_error_event(tmp_path: Path) -> None:
    data = har(
        entry("POST", "http://h/mcp", at=0.0, body=CALL, error="Client disconnected."),
        entry("POST", "http://h/mcp", at=0.1, body={**CALL, "id": 2}, error="Connection refused"),
    )  # fmt: skip
    _, cas = imported(tmp_path, data)
    ends = [
        (e.kind, e.src, e.http["phase"], e.http.get("method"), e.info)
        for e in cas.events
        if e.http and e.http["phase"] != "request"
    ]
    assert ends == [
        (Kind.HTTP, Source.CLIENT, "disconnect", "POST", {"error": "Client disconnected."}),
        (Kind.HTTP, Source.SERVER, "error", "POST", {"error": "Connection refused"}),
    ]


def test_a_compressed_har_and_a_browser_har_are_read(tmp_path: Path) -> None:
    data = har(
        entry("POST", "http://h/mcp", at=0.0, body=CALL, response=orjson.dumps(CALL_RESULT)),
        creator="Firefox",
    )
    stats, cas = imported(tmp_path, zlib.compress(data), "c.zhar")
    assert stats.imported == 1 and [e.msg for e in cas.events if e.kind is Kind.MESSAGE] == [
        CALL,
        CALL_RESULT,
    ]


def test_flows_that_carry_no_json_rpc_are_skipped_and_counted(tmp_path: Path) -> None:
    data = har(
        entry("GET", "http://h/", at=0.0, ctype="text/html", response="<html></html>"),
        entry("POST", "http://h/api", at=0.1, body={"error": "not json-rpc"}, response='{"error": "nope"}'),
        entry("POST", "http://h/mcp", at=0.2, body=CALL, response=orjson.dumps(CALL_RESULT)),
    )  # fmt: skip
    src = tmp_path / "mixed.har"
    src.write_bytes(data)
    done = subprocess.run(
        mcptape_cmd("import", str(src), "-o", str(tmp_path / "o.jsonl")),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "imported 1 flows, skipped 2 that are not MCP" in done.stderr


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (har(entry("GET", "http://h/", at=0.0, ctype="text/html", response="<p>")), "no MCP traffic among the 1 flow(s)"),
        (b"hello, world", "neither a mitmproxy flow file"),
        (b'{"log": 3}', "not a valid HAR file"),
        (b"{oops", "not a HAR file"),
    ],
)  # fmt: skip
def test_a_file_without_mcp_traffic_is_a_one_line_error_and_writes_nothing(
    tmp_path: Path, content: bytes, says: str
) -> None:
    src = tmp_path / "in.har"
    src.write_bytes(content)
    out = tmp_path / "o.jsonl"
    done = subprocess.run(
        mcptape_cmd("import", str(src), "-o", str(out)), capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert (
        done.stderr.startswith("mcptape: error: ")
        and says in done.stderr
        and done.stderr.count("\n") == 1
    )
    assert not out.exists() and list(tmp_path.iterdir()) == [src]


def test_a_flow_still_open_when_mitmdump_stopped_ends_with_an_error_event(tmp_path: Path) -> None:
    from mitmproxy.io import FlowWriter
    from mitmproxy.test import tflow

    answered = tflow.tflow(resp=True)
    answered.request.content = orjson.dumps(CALL)
    answered.response.content = orjson.dumps(CALL_RESULT)
    answered.response.headers["content-type"] = "application/json"
    still_open = tflow.tflow()
    still_open.request.content = orjson.dumps({**CALL, "id": 2})
    still_open.request.timestamp_start = answered.request.timestamp_start + 1
    buf = io.BytesIO()
    writer = FlowWriter(buf)
    writer.add(answered)
    writer.add(still_open)
    assert read_capture(buf.getvalue(), "x")[0] == "mitmproxy"
    stats, cas = imported(tmp_path, buf.getvalue(), "flows.mitm")
    assert stats.imported == 2 and stats.format == "mitmproxy"
    assert cas.events[-2].kind is Kind.HTTP and cas.events[-2].src is None
    assert cas.events[-2].http == {"exchange": 2, "phase": "error"}
    assert cas.events[-1].kind is Kind.END and cas.events[-1].info == {"open_exchanges": 1}


def test_a_flow_that_got_its_whole_response_ended_there_though_mitmproxy_noted_the_client_leaving(
    tmp_path: Path,
) -> None:
    """mitmdump can save a flow whose response arrived whole with a client error noted after it
    (the client closed while the response hooks ran: a session's GET stream at its end). The live
    addon saw that response end and a HAR has no error: the import records the same `end`."""
    from mitmproxy import flow as mflow
    from mitmproxy.io import FlowWriter
    from mitmproxy.test import tflow

    call = tflow.tflow(resp=True)
    call.request.content = orjson.dumps(CALL)
    call.response.headers["content-type"] = "text/event-stream"
    call.response.content = sse(("message", CALL_RESULT)).encode()
    call.error = mflow.Error("Client disconnected.")
    plain = tflow.tflow(resp=True)
    plain.request.content = orjson.dumps({**CALL, "id": 2})
    later = call.response.timestamp_end + 1  # after the first flow's end, every timestamp
    plain.request.timestamp_start, plain.request.timestamp_end = later, later + 0.1
    plain.response.timestamp_start, plain.response.timestamp_end = later + 0.2, later + 0.3
    plain.response.headers["content-type"] = "application/json"
    plain.response.content = orjson.dumps({**CALL_RESULT, "id": 2})
    plain.error = mflow.Error("Client disconnected.")
    buf = io.BytesIO()
    writer = FlowWriter(buf)
    writer.add(call)
    writer.add(plain)
    _, cas = imported(tmp_path, buf.getvalue(), "flows.mitm")
    phases = [(e.http["exchange"], e.http["phase"]) for e in cas.events if e.http]
    assert phases == [(1, "request"), (1, "response"), (1, "sse"), (1, "end"),
                      (2, "request"), (2, "response")]  # fmt: skip
    assert [e.msg["id"] for e in cas.events if e.src is Source.SERVER and e.msg] == [1, 2]
    assert cas.events[-1].kind is Kind.END and cas.events[-1].info is None


def test_reading_errors_are_mcptape_errors() -> None:
    with pytest.raises(McpTapeError, match="neither"):
        read_capture(b"\x00\x01", "bin")
