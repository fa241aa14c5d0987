"""The readers' checks (`mcptape.cassette.shape`) and `mcptape check`'s schema validation give
the same verdict on a cassette line: lines near the schema's boundary (each kind, valid, and
with members of the wrong type, missing, unknown, out of range) are accepted by the readers
exactly when jsonschema accepts them against the shipped schema, but for the differences listed
here (`READER_SCHEMA`'s edits, `reader_only`), each with its reason. The fast path
(`plain_event`) never accepts a line the full checks reject."""

from __future__ import annotations

import binascii
import copy
import itertools
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcptape.cassette.shape import (
    INFO,
    _event_problem,
    event_problem,
    header_problem,
    message_problem,
    plain_event,
)
from mcptape.check.format import schema_validators
from mcptape.check.report import Report
from mcptape.schema import cassette_schema

from .reliability.test_mutations import mutated

SCHEMA = cassette_schema()


def _or_null(properties: dict[str, Any], names: Iterable[str]) -> None:
    for name in names:
        properties[name] = {"anyOf": [{"type": "null"}, properties[name]]}


def _reader_schema() -> dict[str, Any]:
    """The shipped schema with the readers' deliberate leniencies, each with its reason:
    - a null optional member is read as an absent one, as the readers always have (a
      hand-edited line; older recorders wrote null HTTP hints);
    - `seq` may be any integer (the schema: 1 or more): a hand-edited cassette's numbers are
      told as they are (`tests/test_outline.py`), `check` says they are out of range;
    - a member the schema requires but a reader can default is not required: `t` (0), `from`,
      a message's `msg`, an exit's `info`, exactly one of `text` and `b64` on raw and stderr
      lines, the http hints of an `http` event, the header's members (`mcptape check` says
      what is missing; `load` reads what is there, as it always has)."""
    schema = copy.deepcopy(SCHEMA)
    event, header = schema["$defs"]["event"], schema["$defs"]["header"]
    props = event["properties"]
    del props["seq"]["minimum"]
    _or_null(props, set(props) - {"seq", "t", "kind"})
    _or_null(props["http"]["anyOf"][1]["properties"], ["exchange"])
    _or_null(props["info"]["anyOf"][1]["properties"], ["session"])
    event["required"] = ["seq", "kind"]
    del event["allOf"]
    _or_null(header["properties"], ["mcptape_version", "target", "recorded_at", "redaction", "run"])
    header["required"] = ["mcptape_cassette"]
    return schema


READER_SCHEMA = _reader_schema()
VALIDATORS = schema_validators(Report())
assert VALIDATORS is not None  # (jsonschema is installed with the test dependencies)
EVENT = VALIDATORS["event"]
"""`mcptape check`'s own validator of an event line."""


def _validator(schema: dict[str, Any], part: str) -> Any:
    return type(EVENT)({"$defs": schema["$defs"], "$ref": f"#/$defs/{part}"})


READER_EVENT = _validator(READER_SCHEMA, "event")
READER_HEADER = _validator(READER_SCHEMA, "header")


def reader_only(obj: dict[str, Any]) -> str | None:
    """What the readers check beyond the schema (None: nothing of it is wrong):
    - `msg`'s JSON-RPC members and the MCP fields commands read (the schema leaves `msg` open:
      a cassette keeps the wire verbatim, and `check`'s protocol check judges messages);
    - that `b64` decodes (`contentEncoding` is an annotation in JSON Schema, not an assertion);
    - the types of the `info` members commands read (`code`, `signal`, ...)."""
    b64 = obj.get("b64")
    if isinstance(b64, str):
        try:
            binascii.a2b_base64(b64.encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError):
            return "b64"
    info = obj.get("info")
    if isinstance(info, dict):
        for name, check in INFO.items():
            if info.get(name) is not None and not check(info[name]):
                return f"info.{name}"
    if obj.get("kind") == "message" and message_problem(obj.get("msg")) is not None:
        return "msg"
    return None


ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.floats(-1.0, 2.0, allow_nan=False),
    st.sampled_from(["", "message", "client", "post", "sse", "x", "1", "/w==", "eA=="]),
    st.lists(st.sampled_from(["a", 1, None]), max_size=2),
    st.dictionaries(st.sampled_from(["code", "a", "recorded_at"]), st.integers(0, 1), max_size=2),
)
"""Values of every JSON type, the right and the wrong ones for each member."""


