from __future__ import annotations

import pytest

from mcptape.wire.jsonrpc import (
    MAX_ID,
    MIN_ID,
    NOT_JSON,
    MessageType,
    classify,
    clip_json,
    decode,
    error_response,
    id_key,
    invalid,
    invalid_payload,
    nested_deeper,
    parse_error_message,
    usable_id,
)


@pytest.mark.parametrize(
    ("msg", "kind"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, MessageType.REQUEST),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, MessageType.NOTIFICATION),
        ({"jsonrpc": "2.0", "id": 1, "result": {}}, MessageType.RESULT),
        ({"jsonrpc": "2.0", "id": 1, "error": {"code": -1, "message": "x"}}, MessageType.ERROR),
        ({"jsonrpc": "2.0", "error": {"code": -32700, "message": "x"}}, MessageType.ERROR),
        ({"jsonrpc": "2.0", "id": 1, "method": 5}, MessageType.INVALID),
        ([1, 2], MessageType.INVALID),
        ("text", MessageType.INVALID),
        ({"jsonrpc": "2.0", "id": 1}, MessageType.INVALID),
    ],
)
def test_classify(msg: object, kind: MessageType) -> None:
    assert classify(msg) is kind


def test_ids_of_different_types_are_different_keys() -> None:
    assert id_key(1) != id_key("1")
    assert id_key(1) == id_key(1.0)
    assert id_key(True) != id_key(1)


def test_decode_keeps_non_json_apart() -> None:
    assert decode(b'{"a": 1}') == {"a": 1}
    assert decode(b"not json") is NOT_JSON
    assert decode(b"\xff\xfe") is NOT_JSON


def test_error_response_shape() -> None:
    assert error_response(3, -32600, "bad") == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32600, "message": "bad"},
    }


def _nest(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(
    ("depth", "limit", "deeper"),
    [
        (1, 1, False),
        (2, 1, True),
        (200, 200, False),
        (201, 200, True),
        (1024, 200, True),
        (100_000, 200, True),  # one level at a time: no RecursionError at any depth
    ],
)
def test_nesting_is_measured_without_recursion(depth: int, limit: int, deeper: bool) -> None:
    assert nested_deeper(_nest(depth), limit) is deeper
    assert nested_deeper({"a": [1, {"b": _nest(depth)}]}, limit + 3) is deeper


@pytest.mark.parametrize(
    ("msg", "says"),
    [
        ({"jsonrpc": "2.0", "id": 1, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": "x", "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": MAX_ID, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": MIN_ID, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 2**63 - 1, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "id": 2**64 - 1, "method": "ping"}, None),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
        (
            {"jsonrpc": "2.0", "id": 1.5, "result": {}},
            None,
        ),  # an answer: its id is not ours to judge
        ({"jsonrpc": "2.0", "id": MAX_ID + 1, "method": "ping"}, "out of range"),
        ({"jsonrpc": "2.0", "id": MIN_ID - 1, "method": "ping"}, "out of range"),
        ({"jsonrpc": "2.0", "id": float(2**64), "method": "ping"}, "out of range"),
        ({"jsonrpc": "2.0", "id": 1e30, "method": "ping"}, "out of range"),
        ({"jsonrpc": "2.0", "id": 1.5, "method": "ping"}, "not a number with a fraction"),
        ({"jsonrpc": "2.0", "id": None, "method": "ping"}, "not null"),
        ({"jsonrpc": "2.0", "id": False, "method": "ping"}, "not a boolean"),
        ({"jsonrpc": "2.0", "id": [], "method": "ping"}, "not an array"),
        ({"jsonrpc": "1.0", "id": 1, "method": "ping"}, '"jsonrpc" must be "2.0" (not "1.0")'),
        ({"id": 1, "method": "ping"}, "(it is missing)"),
        ({"jsonrpc": "2.0", "id": 1, "method": None}, '"method" must be a string, not null'),
        ({"jsonrpc": "2.0", "id": 1}, "not a request, notification or response"),
        ({"jsonrpc": "2.0", "id": 1, "method": "x", "params": {"a": _nest(199)}}, "more than 200"),
        (7, "must be a JSON object, not an integer"),
    ],
)
def test_invalid_says_why_a_message_is_no_json_rpc(msg: object, says: str | None) -> None:
    problem = invalid(msg)
    assert problem is None if says is None else problem is not None and says in problem


def test_a_whole_payload_is_refused_only_when_empty_or_a_bad_single_message() -> None:
    assert invalid_payload([]) == "Invalid Request: an empty batch"
    assert invalid_payload([1, 2]) is None  # each element is answered in the batch's array
    assert invalid_payload("x") is not None


def test_usable_ids_are_strings_and_integers_in_range() -> None:
    assert [usable_id({"id": i}) for i in (0, "a", MAX_ID, MAX_ID + 1, 1.0, True, None)] == [
        0, "a", MAX_ID, None, None, None, None,
    ]  # fmt: skip


def test_quotes_are_cut_with_the_whole_size() -> None:
    assert clip_json({"a": 1}) == '{"a":1}'
    assert clip_json("é" * 300, 10) == '"ééééééééé... (602 bytes)'
    assert "nested too deeply" in clip_json(_nest(300))


def test_parse_errors_say_when_the_nesting_is_the_reason() -> None:
    assert parse_error_message(b"[" * 2000 + b"]" * 2000) == (
        "Parse error: JSON nested more than 1024 levels deep"
    )
    assert parse_error_message(b"{not json") == "Parse error"
