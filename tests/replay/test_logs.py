"""Recorded logs reach a client only from the log level it asked for (RFC 5424 order), in both
eras, with one note per session when it asks for more than the recording holds; over HTTP too."""

from __future__ import annotations

from typing import Any

import anyio
import orjson
import pytest

from mcptape.replay import Note, ReplayConfig, ReplayEngine, Send
from mcptape.replay.http.app import HttpReplayApp
from tests.replay.tape import LEGACY_INIT, call, meta, note, ok, req, tape
from tests.replay.test_server_http_support import modern_headers, served

LEVEL = "io.modelcontextprotocol/logLevel"
LOGGED = ["debug", "info", "warning"]


def log(level: str) -> dict[str, Any]:
    return note("notifications/message", {"level": level, "data": f"at {level}"})


def logs_of(msg_id: int, rec_meta: dict[str, Any] | None) -> list[tuple[str, Any]]:
    """A call that logged at each of `LOGGED`, then answered."""
    params = {"_meta": rec_meta} if rec_meta is not None else {}
    return [("c", call(msg_id, "count", **params)), *(("s", log(lv)) for lv in LOGGED),
            ("s", ok(msg_id, {"content": []}))]  # fmt: skip


def modern_tape(level: str | None = "debug") -> ReplayEngine:
    """A 2026-07-28 recording whose client asked for logs at `level` (None: for none)."""
    rec = meta(**{LEVEL: level}) if level else meta()
    return ReplayEngine.from_cassette(tape(*logs_of(1, rec)), ReplayConfig(allow_repeats=True))


def legacy_tape(level: str | None = "debug") -> ReplayEngine:
    """A legacy recording whose client set `level` (None: set none) before the call."""
    steps: list[Any] = list(LEGACY_INIT)
    if level is not None:
        steps += [("c", req(2, "logging/setLevel", {"level": level})), ("s", ok(2, {}))]
    cassette = tape(*steps, *logs_of(3, None))
    return ReplayEngine.from_cassette(cassette, ReplayConfig(allow_repeats=True))


def levels(out: list[Any]) -> list[str]:
    return [o.msg["params"]["level"] for o in out if isinstance(o, Send) and o.msg.get("method") == "notifications/message"]  # fmt: skip


def warned(out: list[Any]) -> list[str]:
    return [o.text for o in out if isinstance(o, Note) and "holds" in o.text]


def modern_call(msg_id: int, level: str | None) -> dict[str, Any]:
    return call(msg_id, "count", _meta=meta(**{LEVEL: level}) if level else meta())


def legacy_session(engine: ReplayEngine, level: str | None) -> None:
    engine.receive(LEGACY_INIT[0][1])
    engine.receive(LEGACY_INIT[2][1])
    if level is not None:
        engine.receive(req(50, "logging/setLevel", {"level": level}))


@pytest.mark.parametrize(
    ("level", "want"),
    [(None, []), ("debug", LOGGED), ("info", ["info", "warning"]), ("warning", ["warning"]),
     ("error", [])],
)  # fmt: skip
@pytest.mark.parametrize("cassette", [modern_tape, legacy_tape])
def test_a_2026_request_gets_the_logs_from_its_level_and_none_without_one(
    cassette: Any, level: str | None, want: list[str]
) -> None:
    assert levels(cassette().receive(modern_call(9, level))) == want


@pytest.mark.parametrize(
    ("level", "want"),
    [(None, LOGGED), ("debug", LOGGED), ("info", ["info", "warning"]), ("emergency", [])],
)
@pytest.mark.parametrize("cassette", [modern_tape, legacy_tape])
def test_a_legacy_client_gets_the_logs_from_the_level_it_set_and_as_recorded_before(
    cassette: Any, level: str | None, want: list[str]
) -> None:
    """Until `logging/setLevel`, a legacy server logs at its own default: what was recorded."""
    engine = cassette()
    legacy_session(engine, level)
    assert levels(engine.receive(call(9, "count"))) == want


