"""JSON-RPC 2.0 payloads: decode one wire payload, classify messages, key ids, refuse bad ones.

Pure functions over values. A payload that is not valid JSON (or not UTF-8) is not an
error here: `decode` returns `NOT_JSON` and the caller keeps the bytes verbatim.
`invalid` says why a client's message is no valid JSON-RPC request, notification or
response (answered -32600), without recursion: ids are strings or integers from `MIN_ID`
to `MAX_ID`, and a message nests at most `MAX_DEPTH` objects and arrays.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, NotRequired, TypedDict

import orjson

from mcptape._perf import trimmed

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

MAX_DEPTH = 200
"""How deeply a client message may nest objects and arrays (the message itself is level 1).

orjson, which builds every matching key and answer, serializes at most 254 levels, and an
answer quotes a request a few levels deeper than it was sent; no MCP request nests anywhere
near this. Deeper JSON (up to orjson's parsing limit, 1024) is answered -32600; beyond
that it is not parsed at all, so -32700."""
MAX_ID = 2**64 - 1
"""The largest integer id served. JSON-RPC allows any number as an id and MCP any integer;
the JSON parser reads integers exactly from `MIN_ID` to here (a larger one becomes a float,
whose digits are no longer the ones sent), and every id served is echoed exactly as sent."""
MIN_ID = -(2**63)
"""The smallest integer id served (the parser's exact range, as for `MAX_ID`)."""

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


def parse_error_message(payload: bytes | str) -> str:
    """The -32700 message for a payload `decode` refused: why, when orjson says it is the nesting."""
    try:
        orjson.loads(payload)
    except orjson.JSONDecodeError as exc:
        if "depth" in str(exc) or "recursion" in str(exc).lower():
            return "Parse error: JSON nested more than 1024 levels deep"
    return "Parse error"


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
    kind = type(msg_id)  # (the usual two first: pairing asks for every message's)
    if kind is int:
        return ("int", msg_id)
    if kind is str:
        return ("str", msg_id)
    if isinstance(msg_id, bool) or msg_id is None:
        return ("other", msg_id)
    if isinstance(msg_id, int):
        return ("int", msg_id)
    if isinstance(msg_id, float):
        return ("int", int(msg_id)) if msg_id.is_integer() else ("float", msg_id)
    if isinstance(msg_id, str):
        return ("str", msg_id)
    return ("other", trimmed(orjson.dumps(msg_id)))


def nested_deeper(value: Any, limit: int = MAX_DEPTH) -> bool:
    """True when `value` nests objects and arrays more than `limit` levels (no recursion: one
    level at a time, so the cost is one look at each container)."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 1
    while level:
        if depth > limit:
            return True
        deeper = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                if type(child) is dict or type(child) is list:
                    deeper.append(child)
        level = deeper
        depth += 1
    return False


def shallow(payload: bytes) -> bool:
    """True when the JSON in `payload` cannot nest more than `MAX_DEPTH` levels: it opens no more
    objects and arrays than that (a bracket inside a string only counts one too many). Cheaper than
    `nested_deeper` on the parsed value; False says nothing (check the value)."""
    return len(payload) <= MAX_DEPTH or (
        len(payload) <= _SHALLOW_SCAN and payload.count(b"{") + payload.count(b"[") <= MAX_DEPTH
    )


_SHALLOW_SCAN = 1 << 16
"""Longest payload `shallow` counts brackets in (beyond it, walking the parsed value is cheaper)."""


def usable_id(msg: Any) -> JsonRpcId | None:
    """A message's id when an answer can carry it (a string, or an integer from `MIN_ID` to
    `MAX_ID`), else None."""
    msg_id = msg.get("id") if isinstance(msg, dict) else None
    if isinstance(msg_id, str) or (
        isinstance(msg_id, int) and not isinstance(msg_id, bool) and MIN_ID <= msg_id <= MAX_ID
    ):
        return msg_id
    return None


def invalid(msg: Any, *, shallow: bool = False) -> str | None:
    """Why one client message (not a batch) is no valid JSON-RPC message (-32600), or None.

    Checked: an object; `"jsonrpc": "2.0"`; a string method; a request id that is a string or
    an integer from `MIN_ID` to `MAX_ID` (no null, float, boolean, object or array); a response with an
    id; at most `MAX_DEPTH` levels of nesting (not walked when `shallow`: the caller knows, see
    `shallow()`).
    """
    if not isinstance(msg, dict):
        return f"Invalid Request: a message must be a JSON object, not {_json_type(msg)}"
    if not shallow and nested_deeper(msg):
        return (
            f"Invalid Request: the message nests more than {MAX_DEPTH} levels of objects and arrays"
        )
    if msg.get("jsonrpc") != "2.0":
        got = "it is missing" if "jsonrpc" not in msg else f"not {clip_json(msg['jsonrpc'], 40)}"
        return f'Invalid Request: "jsonrpc" must be "2.0" ({got})'
    if "method" in msg:
        if not isinstance(msg["method"], str):
            return f'Invalid Request: "method" must be a string, not {_json_type(msg["method"])}'
        if "id" in msg and usable_id(msg) is None:
            return _bad_id(msg["id"])
        return None
    if classify(msg) is MessageType.INVALID:
        return (
            "Invalid Request: not a request, notification or response (no method, result or error)"
        )
    return None


EMPTY_BATCH = "Invalid Request: an empty batch"


def invalid_payload(value: Any) -> str | None:
    """Why a whole parsed payload gets one -32600 error and nothing else (an empty batch, or a
    single message `invalid` refuses), or None: a batch's elements are answered one by one."""
    if isinstance(value, list):
        return EMPTY_BATCH if not value else None
    return invalid(value)


def _bad_id(msg_id: Any) -> str:
    # (an integer beyond the parser's exact range arrives as a float: -2**63 - 1 as -2.0**63)
    big = isinstance(msg_id, float) and msg_id.is_integer() and abs(msg_id) >= 2**63
    if big or (isinstance(msg_id, int) and not isinstance(msg_id, bool)):
        return (f"Invalid Request: the id {clip_json(msg_id, 40)} is out of range: integer ids are "
                f"served from {MIN_ID} to {MAX_ID}, so that the answer echoes them exactly; use a "
                "string id for larger ones")  # fmt: skip
    return f"Invalid Request: the id must be a string or an integer, not {_json_type(msg_id)}"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "an integer" if isinstance(value, int) else "a number with a fraction or exponent"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def clip_json(value: Any, limit: int = 200) -> str:
    """`value` as JSON text, cut after `limit` characters with `... (N bytes)` (N: its whole size).

    For messages that quote what a client sent: a huge argument must not make a huge error.
    A value too deep to serialize is named by its type instead.
    """
    try:
        text = orjson.dumps(value).decode()
    except TypeError:
        return f"{_json_type(value)} nested too deeply to quote"
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text.encode())} bytes)"


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
