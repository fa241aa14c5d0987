"""verify.plan: verify's sans-IO driver: what it sends, how it answers, how it rewrites the era."""

from __future__ import annotations

from typing import Any

from mcptape.pairing import pair
from mcptape.verify import redaction_of
from mcptape.verify.plan import Driver, build_steps, collect_answers
from tests.diff.builders import (
    LEGACY,
    MODERN,
    cassette,
    legacy_handshake,
    meta,
    modern_handshake,
    note,
    req,
    res,
    text_result,
)

ELICIT = {
    "message": "name?",
    "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}},
}
ADA = {"action": "accept", "content": {"name": "Ada"}}

LEGACY_SESSION = [
    *legacy_handshake(1),
    req(2, "logging/setLevel", {"level": "info"}), res(2, {}),
    req(3, "tools/call", {"name": "greet", "arguments": {}}),
    ("s", {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": ELICIT}),
    res(1, ADA, who="c"),
    res(3, text_result("Hello, Ada!")),
]  # fmt: skip

MODERN_SESSION = [
    *modern_handshake("d"),
    req(5, "tools/call", {"name": "greet", "arguments": {}, "_meta": meta("info", {"elicitation": {}})}),
    res(5, {"resultType": "input_required", "requestState": "old", "inputRequests": {"k": {"method": "elicitation/create", "params": ELICIT}}}),
    req(6, "tools/call", {"name": "greet", "arguments": {}, "_meta": meta("info", {"elicitation": {}}), "requestState": "old", "inputResponses": {"k": ADA}}),
    res(6, {**text_result("Hello, Ada!"), "resultType": "complete"}),
]  # fmt: skip


def driver(wire: list[Any], protocol: str | None = None) -> Driver:
    session = pair(cassette(*wire).events)
    steps, era, version = build_steps(session, protocol)
    return Driver(steps, collect_answers(session), era, version)


def methods(msgs: list[dict[str, Any]]) -> list[Any]:
    return [m.get("method", "answer") for m in msgs]


def test_legacy_session_is_resent_in_order_with_fresh_ids_and_recorded_answers() -> None:
    d = driver(LEGACY_SESSION)
    first = d.start()
    assert methods(first) == ["initialize"] and first[0]["id"] == 1
    nxt = d.on_message({"jsonrpc": "2.0", "id": 1, "result": {"protocolVersion": LEGACY}})
    assert methods(nxt) == ["notifications/initialized", "logging/setLevel"] and nxt[1]["id"] == 2
    assert d.protocol == LEGACY
    call = d.on_message({"jsonrpc": "2.0", "id": 2, "result": {}})
    assert methods(call) == ["tools/call"] and call[0]["id"] == 3
    assert d.on_message({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}) == []
    answer = d.on_message(
        {"jsonrpc": "2.0", "id": 77, "method": "elicitation/create", "params": ELICIT}
    )
    assert answer == [{"jsonrpc": "2.0", "id": 77, "result": ADA}]
    assert d.on_message({"jsonrpc": "2.0", "id": 99, "method": "ping"}) == [
        {"jsonrpc": "2.0", "id": 99, "result": {}}
    ]
    assert d.on_message({"jsonrpc": "2.0", "id": 3, "result": text_result("Hi")}) == []
    assert d.done


def test_a_server_request_without_a_recorded_answer_gets_an_error() -> None:
    d = driver(LEGACY_SESSION)
    d.start()
    (out,) = d.on_message(
        {"jsonrpc": "2.0", "id": 5, "method": "sampling/createMessage", "params": {}}
    )
    assert out["error"]["code"] == -32601 and out["id"] == 5


def test_input_required_is_retried_with_recorded_responses_and_the_new_state() -> None:
    d = driver(MODERN_SESSION)
    assert methods(d.start()) == ["server/discover"]
    (call,) = d.on_message({"jsonrpc": "2.0", "id": 1, "result": {"resultType": "complete"}})
    assert (
        call["params"]["name"] == "greet" and "inputResponses" not in call["params"]
    )  # the retry is not replayed blindly
    (retry,) = d.on_message({"jsonrpc": "2.0", "id": call["id"], "result": {
        "resultType": "input_required", "requestState": "fresh", "inputRequests": {"other-key": {"method": "elicitation/create", "params": ELICIT}}}})  # fmt: skip
    assert retry["id"] not in (call["id"], 6)
    assert retry["params"]["inputResponses"] == {"other-key": ADA}
    assert retry["params"]["requestState"] == "fresh"
    assert (
        d.on_message({"jsonrpc": "2.0", "id": retry["id"], "result": text_result("Hello, Ada!")})
        == []
    )
    assert d.done


def test_a_legacy_cassette_is_rewritten_for_2026() -> None:
    d = driver(LEGACY_SESSION, MODERN)
    (discover,) = d.start()
    assert discover["method"] == "server/discover"
    assert discover["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] == {
        "elicitation": {}
    }
    (call,) = d.on_message({"jsonrpc": "2.0", "id": discover["id"], "result": {}})
    assert call["method"] == "tools/call"
    m = call["params"]["_meta"]
    assert m["io.modelcontextprotocol/protocolVersion"] == MODERN
    assert m["io.modelcontextprotocol/logLevel"] == "info"
    assert m["io.modelcontextprotocol/clientInfo"] == {"name": "t", "version": "1"}
    (retry,) = d.on_message({"jsonrpc": "2.0", "id": call["id"], "result": {
        "resultType": "input_required", "inputRequests": {"k": {"method": "elicitation/create", "params": ELICIT}}}})  # fmt: skip
    assert retry["params"]["inputResponses"] == {"k": ADA} and "requestState" not in retry["params"]


def test_a_modern_cassette_is_rewritten_for_a_handshake_version() -> None:
    d = driver(MODERN_SESSION, LEGACY)
    (init,) = d.start()
    assert init["method"] == "initialize"
    assert init["params"] == {
        "protocolVersion": LEGACY,
        "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    out = d.on_message({"jsonrpc": "2.0", "id": init["id"], "result": {"protocolVersion": LEGACY}})
    assert methods(out) == ["notifications/initialized", "logging/setLevel"]
    (call,) = d.on_message({"jsonrpc": "2.0", "id": out[1]["id"], "result": {}})
    assert call["params"] == {"name": "greet", "arguments": {}}
    assert (
        d.on_message({"jsonrpc": "2.0", "id": 9, "method": "elicitation/create", "params": ELICIT})[
            0
        ]["result"]
        == ADA
    )


def test_a_legacy_cassette_without_set_level_asks_for_the_level_it_saw() -> None:
    wire = [*legacy_handshake(1), req(2, "tools/call", {"name": "add"}),
            note("notifications/message", {"level": "warning", "data": "w"}), note("notifications/message", {"level": "info", "data": "i"}),
            res(2, text_result("3"))]  # fmt: skip
    d = driver(wire, MODERN)
    (discover,) = d.start()
    (call,) = d.on_message({"jsonrpc": "2.0", "id": discover["id"], "result": {}})
    assert call["params"]["_meta"]["io.modelcontextprotocol/logLevel"] == "info"


def test_a_timeout_abandons_the_request_and_goes_on() -> None:
    d = driver(
        [
            req(1, "tools/call", {"name": "slow"}),
            res(1, text_result("x")),
            req(2, "tools/list"),
            res(2, {"tools": []}),
        ]
    )
    d.start()
    (nxt,) = d.timeout()
    assert nxt["method"] == "tools/list" and d.abandoned == ["tools/call"]
    assert (
        d.on_message({"jsonrpc": "2.0", "id": 1, "result": {}}) == []
    )  # a late answer to the abandoned one is ignored
    assert d.on_message({"jsonrpc": "2.0", "id": nxt["id"], "result": {}}) == [] and d.done


def test_new_recording_uses_the_cassette_redaction_rules() -> None:
    c = cassette()
    assert redaction_of(c.header).enabled