def _mostly(right: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A value near the boundary: three times in four one a member may hold, else any value."""
    return st.one_of(right, right, right, ODD)


SSE = st.dictionaries(
    st.sampled_from(["id", "event", "retry", "data", "comment", "other"]),
    st.one_of(ODD, st.sampled_from(["x", "message"])),
    max_size=3,
)
HEADERS = st.dictionaries(
    st.sampled_from(["content-type", "mcp-session-id"]),
    st.one_of(st.just("text/event-stream"), ODD),
    max_size=2,
)
HTTP_VALUES = {
    "method": st.sampled_from(["GET", "POST"]),
    "path": st.just("/mcp"),
    "status": st.sampled_from([200, 202, 404]),
    "headers": HEADERS,
    "content_type": st.sampled_from(["application/json", None]),
    "session": st.sampled_from(["abc", None]),
    "exchange": st.integers(-1, 3),
    "legacy": st.booleans(),
    "stream": st.sampled_from(["post", "get", "put"]),
    "phase": st.sampled_from(["request", "response", "sse", "end", "disconnect", "error", "x"]),
    "sse": SSE,
}


@st.composite
def http_hints(draw: st.DrawFn) -> dict[str, Any]:
    """HTTP hints: most members of a right value, some of any value, sometimes an unknown one."""
    names = draw(st.lists(st.sampled_from([*HTTP_VALUES, "other"]), max_size=5, unique=True))
    return {name: draw(_mostly(HTTP_VALUES.get(name, ODD))) for name in names}


SESSION = st.dictionaries(
    st.sampled_from(["recorded_at", "run", "target", "other"]),
    st.one_of(st.sampled_from(["2026-12-05T18:27:35.868Z", "3f1c"]), st.just({}), ODD),
    max_size=3,
)
INFO_VALUES = st.dictionaries(
    st.sampled_from(["code", "signal", "error", "note", "oversize", "session"]),
    st.one_of(st.integers(-9, 1), st.sampled_from(["SIGKILL", "x"]), SESSION, ODD),
    max_size=3,
)
MESSAGES = st.sampled_from(
    [
        {"jsonrpc": "2.0", "id": 1, "result": {}},
        {"jsonrpc": "2.0", "id": "a", "method": "tools/list", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "no"}},
        [{"jsonrpc": "2.0", "id": 1, "method": "ping"}],
        {"jsonrpc": "2.0", "id": True, "method": "ping"},
        {"jsonrpc": "2.0", "id": 1, "error": "no"},
        {"jsonrpc": "2.0", "id": 1, "method": "x", "params": [1]},
        "not a message",
    ]
)
MEMBER_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "seq": st.integers(-1, 3),
    "t": st.one_of(st.integers(-1, 2), st.floats(-1.0, 2.0, allow_nan=False)),
    "kind": st.sampled_from(["message", "raw", "stderr", "exit", "eof", "http", "end", "bogus"]),
    "from": st.sampled_from(["client", "server", "proxy"]),
    "msg": MESSAGES,
    "text": st.sampled_from(["", "not json"]),
    "b64": st.sampled_from(["/w==", "eA==", "not base64!", ""]),
    "size": st.integers(-1, 5000),
    "http": http_hints(),
    "info": INFO_VALUES,
    "redacted": st.lists(st.sampled_from(["", "/params/token", 1]), max_size=2),
    "mcptape_cassette": st.just(1),
    "extra": ODD,
}

BASES: dict[str, dict[str, Any]] = {
    "message": {"from": "server", "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}},
    "raw": {"from": "client", "text": "not json"},
    "stderr": {"from": "server", "b64": "/w=="},
    "exit": {"from": "server", "info": {"code": 0}},
    "eof": {"from": "client"},
    "http": {"http": {"phase": "response", "status": 200, "exchange": 1, "headers": {"a": "b"}}},
    "end": {},
}
"""A valid line of each kind, for the strategy to change in a few places."""


@st.composite
def event_lines(draw: st.DrawFn) -> dict[str, Any]:
    """A valid event line with up to three members set (to a right value or any value), and up
    to two removed."""
    kind = draw(st.sampled_from(sorted(BASES)))
    line: dict[str, Any] = {"seq": draw(st.integers(1, 5)), "t": 0.5, "kind": kind, **BASES[kind]}
    hints = draw(st.sampled_from(["", "http", "info"]))  # the members with the most inside
    if hints:
        line[hints] = draw(MEMBER_VALUES[hints])
    for name in draw(st.lists(st.sampled_from(sorted(MEMBER_VALUES)), max_size=3, unique=True)):
        line[name] = draw(_mostly(MEMBER_VALUES[name]))
    for gone in draw(st.lists(st.sampled_from(sorted(MEMBER_VALUES)), max_size=2)):
        line.pop(gone, None)
    return line


def _reader_accepts(obj: dict[str, Any]) -> bool:
    """The readers' verdict: what `load` does before `event_problem` (a line needs `seq` and
    `kind`), then `event_problem`."""
    if "kind" not in obj or "seq" not in obj:
        return False
    return event_problem(obj) is None


M = {"seq": 2, "t": 0.5, "kind": "message", "from": "server", "msg": {"id": 1, "result": {}}}
"""A valid message line, for the examples below."""


@settings(max_examples=3000, deadline=None)
@given(event_lines())
# each a disagreement the readers and the schema had, fixed on the side that was wrong:
@example({**M, "t": -0.5})  # the readers took a negative time
@example({"seq": 2, "t": 0.5, "kind": "raw", "from": "client", "text": "x", "size": -1})
@example({**M, "mcptape_cassette": 1})  # a header's marker on an event line
@example({**M, "http": {"exchange": 0}})  # exchanges count from 1
@example({**M, "http": {"legacy": "yes"}})  # the readers did not check legacy
@example({**M, "http": {"phase": "x"}})  # nor the phase's and stream's enumerations
@example({**M, "http": {"stream": "put"}})
@example({**M, "http": {"headers": {"accept": ["a", "b"]}}})  # the readers took lists of strings
@example({**M, "http": {"content_type": None}})  # the schema allows null; the readers did not
@example({**M, "info": {"session": "s"}})  # the readers did not check session marks
@example({**M, "info": {"session": {"run": "r"}}})
@example({**M, "info": {"session": {"recorded_at": 1}}})
@example({"seq": 1, "t": 0.5, "kind": "message", "from": "client", "http": None})  # (fast path)
@example({**M, "seq": 2.0})  # JSON Schema's integer took 2.0; readers and check want 2
@example({"seq": 2, "t": 0.5, "kind": "raw", "from": "client", "text": "x", "size": 1.0})
# the listed differences:
@example({**M, "seq": 0})  # any seq
@example({"seq": 2, "kind": "end"})  # t defaults to 0
@example({"seq": 2, "t": 0.5, "kind": "message", "msg": {}})  # `from` is missing
@example({**M, "from": None, "text": None, "http": {"exchange": None}})  # null is absent
@example({"seq": 2, "t": 0.5, "kind": "raw", "from": "client", "b64": "?"})  # b64 decodes
@example({**M, "msg": {"id": True}})  # the JSON-RPC members' types
@example({"seq": 2, "t": 0.5, "kind": "exit", "info": {"code": "1"}})  # info members' types
def test_the_readers_and_the_schema_agree_on_every_event_line(line: dict[str, Any]) -> None:
    reader = _reader_accepts(line)
    if plain_event(line) is not None:  # the fast path: certainly valid, for both
        assert _event_problem(line) is None, line
        assert not list(EVENT.iter_errors(line)), line
    want = not list(READER_EVENT.iter_errors(line)) and reader_only(line) is None
    assert reader == want, (line, event_problem(line) if "kind" in line and "seq" in line else "")
    if reader:  # and the listed differences only ever make the readers more lenient...
        assert reader_only(line) is None


HEADER_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "mcptape_version": st.just("0.1.0"),
    "transport": st.sampled_from(["stdio", "streamable-http", "sse", "grpc"]),
    "target": st.one_of(
        st.just({"command": ["python", "s.py"]}),
        st.just({"url": "http://x/mcp"}),
        st.dictionaries(st.sampled_from(["command", "url", "cwd"]), ODD, max_size=2),
    ),
    "recorded_at": st.just("2026-12-01T07:41:31.137Z"),
    "run": st.just("3f1c0a9b2e7d4c51"),
    "redaction": st.dictionaries(
        st.sampled_from(["enabled", "marker", "keys", "patterns", "other"]),
        st.one_of(st.booleans(), st.just("[REDACTED]"), st.just(["token"]), ODD),
        max_size=3,
    ),
    "extra": ODD,
}
HEADER_BASE: dict[str, Any] = {
    "mcptape_cassette": 1,
    "mcptape_version": "0.1.0",
    "transport": "stdio",
    "target": {"command": ["python", "server.py"]},
    "recorded_at": "2026-12-01T07:41:31.137Z",
    "redaction": {"enabled": True, "marker": "[REDACTED]", "keys": [], "patterns": []},
}


@st.composite
def header_lines(draw: st.DrawFn) -> dict[str, Any]:
    """A valid header (format 1: the version is `check_version`'s to judge) with up to three
    members set, and up to two removed."""
    line = dict(HEADER_BASE)
    for name in draw(st.lists(st.sampled_from(sorted(HEADER_VALUES)), max_size=3, unique=True)):
        line[name] = draw(_mostly(HEADER_VALUES[name]))
    for gone in draw(st.lists(st.sampled_from(sorted(HEADER_VALUES)), max_size=2)):
        line.pop(gone, None)
    return line


@settings(max_examples=1500, deadline=None)
@given(header_lines())
@example({**HEADER_BASE, "run": 1})  # the readers did not check `run`
@example({"mcptape_cassette": 1, "target": None})  # listed: the readers default what is missing
def test_the_readers_and_the_schema_agree_on_every_header(line: dict[str, Any]) -> None:
    reader = header_problem(line) is None
    want = not list(READER_HEADER.iter_errors(line))
    assert reader == want, (line, header_problem(line))


def test_the_generated_lines_are_near_the_boundary() -> None:
    """The properties above prove something only if many generated lines are valid, many not,
    and many take the fast path."""
    seen = {"valid": 0, "invalid": 0, "plain": 0}

    @settings(max_examples=600, deadline=None, database=None)
    @given(event_lines())
    def count(line: dict[str, Any]) -> None:
        seen["valid" if _reader_accepts(line) else "invalid"] += 1
        seen["plain"] += plain_event(line) is not None

    count()
    assert min(seen.values()) > 60, seen


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_the_readers_and_the_schema_agree_on_mutated_golden_lines(
    case: tuple[Path, int, bytes],
) -> None:
    """The same on every kind of line the recorders write, one value anywhere in it wrong."""
    _, lineno, raw = case
    try:
        line = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return  # (an integer beyond 64 bits): the reader calls the line corrupt first
    if not isinstance(line, dict):
        return  # not an object: the readers and the schema reject it alike, before these checks
    if lineno == 1:
        if line.get("mcptape_cassette") == 1:  # (another version is `check_version`'s)
            assert (header_problem(line) is None) == (not list(READER_HEADER.iter_errors(line)))
        return
    want = not list(READER_EVENT.iter_errors(line)) and reader_only(line) is None
    assert _reader_accepts(line) == want, line


VALID = {
    "from": "server",
    "msg": {"id": 1, "result": {}},
    "http": {"exchange": 1},
    "text": "x",
    "info": {"code": 0},
    "t": 0.5,
}
"""A right value of each member the fast path handles (and a kind needs)."""


def test_every_kind_with_its_members_absent_null_or_right_gets_one_verdict() -> None:
    """Exhaustively, where the fast path decides by a member's presence: each kind with each of
    `VALID`'s members absent, null or right, the fast path vouching only for valid lines."""
    absent = object()
    for kind in sorted(BASES):
        for values in itertools.product((absent, None, 0), repeat=len(VALID)):
            line: dict[str, Any] = {"seq": 1, "kind": kind}
            for (name, right), value in zip(VALID.items(), values, strict=True):
                if value is not absent:
                    line[name] = right if value == 0 else None
            reader = _reader_accepts(line)
            want = not list(READER_EVENT.iter_errors(line)) and reader_only(line) is None
            assert reader == want, line
            if plain_event(line) is not None:
                assert reader and not list(EVENT.iter_errors(line)), line
