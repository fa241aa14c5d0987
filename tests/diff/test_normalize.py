"""normalize: volatile parts vanish, the two eras map onto one canonical form."""

from __future__ import annotations

from typing import Any

import pytest

from mcptape.diff.normalize import Options, canonical_key, normalize_events

from .builders import (
    LEGACY,
    MODERN,
    SERVER_INFO,
    cassette,
    err,
    legacy_handshake,
    meta,
    modern_handshake,
    note,
    req,
    res,
    text_result,
)  # fmt: skip


def canon(*wire: Any, opts: Options = Options()) -> Any:
    return normalize_events(cassette(*wire).events, opts)


def bodies(c: Any) -> list[tuple[str, bytes, dict[str, Any]]]:
    return [(call.label, call.key, call.body) for call in c.calls]


def test_ids_progress_tokens_and_key_order_do_not_matter() -> None:
    a = canon(*legacy_handshake(1),
              req(2, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"progressToken": 2}}),
              note("notifications/progress", {"progressToken": 2, "progress": 1, "total": 2}),
              res(2, text_result("3")))  # fmt: skip
    b = canon(*legacy_handshake("x"),
              req("abc", "tools/call", {"arguments": {"b": 2, "a": 1}, "name": "add", "_meta": {"progressToken": "tok-9"}}),
              note("notifications/progress", {"total": 2, "progress": 1, "progressToken": "tok-9"}),
              res("abc", {"isError": False, "content": [{"text": "3", "type": "text"}]}))  # fmt: skip
    assert bodies(a) == bodies(b)
    assert a.calls[0].body["progress"] == [{"progress": 1, "total": 2}]


def test_a_batch_is_exploded_into_its_messages() -> None:
    batch = (
        "c",
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "id": 2, "method": "prompts/list"},
        ],
    )
    a = canon(
        batch,
        (
            "s",
            [
                {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}},
                {"jsonrpc": "2.0", "id": 2, "result": {"prompts": []}},
            ],
        ),
    )
    b = canon(
        req(7, "tools/list"), res(7, {"tools": []}), req(8, "prompts/list"), res(8, {"prompts": []})
    )
    assert bodies(a) == bodies(b)


@pytest.mark.parametrize(
    ("legacy_result", "modern_result"),
    [
        (
            {"tools": []},
            {"tools": [], "resultType": "complete", "ttlMs": 0, "cacheScope": "private"},
        ),
        (
            text_result("x"),
            {
                **text_result("x"),
                "resultType": "complete",
                "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO},
            },
        ),
    ],
)
def test_envelope_only_members_leave_the_body(
    legacy_result: dict[str, Any], modern_result: dict[str, Any]
) -> None:
    method = "tools/list" if "tools" in legacy_result else "tools/call"
    a = canon(req(1, method, {"name": "t"}), res(1, legacy_result))
    b = canon(req(1, method, {"name": "t", "_meta": meta("info")}), res(1, modern_result))
    assert a.calls[0].body == b.calls[0].body
    assert a.calls[0].key == b.calls[0].key
    env = b.calls[0].envelope
    assert env["/result/resultType"] == "complete"
    assert env["/params/_meta/logLevel"] == "info"


