"""Fuzzing with hypothesis (a bounded number of examples, for CI): the cassette reader, `mcptape
check`, the replay engine (matcher included) and the diff normalizer never crash on any input.
The framers (ndjson, SSE) are fuzzed in tests/wire."""

from __future__ import annotations

from typing import Any

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcptape.cassette import load, loads
from mcptape.cassette.model import Event, Kind, Source
from mcptape.check import check_bytes
from mcptape.diff.normalize import normalize_events
from mcptape.errors import CassetteError
from mcptape.replay.engine import Note, ReplayConfig, ReplayEngine, Send
from mcptape.replay.index import ReplayIndex
from tests.conftest import ROOT

from .helpers import GOLDEN, HEADER

FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

json_values = st.recursive(  # integers as orjson reads them from the wire: i64 and u64
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | st.sampled_from(["id", "method", "params", "result", "error", "_meta", "name", "uri", "progressToken", "status", "phase", "exchange", "headers", "path", "code"]), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip
METHODS = [
    "initialize", "ping", "server/discover", "tools/list", "tools/call", "prompts/get", "prompts/list", "resources/read",
    "resources/list", "logging/setLevel", "subscriptions/listen", "completion/complete", "elicitation/create",
    "notifications/initialized", "notifications/cancelled", "notifications/progress", "no/such",
]  # fmt: skip
ids = (
    st.integers(-3, 5)
    | st.sampled_from(["a", "1", ""])
    | st.none()
    | st.booleans()
    | st.floats(allow_nan=False)
    | json_values
)


@st.composite
def client_messages(draw: Any) -> Any:
    """Values near JSON-RPC (a real method, odd ids and params), or any JSON at all."""
    shape = draw(st.sampled_from(["request", "notification", "answer", "error", "any", "batch"]))
    if shape == "any":
        return draw(json_values)
    if shape == "batch":
        return draw(st.lists(client_messages(), max_size=3))
    msg: dict[str, Any] = {"jsonrpc": draw(st.sampled_from(["2.0", "2.0", "2.0", "1.0"]))}
    if shape in ("request", "notification"):
        msg["method"] = draw(st.sampled_from(METHODS))
        params = draw(
            json_values
            | st.fixed_dictionaries({"name": st.sampled_from(["add", "greet", "fail", "x"]), "arguments": json_values})
            | st.fixed_dictionaries({"_meta": st.fixed_dictionaries({"progressToken": ids}), "requestId": ids, "uri": st.text(max_size=12)})
        )  # fmt: skip
        if draw(st.booleans()):
            msg["params"] = params
    if shape != "notification":
        msg["id"] = draw(ids)
    if shape == "answer":
        msg["result"] = draw(json_values)
    if shape == "error":
        msg["error"] = draw(json_values)
    return msg


# -- the cassette reader and `mcptape check` ------------------------------------------------


@FUZZ
@given(st.binary(max_size=400))
def test_any_bytes_read_as_a_cassette_or_a_cassette_error(data: bytes) -> None:
    for payload in (data, orjson.dumps(HEADER) + b"\n" + data):
        try:
            loads(payload)
        except CassetteError:
            pass
        check_bytes(payload)


event_dicts = st.dictionaries(
    st.sampled_from(
        ["seq", "t", "kind", "from", "msg", "text", "b64", "size", "http", "info", "redacted"]
    ),
    json_values
    | st.sampled_from(
        ["message", "raw", "stderr", "exit", "eof", "http", "end", "client", "server"]
    ),
    max_size=8,
)
headers = st.fixed_dictionaries({"mcptape_cassette": st.integers(-1, 3) | json_values}, optional={
    "transport": st.sampled_from(["stdio", "streamable-http", "sse", "memory", "carrier pigeon"]) | json_values,
    "target": json_values, "redaction": json_values, "recorded_at": json_values, "mcptape_version": json_values,
})  # fmt: skip


@FUZZ
@given(headers, st.lists(event_dicts | json_values, max_size=8), st.booleans())
def test_any_json_lines_read_as_a_cassette_or_a_cassette_error(
    header: dict[str, Any], lines: list[Any], newline: bool
) -> None:
    data = b"\n".join(orjson.dumps(x) for x in [header, *lines]) + (b"\n" if newline else b"")
    try:
        cas = loads(data)
    except CassetteError as exc:
        assert "\n" not in str(exc)
    else:
        assert all(isinstance(e, Event) for e in cas.events)
    check_bytes(data)


GOLDEN_BYTES = [p.read_bytes() for p in GOLDEN[:4]]


@FUZZ
@given(
    st.sampled_from(range(len(GOLDEN_BYTES))),
    st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.sampled_from(["cut", "flip", "insert", "delete"]),
            st.binary(min_size=1, max_size=3),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_damaged_golden_cassette_reads_or_fails_with_one_line(
    which: int, edits: list[tuple[int, str, bytes]]
) -> None:
    data = bytearray(GOLDEN_BYTES[which])
    for pos, op, blob in edits:
        at = pos % max(1, len(data))
        if op == "cut":
            del data[at:]
        elif op == "flip":
            data[at : at + len(blob)] = blob
        elif op == "insert":
            data[at:at] = blob
        else:
            del data[at : at + len(blob)]
    try:
        loads(bytes(data), name="x.jsonl")
    except CassetteError as exc:
        assert str(exc).startswith("x.jsonl") and "\n" not in str(exc)
    check_bytes(bytes(data))


# -- the replay engine and its matcher ------------------------------------------------------

INDEXES = {name: ReplayIndex(load(ROOT / "cassettes" / name), ReplayConfig().match) for name in (
    "python-sdk/2025-11-25/stdio.jsonl", "python-sdk/2026-07-28/stdio.jsonl", "python-sdk/2025-11-25/streamable-http.jsonl",
    "everything/2025-11-25/stdio.jsonl",
)}  # fmt: skip


@FUZZ
@given(st.sampled_from(sorted(INDEXES)), st.lists(client_messages(), max_size=10), st.booleans())
def test_the_engine_answers_any_client_values_without_crashing(
    name: str, values: list[Any], repeats: bool
) -> None:
    index = INDEXES[name]
    engine = ReplayEngine(index, ReplayConfig(index.policy, allow_repeats=repeats))
    for value in values:
        for out in engine.receive(value):
            assert isinstance(out, (Send, Note))
            if isinstance(out, Send):
                orjson.dumps(out.msg)  # whatever it sends is JSON


@FUZZ
@given(
    st.sampled_from(sorted(INDEXES)),
    st.lists(st.binary(max_size=60) | client_messages().map(orjson.dumps), max_size=8),
)
def test_the_engine_answers_any_client_bytes_without_crashing(
    name: str, payloads: list[bytes]
) -> None:
    index = INDEXES[name]
    engine = ReplayEngine(index, ReplayConfig(index.policy))
    for payload in payloads:
        outputs = engine.receive_bytes(payload)
        assert all(isinstance(o, (Send, Note)) for o in outputs)


# -- the diff normalizer --------------------------------------------------------------------

http_meta = st.none() | st.fixed_dictionaries({}, optional={  # any metadata the cassette reader accepts
    "exchange": st.integers(-1, 4), "session": st.sampled_from(["s1", "s2", ""]),
    "legacy": st.booleans(), "phase": st.sampled_from(["request", "response", "sse", "end", "disconnect", "error"]),
    "status": st.integers(100, 599), "stream": st.sampled_from(["post", "get"]),
})  # fmt: skip


@st.composite
def events(draw: Any) -> list[Event]:
    out: list[Event] = []
    for seq in range(1, draw(st.integers(0, 12)) + 1):
        kind = draw(
            st.sampled_from(
                [Kind.MESSAGE] * 4 + [Kind.RAW, Kind.STDERR, Kind.EXIT, Kind.EOF, Kind.HTTP]
            )
        )
        src = draw(st.sampled_from([Source.CLIENT, Source.SERVER, None]))
        msg = draw(client_messages()) if kind is Kind.MESSAGE else None
        text = draw(st.text(max_size=8)) if kind in (Kind.RAW, Kind.STDERR) else None
        out.append(
            Event(
                seq,
                seq / 10,
                kind,
                src,
                msg=msg,
                text=text,
                http=draw(http_meta),
                info=draw(
                    st.none() | st.dictionaries(st.text(max_size=4), json_values, max_size=2)
                ),
            )
        )
    return out


@FUZZ
@given(events())
def test_the_normalizer_takes_any_events_without_crashing(evs: list[Event]) -> None:
    canonical = normalize_events(evs)
    assert canonical is not None


@FUZZ
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "seq": st.integers(1, 9),
                "kind": st.just("message"),
                "from": st.just("server"),
                "msg": st.just({"jsonrpc": "2.0", "method": "x"}),
            },
            optional={"http": json_values, "info": json_values},
        ),
        min_size=1,
        max_size=3,
    )
)
def test_metadata_of_the_wrong_shape_is_a_cassette_error_not_a_crash_later(
    lines: list[dict[str, Any]],
) -> None:
    data = b"\n".join(orjson.dumps(x) for x in [HEADER, *lines]) + b"\n"
    try:
        cas = loads(data)
    except CassetteError:
        return
    normalize_events(cas.events)  # what the reader accepts, pairing and the diff take
