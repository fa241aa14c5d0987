"""What each cassette line must hold, checked as the cassette is parsed (no I/O).

`event_problem(obj)` returns None for a well-formed event, else one short phrase saying
which field is wrong and what was expected ("http.status is a string; expected an
integer"). The reader (`mcptape.cassette`) adds the file and line. Beyond the envelope
(`seq`, `kind`, `http`, ...), the parts of a message that mcptape's commands read (the
JSON-RPC members, and the MCP fields `show`, `diff`, `check`, `serve` and `redact` look
into) are checked too, so that no command meets a wrong type later: a cassette is
rejected at load with its line, instead of failing deep inside a command.

The JSON Schema (`mcptape/schema/cassette-v1.schema.json`) is the source of truth for what a line
may hold; these checks follow it. Their enumerations (`KINDS`, `SOURCES`, `TRANSPORTS`) are the
model's enums, which `tests/test_cassette_codec.py` holds equal to the schema's.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

from mcptape.cassette.model import Event, Kind, Source, Transport
from mcptape.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)

KINDS = frozenset(k.value for k in Kind)
SOURCES = frozenset(s.value for s in Source)

Check = Callable[[Any], bool]


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


def _str(v: Any) -> bool:
    return isinstance(v, str)


def _obj(v: Any) -> bool:
    return isinstance(v, dict)


def _list(v: Any) -> bool:
    return isinstance(v, list)


def _id(v: Any) -> bool:
    return v is None or isinstance(v, str) or _num(v)


def _objects(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, dict) for x in v)


def _container(v: Any) -> bool:
    return isinstance(v, (dict, list))


def _object_map(v: Any) -> bool:
    return isinstance(v, dict) and all(isinstance(x, dict) for x in v.values())


def _headers(v: Any) -> bool:
    return isinstance(v, dict) and all(
        isinstance(x, str) or (isinstance(x, list) and all(isinstance(y, str) for y in x))
        for x in v.values()
    )


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


WANT: dict[Check, str] = {
    _int: "an integer", _num: "a number", _str: "a string", _obj: "an object", _list: "an array",
    _id: "a string, a number or null", _objects: "an array of objects", _headers: "an object of strings",
    _strings: "an array of strings", _bool: "a boolean", _container: "an object or an array", _object_map: "an object of objects",
}  # fmt: skip

HTTP: dict[str, Check] = {
    "exchange": _int, "session": _str, "method": _str, "path": _str, "status": _int, "headers": _headers,
    "content_type": _str, "phase": _str, "stream": _str, "sse": _obj,
}  # fmt: skip
NULLABLE = frozenset(("exchange", "session"))
"""HTTP hints that may be null (older recorders wrote them so)."""
SSE: dict[str, Check] = {"id": _str, "event": _str, "retry": _int, "data": _str, "comment": _str}
INFO: dict[str, Check] = {"code": _int, "signal": _str, "error": _str, "note": _str}

ERROR: dict[str, Check] = {"code": _int, "message": _str}
PARAMS: dict[str, Check] = {
    "protocolVersion": _str, "clientInfo": _obj, "capabilities": _obj, "name": _str, "arguments": _obj,
    "_meta": _obj, "uri": _str, "cursor": _str, "requestId": _id, "level": _str, "inputResponses": _object_map,
}  # fmt: skip
RESULT: dict[str, Check] = {
    "protocolVersion": _str, "serverInfo": _obj, "capabilities": _obj, "instructions": _str, "tools": _objects,
    "prompts": _objects, "resources": _objects, "resourceTemplates": _objects, "contents": _objects,
    "content": _container, "messages": _objects, "structuredContent": _obj, "isError": _bool,
    "_meta": _obj, "nextCursor": _str, "inputRequests": _object_map, "supportedVersions": _strings, "resultType": _str,
}  # fmt: skip
META: dict[str, Check] = {
    META_PROTOCOL_VERSION: _str, META_CLIENT_INFO: _obj, META_CLIENT_CAPABILITIES: _obj, META_LOG_LEVEL: _str,
    META_SERVER_INFO: _obj, "progressToken": _id,
}  # fmt: skip
"""The `_meta` members mcptape reads (2026-07-28 carries the handshake's fields there)."""
INFO_FIELDS: dict[str, Check] = {"name": _str, "version": _str, "title": _str}
NAMED: dict[str, Check] = {
    "name": _str,
    "uri": _str,
    "description": _str,
    "inputSchema": _obj,
    "outputSchema": _obj,
}


ENVELOPE: dict[str, Check] = {
    "text": _str, "b64": _str, "size": _int, "http": _obj, "info": _obj, "redacted": _strings,
}  # fmt: skip
"""The optional members of an event line (null is allowed for each)."""

TRANSPORTS = frozenset(t.value for t in Transport)
HEADER: dict[str, Check] = {
    "mcptape_version": _str,
    "target": _obj,
    "recorded_at": _str,
    "redaction": _obj,
}


def header_problem(obj: dict[str, Any]) -> str | None:
    """What is wrong with a header line (parsed), or None."""
    transport = obj.get("transport", "stdio")
    if not isinstance(transport, str) or transport not in TRANSPORTS:
        return f"transport is {_show(transport)}; expected one of {', '.join(sorted(TRANSPORTS))}"
    problem = _fields("header", obj, HEADER)
    if problem:
        return problem.removeprefix("header.")
    target, redaction = obj.get("target") or {}, obj.get("redaction") or {}
    if "command" in target and not _strings(target["command"]):
        return _wrong("target.command", target["command"], _strings)
    if "url" in target and not _str(target["url"]):
        return _wrong("target.url", target["url"], _str)
    return _fields(
        "redaction",
        redaction,
        {"enabled": _bool, "marker": _str, "keys": _strings, "patterns": _strings},
        null=False,
    )


def event_problem(obj: dict[str, Any]) -> str | None:
    """What is wrong with one event line (parsed), or None."""
    if _plainly_valid(obj):
        return None
    return _event_problem(obj)


def _event_problem(obj: dict[str, Any]) -> str | None:
    """The first problem of an event line, checked in line order: head, members, hints, message."""
    return (
        _head_problem(obj)
        or _members_problem(obj)
        or _http_problem(obj.get("http"))
        or _info_problem(obj.get("info"))
        or (message_problem(obj.get("msg")) if obj["kind"] == "message" else None)
    )


def _head_problem(obj: dict[str, Any]) -> str | None:
    """`seq`, `t`, `kind` and `from`: what every event line starts with."""
    if not _int(obj.get("seq")):
        return _wrong("seq", obj.get("seq"), _int)
    if "t" in obj and not _num(obj["t"]):
        return _wrong("t", obj["t"], _num)
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        return f"kind is {_show(kind)}; expected one of {', '.join(sorted(KINDS))}"
    src = obj.get("from")
    if src is not None and (not isinstance(src, str) or src not in SOURCES):
        return f"from is {_show(src)}; expected client or server"
    return None


def _members_problem(obj: dict[str, Any]) -> str | None:
    """The optional members of `ENVELOPE` (their types), and `b64` (that it decodes)."""
    for name, value in obj.items():
        check = ENVELOPE.get(name)
        if check is not None and value is not None and not check(value):
            return _wrong(name, value, check)
    return _b64_problem(obj.get("b64"))


def _b64_problem(b64: str | None) -> str | None:
    if b64 is None:
        return None
    try:
        binascii.a2b_base64(b64.encode("ascii"), strict_mode=True)
    except (binascii.Error, UnicodeEncodeError):
        return "b64 is not valid base64"
    return None


def _http_problem(http: dict[str, Any] | None) -> str | None:
    """The HTTP hints, and the server-sent event fields among them."""
    if http is None:
        return None
    sse = http.get("sse")
    return _fields("http", http, HTTP, null=False) or (
        _fields("http.sse", sse, SSE, null=False) if isinstance(sse, dict) else None
    )


def _info_problem(info: dict[str, Any] | None) -> str | None:
    return None if info is None else _fields("info", info, INFO)


def message_problem(msg: Any) -> str | None:
    """What is wrong with a recorded JSON-RPC payload (a message or a batch), or None."""
    if isinstance(msg, list):
        for i, item in enumerate(msg):
            if isinstance(item, dict) and (problem := _message(item, f"msg/{i}")):
                return problem
        return None
    return _message(msg, "msg") if isinstance(msg, dict) else None


def _message(msg: dict[str, Any], where: str) -> str | None:
    """The JSON-RPC members of one message, then what MCP puts in its params, error or result."""
    if "id" in msg and not _id(msg["id"]):
        return _wrong(f"{where}.id", msg["id"], _id)
    if "method" in msg and not _str(msg["method"]):
        return _wrong(f"{where}.method", msg["method"], _str)
    return (
        _params_problem(msg, where)
        or _error_problem(msg, where)
        or _result_problem(msg.get("result"), where)
    )


def _params_problem(msg: dict[str, Any], where: str) -> str | None:
    if "params" not in msg:
        return None
    params = msg["params"]
    if not isinstance(params, dict):
        return f"{where}.params is {_kind(params)}; expected an object (MCP passes params by name)"
    return (
        _fields(f"{where}.params", params, PARAMS)
        or _info(f"{where}.params.clientInfo", params.get("clientInfo"))
        or _meta(f"{where}.params", params)
    )


def _error_problem(msg: dict[str, Any], where: str) -> str | None:
    if "error" not in msg:
        return None
    error = msg["error"]
    if not isinstance(error, dict):
        return _wrong(f"{where}.error", error, _obj)
    return _fields(f"{where}.error", error, ERROR)


LISTED = ("tools", "prompts", "resources", "resourceTemplates")
"""The listings in a result whose items are checked against `NAMED`."""


def _result_problem(result: Any, where: str) -> str | None:
    if not isinstance(result, dict):
        return None
    problem = (
        _fields(f"{where}.result", result, RESULT)
        or _info(f"{where}.result.serverInfo", result.get("serverInfo"))
        or _meta(f"{where}.result", result)
    )
    if problem:
        return problem
    for listed in LISTED:
        for i, item in enumerate(result.get(listed) or ()):
            if problem := _fields(f"{where}.result.{listed}/{i}", item, NAMED):
                return problem
    return None


def _meta(where: str, body: dict[str, Any]) -> str | None:
    meta = body.get("_meta")
    if not isinstance(meta, dict):
        return None
    problem = _fields(f"{where}._meta", meta, META)
    if problem:
        return problem
    return _info(f"{where}._meta.{META_SERVER_INFO}", meta.get(META_SERVER_INFO)) or _info(
        f"{where}._meta.{META_CLIENT_INFO}", meta.get(META_CLIENT_INFO)
    )


def _info(where: str, value: Any) -> str | None:
    return _fields(where, value, INFO_FIELDS) if isinstance(value, dict) else None


def _fields(
    where: str, obj: dict[str, Any], checks: dict[str, Check], *, null: bool = True
) -> str | None:
    """The first of `checks` that `obj` fails (a missing member passes; null too, with `null`)."""
    for name, value in obj.items():
        check = checks.get(name)
        if (
            check is not None
            and not check(value)
            and (value is not None or not (null or name in NULLABLE))
        ):
            return _wrong(f"{where}.{name}", value, check)
    return None


def _wrong(where: str, value: Any, check: Check) -> str:
    return f"{where} is {_kind(value)}; expected {WANT[check]}"


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _show(value: Any) -> str:
    return repr(value) if isinstance(value, str) else _kind(value)


# -- the fast path ---------------------------------------------------------------------------
# Most lines are plain: a message event whose members all have the expected exact types (the
# parser makes only exact dict, list, str, int, float, bool and None). `_plainly_valid` says so
# with type() tests and no string building; anything it is not sure of (a batch, a listing,
# an unknown shape) goes to the checks above, which say what is wrong. Same verdicts, faster:
# this runs once per cassette line on every read.

_NONE = type(None)
Types = frozenset[type]
_STR: Types = frozenset((str,))
_INT: Types = frozenset((int,))
_ID_TYPES: Types = frozenset((str, int, float, _NONE))
_OBJ: Types = frozenset((dict,))
_NULL_OK = {k: v | {_NONE} for k, v in (("str", _STR), ("int", _INT), ("obj", _OBJ))}
_PLAIN_EVENT = frozenset(("seq", "t", "kind", "from", "msg", "http"))
_KIND_OF: dict[str, Kind] = {k.value: k for k in Kind}
_SOURCE_OF: dict[str, Source] = {s.value: s for s in Source}
_PLAIN_HTTP: dict[str, frozenset[type]] = {
    "exchange": _NULL_OK["int"], "session": _NULL_OK["str"], "method": _STR, "path": _STR,
    "status": _INT, "content_type": _STR, "phase": _STR, "stream": _STR,
}  # fmt: skip
_PLAIN_PARAMS: dict[str, frozenset[type]] = {
    "protocolVersion": _NULL_OK["str"], "capabilities": _NULL_OK["obj"], "name": _NULL_OK["str"],
    "arguments": _NULL_OK["obj"], "uri": _NULL_OK["str"], "cursor": _NULL_OK["str"], "requestId": _ID_TYPES,
    "level": _NULL_OK["str"],
}  # fmt: skip
_PLAIN_RESULT: dict[str, frozenset[type]] = {
    "protocolVersion": _NULL_OK["str"], "capabilities": _NULL_OK["obj"], "instructions": _NULL_OK["str"],
    "content": frozenset[type]((dict, list, _NONE)), "structuredContent": _NULL_OK["obj"],
    "isError": frozenset[type]((bool, _NONE)), "nextCursor": _NULL_OK["str"], "resultType": _NULL_OK["str"],
}  # fmt: skip
_PLAIN_META: dict[str, frozenset[type]] = {
    META_PROTOCOL_VERSION: _NULL_OK["str"], META_CLIENT_CAPABILITIES: _NULL_OK["obj"],
    META_LOG_LEVEL: _NULL_OK["str"], "progressToken": _ID_TYPES,
}  # fmt: skip
_INFOS = frozenset(("clientInfo", "serverInfo", META_CLIENT_INFO, META_SERVER_INFO))
_SLOW_BODY = frozenset(RESULT) | frozenset(PARAMS)
"""Members the fast path leaves to the full checks when it does not know them itself."""


def plain_event(obj: dict[str, Any]) -> Event | None:
    """The line's `Event` when the line is certainly well-formed, else None ("ask the full
    checks", then `Event.from_json`). Checking and building in one go: the fields are read
    once, and a plain line has none of the rarer ones (cheaper than checking, then building)."""
    get = obj.get
    seq = get("seq")
    if type(seq) is not int or not obj.keys() <= _PLAIN_EVENT:
        return None
    t = get("t", 0.0)
    if type(t) is not float:
        if type(t) is not int:
            return None
        t = float(t)
    kind = get("kind")
    if type(kind) is not str or (kind := _KIND_OF.get(kind)) is None:
        return None
    src = get("from")
    if src is not None and (type(src) is not str or (src := _SOURCE_OF.get(src)) is None):
        return None
    http = get("http")
    if http is not None and not _plain_http(http):
        return None
    msg = get("msg")
    if kind is Kind.MESSAGE and not _plain_message(msg):
        return None
    return Event(seq, t, kind, src, msg, None, None, None, http)


def _plainly_valid(obj: dict[str, Any]) -> bool:
    """True when the line is certainly well-formed; False means "ask the full checks"."""
    return plain_event(obj) is not None


def _plain_http(http: Any) -> bool:
    if type(http) is not dict:
        return False
    for name, value in http.items():
        allowed = _PLAIN_HTTP.get(name)
        if allowed is not None:
            if type(value) not in allowed:
                return False
        elif name == "headers":
            if type(value) is not dict or not all(type(v) is str for v in value.values()):
                return False
        elif name == "sse":
            return False
    return True


def _plain_message(msg: Any) -> bool:
    if type(msg) is not dict:
        return type(msg) is not list  # a batch: the full checks (anything else is not checked)
    for name, value in msg.items():
        if name == "id":
            if type(value) not in _ID_TYPES:
                return False
        elif name == "method":
            if type(value) is not str:
                return False
        elif name == "params":
            if type(value) is not dict or not _plain_body(value, _PLAIN_PARAMS):
                return False
        elif name == "result":
            if type(value) is dict and not _plain_body(value, _PLAIN_RESULT):
                return False
        elif name == "error":
            if type(value) is not dict:
                return False
            code, text = value.get("code"), value.get("message")
            if type(code) not in _NULL_OK["int"] or type(text) not in _NULL_OK["str"]:
                return False
    return True


def _plain_body(body: dict[str, Any], types: dict[str, frozenset[type]]) -> bool:
    for name, value in body.items():
        allowed = types.get(name)
        if allowed is not None:
            if type(value) not in allowed:
                return False
        elif name == "_meta":
            if value is not None and (type(value) is not dict or not _plain_meta(value)):
                return False
        elif name in _INFOS:
            if value is not None and (type(value) is not dict or not _plain_info(value)):
                return False
        elif name in _SLOW_BODY:
            return False
    return True


def _plain_meta(meta: dict[str, Any]) -> bool:
    for name, value in meta.items():
        allowed = _PLAIN_META.get(name)
        if allowed is not None:
            if type(value) not in allowed:
                return False
        elif (
            name in _INFOS
            and value is not None
            and (type(value) is not dict or not _plain_info(value))
        ):
            return False
    return True


def _plain_info(info: dict[str, Any]) -> bool:
    return all(type(info.get(k)) in _NULL_OK["str"] for k in INFO_FIELDS)
