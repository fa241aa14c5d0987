"""One format package: the JSON Schema says what a cassette line holds, one codec writes and reads it.

- The schema (`mcptape/schema/cassette-v1.schema.json`) is the source of truth: the model's enums,
  the reader's checks (`mcptape.cassette.shape`) and their fast path (`mcptape.cassette.plain`,
  `check`'s too) enumerate what it enumerates, so none of them changes without the others.
- `mcptape.cassette.codec` writes the lines every writer wrote before it existed: the recorder's
  spliced message line is the event's line, with the payload's own bytes.
- No module outside the codec encodes or decodes JSON itself, but those that handle another format
  (`OTHER_FORMATS`, each with why) and those not yet moved onto the codec (`NOT_YET`, which only
  shrinks).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load, loads
from mcptape.cassette import plain as cassette_plain
from mcptape.cassette import shape as cassette_shape
from mcptape.cassette.codec import (
    RUN_FIELD,
    SESSION,
    decode_line,
    event_head,
    event_line,
    header_fields,
    header_line,
    message_line,
    renumbered,
    session_marks,
    session_run,
    with_session,
)
from mcptape.cassette.model import (
    FORMAT_VERSION,
    HEADER_MARKER,
    Event,
    Header,
    Kind,
    Source,
    Transport,
)
from mcptape.errors import CassetteError
from mcptape.schema import cassette_schema

SCHEMA = cassette_schema()
HEADER = SCHEMA["$defs"]["header"]
EVENT = SCHEMA["$defs"]["event"]
EVENT_FIELDS = EVENT["properties"]
HTTP_FIELDS = EVENT_FIELDS["http"]["properties"]


def _enum(definition: dict[str, Any]) -> frozenset[str]:
    return frozenset(definition["enum"])


# -- the schema is the source of truth ---------------------------------------------------------


def test_the_models_enums_are_the_schemas() -> None:
    assert {k.value for k in Kind} == _enum(EVENT_FIELDS["kind"])
    assert {s.value for s in Source} == _enum(EVENT_FIELDS["from"])
    assert {t.value for t in Transport} == _enum(HEADER["properties"]["transport"])
    assert HEADER["properties"][HEADER_MARKER]["const"] == FORMAT_VERSION
    assert HEADER_MARKER in HEADER["required"]


def test_the_readers_checks_know_what_the_schema_names() -> None:
    assert _enum(EVENT_FIELDS["kind"]) == cassette_shape.KINDS
    assert _enum(EVENT_FIELDS["from"]) == cassette_shape.SOURCES
    assert _enum(HEADER["properties"]["transport"]) == cassette_shape.TRANSPORTS
    assert set(cassette_shape.ENVELOPE) <= set(EVENT_FIELDS)
    assert set(cassette_shape.HTTP) <= set(HTTP_FIELDS)
    assert set(cassette_shape.SSE) == set(HTTP_FIELDS["sse"]["properties"])


def _kinds_requiring(member: str) -> frozenset[str]:
    """The kinds the schema's `allOf` rules require `member` of."""
    out: set[str] = set()
    for rule in EVENT["allOf"]:
        if member in rule["then"].get("required", ()):
            kind = rule["if"]["properties"]["kind"]
            out.update(kind["enum"] if "enum" in kind else [kind["const"]])
    return frozenset(out)


def test_the_fast_path_enumerates_what_the_schema_does() -> None:
    assert _enum(EVENT_FIELDS["kind"]) == set(cassette_plain._KIND_OF)
    assert _enum(EVENT_FIELDS["from"]) == set(cassette_plain._SOURCE_OF)
    assert _enum(HTTP_FIELDS["stream"]) == cassette_plain.STREAMS
    assert _enum(HTTP_FIELDS["phase"]) == cassette_plain.PHASES
    needs = cassette_plain._NEEDS
    for member in ("from", "msg", "http"):
        assert _kinds_requiring(member) == {k.value for k, need in needs.items() if member in need}
    assert set(cassette_shape.SESSION) == set(
        EVENT_FIELDS["info"]["properties"][SESSION]["properties"]
    )


