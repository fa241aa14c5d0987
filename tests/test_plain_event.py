"""`mcptape.cassette.plain`, the one fast path of the readers and of `check`'s schema validation,
held to the schema itself: it never calls a line plain that `check`'s jsonschema validator
rejects, and it calls every golden cassette's lines plain (else `check` would gain nothing on
them). `tests/test_one_validator.py` holds it to the readers' full checks too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptape.cassette import plain as plain_module
from mcptape.cassette import shape
from mcptape.cassette.plain import plain_event
from mcptape.check.format import schema_validators
from mcptape.check.report import Report

ROOT = Path(__file__).resolve().parents[1]
VALIDATORS = schema_validators(Report())
assert VALIDATORS is not None  # (jsonschema is installed with the test dependencies)
EVENT = VALIDATORS["event"]


def plain(line: dict[str, Any]) -> bool:
    return plain_event(line) is not None


ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-2, 3),
    st.floats(-1.0, 2.0, allow_nan=False),
    st.sampled_from(["", "message", "client", "post", "sse", "x", "1"]),
    st.lists(st.sampled_from(["a", 1, None]), max_size=2),
    st.dictionaries(st.sampled_from(["code", "a"]), st.integers(0, 1), max_size=2),
)
"""Values of every JSON type, the right and the wrong ones for each member."""

HTTP = st.dictionaries(
    st.sampled_from(
        [
            "method",
            "path",
            "status",
            "headers",
            "content_type",
            "session",
            "exchange",
            "legacy",
            "stream",
            "phase",
            "sse",
            "other",
        ]
    ),
    st.one_of(
        ODD,
        st.dictionaries(st.sampled_from(["id", "retry", "data", "a"]), ODD, max_size=3),
        st.sampled_from(["get", "request", "disconnect"]),
    ),
    max_size=5,
)

BASES: dict[str, dict[str, Any]] = {
    "message": {"from": "server", "msg": {"jsonrpc": "2.0", "id": 1, "result": {}}},
    "raw": {"from": "client", "text": "not json"},
    "stderr": {"from": "server", "b64": "/w=="},
    "exit": {"info": {"code": 0}},
    "eof": {"from": "client"},
    "http": {"http": {"phase": "response", "status": 200, "exchange": 1, "headers": {"a": "b"}}},
    "end": {},
}
"""A valid line of each kind, for the strategy to break in a few places."""

MEMBERS = ["seq", "t", "kind", "from", "msg", "text", "b64", "size", "http", "info", "redacted",
           "mcptape_cassette", "extra"]  # fmt: skip


@st.composite
def lines(draw: st.DrawFn) -> dict[str, Any]:
    """A valid event line with up to three members replaced, added or removed."""
    kind = draw(st.sampled_from(sorted(BASES)))
    line: dict[str, Any] = {"seq": draw(st.integers(1, 5)), "t": 0.5, "kind": kind, **BASES[kind]}
    changed = draw(st.dictionaries(st.sampled_from(MEMBERS), st.one_of(ODD, HTTP), max_size=3))
    line.update(changed)
    for gone in draw(st.lists(st.sampled_from(MEMBERS), max_size=2)):
        line.pop(gone, None)
    return line


@settings(max_examples=2000, deadline=None)
@given(lines())
def test_a_plain_line_is_one_the_schema_accepts(line: dict[str, Any]) -> None:
    if plain(line):
        assert not list(EVENT.iter_errors(line)), line


def test_the_strategy_makes_plain_lines_and_broken_ones() -> None:
    """The property above proves something only if many generated lines are plain (and many not)."""
    seen = {True: 0, False: 0}

    @settings(max_examples=600, deadline=None, database=None)
    @given(lines())
    def count(line: dict[str, Any]) -> None:
        seen[plain(line)] += 1

    count()
    assert seen[True] > 60 and seen[False] > 60, seen


def test_the_usual_lines_are_plain_and_their_faults_are_not() -> None:
    message = {"seq": 3, "t": 0.25, "kind": "message", "from": "server", "msg": {"id": 1}}
    assert plain(message)
    assert plain({**message, "http": {"exchange": 2, "headers": {"a": "b"}, "session": None}})
    assert plain({"seq": 4, "t": 1, "kind": "exit", "info": {"code": 0}})
    assert plain({"seq": 5, "t": 1, "kind": "stderr", "from": "server", "text": "x"})
    for broken in (
        {**message, "seq": 0},
        {**message, "seq": True},
        {**message, "t": -1},
        {**message, "from": "proxy"},
        {k: v for k, v in message.items() if k != "msg"},
        {**message, "redacted": ["/a", 2]},
        {**message, "http": {"exchange": 0}},
        {**message, "http": {"headers": {"a": ["b"]}}},
        {"seq": 4, "t": 1, "kind": "exit", "info": {}},
        {"seq": 5, "t": 1, "kind": "stderr", "from": "server"},
        {"seq": 5, "t": 1, "kind": "stderr", "from": "server", "text": "x", "b64": "eA=="},
        {"seq": 6, "t": 1, "kind": "http"},
    ):
        assert not plain(broken), broken
        assert list(EVENT.iter_errors(broken)), broken


def test_every_golden_cassette_line_is_plain() -> None:
    lines = [
        line
        for path in sorted((ROOT / "cassettes").rglob("*.jsonl"))
        for line in path.read_bytes().splitlines()[1:]
        if line.strip()
    ]
    assert len(lines) > 500
    odd = [line[:120] for line in lines if not plain(orjson.loads(line))]
    assert odd == []


def test_the_fast_path_knows_the_members_the_full_checks_know() -> None:
    """A member of params or results the full checks know, and the fast path does not, sends
    the line to the full checks (`SLOW_BODY`): so the fast path never skips a check."""
    assert set(shape.PARAMS) | set(shape.RESULT) == plain_module.SLOW_BODY
    assert set(plain_module._BODY) <= plain_module.SLOW_BODY
    assert set(plain_module._NAMED) == set(shape.NAMED)
    assert plain_module._INFO_TYPES.keys() == shape.INFO.keys()