def test_an_unfinished_input_required_keeps_its_result_type_but_not_its_state() -> None:
    c = canon(req(1, "tools/call", {"name": "greet", "_meta": meta()}),
              res(1, {"resultType": "input_required", "requestState": "sealed-1",
                      "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "name?"}}}}))  # fmt: skip
    body = c.calls[0].body
    assert body["result"] == {"resultType": "input_required"}
    assert body["inputs"] == [
        {"method": "elicitation/create", "params": {"message": "name?"}, "answer": None}
    ]


@pytest.mark.parametrize("code", [-32002, -32602])
def test_resource_not_found_codes_are_one(code: int) -> None:
    c = canon(
        req(1, "resources/read", {"uri": "demo://nope"}),
        err(1, code, "not found", {"uri": "demo://nope"}),
    )
    assert c.calls[0].body == {"error": {"code": -32602, "data": {"uri": "demo://nope"}}}
    assert c.calls[0].envelope["/error/code"] == code


def test_error_messages_are_kept_only_when_strict() -> None:
    wire = (req(1, "tools/call", {"name": "fail"}), err(1, -32000, "failed: boom"))
    assert canon(*wire).calls[0].body == {"error": {"code": -32000}}
    assert canon(*wire, opts=Options(strict_messages=True)).calls[0].body == {
        "error": {"code": -32000, "message": "failed: boom"}
    }


SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def test_legacy_elicitation_equals_the_2026_input_required_chain() -> None:
    legacy = canon(
        *legacy_handshake(),
        req(2, "tools/call", {"name": "greet", "arguments": {}}),
        ("s", {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create",
               "params": {"message": "name?", "requestedSchema": {**SCHEMA, "title": "Name"}}}),
        res(1, {"action": "accept", "content": {"name": "Ada"}}, who="c"),
        res(2, text_result("Hello, Ada!")),
    )  # fmt: skip
    modern = canon(
        *modern_handshake(),
        req(5, "tools/call", {"name": "greet", "arguments": {}, "_meta": meta()}),
        res(5, {"resultType": "input_required", "requestState": "opaque-1",
                "inputRequests": {"mod:ask": {"method": "elicitation/create", "params": {"message": "name?", "requestedSchema": SCHEMA}}}}),
        req(6, "tools/call", {"name": "greet", "arguments": {}, "_meta": meta(), "requestState": "opaque-1",
                              "inputResponses": {"mod:ask": {"action": "accept", "content": {"name": "Ada"}}}}),
        res(6, {**text_result("Hello, Ada!"), "resultType": "complete"}),
    )  # fmt: skip
    assert bodies(legacy) == bodies(modern)
    assert len(modern.calls) == 1
    assert modern.calls[0].body["inputs"] == [
        {
            "method": "elicitation/create",
            "params": {"message": "name?", "requestedSchema": SCHEMA},
            "answer": {"action": "accept", "content": {"name": "Ada"}},
        }
    ]


def test_initialize_and_discover_give_the_same_server() -> None:
    legacy, modern = canon(*legacy_handshake()), canon(*modern_handshake())
    assert legacy.era == "legacy" and legacy.protocol_version == LEGACY
    assert modern.era == "modern" and modern.protocol_version == MODERN
    assert legacy.handshake.server["name"] == modern.handshake.server["name"] == "demo"
    assert legacy.handshake.server["instructions"] == modern.handshake.server["instructions"]
    assert (
        legacy.handshake.envelope["/server/version"]
        == modern.handshake.envelope["/server/version"]
        == "1.0.0"
    )
    assert legacy.handshake.envelope["/server/protocolVersion"] == LEGACY
    assert modern.handshake.envelope["/server/protocolVersion"] == [MODERN]
    assert legacy.calls == modern.calls == []  # handshakes are not calls


def test_a_modern_session_without_discover_takes_server_info_from_results() -> None:
    c = canon(
        req(1, "tools/list", {"_meta": meta()}),
        res(1, {"tools": [], "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}),
    )
    assert c.handshake.server == {"name": "demo"}


def test_set_level_and_per_request_log_level_both_become_the_call_level() -> None:
    legacy = canon(*legacy_handshake(), req(2, "logging/setLevel", {"level": "info"}), res(2, {}),
                   req(3, "tools/call", {"name": "add"}), note("notifications/message", {"level": "info", "data": "x"}), res(3, text_result("1")))  # fmt: skip
    modern = canon(req(3, "tools/call", {"name": "add", "_meta": meta("info")}),
                   note("notifications/message", {"level": "info", "data": "x"}), res(3, text_result("1")))  # fmt: skip
    assert [c.log_level for c in legacy.calls] == [c.log_level for c in modern.calls] == ["info"]
    assert bodies(legacy) == bodies(modern)
    assert legacy.calls[0].body["logs"] == [{"level": "info", "data": "x"}]


def test_subscribe_and_listen_map_to_one_subscription_and_one_change_stream() -> None:
    legacy = canon(*legacy_handshake(), req(2, "resources/subscribe", {"uri": "demo://a"}), res(2, {}),
                   note("notifications/resources/updated", {"uri": "demo://a"}))  # fmt: skip
    sub = {"io.modelcontextprotocol/subscriptionId": "listen-1"}
    modern = canon(
        req("listen-1", "subscriptions/listen", {"_meta": meta(), "notifications": {"resourceSubscriptions": ["demo://a"]}}),
        note("notifications/subscriptions/acknowledged", {"_meta": sub, "notifications": {"resourceSubscriptions": ["demo://a"]}}),
        note("notifications/resources/updated", {"_meta": sub, "uri": "demo://a"}),
    )  # fmt: skip
    assert bodies(legacy) == bodies(modern)
    assert legacy.calls[0].label == "resources/subscribe demo://a"
    assert (
        legacy.changes
        == modern.changes
        == [{"method": "notifications/resources/updated", "params": {"uri": "demo://a"}}]
    )


def test_list_changed_during_a_call_goes_to_the_change_stream() -> None:
    c = canon(
        req(1, "tools/call", {"name": "t"}),
        note("notifications/tools/list_changed"),
        res(1, text_result("ok")),
    )
    assert "notifications" not in c.calls[0].body
    assert c.changes == [{"method": "notifications/tools/list_changed"}]


def test_list_results_feed_the_surface_across_pages() -> None:
    c = canon(req(1, "tools/list"), res(1, {"tools": [{"name": "a"}], "nextCursor": "p2"}),
              req(2, "tools/list", {"cursor": "p2"}), res(2, {"tools": [{"name": "b"}]}))  # fmt: skip
    assert c.surface["tools"] == {"a": {"name": "a"}, "b": {"name": "b"}}
    assert c.surface["prompts"] is None
    assert c.calls[0].body == {"result": {"nextCursor": "p2"}}


@pytest.mark.parametrize(
    ("params_a", "params_b", "same"),
    [
        ({"name": "t", "_meta": {"progressToken": 1, "traceparent": "00-1"}}, {"name": "t"}, True),
        ({"name": "t", "_meta": meta("debug", {"sampling": {}})}, {"name": "t"}, True),
        ({"name": "t", "requestState": "x", "inputResponses": {"k": 1}}, {"name": "t"}, True),
        ({"name": "t", "arguments": {"a": 1}}, {"name": "t", "arguments": {"a": 2}}, False),
        ({"name": "t", "_meta": {"custom": 1}}, {"name": "t"}, False),
    ],
)
def test_the_matching_key_ignores_only_volatile_and_era_parts(
    params_a: Any, params_b: Any, same: bool
) -> None:
    assert (
        canonical_key("tools/call", params_a, Options())
        == canonical_key("tools/call", params_b, Options())
    ) is same


def test_ignored_params_leave_the_key() -> None:
    opts = Options(ignore=(("params", "arguments", "when"),))
    a = canonical_key("tools/call", {"name": "t", "arguments": {"when": "today"}}, opts)
    assert a == canonical_key("tools/call", {"name": "t", "arguments": {"when": "tomorrow"}}, opts)
