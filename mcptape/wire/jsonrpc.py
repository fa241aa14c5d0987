"""JSON-RPC 2.0 payloads: decode one wire payload, classify messages, key ids.

Pure functions over values. A payload that is not valid JSON (or not UTF-8) is not an
error here: `decode` returns `None` and the caller keeps the bytes verbatim.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NotRequired, TypedDict

import orjson

JSONRPC_PARSE_ERROR = -32700
"""Invalid JSON was received."""
JSONRPC_INVALID_REQUEST = -32600
"""The JSON sent is not a valid request object."""
JSONRPC_METHOD_NOT_FOUND = -32601
"""The method does not exist or is not available."""
JSONRPC_INVALID_PARAMS = -32602
"""Invalid method parameters."""
JSONRPC_INTERNAL_ERROR = -32603
"""Internal JSON-RPC error."""
MCP_HEADER_MISMATCH = -32020
"""MCP 2026-07-28: the HTTP headers disagree with the request body."""
MCP_MISSING_CAPABILITY = -32021
"""MCP 2026-07-28: the request needs a capability the client did not declare."""
MCP_UNSUPPORTED_PROTOCOL_VERSION = -32022
"""MCP 2026-07-28: the protocol version asked for is not served."""

_NOT_JSON = object()

# -- a typed view of the messages (TypedDicts: plain dicts at run time, types for mypy) --------

JsonRpcId = str | int
"""A request id (JSON-RPC also allows null on an error answering an unreadable request)."""


class Request(TypedDict):
    """A message `classify` calls REQUEST."""

    jsonrpc: str
    id: JsonRpcId
    method: str
    params: NotRequired[dict[str, Any]]


class Notification(TypedDict):
    """A message `classify` calls NOTIFICATION."""

    jsonrpc: str
    method: str
    params: NotRequired[dict[str, Any]]


class ErrorObject(TypedDict):
    code: int
    message: str
    data: NotRequired[Any]


class Response(TypedDict, total=False):
    """A message `classify` calls RESULT (with `result`) or ERROR (with `error`)."""

    jsonrpc: str
    id: JsonRpcId | None
    result: Any
    error: ErrorObject


Message = Request | Notification | Response
"""One JSON-RPC message, once `classify` has told which it is."""


class MessageType(StrEnum):
    """What a JSON-RPC message is, from its members."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESULT = "result"
    ERROR = "error"
    INVALID = "invalid"


def decode(payload: bytes | str) -> Any:
    """Parses one payload; returns the JSON value, or `NOT_JSON` when it is not valid JSON."""
    try:
        return orjson.loads(payload)
    except orjson.JSONDecodeError:
        return NOT_JSON


NOT_JSON: Any = _NOT_JSON
"""Returned by `decode` for a payload that is not valid JSON (or not UTF-8)."""


def encode(value: Any) -> bytes:
    """Serializes a JSON value compactly (no newline)."""
    return orjson.dumps(value)


def classify(msg: Any) -> MessageType:
    """Tells a request, notification, result or error apart; anything else is INVALID."""
    if not isinstance(msg, dict):
        return MessageType.INVALID
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return MessageType.INVALID
        return MessageType.REQUEST if "id" in msg else MessageType.NOTIFICATION
    if "result" in msg and "id" in msg:
        return MessageType.RESULT
    if "error" in msg:
        return MessageType.ERROR
    return MessageType.INVALID


def id_key(msg_id: Any) -> tuple[str, Any]:
    """A hashable key for a JSON-RPC id that keeps `1` and `"1"` apart (they are different ids)."""
    if isinstance(msg_id, bool) or msg_id is None:
        return ("other", msg_id)
    if isinstance(msg_id, int):
        return ("int", msg_id)
    if isinstance(msg_id, float):
        return ("int", int(msg_id)) if msg_id.is_integer() else ("float", msg_id)
    if isinstance(msg_id, str):
        return ("str", msg_id)
    return ("other", orjson.dumps(msg_id))


def messages_of(value: Any) -> list[Any]:
    """The messages in one payload: a batch array's elements, or the value itself."""
    if isinstance(value, list):
        return value
    return [value]


def error_response(msg_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """Builds a JSON-RPC error response."""
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": msg_id, "error": err}


def request_params(msg: Request | Notification | dict[str, Any]) -> dict[str, Any]:
    """A request's params as a dict (empty when absent or not an object)."""
    params = msg.get("params")
    return params if isinstance(params, dict) else {}


def request_meta(msg: Request | Notification | dict[str, Any]) -> dict[str, Any]:
    """The `_meta` of a request's params (empty when absent)."""
    meta = request_params(msg).get("_meta")
    return meta if isinstance(meta, dict) else {}
