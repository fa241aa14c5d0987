from __future__ import annotations

import pytest

from mcptape.wire.jsonrpc import NOT_JSON, MessageType, classify, decode, error_response, id_key


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