def test_the_session_mark_is_the_schemas() -> None:
    mark = EVENT_FIELDS["info"]["properties"][SESSION]
    assert RUN_FIELD in mark["properties"] and RUN_FIELD in HEADER["properties"]
    assert mark["required"] == ["recorded_at"]  # (`with_session` writes it first)


def test_a_transport_the_schema_does_not_name_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "odd.jsonl"
    head = {HEADER_MARKER: 1, "mcptape_version": "0", "transport": "memory", "target": {},
            "recorded_at": "", "redaction": {}}  # fmt: skip
    path.write_bytes(orjson.dumps(head) + b"\n")
    with pytest.raises(CassetteError) as err:
        load(path)
    assert str(err.value) == (
        f"{path}:1: malformed header: transport is 'memory'; "
        "expected one of sse, stdio, streamable-http"
    )


# -- the codec ------------------------------------------------------------------------------------

HEAD = Header(Transport.STDIO, {"command": ["srv"]}, "2026-01-01T00:00:00.000Z", "1.0", {})


def test_a_header_line_reads_back_as_its_header() -> None:
    line = header_line(HEAD)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    fields = header_fields(line)
    assert fields is not None and Header.from_json(fields) == HEAD
    assert header_line(fields) == line
    assert header_fields(b'{"seq":1}') is None and header_fields(b"{not json") is None


@pytest.mark.parametrize("http", [None, {"exchange": 2, "phase": "response"}])
def test_a_spliced_message_line_is_the_events_line(http: dict[str, Any] | None) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"result":{"n":[1,2]}}'
    line = message_line(3, 0.1234567891, Source.SERVER, body, orjson.loads(body), http)
    event = Event(3, 0.1234567891, Kind.MESSAGE, Source.SERVER, msg=orjson.loads(body), http=http)
    assert line == event_line(event)


def test_a_spliced_message_keeps_the_wire_bytes() -> None:
    body = b'  {"id": 1, "result": {"x": 2.50, "s": "\\u00e9"}}\n'
    line = message_line(1, 0.5, Source.CLIENT, body, orjson.loads(body), None)
    assert (
        line == b'{"seq":1,"t":0.5,"kind":"message","from":"client","msg":' + body.strip() + b"}\n"
    )
    cassette = loads(header_line(HEAD) + line)
    assert cassette.events[0].msg == {"id": 1, "result": {"x": 2.5, "s": "\u00e9"}}


def test_a_message_spread_over_lines_is_written_on_one() -> None:
    body = b'{\n  "id": 1,\r\n  "result": {}\n}'
    line = message_line(1, 0.5, Source.SERVER, body, orjson.loads(body), {"exchange": 1})
    assert line.count(b"\n") == 1 and b"\r" not in line
    assert decode_line(line)["msg"] == {"id": 1, "result": {}}


def test_renumbering_keeps_the_rest_of_the_line() -> None:
    line = event_line(Event(4, 1.25, Kind.MESSAGE, Source.CLIENT, msg={"a": 1})).rstrip(b"\n")
    assert event_head(line) == (4, 1.25)
    assert renumbered(line, 9) == line.replace(b'"seq":4', b'"seq":9')
    assert renumbered(line, 9, 2.0000004) == line.replace(b'{"seq":4,"t":1.25', b'{"seq":9,"t":2.0')
    assert renumbered(b'{"t":1,"seq":4}', 9) is None and event_head(b'{"t":1,"seq":4}') is None


@pytest.mark.parametrize(
    "event",
    [
        Event(1, 0.5, Kind.MESSAGE, Source.CLIENT, msg={"a": 1}, redacted=("/a",)),
        Event(1, 0.5, Kind.EOF, Source.CLIENT, info={"why": "closed"}),
        Event(1, 0.5, Kind.STDERR, Source.SERVER, text="hi"),
    ],
)
def test_a_session_mark_is_added_to_a_line(event: Event) -> None:
    line = event_line(event).rstrip(b"\n")
    marker = {"recorded_at": "2026-01-02T00:00:00.000Z", RUN_FIELD: "r2"}
    marked = with_session(line, marker)
    assert Event.from_json(decode_line(marked)) == event._replace(
        info={**(event.info or {}), SESSION: marker}
    )
    assert session_run(marked) == "r2" and session_run(line) is None
    assert session_marks(header_line(HEAD) + marked + b"\n" + line) == 1


