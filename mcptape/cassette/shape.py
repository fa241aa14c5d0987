"""What each cassette line must hold, checked as the cassette is parsed (no I/O).

`event_problem(obj)` returns None for a well-formed event, else one short phrase saying
which field is wrong and what was expected ("http.status is a string; expected an
integer"). The reader (`mcptape.cassette`) adds the file and line. Beyond the envelope
(`seq`, `kind`, `http`, ...), the parts of a message that mcptape's commands read (the
JSON-RPC members, and the MCP fields `show`, `diff`, `check`, `serve` and `redact` look
into) are checked too, so that no command meets a wrong type later: a cassette is
rejected at load with its line, instead of failing deep inside a command.

The JSON Schema (`mcptape/schema/cassette-v1.schema.json`) is the source of truth for what a line
may hold, and these checks are the one validator that follows it: every reader uses them, and
`mcptape check` skips jsonschema for the lines their fast path (`mcptape.cassette.plain`) vouches
for. `tests/test_one_validator.py` holds them to jsonschema's verdict, but for the differences it
lists (the readers default a missing or null member; they check messages, base64 and `info`
further). Their enumerations are the model's enums, held equal to the schema's by
`tests/test_cassette_codec.py`.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable
from typing import Any

from mcptape.cassette.model import Kind, Source, Transport
from mcptape.cassette.plain import PHASES, STREAMS
from mcptape.cassette.plain import plain_event as plain_event  # (readers import it here)
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
    return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


def _strings(v: Any) -> bool:
    return isinstance(v, list) and all(isinstance(x, str) for x in v)


WANT: dict[Check, str] = {
    _int: "an integer", _num: "a number", _str: "a string", _obj: "an object", _list: "an array",
    _id: "a string, a number or null", _objects: "an array of objects", _headers: "an object of strings",
    _strings: "an array of strings", _bool: "a boolean", _container: "an object or an array", _object_map: "an object of objects",
}  # fmt: skip

HTTP: dict[str, Check] = {
    "exchange": _int, "session": _str, "method": _str, "path": _str, "status": _int, "headers": _headers,
    "content_type": _str, "phase": _str, "stream": _str, "sse": _obj, "legacy": _bool,
}  # fmt: skip
NULLABLE = frozenset(("exchange", "session", "content_type"))
"""HTTP hints that may be null (older recorders wrote them so)."""
SSE: dict[str, Check] = {"id": _str, "event": _str, "retry": _int, "data": _str, "comment": _str}
INFO: dict[str, Check] = {"code": _int, "signal": _str, "error": _str, "note": _str}
SESSION: dict[str, Check] = {"recorded_at": _str, "run": _str, "target": _obj}
"""The members of a session mark (`info.session`)."""

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
    "run": _str,
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
    if plain_event(obj) is not None:
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
    seq = obj.get("seq")
    if not _int(seq):  # (any integer: a hand-edited cassette's seq is told as it is)
        return _wrong("seq", seq, _int)
    if "t" in obj and (not _num(obj["t"]) or obj["t"] < 0):
        return (
            _wrong("t", obj["t"], _num)
            if not _num(obj["t"])
            else f"t is {obj['t']}; expected 0 or more"
        )
    kind = obj.get("kind")
    if not isinstance(kind, str) or kind not in KINDS:
        return f"kind is {_show(kind)}; expected one of {', '.join(sorted(KINDS))}"
    src = obj.get("from")
    if src is not None and (not isinstance(src, str) or src not in SOURCES):
        return f"from is {_show(src)}; expected client or server"
    if "mcptape_cassette" in obj:
        return "a header on an event line ('mcptape_cassette' is line 1's)"
    return None


def _members_problem(obj: dict[str, Any]) -> str | None:
    """The optional members of `ENVELOPE` (their types), and `b64` (that it decodes)."""
    for name, value in obj.items():
        check = ENVELOPE.get(name)
        if check is not None and value is not None and not check(value):
            return _wrong(name, value, check)
    size = obj.get("size")
    if size is not None and size < 0:
        return f"size is {size}; expected 0 or more"
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
    problem = _fields("http", http, HTTP, null=False) or (
        _fields("http.sse", sse, SSE, null=False) if isinstance(sse, dict) else None
    )
    if problem:
        return problem
    exchange = http.get("exchange")
    if exchange is not None and exchange < 1:
        return f"http.exchange is {exchange}; expected 1 or more"
    for name, allowed in (("phase", PHASES), ("stream", STREAMS)):
        if name in http and http[name] not in allowed:
            return (
                f"http.{name} is {_show(http[name])}; expected one of {', '.join(sorted(allowed))}"
            )
    return None


def _info_problem(info: dict[str, Any] | None) -> str | None:
    if info is None:
        return None
    session = info.get("session")
    if session is None:
        return _fields("info", info, INFO)
    if not isinstance(session, dict):
        return _wrong("info.session", session, _obj)
    if "recorded_at" not in session:
        return "info.session has no recorded_at; expected the session's start time"
    return _fields("info", info, INFO) or _fields("info.session", session, SESSION, null=False)


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
