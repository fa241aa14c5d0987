"""The mitmproxy addon, driven hook by hook with mitmproxy's own test helpers (no sockets)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mitmproxy import exceptions, http
from mitmproxy.test import taddons, tflow, tutils

from mcptape.capture import mitm_addon
from mcptape.capture.mitm_addon import McpTape
from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source, Transport
from mcptape.errors import CassetteError, RecordError
from mcptape.pairing import pair
from mcptape.redaction.redact import REDACTED

SSE = (("content-type", "text/event-stream"),)
JSON = (("content-type", "application/json"),)


def lines(path: Path) -> list[dict[str, Any]]:
    """The events written so far (the header line skipped): in the recording file while the
    session lasts (`<cassette>.partial`), in the cassette once it ended."""
    partial = path.with_name(path.name + ".partial")
    return [
        orjson.loads(ln)
        for ln in (partial if partial.exists() else path).read_bytes().splitlines()[1:]
    ]


def hdrs(*pairs: tuple[str, str]) -> http.Headers:
    return http.Headers([(k.encode(), v.encode()) for k, v in pairs])


def req(
    method: str = "POST",
    path: str = "/mcp",
    body: Any = None,
    headers: tuple[tuple[str, str], ...] = (),
) -> http.Request:
    content = (
        orjson.dumps(body) if body is not None and not isinstance(body, bytes) else (body or b"")
    )
    base = (("host", "127.0.0.1:9"),) + ((("content-type", "application/json"),) if content else ())
    return tutils.treq(
        method=method.encode(), path=path.encode(), headers=hdrs(*base, *headers), content=content
    )


def resp(
    status: int = 200, body: Any = None, headers: tuple[tuple[str, str], ...] = JSON
) -> http.Response:
    content = (
        orjson.dumps(body) if body is not None and not isinstance(body, bytes) else (body or b"")
    )
    return tutils.tresp(status_code=status, headers=hdrs(*headers), content=content)


@pytest.fixture
def tape(tmp_path: Path) -> Iterator[tuple[McpTape, Path, taddons.context]]:
    addon = McpTape()
    out = tmp_path / "c.jsonl"
    with taddons.context(addon) as tctx:
        tctx.configure(addon, mcptape_cassette=str(out), mcptape_target="http://127.0.0.1:9/mcp")
        yield addon, out, tctx


def exchange(
    addon: McpTape,
    request: http.Request,
    response: http.Response,
    chunks: list[bytes] | None = None,
) -> list[bytes]:
    """Runs one flow through the hooks; with `chunks`, the response body is streamed through the tee."""
    f = tflow.tflow(req=request)
    addon.requestheaders(f)
    addon.request(f)
    f.response = response
    addon.responseheaders(f)
    passed: list[bytes] = []
    if chunks is not None:
        assert callable(f.response.stream), "an event-stream response is streamed"
        passed = [f.response.stream(c) for c in [*chunks, b""]]
    addon.response(f)
    return passed


def call(rid: int, name: str = "add", **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": {"a": 1}}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


def result(rid: int, text: str = "3") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}}


def test_a_post_with_a_json_response_is_a_request_event_and_a_response_event(tape: Any) -> None:
    addon, out, _ = tape
    exchange(
        addon,
        req(body=call(1), headers=(("Mcp-Method", "tools/call"), ("Mcp-Name", "add"))),
        resp(body=result(1)),
    )
    ev = lines(out)
    assert [(e["kind"], e["from"], e["http"]["phase"]) for e in ev] == [
        ("message", "client", "request"), ("message", "server", "response"),
    ]  # fmt: skip
    assert ev[0]["msg"] == call(1) and ev[1]["msg"] == result(1)
    assert ev[0]["http"]["method"] == "POST" and ev[0]["http"]["path"] == "/mcp"
    assert ev[0]["http"]["headers"]["Mcp-Method"] == "tools/call"
    assert ev[0]["http"]["content_type"] == "application/json"
    assert ev[1]["http"]["status"] == 200 and ev[1]["http"]["content_type"] == "application/json"
    assert ev[0]["http"]["exchange"] == ev[1]["http"]["exchange"] == 1
    assert "stream" not in ev[1]["http"] and "session" not in ev[0]["http"]


def test_each_flow_gets_its_own_exchange_number(tape: Any) -> None:
    addon, out, _ = tape
    exchange(addon, req(body=call(1)), resp(body=result(1)))
    exchange(addon, req(body=call(2)), resp(body=result(2)))
    assert [e["http"]["exchange"] for e in lines(out)] == [1, 1, 2, 2]


def test_sse_events_are_recorded_as_they_pass_and_chunks_pass_unchanged(tape: Any) -> None:
    addon, out, _ = tape
    progress = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": 1, "progress": 1},
    }
    wire = (
        b"event: message\ndata: "
        + orjson.dumps(progress)
        + b"\n\nevent: message\ndata: "
        + orjson.dumps(result(1))
        + b"\n\n"
    )
    f = tflow.tflow(req=req(body=call(1, progressToken=1)))
    addon.requestheaders(f)
    addon.request(f)
    f.response = resp(headers=SSE)
    addon.responseheaders(f)
    assert [e["http"]["phase"] for e in lines(out)] == ["request", "response"]
    tee = f.response.stream
    cut = wire.index(b"\n\n") + 1  # the first event is complete only with the next byte
    assert tee(wire[:cut]) == wire[:cut]
    assert len(lines(out)) == 2, "an incomplete event is not recorded"
    assert tee(wire[cut : cut + 1]) == wire[cut : cut + 1]
    got = lines(out)
    assert len(got) == 3 and got[2]["msg"] == progress, (
        "recorded before the chunk that completes it is forwarded"
    )
    assert got[2]["http"] == {
        "exchange": 1,
        "stream": "post",
        "phase": "sse",
        "sse": {"event": "message"},
    }
    assert tee(wire[cut + 1 :]) == wire[cut + 1 :]
    assert tee(b"") == b""
    addon.response(f)
    got = lines(out)
    assert [e["http"]["phase"] for e in got] == ["request", "response", "sse", "sse", "end"]
    assert got[1]["http"]["stream"] == "post" and got[1]["http"]["status"] == 200
    assert got[3]["msg"] == result(1)
    assert all(e["http"]["exchange"] == 1 for e in got)


def test_sse_ids_retry_priming_and_comments_are_kept_on_a_get_stream(tape: Any) -> None:
    addon, out, _ = tape
    note = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    body = (
        b"id: s1-0\nretry: 500\ndata:\n\n: keep-alive\n\nid: s1-1\nevent: message\ndata: "
        + orjson.dumps(note)
        + b"\n\n"
    )
    exchange(
        addon, req("GET", headers=(("Accept", "text/event-stream"), ("Mcp-Session-Id", "abc"))), resp(headers=SSE),
        chunks=[body[i : i + 7] for i in range(0, len(body), 7)],
    )  # fmt: skip
    ev = lines(out)
    assert [(e["kind"], e["http"]["phase"]) for e in ev] == [
        ("http", "request"), ("http", "response"), ("http", "sse"), ("http", "sse"), ("message", "sse"), ("http", "end"),
    ]  # fmt: skip
    assert ev[0]["http"]["method"] == "GET" and ev[0]["from"] == "client"
    assert ev[2]["http"]["sse"] == {"id": "s1-0", "retry": 500}
    assert ev[3]["http"]["sse"] == {"comment": "keep-alive"}
    assert ev[4]["http"]["sse"] == {"id": "s1-1", "event": "message"} and ev[4]["msg"] == note
    assert all(e["http"]["stream"] == "get" for e in ev[1:]) and all(
        e["http"]["session"] == "abc" for e in ev
    )


def test_a_notification_answered_202_and_a_delete_are_http_events(tape: Any) -> None:
    addon, out, _ = tape
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    exchange(addon, req(body=note, headers=(("Mcp-Session-Id", "abc"),)), resp(202, headers=()))
    exchange(addon, req("DELETE", headers=(("Mcp-Session-Id", "abc"),)), resp(200, headers=()))
    ev = lines(out)
    assert [(e["kind"], e["from"], e["http"]["phase"]) for e in ev] == [
        ("message", "client", "request"), ("http", "server", "response"), ("http", "client", "request"), ("http", "server", "response"),
    ]  # fmt: skip
    assert ev[1]["http"]["status"] == 202 and ev[3]["http"]["status"] == 200
    assert ev[2]["http"]["method"] == "DELETE" and ev[2]["http"]["session"] == "abc"


@pytest.mark.parametrize(
    ("status", "body", "kind"),
    [
        (
            400,
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": -32020, "message": "Mcp-Method mismatch"},
            },
            "message",
        ),
        (
            404,
            {"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}},
            "message",
        ),
        (405, b"", "http"),
        (421, b"Invalid Host header", "raw"),
    ],
)
def test_error_statuses_are_recorded_with_their_body(
    tape: Any, status: int, body: Any, kind: str
) -> None:
    addon, out, _ = tape
    headers = JSON if kind == "message" else (("content-type", "text/plain"),) if body else ()
    exchange(addon, req(body=call(1)), resp(status, body, headers))
    ev = lines(out)[1]
    assert (
        ev["kind"] == kind and ev["http"]["status"] == status and ev["http"]["phase"] == "response"
    )
    if kind == "raw":
        assert ev["text"] == "Invalid Host header"


def test_secrets_in_headers_query_and_body_are_redacted(tape: Any) -> None:
    addon, out, _ = tape
    secret_call = call(1)
    secret_call["params"]["arguments"] = {
        "api_key": "k-12345",
        "note": "token sk-abcdefghijklmnopqrstuvwx",
    }
    headers = (
        ("Authorization", "Bearer abcdefghijklmnop"), ("Cookie", "sid=1"), ("Proxy-Authorization", "Basic eDp5"),
        ("X-API-Key", "k-99"), ("Mcp-Session-Id", "abc"),
    )  # fmt: skip
    exchange(
        addon,
        req(path="/mcp?access_token=tok123&x=1", body=secret_call, headers=headers),
        resp(body=result(1), headers=(*JSON, ("Set-Cookie", "sid=2"))),
    )
    text = out.with_name(out.name + ".partial").read_text()  # the recording, until the session ends
    for secret in (
        "abcdefghijklmnop",
        "sid=1",
        "eDp5",
        "k-99",
        "tok123",
        "k-12345",
        "sk-abcdefghijklmnopqrstuvwx",
        "sid=2",
    ):
        assert secret not in text
    ev = lines(out)
    h = ev[0]["http"]["headers"]
    assert (
        h["Authorization"] == h["Cookie"] == h["Proxy-Authorization"] == h["X-API-Key"] == REDACTED
    )
    assert h["Mcp-Session-Id"] == "abc" and ev[0]["http"]["session"] == "abc"
    assert "x=1" in ev[0]["http"]["path"] and "access_token" in ev[0]["http"]["path"]
    assert ev[1]["http"]["headers"]["Set-Cookie"] == REDACTED
    assert ev[0]["msg"]["params"]["arguments"]["api_key"] == REDACTED


def test_redaction_can_be_turned_off_or_extended(tape: Any) -> None:
    addon, out, tctx = tape
    tctx.configure(addon, mcptape_redact_keys=["x-tenant"])
    exchange(
        addon,
        req(body=call(1), headers=(("X-Tenant", "acme"), ("Authorization", "Bearer abcdefghijk"))),
        resp(body=result(1)),
    )
    tctx.configure(addon, mcptape_redact=False)
    exchange(
        addon,
        req(body=call(2), headers=(("Authorization", "Bearer abcdefghijk"),)),
        resp(body=result(2)),
    )
    ev = lines(out)
    assert ev[0]["http"]["headers"]["X-Tenant"] == REDACTED
    assert ev[2]["http"]["headers"]["Authorization"] == "Bearer abcdefghijk"


def test_a_bad_redaction_pattern_is_an_option_error(tape: Any) -> None:
    addon, _, tctx = tape
    with pytest.raises(exceptions.OptionsError, match="redact-pattern"):
        tctx.configure(addon, mcptape_redact_patterns=["("])


def test_a_client_closing_a_2026_sse_response_is_recorded_as_a_cancel(tape: Any) -> None:
    addon, out, _ = tape
    f = tflow.tflow(req=req(body=call(1), headers=(("MCP-Protocol-Version", "2026-07-28"),)))
    addon.requestheaders(f)
    addon.request(f)
    f.response = resp(headers=SSE)
    addon.responseheaders(f)
    f.error = tflow.terr("Client disconnected.")
    addon.error(f)
    ev = lines(out)[-1]
    assert ev["kind"] == "http" and ev["from"] == "client"
    assert ev["http"] == {"exchange": 1, "stream": "post", "phase": "disconnect"}
    assert ev["info"] == {"error": "Client disconnected.", "cancel": True}


def test_closing_a_2026_sse_response_after_its_answer_is_no_cancel(tape: Any) -> None:
    addon, out, _ = tape
    f = tflow.tflow(req=req(body=call(1), headers=(("MCP-Protocol-Version", "2026-07-28"),)))
    addon.requestheaders(f)
    addon.request(f)
    f.response = resp(headers=SSE)
    addon.responseheaders(f)
    f.response.stream(b"data: " + orjson.dumps(result(1)) + b"\n\n")
    f.error = tflow.terr("Client disconnected.")
    addon.error(f)
    assert lines(out)[-1]["info"] == {"error": "Client disconnected."}


def test_an_unreachable_upstream_is_an_error_from_the_server_side(tape: Any) -> None:
    addon, out, _ = tape
    f = tflow.tflow(req=req(body=call(1)))
    addon.requestheaders(f)
    addon.request(f)
    f.error = tflow.terr("Connection refused")
    addon.error(f)
    ev = lines(out)[-1]
    assert (
        ev["from"] == "server" and ev["http"]["phase"] == "error" and ev["http"]["method"] == "POST"
    )
    assert ev["info"] == {"error": "Connection refused"}


def test_the_response_that_mints_a_session_pairs_with_its_request(tape: Any) -> None:
    addon, out, _ = tape
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25"},
    }
    init_result = {"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}}
    exchange(
        addon, req(body=init), resp(body=init_result, headers=(*JSON, ("mcp-session-id", "s1")))
    )
    exchange(
        addon,
        req(body=call(1), headers=(("Mcp-Session-Id", "s1"),)),
        resp(body=result(1), headers=(*JSON, ("mcp-session-id", "s1"))),
    )
    ev = lines(out)
    assert "session" not in ev[0]["http"] and ev[1]["http"]["session"] == "s1"
    addon.done()
    session = pair(load(out).events)
    assert [ex.response is not None for ex in session.exchanges] == [True, True]
    assert session.exchanges[1].protocol_version == "2025-11-25" and session.orphans == []


def test_legacy_http_sse_ties_posts_and_the_get_stream_to_one_session(tape: Any) -> None:
    addon, out, _ = tape
    f = tflow.tflow(req=req("GET", "/sse", headers=(("Accept", "text/event-stream"),)))
    addon.requestheaders(f)
    addon.request(f)
    f.response = resp(headers=SSE)
    addon.responseheaders(f)
    f.response.stream(b"event: endpoint\ndata: /messages/?session_id=ab12\n\n")
    init = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25"},
    }
    exchange(
        addon,
        req(path="/messages/?session_id=ab12", body=init),
        resp(202, b"Accepted", (("content-type", "text/plain"),)),
    )
    log = {
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "hi"},
    }
    f.response.stream(
        b"event: message\ndata: "
        + orjson.dumps({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25"}})
        + b"\n\n"
    )
    exchange(
        addon,
        req(path="/messages/?session_id=ab12", body=call(1)),
        resp(202, b"Accepted", (("content-type", "text/plain"),)),
    )
    f.response.stream(
        b"event: message\ndata: "
        + orjson.dumps(log)
        + b"\n\nevent: message\ndata: "
        + orjson.dumps(result(1))
        + b"\n\n"
    )
    f.error = tflow.terr("Client disconnected.")
    addon.error(f)
    addon.done()
    cas = load(out)
    assert cas.header.transport is Transport.STREAMABLE_HTTP  # the target URL does not end in /sse
    ev = [e.to_json() for e in cas.events]
    endpoint = ev[2]
    assert endpoint["http"] == {
        "exchange": 1, "session": "ab12", "legacy": True, "stream": "get", "phase": "sse",
        "sse": {"event": "endpoint", "data": "/messages/?session_id=ab12"},
    }  # fmt: skip
    assert "legacy" not in ev[1]["http"], "the response head comes before the endpoint event"
    posts = [e for e in ev if e.get("from") == "client" and e["kind"] == "message"]
    assert all(e["http"]["session"] == "ab12" and e["http"]["legacy"] for e in posts)
    on_stream = [e for e in ev if e.get("from") == "server" and e["kind"] == "message"]
    assert all(e["http"]["exchange"] == 1 and e["http"]["session"] == "ab12" for e in on_stream)
    assert ev[-2]["http"]["phase"] == "disconnect" and "cancel" not in ev[-2]["info"]
    session = pair(cas.events)
    assert [ex.method for ex in session.exchanges] == ["initialize", "tools/call"]
    assert all(ex.response is not None for ex in session.exchanges) and session.orphans == []
    assert [it.msg["method"] for it in session.exchanges[1].items] == ["notifications/message"]


def test_done_closes_open_exchanges_ends_the_cassette_and_records_nothing_after(tape: Any) -> None:
    addon, out, _ = tape
    exchange(addon, req(body=call(1)), resp(body=result(1)))  # a session the server answered
    f = tflow.tflow(req=req(body=call(2)))
    addon.requestheaders(f)
    addon.request(f)
    addon.done()
    f.error = tflow.terr("Client disconnected.")
    addon.error(f)  # mitmproxy closes connections after its addons are done
    g = tflow.tflow(req=req(body=call(3)))
    addon.requestheaders(g)
    addon.request(g)
    cas = load(out)
    assert cas.warnings == []
    assert [e.kind for e in cas.events] == [
        Kind.MESSAGE,
        Kind.MESSAGE,
        Kind.MESSAGE,
        Kind.HTTP,
        Kind.END,
    ]
    assert cas.events[3].src is None and cas.events[3].http == {"exchange": 2, "phase": "error"}
    assert cas.events[3].info == {"error": "recording stopped with this exchange open"}
    assert cas.events[-1].info == {"open_exchanges": 1}
    assert cas.header.target == {"url": "http://127.0.0.1:9/mcp"}
    assert cas.header.redaction["enabled"] is True


def test_a_gzipped_event_stream_is_decoded_for_the_cassette_only(tape: Any) -> None:
    import gzip

    addon, out, _ = tape
    body = gzip.compress(b"event: message\ndata: " + orjson.dumps(result(1)) + b"\n\n")
    passed = exchange(
        addon,
        req(body=call(1)),
        resp(headers=(*SSE, ("content-encoding", "gzip"))),
        chunks=[body[:10], body[10:]],
    )
    assert b"".join(passed) == body
    assert [e.get("msg") for e in lines(out) if e["kind"] == "message"][1] == result(1)


def test_an_unwritable_cassette_lets_traffic_pass_and_fails_at_the_end(
    tape: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    addon, out, tctx = tape
    out.write_bytes(b"the previous recording\n")
    stopped: list[bool] = []
    monkeypatch.setattr(tctx.master, "shutdown", lambda: stopped.append(True))
    exchange(addon, req(body=call(1)), resp(body=result(1)))
    assert addon._writer is not None
    writer = addon._writer

    def full(_line: bytes) -> None:
        raise CassetteError(f"{writer.partial}: cannot write the cassette: No space left on device")

    monkeypatch.setattr(writer, "_write", full)
    f = tflow.tflow(req=req(body=call(2)))
    addon.requestheaders(f)
    addon.request(f)
    assert stopped == [] and f.error is None, "the traffic goes on"
    addon.done()
    assert isinstance(addon.failed, RecordError)
    assert str(addon.failed).startswith(
        f"{writer.partial}: cannot write the cassette: No space left on device"
    )
    assert out.read_bytes() == b"the previous recording\n"
    assert [e.msg["id"] for e in load(writer.partial).events] == [1, 1], "what was written is kept"


def test_the_module_loads_as_a_mitmdump_script(tmp_path: Path) -> None:
    with taddons.context() as tctx:
        module = tctx.script(mitm_addon.__file__)
        assert [type(a).__name__ for a in module.addons] == ["McpTape"]
        assert {"mcptape_cassette", "mcptape_redact", "mcptape_redact_keys"} <= set(
            tctx.options.keys()
        )


def test_events_come_from_both_sides(tape: Any) -> None:
    addon, out, _ = tape
    exchange(addon, req(body=call(1)), resp(body=result(1)))
    addon.done()
    assert [e.src for e in load(out).events[:2]] == [Source.CLIENT, Source.SERVER]


def test_2026_headers_are_kept_raw_including_base64_params(tape: Any) -> None:
    addon, out, _ = tape
    headers = (
        ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "weather"),
        ("Mcp-Param-City", "=?base64?U8OjbyBQYXVsbw==?="),
    )  # fmt: skip
    exchange(addon, req(body=call(1, "weather"), headers=headers), resp(body=result(1)))
    recorded = lines(out)[0]["http"]["headers"]
    assert {k: recorded[k] for k, _ in headers} == dict(headers)


def test_a_stream_another_addon_set_is_chained_and_what_it_forwards_is_recorded(tape: Any) -> None:
    addon, out, _ = tape
    f = tflow.tflow(req=req(body=call(1)))
    addon.requestheaders(f)
    addon.request(f)
    f.response = resp(headers=SSE)
    f.response.stream = lambda chunk: [chunk[:3], chunk[3:]] if chunk else []
    addon.responseheaders(f)
    wire = b"data: " + orjson.dumps(result(1)) + b"\n\n"
    assert b"".join(f.response.stream(wire)) == wire
    assert lines(out)[-1]["msg"] == result(1)
