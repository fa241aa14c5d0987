"""The HTTP replay server on the legacy HTTP+SSE transport, and its pure parts (plan, checks)."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import anyio
import orjson
import pytest

from mcptape.errors import ConfigError
from mcptape.replay import ReplayConfig
from mcptape.replay.http.app import HttpReplayApp
from mcptape.replay.http.checks import (
    Guard,
    ParamHeaders,
    accepts,
    decode_header_value,
    header_mismatch,
)
from mcptape.replay.http.plan import HttpPlan
from tests.replay.tape import LEGACY_INIT, call, meta, ok, req
from tests.replay.test_server_http_support import (
    legacy_sse,
    legacy_streamable,
    lines_of,
    modern_streamable,
    served,
    sse_messages,
)

INIT = LEGACY_INIT[0][1]
JSON = {"content-type": "application/json"}


def app_for(cassette: Any) -> HttpReplayApp:
    return HttpReplayApp(cassette, ReplayConfig(), on_note=None)


async def endpoint_of(stream: Any) -> str:
    return str((await sse_messages(stream, 1))[0])


@pytest.mark.anyio
async def test_each_sse_stream_is_a_session_whose_answers_arrive_on_it() -> None:
    async with served(app_for(legacy_sse())) as client:
        with anyio.fail_after(5):
            async with client.stream("GET", "/sse") as one, client.stream("GET", "/sse") as two:
                a, b = await endpoint_of(one), await endpoint_of(two)
                posted = await client.post(a, content=orjson.dumps(INIT), headers=JSON)
                await client.post(b, content=orjson.dumps({**INIT, "id": "b"}), headers=JSON)
                listed = await client.post(
                    a, content=orjson.dumps(req(5, "tools/list")), headers=JSON
                )
                got_a = await sse_messages(one, 2)
                got_b = await sse_messages(two, 1)
            unknown = await client.post(
                "/messages/?session_id=abc",
                content=orjson.dumps(req(6, "tools/list")),
                headers=JSON,
            )
    assert urlsplit(a).path == "/messages/" and a != b
    assert "abc" not in a and list(dict(parse_qsl(urlsplit(a).query))) == ["session_id"]
    assert (posted.status_code, posted.text, listed.status_code) == (202, "Accepted", 202)
    assert [m["id"] for m in got_a] == [1, 5] and got_a[1] == ok(5, {"tools": []})
    assert [m["id"] for m in got_b] == ["b"]
    assert unknown.status_code == 404, "the recorded session id is not served"


@pytest.mark.anyio
async def test_bad_posts_to_the_endpoint() -> None:
    async with served(app_for(legacy_sse())) as client:
        with anyio.fail_after(5):
            async with client.stream("GET", "/sse") as stream:
                url = await endpoint_of(stream)
                garbage = await client.post(url, content=b"{nope", headers=JSON)
                good = await client.post(url, content=orjson.dumps(INIT), headers=JSON)
            missing = await client.post("/messages/", content=orjson.dumps(INIT), headers=JSON)
            other = await client.get("/elsewhere")
    assert garbage.status_code == 400 and good.status_code == 202
    assert missing.status_code == 400 and other.status_code == 404


def test_the_plan_reads_paths_statuses_and_streams_from_the_cassette() -> None:
    sse = HttpPlan(legacy_sse())
    assert (sse.legacy_sse, sse.sse_path, sse.endpoint, sse.session_param) == (
        True,
        "/sse",
        "/messages/",
        "session_id",
    )
    assert sse.accepted == (202, "", b"Accepted")
    streamable = HttpPlan(legacy_streamable())
    assert (streamable.legacy_sse, streamable.path, streamable.sessions, streamable.get_status) == (
        False,
        "/mcp",
        True,
        200,
    )
    assert streamable.heads[3].sse is False and streamable.heads[4].sse is True
    modern = HttpPlan(modern_streamable())
    assert modern.heads[4].status == 400 and not modern.sessions


@pytest.mark.parametrize(
    ("bind", "host", "origin", "ok_host", "ok_origin"),
    [
        ("127.0.0.1", "127.0.0.1:8000", None, True, True),
        ("127.0.0.1", "localhost", "http://localhost:5173", True, True),
        ("127.0.0.1", "[::1]:8000", "http://[::1]:8000", True, True),
        ("127.0.0.1", "evil.example", "http://evil.example", False, False),
        ("127.0.0.1", "127.0.0.1", "https://127.0.0.2", True, True),
        ("10.0.0.5", "10.0.0.5:80", "http://10.0.0.5", True, True),
        ("10.0.0.5", "evil.example", "http://evil.example", False, False),
        ("0.0.0.0", "myhost:80", "http://myhost", True, True),
        ("0.0.0.0", "myhost:80", "http://evil.example", True, False),
        ("0.0.0.0", "evil.example:80", None, False, True),
        ("0.0.0.0", "evil.example", "http://evil.example", False, False),
        ("::", "127.0.0.1:80", "http://localhost:3000", True, True),
        ("127.0.0.1", "127.0.0.1", "null", True, False),
    ],
)
def test_guard(bind: str, host: str, origin: str | None, ok_host: bool, ok_origin: bool) -> None:
    headers = {"host": host} | ({"origin": origin} if origin else {})
    guard = Guard(bind, ["myhost"])
    assert (guard.host_ok(headers), guard.origin_ok(headers)) == (ok_host, ok_origin)


@pytest.mark.parametrize("bind", ["0.0.0.0", "::", "[::]"])
def test_a_wildcard_bind_needs_an_allow_list(bind: str) -> None:
    with pytest.raises(ConfigError, match="--allow-host NAME"):
        Guard(bind)


@pytest.mark.parametrize(
    ("accept", "json", "sse", "ok_"),
    [
        ("application/json, text/event-stream", True, True, True),
        ("*/*", True, True, True),
        ("application/*;q=0.9, text/*", True, True, True),
        ("application/json", True, True, False),
        ("text/event-stream", False, True, True),
        ("", True, False, False),
    ],
)
def test_accepts(accept: str, json: bool, sse: bool, ok_: bool) -> None:
    assert accepts({"accept": accept}, json=json, sse=sse) is ok_


def test_header_values_in_base64_form() -> None:
    assert decode_header_value("=?base64?aMOpbGxv?=") == "héllo"
    assert decode_header_value("plain") == "plain"
    assert decode_header_value("=?base64?!!?=") is None


def test_header_ladder() -> None:
    msg = call(1, "count", {"region": "eu", "n": 3}, _meta=meta())
    tools = [{"tools": [{"name": "count", "inputSchema": {"properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer", "x-mcp-header": "N"}}}}]}]  # fmt: skip
    params = ParamHeaders(tools)
    good = {
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/call",
        "mcp-name": "count",
        "mcp-param-region": "eu",
        "mcp-param-n": "3.0",
    }
    assert header_mismatch(msg, good, params) is None
    assert "Mcp-Param-N" in str(header_mismatch(msg, {**good, "mcp-param-n": "4"}, params))
    assert "Mcp-Name" in str(
        header_mismatch(msg, {**good, "mcp-name": "=?base64?b3RoZXI=?="}, params)
    )
    assert (
        header_mismatch(
            req(2, "tools/list", {"_meta": meta()}), {**good, "mcp-method": "tools/list"}, params
        )
        is None
    )


def test_serve_keeps_uvicorn_out_of_the_cli_and_the_app_modules() -> None:
    import subprocess
    import sys

    code = "import sys, mcptape.cli.serve, mcptape.replay.http.app; print(sorted(m for m in ('uvicorn', 'starlette') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "[]"


@pytest.mark.anyio
async def test_an_unsupported_protocol_version_header_gets_400() -> None:
    hs = {"accept": "application/json, text/event-stream", **JSON}
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            r = await client.post(
                "/mcp",
                content=orjson.dumps(INIT),
                headers={**hs, "mcp-protocol-version": "1999-01-01"},
            )
    assert r.status_code == 400 and "1999-01-01" in r.json()["error"]["message"]


def test_the_listening_socket_says_tcp_so_answers_are_not_held_by_nagle() -> None:
    import socket

    from mcptape.replay.http.run import bind, url_of

    sock = bind("127.0.0.1", 0)
    try:
        assert (
            sock.proto == socket.IPPROTO_TCP
        )  # asyncio sets TCP_NODELAY on accepted sockets only then
        assert url_of(sock, "127.0.0.1", "/mcp") == f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
        assert url_of(sock, "::1", "/sse").startswith("http://[::1]:")
    finally:
        sock.close()


@pytest.mark.anyio
async def test_an_idle_stream_gets_keep_alive_comments(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcptape.replay.http import asgi as http_asgi

    monkeypatch.setattr(http_asgi, "KEEPALIVE", 0.01)
    async with served(app_for(legacy_sse())) as client:
        with anyio.fail_after(5):
            async with client.stream("GET", "/sse") as stream:
                await endpoint_of(stream)
                async for line in lines_of(stream):
                    if line.startswith(":"):
                        break
    assert line == ": keep-alive"


def test_listening_beyond_loopback_is_said_clearly() -> None:
    from mcptape.replay.http.run import exposure_warning

    assert (
        exposure_warning("127.0.0.1") is None
        and exposure_warning("::1") is None
        and exposure_warning("localhost") is None
    )
    assert "not a loopback address" in str(exposure_warning("192.168.1.5"))
    assert "a name given with --allow-host" in str(exposure_warning("0.0.0.0"))
