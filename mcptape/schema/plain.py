"""Event lines the cassette schema certainly accepts, told by exact type tests.

`mcptape check` validates every line against the shipped JSON Schema
(`cassette-v1.schema.json`) with jsonschema, which is most of its time on a big cassette.
`plain(obj)` answers with exact type tests alone that a parsed event line of the usual shape meets
every constraint of the schema's `event` definition, so that only the other lines go to
jsonschema (which also words what is wrong with them). It says True only when it is sure:
False means "ask jsonschema", never "invalid" (a float `seq` of 1.0, which JSON Schema counts
as an integer, gets False here, and jsonschema accepts it). `tests/test_schema_plain.py` holds
it to the schema, on generated lines and on every golden cassette.
"""

from __future__ import annotations

from typing import Any

from . import cassette_schema

_EVENT = cassette_schema()["$defs"]["event"]["properties"]
_KINDS = frozenset(_EVENT["kind"]["enum"])
_SOURCES = frozenset(_EVENT["from"]["enum"])
_STREAMS = frozenset(_EVENT["http"]["properties"]["stream"]["enum"])
_PHASES = frozenset(_EVENT["http"]["properties"]["phase"]["enum"])
"""The schema's own enumerations (read from it, so that the two cannot drift apart)."""
_NEEDS_SOURCE = frozenset(("message", "raw", "stderr", "eof"))
_HTTP_STRINGS = ("method", "path")
_NULLABLE_STRINGS = ("content_type", "session")
_SSE_STRINGS = ("id", "event", "comment", "data")


def plain(obj: Any) -> bool:
    """True when `obj` (a parsed event line) is certainly valid against the schema's `event`."""
    if type(obj) is not dict or "mcptape_cassette" in obj:
        return False
    seq, t, kind = obj.get("seq"), obj.get("t"), obj.get("kind")
    if type(seq) is not int or seq < 1:
        return False
    if (type(t) is not float and type(t) is not int) or t < 0:
        return False
    if type(kind) is not str or kind not in _KINDS:
        return False
    if "from" in obj:
        src = obj["from"]
        if type(src) is not str or src not in _SOURCES:
            return False
    elif kind in _NEEDS_SOURCE:
        return False
    if kind == "message" and len(obj) == 5 and "msg" in obj:  # the usual line: nothing else
        return True
    return _rest(obj, kind)


def _rest(obj: dict[str, Any], kind: str) -> bool:
    """The optional members and what each kind requires of them."""
    for name in ("text", "b64"):
        if name in obj and type(obj[name]) is not str:
            return False
    if "size" in obj:
        size = obj["size"]
        if type(size) is not int or size < 0:
            return False
    if "info" in obj and (type(obj["info"]) is not dict or "session" in obj["info"]):
        return False  # (a session marker's members are the schema's to check)
    if "redacted" in obj:
        redacted = obj["redacted"]
        if type(redacted) is not list or any(type(p) is not str for p in redacted):
            return False
    if not _kind_needs(obj, kind):
        return False
    if "http" in obj:
        return _http(obj["http"])
    return kind != "http"


def _kind_needs(obj: dict[str, Any], kind: str) -> bool:
    """The members a kind requires: a message its `msg`, raw and stderr their bytes in one
    form, an exit its `info` with a `code`."""
    if kind == "message":
        return "msg" in obj
    if kind in ("raw", "stderr"):
        return ("text" in obj) != ("b64" in obj)
    if kind == "exit":
        return "info" in obj and "code" in obj["info"]
    return True


def _http(http: Any) -> bool:
    """The HTTP hints: their types and ranges, the schema's enumerations, headers, SSE fields."""
    if type(http) is not dict or not _http_scalars(http):
        return False
    for name, allowed in (("stream", _STREAMS), ("phase", _PHASES)):
        if name in http:
            value = http[name]
            if type(value) is not str or value not in allowed:
                return False
    if "headers" in http:
        headers = http["headers"]
        if type(headers) is not dict or any(type(v) is not str for v in headers.values()):
            return False
    return "sse" not in http or _sse(http["sse"])


def _http_scalars(http: dict[str, Any]) -> bool:
    """The strings, numbers and flag among the HTTP hints: their types, and `exchange` positive."""
    for name in _HTTP_STRINGS:
        if name in http and type(http[name]) is not str:
            return False
    for name in _NULLABLE_STRINGS:
        if name in http and http[name] is not None and type(http[name]) is not str:
            return False
    if "status" in http and type(http["status"]) is not int:
        return False
    if "exchange" in http:
        exchange = http["exchange"]
        if type(exchange) is not int or exchange < 1:
            return False
    return "legacy" not in http or type(http["legacy"]) is bool


def _sse(sse: Any) -> bool:
    if type(sse) is not dict:
        return False
    for name in _SSE_STRINGS:
        if name in sse and type(sse[name]) is not str:
            return False
    return "retry" not in sse or type(sse["retry"]) is int
