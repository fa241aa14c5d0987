"""The era translation: each mapping both ways, on the shapes the spec's examples use."""

from __future__ import annotations

from mcptape.eras import (
    Identity,
    acknowledged,
    discover_result,
    era_of,
    honoured,
    identity_meta,
    initialize_result,
    input_pairs,
    legacy_version,
    listen_filter,
    listen_uris,
    retry_params,
    server_description,
    set_level,
    strip_envelope,
    strip_identity,
    tagged,
    untagged,
    wanted,
)
from mcptape.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)

INFO = {"name": "ExampleServer", "version": "1.0.0"}
DISCOVER = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28"],
    "capabilities": {"tools": {}, "resources": {}},
    "instructions": "be nice",
    "ttlMs": 3600000,
    "cacheScope": "public",
    "_meta": {META_SERVER_INFO: INFO},
}
INITIALIZE = {
    "protocolVersion": "2025-06-18",
    "capabilities": {"tools": {}, "resources": {}},
    "serverInfo": INFO,
    "instructions": "be nice",
}


def test_eras_of_versions() -> None:
    assert era_of("2026-07-28") == "modern"
    assert era_of("2025-11-25") == "legacy"
    assert era_of(None) == "legacy"
    assert era_of("2027-01-01") == "modern"  # unknown: newer than anything known


def test_a_legacy_client_gets_its_own_version_or_the_latest_handshake_one() -> None:
    assert legacy_version("2025-03-26") == "2025-03-26"
    assert legacy_version("2026-07-28") == "2025-11-25"
    assert legacy_version(None) == "2025-11-25"


def test_a_discover_result_becomes_the_initialize_result_of_that_server() -> None:
    assert initialize_result(DISCOVER, "2025-06-18") == INITIALIZE


def test_an_initialize_result_becomes_a_discover_result() -> None:
    out = discover_result(INITIALIZE)
    assert out["supportedVersions"] == ["2026-07-28"]
    assert out["resultType"] == "complete"
    assert server_description("server/discover", out) == server_description(
        "initialize", INITIALIZE
    )
    assert server_description("initialize", INITIALIZE) == (
        INFO,
        {"capabilities": {"tools": {}, "resources": {}}, "instructions": "be nice"},
    )


def test_the_2026_envelope_comes_off_a_result_and_is_kept_apart() -> None:
    result = {"resultType": "complete", "tools": [], "ttlMs": 5, "cacheScope": "private",
              "_meta": {META_SERVER_INFO: INFO, "mine": 1}}  # fmt: skip
    out, taken = strip_envelope(result)
    assert out == {"tools": [], "_meta": {"mine": 1}}
    assert taken == {"/result/resultType": "complete", "/result/ttlMs": 5, "/result/cacheScope": "private",
                     "/result/_meta/io.modelcontextprotocol~1serverInfo": INFO}  # fmt: skip
    assert strip_envelope({"resultType": "complete", "_meta": {META_SERVER_INFO: INFO}})[0] == {}


def test_input_required_stays_behaviour() -> None:
    out, _ = strip_envelope({"resultType": "input_required", "inputRequests": {}})
    assert out["resultType"] == "input_required"


def test_identity_goes_into_meta_and_back() -> None:
    who = Identity.of_initialize(
        {"capabilities": {"roots": {}}, "clientInfo": {"name": "c"}}, "info"
    )
    meta = identity_meta("2026-07-28", who)
    assert meta == {META_PROTOCOL_VERSION: "2026-07-28", META_CLIENT_CAPABILITIES: {"roots": {}},
                    META_CLIENT_INFO: {"name": "c"}, META_LOG_LEVEL: "info"}  # fmt: skip
    assert Identity.of_meta(meta) == who
    assert strip_identity({"name": "x", "_meta": {**meta, "progressToken": 1}}) == {
        "name": "x",
        "_meta": {"progressToken": 1},
    }
    assert strip_identity({"name": "x", "_meta": meta}) == {"name": "x"}
    assert set_level("debug", 7) == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "logging/setLevel",
        "params": {"level": "debug"},
    }


def test_input_requests_pair_with_the_retry_answers_and_the_retry_echoes_the_state() -> None:
    result = {"resultType": "input_required", "requestState": "s1",
              "inputRequests": {"ask": {"method": "elicitation/create", "params": {"message": "name?"}}}}  # fmt: skip
    pairs = input_pairs(result, {"inputResponses": {"ask": {"action": "accept"}}})
    assert [(p.key, p.method, p.params, p.answer) for p in pairs] == [
        ("ask", "elicitation/create", {"message": "name?"}, {"action": "accept"})
    ]
    assert input_pairs(result, None)[0].answer is None
    assert input_pairs({"resultType": "complete"}, {}) == []
    retry = retry_params(
        {"name": "t", "requestState": "old"}, result, {"ask": {"action": "accept"}}
    )
    assert retry == {
        "name": "t",
        "requestState": "s1",
        "inputResponses": {"ask": {"action": "accept"}},
    }
    assert "requestState" not in retry_params(
        {"name": "t", "requestState": "old"}, {"inputRequests": {}}, {}
    )


def test_listen_filters_name_the_subscribed_uris() -> None:
    assert listen_uris(
        {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["file:///a"]}}
    ) == ["file:///a"]
    assert listen_uris({"notifications": {"toolsListChanged": True}}) == []
    assert listen_uris(None) == []


CONFIG = "file:///project/config.json"
LISTEN_ACK = {  # the spec's example stream (schema/2026-07-28/examples), first message
    "jsonrpc": "2.0",
    "method": "notifications/subscriptions/acknowledged",
    "params": {
        "_meta": {"io.modelcontextprotocol/subscriptionId": "listen-1"},
        "notifications": {"toolsListChanged": True, "resourceSubscriptions": [CONFIG]},
    },
}


def test_a_listen_filter_is_honoured_as_far_as_the_legacy_capabilities_go() -> None:
    asked = {
        "toolsListChanged": True,
        "promptsListChanged": True,
        "resourceSubscriptions": [CONFIG],
    }
    caps = {"tools": {"listChanged": True}, "prompts": {}, "resources": {"subscribe": True}}
    assert honoured(listen_filter({"notifications": asked}), caps) == {
        "toolsListChanged": True,
        "resourceSubscriptions": [CONFIG],
    }
    assert honoured(asked, {"resources": {"subscribe": False}}) == {}
    assert listen_filter({"notifications": "no"}) == {} and listen_filter(None) == {}


def test_a_listen_streams_notifications_are_tagged_and_untagged_both_ways() -> None:
    filt = LISTEN_ACK["params"]["notifications"]  # type: ignore[index]
    assert acknowledged("listen-1", filt) == LISTEN_ACK
    legacy = {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": CONFIG},
    }
    modern = tagged(legacy, "listen-1")
    assert modern["params"]["_meta"] == {"io.modelcontextprotocol/subscriptionId": "listen-1"}
    assert untagged(modern) == legacy
    bare = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    assert untagged(tagged(bare, 7)) == {**bare, "params": {}} and untagged(bare) == bare
    assert wanted(filt, legacy) and wanted(filt, bare)
    other = {**legacy, "params": {"uri": "file:///elsewhere"}}
    assert not wanted(filt, other) and not wanted({}, bare) and not wanted(filt, None)