# -- nobody else builds or parses a line ------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1] / "mcptape"
CODEC = "mcptape.cassette.codec"
CODING = {"orjson": {"dumps", "loads"}, "json": {"dumps", "loads", "dump", "load"}}
"""The calls that encode or decode JSON."""

OTHER_FORMATS: dict[str, str] = {
    "mcptape.wire": "JSON-RPC payloads on the wire (the recorder hands the codec what it parsed)",
    "mcptape.keys": "the matching key: canonical JSON of a request",
    "mcptape.replay.index": "the matching key of a request the index holds",
    "mcptape.check.pairing": "request ids as JSON, as keys of a dict",
    "mcptape.replay.encoded": "the answers a replay sends, with their ids spliced in",
    "mcptape.replay.outputs": "the answers a replay sends",
    "mcptape.replay.http": "the answers and errors the HTTP replay sends",
    "mcptape.replay.report": "replay reports (`--report`), read back from a run's log",
    "mcptape.replay.server_stdio": "replay reports (`--report`), one JSON line each",
    "mcptape.replay.fault_rules": "fault rule files",
    "mcptape.replay.cache.reading": "the replay index file, a layout of its own",
    "mcptape.replay.cache.writing": "writes the replay index file (`reading` reads it)",
    "mcptape.replay.matcher": "values quoted in a mismatch's message",
    "mcptape.capture.importer": "HAR captures",
    "mcptape.views": "the timeline and page a view renders",
    "mcptape.cli.show": "`show --format json`, a document of its own",
    "mcptape.cli.stub": "the mock file `stub` prints",
    "mcptape.mocks": "mock files, declared answers and the calls' journal",
    "mcptape.diff.report": "the diff report (`--format json`) and values it quotes",
    "mcptape.maintenance.agents": "agent hosts' configuration files",
    "mcptape.schema": "the schema file itself",
    "mcptape.api": "a cassette name quoted in an error",
    "mcptape.tape": "a fault rule on a command line, and values quoted in messages",
    "mcptape.proc.names": "a name template quoted in an error",
}
"""Modules (or packages) that encode or decode JSON that is not a cassette line, and what."""

NOT_YET: dict[str, str] = {}
"""Modules that still decode cassette lines themselves: to move onto `codec.decode_line`. Must only
shrink."""


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _codes_json(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            names = {node.attr} & CODING.get(node.value.id, set())
        elif isinstance(node, ast.ImportFrom) and node.module in CODING:
            names = {alias.name for alias in node.names} & CODING[node.module]
        else:
            continue
        if names:
            return True
    return False


CODERS = {_module(path) for path in ROOT.rglob("*.py") if _codes_json(ast.parse(path.read_text()))}


def _listed(module: str) -> str | None:
    for entry in (*OTHER_FORMATS, *NOT_YET):
        if module == entry or module.startswith(entry + "."):
            return entry
    return None


def test_only_the_codec_encodes_or_decodes_a_cassette_line() -> None:
    strays = sorted(m for m in CODERS if m != CODEC and _listed(m) is None)
    assert not strays, (
        f"{', '.join(strays)} encode or decode JSON themselves: write and read cassette lines "
        "through mcptape.cassette.codec (or list the module in OTHER_FORMATS with what it codes)"
    )


def test_every_listed_module_still_codes_json() -> None:
    used = {_listed(m) for m in CODERS}
    stale = sorted((set(OTHER_FORMATS) | set(NOT_YET)) - used)
    assert not stale, f"{', '.join(stale)} no longer code JSON: drop them from the lists"
