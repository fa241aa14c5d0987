"""The one fast path of cassette validation: `plain_event(obj)` is the line's `Event` when the
line is certainly valid, else None ("ask the full checks").

Certainly valid means both: valid against the schema's `event` definition
(`mcptape/schema/cassette-v1.schema.json`, the source of truth), and passing the readers' checks
(`mcptape.cassette.shape`, the one validator that words what is wrong). So the readers (`load`,
`stream`, the first replay read) build most events here, and `mcptape check` validates with
jsonschema only the lines this does not vouch for.

Most lines are plain: a message event whose members all have the expected exact types (the
parser makes only exact dict, list, str, int, float, bool and None). This says so with type()
tests and no string building; anything it is not sure of (a batch, a listing, a session mark,
base64, an unknown shape) goes to the full checks, which say what is wrong. Same verdicts,
faster: this runs once per cassette line on every read. `tests/test_one_validator.py` holds it
to both the schema and the full checks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcptape.cassette.model import Event, Kind, Source
from mcptape.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)

PHASES = frozenset(("request", "response", "sse", "end", "disconnect", "error"))
STREAMS = frozenset(("post", "get"))
"""The schema's `http.phase` and `http.stream` (`tests/test_cassette_codec.py` holds them equal)."""

_NONE = type(None)
Types = frozenset[type]
_STR: Types = frozenset((str,))
_INT: Types = frozenset((int,))
_ID_TYPES: Types = frozenset((str, int, float, _NONE))
_OBJ: Types = frozenset((dict,))
_NULL_OK = {k: v | {_NONE} for k, v in (("str", _STR), ("int", _INT), ("obj", _OBJ))}
_PLAIN_MESSAGE = frozenset(("seq", "t", "kind", "from", "msg", "http"))
_PLAIN_EVENT = _PLAIN_MESSAGE | {"text", "info"}
_MISSING = object()
_MESSAGE = Kind.MESSAGE  # (a global is read faster than an enum's member)
_KIND_OF: dict[str, Kind] = {k.value: k for k in Kind}
_SOURCE_OF: dict[str, Source] = {s.value: s for s in Source}
_NEEDS: dict[Kind, frozenset[str]] = {
    Kind.MESSAGE: frozenset(("from", "msg")), Kind.RAW: frozenset(("from", "text")),
    Kind.STDERR: frozenset(("from", "text")), Kind.EXIT: frozenset(("info",)),
    Kind.EOF: frozenset(("from",)), Kind.HTTP: frozenset(("http",)), Kind.END: frozenset(),
}  # fmt: skip
"""The members each kind requires (the schema's `allOf`), in the forms this path knows."""
_PLAIN_HTTP: dict[str, frozenset[type]] = {
    "session": _NULL_OK["str"], "method": _STR, "path": _STR, "status": _INT,
    "content_type": _NULL_OK["str"], "legacy": frozenset((bool,)),
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
_ENUMS = {"phase": PHASES, "stream": STREAMS}
_SSE_STRINGS = frozenset(("id", "event", "data", "comment"))
_NAMED: dict[str, frozenset[type]] = {
    "name": _NULL_OK["str"], "uri": _NULL_OK["str"], "description": _NULL_OK["str"],
    "inputSchema": _NULL_OK["obj"], "outputSchema": _NULL_OK["obj"],
}  # fmt: skip
_INFO_TYPES: dict[str, type] = {"code": int, "signal": str, "error": str, "note": str}
_INFOS = frozenset(("clientInfo", "serverInfo", META_CLIENT_INFO, META_SERVER_INFO))
_INFO_FIELDS = ("name", "version", "title")
SLOW_BODY = frozenset((
    "protocolVersion", "clientInfo", "capabilities", "name", "arguments", "_meta", "uri", "cursor",
    "requestId", "level", "inputResponses", "serverInfo", "instructions", "tools", "prompts",
    "resources", "resourceTemplates", "contents", "content", "messages", "structuredContent",
    "isError", "nextCursor", "inputRequests", "supportedVersions", "resultType",
))  # fmt: skip
"""The members of params and results the full checks know (`shape.PARAMS`, `shape.RESULT`):
those this path does not know itself go to them."""


def plain_event(obj: dict[str, Any]) -> Event | None:
    """The line's `Event` when the line is certainly valid, else None ("ask the full checks",
    then `Event.from_json`). Checking and building in one go: the fields are read once, and a
    plain line has none of the rarer ones (cheaper than checking, then building)."""
    get = obj.get
    seq = get("seq")
    if type(seq) is not int or seq < 1:
        return None
    t = get("t")
    if type(t) is not float:
        if type(t) is not int:
            return None
        t = float(t)
    if t < 0:
        return None
    kind = get("kind")
    if type(kind) is not str or (kind := _KIND_OF.get(kind)) is None:
        return None
    src = get("from")
    if src is not None and (type(src) is not str or (src := _SOURCE_OF.get(src)) is None):
        return None
    if kind is not _MESSAGE:
        return _plain_other(obj, seq, t, kind, src)
    msg = get("msg", _MISSING)  # (the usual line: a message, and nothing rarer)
    if src is None or msg is _MISSING or not obj.keys() <= _PLAIN_MESSAGE:
        return None
    http = get("http")
    if http is None:
        if len(obj) != 5:  # (seq, t, kind, from and msg are there: this is a null `http`)
            return None
    elif not _plain_http(http):
        return None
    if not _plain_message(msg):
        return None
    return Event(seq, t, kind, src, msg, None, None, None, http)


def _plain_other(
    obj: dict[str, Any], seq: int, t: float, kind: Kind, src: Source | None
) -> Event | None:
    """`plain_event` of a line of another kind: the members the kind requires (`from` given),
    and the rarer members: `text` on raw and stderr lines, `info` with its usual members (an
    exit's `code`, a `signal`, an `error`, a `note`)."""
    if not obj.keys() <= _PLAIN_EVENT or not _NEEDS[kind] <= obj.keys():
        return None
    if "from" in obj and src is None:
        return None
    http, text, info = obj.get("http"), obj.get("text"), obj.get("info")
    if "http" in obj and not _plain_http(http):
        return None
    if "text" in obj and (type(text) is not str or kind not in (Kind.RAW, Kind.STDERR)):
        return None
    if "info" in obj:
        if type(info) is not dict or (kind is Kind.EXIT and "code" not in info):
            return None
        for name, value in info.items():
            if type(value) is not _INFO_TYPES.get(name):
                return None
    return Event(seq, t, kind, src, obj.get("msg"), text, None, None, http, info)


def _plain_http(http: Any) -> bool:
    if type(http) is not dict:
        return False
    for name, value in http.items():
        allowed = _PLAIN_HTTP.get(name)
        if allowed is not None:
            if type(value) not in allowed:
                return False
        elif name == "exchange":
            if type(value) is not int or value < 1:
                return False
        elif name in _ENUMS:
            if type(value) is not str or value not in _ENUMS[name]:
                return False
        elif name == "headers":
            if type(value) is not dict or not all(type(v) is str for v in value.values()):
                return False
        elif name == "sse" and not _plain_sse(value):
            return False
    return True


def _plain_sse(sse: Any) -> bool:
    """A server-sent event's fields: strings, and `retry` an integer."""
    if type(sse) is not dict:
        return False
    for name, value in sse.items():
        if name in _SSE_STRINGS:
            if type(value) is not str:
                return False
        elif name == "retry" and type(value) is not int:
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
    """Params or a result: the members of `types` by their types, those of `_BODY` by their
    checks (null is fine for them), any other the full checks know to them."""
    for name, value in body.items():
        allowed = types.get(name)
        if allowed is not None:
            if type(value) not in allowed:
                return False
        elif (check := _BODY.get(name)) is not None:
            if value is not None and not check(value):
                return False
        elif name in SLOW_BODY:
            return False
    return True


def _plain_map(value: Any) -> bool:
    return type(value) is dict and all(type(v) is dict for v in value.values())


def _plain_strings(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _plain_listing(items: Any, named: bool = True) -> bool:
    """A result's list of objects; for a listing (`tools`...), the types of each item's `NAMED`."""
    if type(items) is not list:
        return False
    for item in items:
        if type(item) is not dict:
            return False
        if named:
            for name, allowed in _NAMED.items():
                if name in item and type(item[name]) not in allowed:
                    return False
    return True


def _plain_objects(items: Any) -> bool:
    return _plain_listing(items, named=False)


def _plain_meta(meta: Any) -> bool:
    if type(meta) is not dict:
        return False
    for name, value in meta.items():
        allowed = _PLAIN_META.get(name)
        if allowed is not None:
            if type(value) not in allowed:
                return False
        elif name in _INFOS and value is not None and not _plain_info(value):
            return False
    return True


def _plain_info(info: Any) -> bool:
    return type(info) is dict and all(type(info.get(k)) in _NULL_OK["str"] for k in _INFO_FIELDS)


_BODY: dict[str, Callable[[Any], bool]] = {
    "_meta": _plain_meta, "inputRequests": _plain_map, "inputResponses": _plain_map,
    "supportedVersions": _plain_strings, "tools": _plain_listing, "prompts": _plain_listing,
    "resources": _plain_listing, "resourceTemplates": _plain_listing, "contents": _plain_objects,
    "messages": _plain_objects, "clientInfo": _plain_info, "serverInfo": _plain_info,
}  # fmt: skip
"""The members of params and results checked by more than their type (`shape.PARAMS`,
`shape.RESULT`, `shape.LISTED`, `shape.META`)."""