def test_a_client_that_asks_below_the_recorded_level_is_told_once_per_session() -> None:
    engine = modern_tape("info")
    first = engine.receive(modern_call(9, "debug"))
    assert levels(first) == LOGGED  # (all the recording holds)
    assert warned(first) == [
        "the client asked for logs at level debug and above; the cassette holds only logs at "
        "level info and above (the level its recording client asked for)"
    ]
    assert warned(engine.receive(modern_call(10, "debug"))) == []
    assert warned(engine.receive(modern_call(11, "info"))) == []


def test_a_legacy_client_below_the_level_its_recording_client_set_is_told_too() -> None:
    engine = legacy_tape("warning")
    legacy_session(engine, "info")
    out = engine.receive(call(9, "count"))
    assert [n for n in warned(out) if "level warning and above" in n]


def test_a_recording_that_asked_for_no_logs_says_it_holds_none() -> None:
    """As a 2026-07-28 SDK client records with no log level: the server sent it none."""
    out = modern_tape(None).receive(modern_call(9, "info"))
    assert levels(out) == ["info", "warning"]  # (this hand-made cassette has some all the same)
    assert [n for n in warned(out) if "asked for none" in n]


def test_no_note_when_the_legacy_recording_never_set_a_level() -> None:
    engine = legacy_tape(None)
    legacy_session(engine, "debug")
    assert warned(engine.receive(call(9, "count"))) == []


def test_logs_the_server_sent_outside_a_request_follow_the_client_too() -> None:
    steps = [*LEGACY_INIT, ("c", call(2, "count")), ("s", ok(2, {"content": []})), ("s", log("info")),
             ("s", log("error"))]  # fmt: skip
    legacy = ReplayEngine.from_cassette(tape(*steps))
    legacy_session(legacy, "error")
    assert levels(legacy.receive(call(9, "count"))) == ["error"]
    modern = ReplayEngine.from_cassette(tape(*steps))  # a 2026-07-28 server logs only per request
    assert levels(modern.receive(modern_call(9, "debug"))) == []


@pytest.mark.anyio
@pytest.mark.parametrize(("level", "want"), [(None, []), ("info", ["info", "warning"])])
async def test_over_http_a_2026_request_gets_the_logs_of_its_level(
    level: str | None, want: list[str]
) -> None:
    cassette = tape(*logs_of(1, meta(**{LEVEL: "debug"})))
    said: list[Note] = []
    app = HttpReplayApp(cassette, ReplayConfig(allow_repeats=True), on_note=said.append)
    msg = modern_call(7, level)
    async with served(app) as client:
        with anyio.fail_after(5):
            r = await client.post("/mcp", content=orjson.dumps(msg), headers=modern_headers(msg))
    if r.headers["content-type"].startswith("application/json"):
        got = [r.json()]
    else:
        got = [orjson.loads(ln[6:]) for ln in r.text.splitlines() if ln.startswith("data: {")]
    assert [m["params"]["level"] for m in got[:-1]] == want
    assert got[-1]["id"] == 7 and "result" in got[-1]


def test_a_legacy_client_that_set_no_level_is_told_when_the_recording_asked_for_fewer_logs() -> (
    None
):
    """As the fastmcp client on a 2026-07-28 SDK client's cassette: a legacy server would send it
    every log, and the recording client asked for none, so the cassette holds none."""
    engine = modern_tape(None)
    legacy_session(engine, None)
    said = [
        o for o in engine.receive(call(9, "count")) if isinstance(o, Note) and "holds" in o.text
    ]
    assert [(n.level, n.text) for n in said] == [
        ("info", "the client set no log level (a legacy server sends it every log); the recording "
                 "client asked for none, so the cassette holds no log to play")
    ]  # fmt: skip
    info = modern_tape("info")
    legacy_session(info, None)
    assert [n for n in warned(info.receive(call(9, "count"))) if "level info and above" in n]
