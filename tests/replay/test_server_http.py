"""The HTTP replay server (Streamable HTTP) in process, under uvicorn on a loopback socket."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest

from mcptape.replay import ReplayConfig
from mcptape.replay.http.app import HttpReplayApp
from tests.replay.tape import LEGACY_INIT, call, meta, note, ok, req, tape
from tests.replay.test_server_http_support import (
    ACCEPT,
    SID,
    legacy_streamable,
    modern_headers,
    modern_streamable,
    rest_of,
    served,
    sse_messages,
)

pytestmark = pytest.mark.anyio
INIT = LEGACY_INIT[0][1]


def app_for(cassette: Any, config: ReplayConfig | None = None, **kw: Any) -> HttpReplayApp:
    return HttpReplayApp(cassette, config or ReplayConfig(), on_note=None, **kw)


async def open_session(client: Any) -> str:
    r = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
    assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
    assert [m["result"]["serverInfo"]["name"] for m in await sse_messages(r, 1)] == ["srv"]
    return str(r.headers["mcp-session-id"])


async def test_each_initialize_opens_a_fresh_session() -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            a, b = await open_session(client), await open_session(client)
    assert len({a, b, SID}) == 3


async def test_requests_must_name_a_live_session() -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            body = orjson.dumps(req(2, "tools/list"))
            missing = await client.post("/mcp", content=body, headers=ACCEPT)
            unknown = await client.post(
                "/mcp", content=body, headers={**ACCEPT, "mcp-session-id": "nope"}
            )
            sid = await open_session(client)
            deleted = await client.delete("/mcp", headers={"mcp-session-id": sid})
            after = await client.post(
                "/mcp", content=body, headers={**ACCEPT, "mcp-session-id": sid}
            )
    assert (missing.status_code, missing.json()["error"]["code"]) == (400, -32600)
    assert unknown.status_code == 404 and after.status_code == 404
    assert deleted.status_code == 200


async def test_answers_are_json_or_sse_as_recorded_with_the_clients_ids_and_tokens() -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            sid = await open_session(client)
            hs = {**ACCEPT, "mcp-session-id": sid}
            initialized = await client.post(
                "/mcp", content=orjson.dumps(LEGACY_INIT[2][1]), headers=hs
            )
            listed = await client.post(
                "/mcp", content=orjson.dumps(req("L", "tools/list")), headers=hs
            )
            add = call("A", "add", {"a": 1}, _meta={"progressToken": "tok"})
            async with client.stream("POST", "/mcp", content=orjson.dumps(add), headers=hs) as r:
                assert r.headers["content-type"] == "text/event-stream"
                streamed = await sse_messages(r, 2)
    assert (initialized.status_code, initialized.content) == (202, b"")
    assert listed.headers["content-type"] == "application/json" and listed.json()["id"] == "L"
    assert streamed == [
        note("notifications/progress", {"progressToken": "tok", "progress": 1}),
        ok("A", {"content": [{"type": "text", "text": "2"}]}),
    ]


async def test_the_get_stream_carries_unsolicited_messages_and_delete_ends_it() -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            sid = await open_session(client)
            hs = {**ACCEPT, "mcp-session-id": sid}
            async with client.stream("GET", "/mcp", headers=hs) as stream:
                second = await client.get("/mcp", headers=hs)
                await client.post(
                    "/mcp", content=orjson.dumps(call(3, "add", {"a": 1})), headers=hs
                )
                got = await sse_messages(stream, 1)
                await client.delete("/mcp", headers=hs)
                rest = await rest_of(stream)  # ends: DELETE closed it
    assert second.status_code == 409
    assert got == [note("notifications/tools/list_changed")]
    assert not [line for line in rest if line.startswith("data:")]


async def test_get_is_405_when_the_recording_had_405() -> None:
    from dataclasses import replace

    cas = legacy_streamable()
    events = [
        e._replace(http={**e.http, "status": 405})
        if e.http and e.http.get("stream") == "get" and e.http["phase"] == "response"
        else e
        for e in cas.events
    ]
    async with served(app_for(replace(cas, events=events))) as client:
        with anyio.fail_after(5):
            sid = await open_session(client)
            r = await client.get("/mcp", headers={**ACCEPT, "mcp-session-id": sid})
    assert r.status_code == 405


async def test_concurrent_sessions_each_get_their_own_pass() -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            sessions = [await open_session(client) for _ in range(3)]
            results = []
            for sid in sessions:
                r = await client.post(
                    "/mcp",
                    content=orjson.dumps(req(9, "tools/list")),
                    headers={**ACCEPT, "mcp-session-id": sid},
                )
                results.append(r.json())
            again = await client.post(
                "/mcp",
                content=orjson.dumps(req(10, "tools/list")),
                headers={**ACCEPT, "mcp-session-id": sessions[0]},
            )
    assert all(r["result"]["tools"][0]["name"] == "add" for r in results)
    assert again.json()["error"]["code"] == -32011  # this session already played its one recording


# -- 2026-07-28 ------------------------------------------------------------------------------


async def post_modern(client: Any, msg: dict[str, Any], **extra: str | None) -> Any:
    return await client.post(
        "/mcp", content=orjson.dumps(msg), headers=modern_headers(msg, **extra)
    )


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ({"mcp-method": "tools/list"}, "Mcp-Method"),
        ({"mcp-name": "other"}, "Mcp-Name"),
        ({"mcp-protocol-version": "2026-07-29"}, "MCP-Protocol-Version"),
        ({"mcp-param-region": "us"}, "Mcp-Param-Region"),
        ({"mcp-protocol-version": None}, "MCP-Protocol-Version"),
        ({}, "Mcp-Param-Region"),  # the header is missing
    ],
)
async def test_headers_that_disagree_with_the_body_get_400_and_32020(
    extra: dict[str, str | None], why: str
) -> None:
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            r = await post_modern(client, call(7, "count", {"region": "eu"}, _meta=meta()), **extra)
    assert r.status_code == 400
    assert (
        r.json()["id"] == 7
        and r.json()["error"]["code"] == -32020
        and why in r.json()["error"]["message"]
    )


async def test_an_unserved_modern_version_gets_32022_with_the_supported_ones() -> None:
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            msg = req(
                3,
                "tools/list",
                {"_meta": meta(**{"io.modelcontextprotocol/protocolVersion": "2027-01-01"})},
            )
            r = await post_modern(client, msg, **{"mcp-protocol-version": "2027-01-01"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == -32022 and r.json()["error"]["data"] == {
        "supported": ["2026-07-28"],
        "requested": "2027-01-01",
    }


async def test_mcp_param_headers_in_base64_form_are_decoded() -> None:
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            r = await post_modern(
                client,
                call(7, "count", {"region": "eu"}, _meta=meta()),
                **{"mcp-param-region": "=?base64?ZXU=?="},
            )
    assert r.status_code == 200 and r.json()["result"]["content"][0]["text"] == "1"


async def test_stateless_requests_replay_in_order_per_key_and_start_over() -> None:
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            texts = []
            for i in range(3):
                r = await post_modern(
                    client,
                    call(i, "count", {"region": "eu"}, _meta=meta()),
                    **{"mcp-param-region": "eu"},
                )
                texts.append(r.json()["result"]["content"][0]["text"])
            missing = await post_modern(
                client, req(9, "resources/read", {"uri": "demo://nope", "_meta": meta()})
            )
    assert texts == ["1", "2", "1"]
    assert (missing.status_code, missing.json()["error"]["code"], missing.json()["id"]) == (
        400,
        -32602,
        9,
    )


async def test_progress_comes_on_the_requests_stream_before_its_result() -> None:
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            msg = call("x", "slow", {}, _meta=meta(progressToken="mine"))
            async with client.stream(
                "POST", "/mcp", content=orjson.dumps(msg), headers=modern_headers(msg)
            ) as r:
                got = await sse_messages(r, 2)
    assert got == [
        note("notifications/progress", {"progressToken": "mine", "progress": 1}),
        ok("x", {"content": []}),
    ]


async def test_a_listen_stream_acknowledges_first_and_stays_open_until_the_client_closes_it() -> (
    None
):
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            msg = req(
                "sub-1",
                "subscriptions/listen",
                {"notifications": {"toolsListChanged": True}, "_meta": meta()},
            )
            async with client.stream(
                "POST", "/mcp", content=orjson.dumps(msg), headers=modern_headers(msg)
            ) as r:
                got = await sse_messages(r, 2)
            after = await post_modern(client, req(1, "tools/list", {"_meta": meta()}))
    tag = {"io.modelcontextprotocol/subscriptionId": "sub-1"}
    assert [m["method"] for m in got] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    assert all(m["params"]["_meta"] == tag for m in got)
    assert after.status_code == 200


async def test_a_modern_only_cassette_has_no_get_or_delete_and_acknowledges_notifications() -> None:
    async with served(app_for(modern_streamable(), ReplayConfig(cross_era=False))) as client:
        with anyio.fail_after(5):
            get = await client.get("/mcp", headers=ACCEPT)
            delete = await client.delete("/mcp")
            n = note("notifications/cancelled", {"requestId": 1})
            notified = await client.post(
                "/mcp",
                content=orjson.dumps(n),
                headers={**ACCEPT, "mcp-protocol-version": "2026-07-28"},
            )
            init = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
    assert (get.status_code, get.headers["allow"]) == (405, "POST")
    assert delete.status_code == 405 and notified.status_code == 202
    assert (init.status_code, init.json()["error"]["code"]) == (400, -32022)
    assert "mcp-session-id" not in init.headers


async def test_a_legacy_client_over_http_gets_a_handshake_and_plain_results_from_a_modern_only_cassette() -> (
    None
):
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            init = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
            headers = {**ACCEPT, "mcp-protocol-version": "2025-11-25",
                       "mcp-session-id": init.headers["mcp-session-id"]}  # fmt: skip
            listed = await client.post(
                "/mcp", content=orjson.dumps(req(2, "tools/list")), headers=headers
            )
    assert init.status_code == 200 and init.json()["result"]["protocolVersion"] == "2025-11-25"
    body = listed.json() if listed.headers["content-type"].startswith("application/json") else None
    assert (
        body is not None
        and "tools" in body["result"]
        and "resultType" not in body["result"]
        and "ttlMs" not in body["result"]
    )


async def test_two_legacy_clients_at_once_on_a_modern_only_cassette_get_a_session_each() -> None:
    # the handshake is made up from server/discover: each client must get its own session, or
    # the second one's initialize would reset the first one's engine (its pending call hung)
    async with served(app_for(modern_streamable())) as client:
        with anyio.fail_after(5):
            first = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
            second = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
            ids = [r.headers.get("mcp-session-id") for r in (first, second)]
            listed = await client.post("/mcp", content=orjson.dumps(req(2, "tools/list")),
                                       headers={**ACCEPT, "mcp-protocol-version": "2025-11-25",
                                                "mcp-session-id": ids[0]})  # fmt: skip
    assert None not in ids and ids[0] != ids[1]
    body = listed.json() if listed.headers["content-type"].startswith("application/json") else None
    assert body is not None and "tools" in body["result"]


# -- bad input and security --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("headers", "body", "status", "code"),
    [
        ({"content-type": "text/plain", "accept": ACCEPT["accept"]}, b"{}", 415, -32600),
        ({"content-type": "application/json", "accept": ""}, b"{}", 406, -32600),
        ({"content-type": "application/json", "accept": "application/json"}, b"{}", 406, -32600),
        (ACCEPT, b"{not json", 400, -32700),
        (ACCEPT, b'{"hello": 1}', 400, -32600),
        (ACCEPT, b"x" * 2000, 413, -32600),
    ],
)
async def test_bad_http_input_gets_a_status_and_an_error_and_the_server_goes_on(
    headers: dict[str, str], body: bytes, status: int, code: int
) -> None:
    async with served(app_for(legacy_streamable(), max_body=1000)) as client:
        with anyio.fail_after(5):
            r = await client.post("/mcp", content=body, headers=headers)
            sid = await open_session(client)
    assert r.status_code == status and r.json()["error"]["code"] == code and r.json()["id"] is None
    assert sid


async def test_unknown_paths_and_methods() -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            other = await client.post("/elsewhere", content=b"{}", headers=ACCEPT)
            put = await client.put("/mcp", content=b"{}", headers=ACCEPT)
    assert other.status_code == 404 and put.status_code == 405


@pytest.mark.parametrize(
    ("origin", "status"),
    [
        ("http://evil.example", 403),
        ("http://localhost:3000", 200),
        ("http://127.0.0.1", 200),
        ("http://[::1]:1", 200),
        ("null", 403),
    ],
)
async def test_only_local_origins_are_served(origin: str, status: int) -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            r = await client.post(
                "/mcp", content=orjson.dumps(INIT), headers={**ACCEPT, "origin": origin}
            )
    assert r.status_code == status


async def test_a_foreign_host_header_gets_421() -> None:
    async with served(app_for(legacy_streamable())) as client:
        with anyio.fail_after(5):
            r = await client.post(
                "/mcp", content=orjson.dumps(INIT), headers={**ACCEPT, "host": "evil.example:80"}
            )
            ok_ = await client.post(
                "/mcp", content=orjson.dumps(INIT), headers={**ACCEPT, "host": "localhost:1234"}
            )
    assert r.status_code == 421 and ok_.status_code == 200


# -- a stdio cassette over HTTP ----------------------------------------------------------------


async def test_a_stdio_cassette_is_served_with_json_and_sse_where_there_are_notifications() -> None:
    cas = tape(
        *LEGACY_INIT,
        ("c", req(2, "tools/list")),
        ("s", ok(2, {"tools": []})),
        ("c", call(3, "add", {}, _meta={"progressToken": 3})),
        ("s", note("notifications/progress", {"progressToken": 3, "progress": 1})),
        ("s", ok(3, {"content": []})),
    )
    async with served(app_for(cas)) as client:
        with anyio.fail_after(5):
            r = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
            hs = {**ACCEPT, "mcp-session-id": r.headers["mcp-session-id"]}
            listed = await client.post(
                "/mcp", content=orjson.dumps(req(2, "tools/list")), headers=hs
            )
            async with client.stream(
                "POST",
                "/mcp",
                content=orjson.dumps(call(3, "add", {}, _meta={"progressToken": 1})),
                headers=hs,
            ) as s:
                ctype = s.headers["content-type"]
                got = await sse_messages(s, 2)
    assert (
        r.headers["content-type"] == "application/json"
        and r.json()["result"]["serverInfo"]["name"] == "srv"
    )
    assert listed.json() == ok(2, {"tools": []})
    assert ctype == "text/event-stream" and [m.get("method", "result") for m in got] == [
        "notifications/progress",
        "result",
    ]


async def test_strict_report_names_what_a_session_never_asked_for() -> None:
    app = app_for(legacy_streamable())
    async with served(app) as client:
        with anyio.fail_after(5):
            await open_session(client)
    report = app.unplayed_report()
    assert report is not None and "tools/list" in report and "add" in report


async def test_a_server_that_minted_no_sessions_is_replayed_without_them() -> None:
    from dataclasses import replace

    cas = legacy_streamable()
    events = [
        e._replace(http={k: v for k, v in e.http.items() if k != "session"}) if e.http else e
        for e in cas.events
    ]
    async with served(app_for(replace(cas, events=events))) as client:
        with anyio.fail_after(5):
            init = await client.post("/mcp", content=orjson.dumps(INIT), headers=ACCEPT)
            listed = await client.post(
                "/mcp", content=orjson.dumps(req(2, "tools/list")), headers=ACCEPT
            )
    assert init.status_code == 200 and "mcp-session-id" not in init.headers
    assert listed.json()["result"]["tools"][0]["name"] == "add"


@pytest.mark.parametrize("speed", [1000.0, 50.0])
async def test_recorded_timing_keeps_answers_and_their_order(speed: float) -> None:
    async with served(app_for(legacy_streamable(), speed=speed)) as client:
        with anyio.fail_after(5):
            sid = await open_session(client)
            hs = {**ACCEPT, "mcp-session-id": sid}
            listed = await client.post(
                "/mcp", content=orjson.dumps(req(2, "tools/list")), headers=hs
            )
            async with client.stream(
                "POST",
                "/mcp",
                content=orjson.dumps(call(3, "add", {"a": 1}, _meta={"progressToken": 3})),
                headers=hs,
            ) as r:
                got = await sse_messages(r, 2)
    assert listed.json()["id"] == 2
    assert [m.get("method", "result") for m in got] == ["notifications/progress", "result"]


async def test_a_post_classifies_its_message_once_with_and_without_faults(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mcptape.replay import engine
    from mcptape.replay.http import app as http_app
    from mcptape.wire.jsonrpc import classify

    seen: list[Any] = []

    def counting(msg: Any) -> Any:
        seen.append(msg)
        return classify(msg)

    for module in (http_app, engine):  # (the overlay takes the kind the engine found)
        monkeypatch.setattr(module, "classify", counting)
    add = call("A", "add", {"a": 1})
    for rules in ([], [{"tool": "add", "action": "error"}]):
        async with served(app_for(legacy_streamable(), faults=rules)) as client:
            with anyio.fail_after(5):
                sid = await open_session(client)
                seen.clear()
                async with client.stream(
                    "POST",
                    "/mcp",
                    content=orjson.dumps(add),
                    headers={**ACCEPT, "mcp-session-id": sid},
                ) as r:
                    await sse_messages(r, 1)
        assert [m for m in seen if m == add] == [add], rules
