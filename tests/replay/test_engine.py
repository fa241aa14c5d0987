"""The sans-IO replay engine on hand-built cassettes: no event loop, messages in, messages out."""

from __future__ import annotations

import time
from typing import Any

import pytest

from mcptape.replay import NO_MATCH, Note, ReplayConfig, ReplayEngine, Send
from mcptape.replay.engine import Output
from mcptape.replay.matcher import MatchPolicy
from mcptape.replay.report import EXHAUSTED
from mcptape.versions import META_SERVER_INFO
from tests.replay.tape import HANGUP, LEGACY_INIT, call, err, meta, note, ok, req, tape

SUB = "io.modelcontextprotocol/subscriptionId"


def engine(*steps: Any, allow_repeats: bool = False, **kw: Any) -> ReplayEngine:
    return ReplayEngine.from_cassette(tape(*steps, **kw), ReplayConfig(allow_repeats=allow_repeats))


def sent(outputs: list[Output]) -> list[Any]:
    return [o.msg for o in outputs if isinstance(o, Send)]


def notes(outputs: list[Output]) -> list[str]:
    return [o.text for o in outputs if isinstance(o, Note)]


PROGRESS = [
    ("c", call(3, "add", {"a": 1}, _meta={"progressToken": 3})),
    ("s", note("notifications/progress", {"progressToken": 3, "progress": 1, "total": 2})),
    ("s", note("notifications/message", {"level": "info", "data": "adding"})),
    ("s", note("notifications/progress", {"progressToken": 3, "progress": 2, "total": 2})),
    ("s", ok(3, {"content": [{"type": "text", "text": "2"}]})),
]


@pytest.mark.parametrize("client_id", [7, "seven", 0, "3", 3])
def test_response_carries_the_client_id_with_its_type(client_id: Any) -> None:
    e = engine(("c", req(1, "tools/list")), ("s", ok(1, {"tools": []})))
    assert sent(e.receive(req(client_id, "tools/list"))) == [ok(client_id, {"tools": []})]


@pytest.mark.parametrize("token", ["tok-a", 42])
def test_progress_goes_out_first_with_the_client_token(token: Any) -> None:
    e = engine(*PROGRESS)
    out = sent(e.receive(call("x", "add", {"a": 1}, _meta={"progressToken": token})))
    assert [m.get("method", "response") for m in out] == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
        "response",
    ]
    assert [
        m["params"]["progressToken"] for m in out if m.get("method") == "notifications/progress"
    ] == [token, token]
    assert out[-1]["id"] == "x"


def test_no_progress_for_a_client_that_asked_for_none() -> None:
    out = sent(engine(*PROGRESS).receive(call(9, "add", {"a": 1})))
    assert [m.get("method", "response") for m in out] == ["notifications/message", "response"]


def test_outputs_carry_recorded_timing_and_http_metadata() -> None:
    e = engine(*PROGRESS, http={4: {"status": 200, "content_type": "text/event-stream"}})
    out = [
        o
        for o in e.receive(call(9, "add", {"a": 1}, _meta={"progressToken": 1}))
        if isinstance(o, Send)
    ]
    assert [round(o.after, 3) for o in out] == [0.1, 0.2, 0.3, 0.4]
    assert out[-1].final and not out[0].final
    assert (
        out[-1].http == {"status": 200, "content_type": "text/event-stream"} == out[0].response_http
    )
    assert out[0].event is not None and out[0].event.seq == 2 and out[0].request_id == 9


ELICIT = [
    *LEGACY_INIT,
    ("c", call(6, "greet")),
    ("s", req(1, "elicitation/create", {"message": "name?"})),
    ("c", ok(1, {"action": "accept", "content": {"name": "Ada"}})),
    ("s", req(2, "sampling/createMessage", {"messages": []})),
    ("c", ok(2, {"role": "assistant", "content": {"type": "text", "text": "hi"}})),
    ("s", ok(6, {"content": [{"type": "text", "text": "Hello, Ada!"}]})),
]


def test_legacy_server_requests_get_fresh_ids_and_wait_for_the_answer() -> None:
    e = engine(*ELICIT)
    e.receive(LEGACY_INIT[0][1])
    first = sent(e.receive(call("g", "greet")))
    assert first == [
        {"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": {"message": "name?"}}
    ]
    assert sent(e.receive(ok(1, {"action": "accept", "content": {"name": "Ada"}}))) == [
        {"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage", "params": {"messages": []}}
    ]
    assert e.in_flight == 1
    final = e.receive(ok(2, {"role": "assistant", "content": {"type": "text", "text": "hi"}}))
    assert (
        sent(final) == [ok("g", {"content": [{"type": "text", "text": "Hello, Ada!"}]})]
        and e.in_flight == 0
    )


def test_fresh_ids_are_strings_when_the_recorded_ones_were() -> None:
    e = engine(
        ("c", call(1, "greet")),
        ("s", req("srv-1", "roots/list")),
        ("c", ok("srv-1", {"roots": []})),
        ("s", ok(1, {})),
    )
    out = sent(e.receive(call(5, "greet")))
    assert out[0]["id"] == "mcptape-1"
    assert sent(e.receive(ok("mcptape-1", {"roots": []}))) == [ok(5, {})]


def test_a_different_client_answer_is_noted_and_the_recording_goes_on() -> None:
    e = engine(*ELICIT)
    e.receive(call("g", "greet"))
    out = e.receive(ok(1, {"action": "decline"}))
    assert notes(out) and "differently than recorded" in notes(out)[0]
    assert sent(out)[0]["method"] == "sampling/createMessage"


def test_an_answer_to_no_request_is_noted_not_answered() -> None:
    out = engine(*ELICIT).receive(ok(77, {}))
    assert sent(out) == [] and "no request of the replay" in notes(out)[0]


MRTR = [
    ("c", call(6, "greet", _meta=meta())),
    (
        "s",
        ok(
            6,
            {
                "resultType": "input_required",
                "inputRequests": {"k": {"method": "elicitation/create", "params": {}}},
                "requestState": "state-A",
            },
        ),
    ),
    (
        "c",
        call(
            7,
            "greet",
            _meta=meta(),
            inputResponses={"k": {"action": "accept", "content": {"name": "Ada"}}},
            requestState="state-A",
        ),
    ),
    ("s", ok(7, {"resultType": "complete", "content": [{"type": "text", "text": "Hello, Ada!"}]})),
]


def test_input_required_then_the_retry_with_any_request_state() -> None:
    e = engine(*MRTR)
    first = sent(
        e.receive(
            call(
                1, "greet", _meta=meta(**{"io.modelcontextprotocol/clientInfo": {"name": "other"}})
            )
        )
    )
    assert first[0]["result"]["resultType"] == "input_required" and first[0]["id"] == 1
    retry = call(
        2,
        "greet",
        _meta=meta(),
        inputResponses={"k": {"action": "accept", "content": {"name": "Ada"}}},
        requestState="fresh-state",
    )
    assert sent(e.receive(retry))[0]["result"]["content"][0]["text"] == "Hello, Ada!"
    assert e.unplayed() == []


def test_a_retry_with_other_input_responses_does_not_match() -> None:
    e = engine(*MRTR)
    e.receive(call(1, "greet", _meta=meta()))
    out = sent(
        e.receive(
            call(
                2,
                "greet",
                _meta=meta(),
                inputResponses={"k": {"action": "decline"}},
                requestState="state-A",
            )
        )
    )
    assert out[0]["error"]["code"] == NO_MATCH and "inputResponses" in out[0]["error"]["message"]


LISTEN = [
    (
        "c",
        req(
            "listen-1",
            "subscriptions/listen",
            {"notifications": {"toolsListChanged": True}, "_meta": meta()},
        ),
    ),
    (
        "s",
        note(
            "notifications/subscriptions/acknowledged",
            {"_meta": {SUB: "listen-1"}, "notifications": {"toolsListChanged": True}},
        ),
    ),
    ("s", note("notifications/tools/list_changed", {"_meta": {SUB: "listen-1"}})),
]


def test_listen_acknowledges_first_with_the_client_id_and_stays_open_until_cancelled() -> None:
    e = engine(*LISTEN, HANGUP, ("s", err("listen-1", -32000, "Connection closed")))
    out = sent(
        e.receive(
            req(
                "L9",
                "subscriptions/listen",
                {"notifications": {"toolsListChanged": True}, "_meta": meta()},
            )
        )
    )
    assert [m["method"] for m in out] == [
        "notifications/subscriptions/acknowledged",
        "notifications/tools/list_changed",
    ]
    assert all(m["params"]["_meta"][SUB] == "L9" for m in out)
    assert e.in_flight == 1
    assert e.receive(note("notifications/cancelled", {"requestId": "L9"})) == []
    assert e.in_flight == 0


def test_a_gracefully_ended_listen_ends_with_its_result_tagged() -> None:
    e = engine(
        *LISTEN, ("s", ok("listen-1", {"resultType": "complete", "_meta": {SUB: "listen-1"}}))
    )
    out = sent(
        e.receive(
            req(
                4,
                "subscriptions/listen",
                {"notifications": {"toolsListChanged": True}, "_meta": meta()},
            )
        )
    )
    assert out[-1] == ok(4, {"resultType": "complete", "_meta": {SUB: 4}})


def test_logging_opt_in_picks_between_recordings_in_2026() -> None:
    log_meta = meta(**{"io.modelcontextprotocol/logLevel": "info"})
    e = engine(("c", call(1, "add", _meta=log_meta)), ("s", note("notifications/message", {"level": "info", "data": "x"})), ("s", ok(1, {"n": "logged"})),
               ("c", call(2, "add", _meta=meta())), ("s", ok(2, {"n": "quiet"})))  # fmt: skip
    assert sent(e.receive(call(3, "add", _meta=meta()))) == [ok(3, {"n": "quiet"})]
    assert [m.get("method") for m in sent(e.receive(call(4, "add", _meta=log_meta)))] == [
        "notifications/message",
        None,
    ]


def test_a_client_that_declares_otherwise_gets_the_nearest_recording_with_a_note_and_strict_refuses_it() -> (
    None
):
    log_meta = meta(**{"io.modelcontextprotocol/logLevel": "info"})
    steps = (
        ("c", call(1, "add", _meta=log_meta)),
        ("s", note("notifications/message", {"level": "info", "data": "x"})),
        ("s", ok(1, {})),
    )
    out = engine(*steps).receive(call(2, "add", _meta=meta()))
    assert [m.get("method") for m in sent(out)] == [None]  # it asked for no log
    assert any("logLevel is absent (recorded" in t and "info" in t for t in notes(out))
    strict = ReplayEngine.from_cassette(tape(*steps), ReplayConfig(exact_clients=True))
    refused = sent(strict.receive(call(2, "add", _meta=meta())))
    assert refused[0]["error"]["code"] == NO_MATCH and "logLevel" in refused[0]["error"]["message"]


def test_initialize_answers_as_recorded_and_warns_on_another_version() -> None:
    e = engine(*LEGACY_INIT)
    out = e.receive(
        req(
            "i",
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"x": {}},
                "clientInfo": {"name": "other", "version": "2"},
            },
        )
    )
    assert sent(out)[0]["id"] == "i" and sent(out)[0]["result"]["protocolVersion"] == "2025-11-25"
    assert "2025-06-18" in notes(out)[0]


def test_a_second_handshake_starts_the_cassette_again() -> None:
    e = engine(*LEGACY_INIT, ("c", req(2, "tools/list")), ("s", ok(2, {"tools": ["t"]})))
    for round_ in range(2):
        e.receive(LEGACY_INIT[0][1])
        assert sent(e.receive(req(10 + round_, "tools/list")))[0]["result"] == {"tools": ["t"]}


def test_initialize_on_a_2026_cassette_is_refused_naming_the_versions_when_cross_era_is_off() -> (
    None
):
    discover = req(1, "server/discover", {"_meta": meta()})
    steps = (
        ("c", discover),
        (
            "s",
            ok(
                1,
                {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {}},
            ),
        ),
    )
    e = ReplayEngine.from_cassette(tape(*steps), ReplayConfig(cross_era=False))
    out = sent(e.receive(LEGACY_INIT[0][1]))
    assert out[0]["error"]["code"] == -32022 and out[0]["error"]["data"] == {
        "supported": ["2026-07-28"],
        "requested": "2025-11-25",
    }


@pytest.mark.parametrize(
    ("steps", "code"),
    [
        (
            [
                ("c", req(1, "server/discover", {"_meta": meta()})),
                ("s", err(1, -32602, "Invalid params")),
                *LEGACY_INIT,
            ],
            -32602,
        ),
        (LEGACY_INIT, -32601),
    ],
)
def test_a_discover_probe_on_a_legacy_cassette_gets_the_recorded_error(
    steps: list[Any], code: int
) -> None:
    """The recorded probe's error first; without one, -32601 when cross-era replay is off."""
    probe = req(
        "p",
        "server/discover",
        {"_meta": meta(**{"io.modelcontextprotocol/clientCapabilities": {"other": {}}})},
    )
    e = ReplayEngine.from_cassette(tape(*steps), ReplayConfig(cross_era=code != -32601))
    out = sent(e.receive(probe))
    assert out[0]["id"] == "p" and out[0]["error"]["code"] == code
    assert "server/discover" not in [
        ex.method for ex in e.unplayed()
    ]  # the recorded probe counts as played


def test_ping_is_answered_without_the_cassette() -> None:
    assert sent(engine(*LEGACY_INIT).receive(req(5, "ping"))) == [ok(5, {})]


@pytest.mark.parametrize(
    "method",
    [
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/roots/list_changed",
        "notifications/whatever",
    ],
)
def test_a_notification_is_never_answered(method: str) -> None:
    assert sent(engine(*LEGACY_INIT).receive(note(method, {"requestId": 1}))) == []


@pytest.mark.parametrize(
    ("method", "said"),
    [
        ("notifications/roots/list_changed", "the recording client never sent it"),
        ("notifications/cancelled", "which is not in flight"),
    ],
)
def test_housekeeping_the_recording_client_never_sent_gets_one_note(method: str, said: str) -> None:
    e = engine(*LEGACY_INIT)
    e.receive(LEGACY_INIT[0][1])
    assert notes(e.receive(LEGACY_INIT[2][1])) == []  # initialized was recorded
    first = e.receive(note(method, {"requestId": 1}))
    assert sent(first) == [] and [said in t for t in notes(first)] == [True]
    if method != "notifications/cancelled":
        assert e.receive(note(method)) == []  # one note per method and session


def test_a_recorded_notification_gets_no_note() -> None:
    e = engine(*LEGACY_INIT, ("c", note("notifications/roots/list_changed")))
    assert e.receive(note("notifications/roots/list_changed")) == []
    extra = e.receive(note("notifications/roots/list_changed"))  # one more than recorded
    assert ["never sent it this often" in t for t in notes(extra)] == [True]


@pytest.mark.parametrize(
    ("line", "code"),
    [
        (b"not json", -32700),
        (b"{", -32700),
        (b'{"foo": 1}', -32600),
        (b"42", -32600),
        (b'"x"', -32600),
        (b"[]", -32600),
        (b'{"jsonrpc":"2.0","method":5,"id":3}', -32600),
    ],
)
def test_bad_input_gets_the_standard_error_and_the_engine_goes_on(line: bytes, code: int) -> None:
    e = engine(("c", req(1, "tools/list")), ("s", ok(1, {"tools": []})))
    out = sent(e.receive_bytes(line))
    assert out[0]["error"]["code"] == code
    assert sent(e.receive_bytes(b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}')) == [
        ok(2, {"tools": []})
    ]


def test_invalid_request_keeps_a_usable_id() -> None:
    out = sent(engine().receive({"jsonrpc": "2.0", "id": 4, "method": 5}))
    assert out[0]["id"] == 4 and out[0]["error"]["code"] == -32600


def test_a_batch_is_answered_with_an_array() -> None:
    e = engine(("c", req(1, "tools/list")), ("s", ok(1, {"tools": []})))
    out = sent(
        e.receive([req("a", "tools/list"), note("notifications/initialized"), req("b", "ping")])
    )
    assert out == [[ok("a", {"tools": []}), ok("b", {})]]


@pytest.mark.parametrize(
    ("arguments", "hint"),
    [
        ({"a": 5, "b": 2}, "if /arguments/a does not matter, replay with --ignore /arguments/a"),
        (
            {"a": 1, "b": 2, "c": 3},
            "if /arguments/c does not matter, replay with --ignore /arguments/c",
        ),
        ({"a": 5, "b": 6}, "ignoring any one of these fields would still match no recording"),
        ({"a": 5, "c": 2}, "ignoring any one of these fields would still match no recording"),
    ],
)
def test_the_ignore_hint_is_given_only_when_ignoring_that_path_makes_a_match(
    arguments: dict[str, Any], hint: str
) -> None:
    e = engine(("c", call(1, "add", {"a": 1, "b": 2})), ("s", ok(1, {"r": 3})))
    out = e.receive(call(9, "add", arguments))
    error = sent(out)[0]["error"]
    assert error["data"]["hint"].startswith(hint) and hint in notes(out)[0]
    if "--ignore" not in hint:
        assert "--ignore" not in notes(out)[0] and "--ignore" not in error["data"]["hint"]
        return
    pointer = hint.rsplit(" ", 1)[1]  # and ignoring it does make the request match
    ignoring = ReplayEngine.from_cassette(
        tape(("c", call(1, "add", {"a": 1, "b": 2})), ("s", ok(1, {"r": 3}))),
        ReplayConfig(MatchPolicy(ignore=(pointer,))),
    )
    assert sent(ignoring.receive(call(9, "add", arguments))) == [ok(9, {"r": 3})]


def test_no_match_explains_the_nearest_difference() -> None:
    e = engine(("c", call(1, "add", {"a": 1, "b": 2})), ("s", ok(1, {})))
    out = e.receive(call(9, "add", {"a": 5, "b": 2}))
    error = sent(out)[0]["error"]
    assert error["code"] == NO_MATCH
    assert (
        error["message"]
        == "mcptape replay: no recorded answer for tools/call 'add': arguments/a is 5 (recorded 1), compared with the nearest recorded request (line 2)"
    )  # the header is line 1, the recorded request the first event after it
    assert error["data"]["reason"] == "differs"
    assert error["data"]["request"] == {
        "method": "tools/call",
        "params": {"name": "add", "arguments": {"a": 5, "b": 2}},
    }
    assert error["data"]["nearest"][0]["diff"] == [
        {"path": "/arguments/a", "recorded": 1, "incoming": 5}
    ]
    assert "--ignore /arguments/a" in notes(out)[0]


def test_no_match_for_a_request_never_recorded() -> None:
    out = engine(("c", req(1, "tools/list")), ("s", ok(1, {}))).receive(req(2, "prompts/list"))
    error = sent(out)[0]["error"]
    assert error["code"] == NO_MATCH and "prompts/list was never recorded" in error["message"]
    assert (
        error["data"]["reason"] == "never recorded"
        and error["data"]["nearest"][0]["method"] == "tools/list"
    )


def test_exhausted_then_repeats() -> None:
    steps = [("c", req(1, "tools/list")), ("s", ok(1, {"n": 1}))]
    e = engine(*steps)
    e.receive(req(1, "tools/list"))
    out = e.receive(req(2, "tools/list"))
    error = sent(out)[0]["error"]
    assert (
        error["code"] == EXHAUSTED
        and "already been played once" in error["message"]
        and "--allow-repeats" in notes(out)[0]
    )
    r = engine(*steps, allow_repeats=True)
    assert [sent(r.receive(req(i, "tools/list")))[0]["result"] for i in range(3)] == [{"n": 1}] * 3


def test_cancelling_a_waiting_exchange_drops_it() -> None:
    e = engine(*ELICIT)
    e.receive(call("g", "greet"))
    out = e.receive(note("notifications/cancelled", {"requestId": "g"}))
    assert sent(out) == [] and ["is not sent" in t for t in notes(out)] == [True]
    assert e.cancelled("g") and not e.cancelled(1)  # what a shell that delays answers asks
    e.receive(call("g", "greet"))  # the id used again: a new request
    assert not e.cancelled("g")
    e.receive(note("notifications/cancelled", {"requestId": "g"}))
    assert e.in_flight == 0 and sent(e.receive(ok(1, {"action": "accept"}))) == []


def test_unplayed_lists_what_the_client_never_asked() -> None:
    e = engine(
        *LEGACY_INIT,
        ("c", req(2, "tools/list")),
        ("s", ok(2, {})),
        ("c", req(3, "prompts/list")),
        ("s", ok(3, {})),
    )
    e.receive(LEGACY_INIT[0][1])
    e.receive(req(2, "tools/list"))
    assert [ex.method for ex in e.unplayed()] == ["prompts/list"]


def test_unsolicited_server_messages_follow_the_exchange_they_followed() -> None:
    e = engine(
        ("c", req(1, "tools/list")),
        ("s", ok(1, {})),
        ("s", note("notifications/tools/list_changed")),
    )
    out = sent(e.receive(req(5, "tools/list")))
    assert out == [ok(5, {}), note("notifications/tools/list_changed")]


def test_a_tools_call_takes_well_under_a_millisecond() -> None:
    steps = [*LEGACY_INIT] + [
        s
        for i in range(200)
        for s in (("c", call(10 + i, f"tool{i}", {"i": i})), ("s", ok(10 + i, {"content": []})))
    ]
    e = engine(*steps, allow_repeats=True)
    msg = call(1, "tool150", {"i": 150})
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        e.receive(msg)
    assert (time.perf_counter() - start) / n < 0.0005


def test_ping_on_a_modern_only_cassette_is_refused_like_a_2026_server_does() -> None:
    e = engine(("c", req(1, "tools/list", {"_meta": meta()})), ("s", ok(1, {"tools": []})))
    (answer,) = sent(e.receive(req(9, "ping")))
    assert answer["id"] == 9 and answer["error"]["code"] == -32602


DISCOVERED = {"resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}}, "instructions": "hi",
              "ttlMs": 60000, "cacheScope": "public", "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "srv", "version": "2"}}}  # fmt: skip
ASK = {
    "method": "elicitation/create",
    "params": {"message": "name?", "requestedSchema": {"type": "object"}},
}
MODERN_TAPE = [
    ("c", req(1, "server/discover", {"_meta": meta()})),
    ("s", ok(1, DISCOVERED)),
    ("c", req(2, "tools/list", {"_meta": meta()})),
    (
        "s",
        ok(
            2,
            {
                "resultType": "complete",
                "tools": [{"name": "greet"}],
                "ttlMs": 5,
                "cacheScope": "public",
            },
        ),
    ),
    ("c", call(3, "greet", _meta=meta())),
    (
        "s",
        ok(
            3,
            {
                "resultType": "input_required",
                "inputRequests": {"who": ASK},
                "requestState": "sealed",
            },
        ),
    ),
    (
        "c",
        call(
            4,
            "greet",
            _meta=meta(),
            inputResponses={"who": {"action": "accept", "content": {"name": "Ada"}}},
            requestState="sealed",
        ),
    ),
    ("s", ok(4, {"resultType": "complete", "content": [{"type": "text", "text": "hello Ada"}]})),
]
LEGACY_HELLO = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "ts", "version": "1"}}}  # fmt: skip


def test_a_legacy_client_on_a_2026_cassette_gets_a_handshake_from_the_recorded_discover() -> None:
    e = engine(*MODERN_TAPE)
    out = e.receive(LEGACY_HELLO)
    assert sent(out) == [
        ok(
            0,
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "srv", "version": "2"},
                "instructions": "hi",
            },
        )
    ]
    assert any("server/discover" in t for t in notes(out))
    assert e.receive({"jsonrpc": "2.0", "method": "notifications/initialized"}) == []
    assert sent(e.receive(req(1, "tools/list"))) == [ok(1, {"tools": [{"name": "greet"}]})]
    assert sent(e.receive(req(2, "ping"))) == [ok(2, {})]


def test_a_legacy_client_answers_an_input_required_as_server_requests_and_gets_the_recorded_retry() -> (
    None
):
    e = engine(*MODERN_TAPE)
    e.receive(LEGACY_HELLO)
    asked = sent(e.receive(call(7, "greet")))
    assert (
        len(asked) == 1
        and asked[0]["method"] == "elicitation/create"
        and asked[0]["params"] == ASK["params"]
    )
    out = sent(
        e.receive(
            {
                "jsonrpc": "2.0",
                "id": asked[0]["id"],
                "result": {"action": "accept", "content": {"name": "Ada"}},
            }
        )
    )
    assert out == [ok(7, {"content": [{"type": "text", "text": "hello Ada"}]})]
    assert [x.method for x in e.unplayed()] == ["tools/list"]


def test_a_legacy_client_logging_set_level_is_accepted_and_declared_with_later_requests() -> None:
    log_meta = meta(**{"io.modelcontextprotocol/logLevel": "debug"})
    e = engine(
        ("c", call(1, "add", _meta=log_meta)),
        ("s", note("notifications/message", {"level": "debug", "data": "x"})),
        ("s", ok(1, {"resultType": "complete"})),
    )
    e.receive(LEGACY_HELLO)
    out = e.receive(req(1, "logging/setLevel", {"level": "debug"}))
    assert sent(out) == [ok(1, {})] and any(
        "logging/setLevel was never recorded" in t for t in notes(out)
    )
    assert any("stands for the per-request log level" in t for t in notes(out))
    out = e.receive(call(2, "add"))
    assert [m.get("method") for m in sent(out)] == ["notifications/message", None]
    assert not [t for t in notes(out) if "declares" in t]


def test_ping_plays_the_recorded_answer_before_anything_made_up() -> None:
    e = engine(("c", req(1, "ping", {"_meta": meta()})), ("s", err(1, -32601, "Method not found")))
    assert sent(e.receive(req(5, "ping"))) == [err(5, -32601, "Method not found")]


def _hello(caps: dict[str, Any], msg_id: Any = 1) -> dict[str, Any]:
    return req(
        msg_id,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": caps,
            "clientInfo": {"name": "rec", "version": "1"},
        },
    )


SERVER_HELLO = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "srv", "version": "1"},
}
BY_ROOTS = [  # a server that lists a tool only for clients with roots: two handshakes, two answers
    ("c", _hello({"roots": {}})), ("s", ok(1, SERVER_HELLO)), ("c", req(2, "tools/list")), ("s", ok(2, {"tools": [{"name": "files"}]})),
    ("c", _hello({})), ("s", ok(1, SERVER_HELLO)), ("c", req(2, "tools/list")), ("s", ok(2, {"tools": []})),
]  # fmt: skip


@pytest.mark.parametrize(("caps", "tools"), [({"roots": {}}, [{"name": "files"}]), ({}, [])])
def test_recordings_that_differ_in_declared_capabilities_serve_the_client_that_fits(
    caps: dict[str, Any], tools: list[Any]
) -> None:
    e = engine(*BY_ROOTS)
    e.receive(_hello(caps, "h"))
    out = e.receive(req(5, "tools/list"))
    assert sent(out) == [ok(5, {"tools": tools})] and not [t for t in notes(out) if "declares" in t]


def test_one_recording_serves_a_client_that_declares_other_capabilities_with_one_note() -> None:
    e = engine(
        *BY_ROOTS[:4], ("c", req(3, "tools/list")), ("s", ok(3, {"tools": [{"name": "files"}]}))
    )
    e.receive(_hello({"sampling": {}}, "h"))
    first, second = e.receive(req(5, "tools/list")), e.receive(req(6, "tools/list"))
    assert sent(first) == [ok(5, {"tools": [{"name": "files"}]})] and sent(second) == [
        ok(6, {"tools": [{"name": "files"}]})
    ]
    warned = [o for o in [*first, *second] if isinstance(o, Note) and o.level == "warning"]
    assert (
        len(warned) == 1
        and "clientCapabilities/roots is absent" in warned[0].text
        and "clientCapabilities/sampling was not recorded" in warned[0].text
    )
    strict = ReplayEngine.from_cassette(tape(*BY_ROOTS[:4]), ReplayConfig(exact_clients=True))
    strict.receive(_hello({"sampling": {}}, "h"))
    assert sent(strict.receive(req(5, "tools/list")))[0]["error"]["code"] == NO_MATCH


FORM = {"mode": "form", "message": "name?", "requestedSchema": {"type": "object"}}
LEGACY_GREET = [
    *LEGACY_INIT,
    ("c", call(2, "greet")),
    ("s", req(0, "elicitation/create", FORM)),
    ("c", ok(0, {"action": "accept", "content": {"name": "Ada"}})),
    ("s", note("notifications/message", {"level": "info", "data": "greeted"})),
    ("s", ok(2, {"content": [{"type": "text", "text": "hello Ada"}]})),
    ("c", req(3, "resources/read", {"uri": "demo://nope"})),
    ("s", err(3, -32002, "Resource not found")),
]


def test_a_2026_client_on_a_legacy_cassette_discovers_from_the_recorded_initialize() -> None:
    e = engine(*LEGACY_GREET)
    out = e.receive(req("d", "server/discover", {"_meta": meta()}))
    result = sent(out)[0]["result"]
    assert result["supportedVersions"] == ["2026-07-28"] and result["capabilities"] == {"tools": {}}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"] == {"name": "srv", "version": "1"}
    assert (
        sent(e.receive(req(9, "resources/read", {"uri": "demo://nope", "_meta": meta()})))[0][
            "error"
        ]["code"]
        == -32602
    )


def test_a_2026_client_gets_a_legacy_server_request_as_input_required_and_its_retry_goes_on() -> (
    None
):
    e = engine(*LEGACY_GREET)
    first = sent(e.receive(call(5, "greet", _meta=meta())))
    assert len(first) == 1 and first[0]["id"] == 5
    result = first[0]["result"]
    assert result["resultType"] == "input_required"
    ((key, ask),) = result["inputRequests"].items()
    assert ask == {"method": "elicitation/create", "params": FORM} and isinstance(
        result["requestState"], str
    )
    answer = {key: {"action": "accept", "content": {"name": "Ada"}}}
    retry = call(
        6, "greet", _meta=meta(), inputResponses=answer, requestState=result["requestState"]
    )
    out = e.receive(retry)
    assert [m.get("method") for m in sent(out)] == [None]  # (the log: it asked for none)
    assert sent(out)[-1] == ok(
        6,
        {
            "resultType": "complete",
            "content": [{"type": "text", "text": "hello Ada"}],
            "_meta": {META_SERVER_INFO: {"name": "srv", "version": "1"}},
        },
    )
    assert not notes(out)


def test_a_server_request_sent_after_initialized_replays_after_the_clients_initialized() -> None:
    """As server-filesystem does: `roots/list` right after the client's `notifications/initialized`."""
    e = engine(
        *LEGACY_INIT,
        ("s", req(0, "roots/list")),
        ("c", ok(0, {"roots": []})),
        ("c", req(2, "tools/list")),
        ("s", ok(2, {"tools": []})),
    )
    hello = sent(e.receive(LEGACY_INIT[0][1]))
    assert [m.get("method") for m in hello] == [None]  # the handshake answer alone
    asked = sent(e.receive(LEGACY_INIT[2][1]))
    assert [m.get("method") for m in asked] == ["roots/list"]
    assert e.receive(ok(asked[0]["id"], {"roots": []})) == []
    assert sent(e.receive(req(3, "tools/list"))) == [ok(3, {"tools": []})]


def test_an_answer_to_a_server_request_after_initialized_is_compared_with_the_recorded_one() -> (
    None
):
    e = engine(*LEGACY_INIT, ("s", req(0, "roots/list")), ("c", ok(0, {"roots": []})))
    e.receive(LEGACY_INIT[0][1])
    (asked,) = sent(e.receive(LEGACY_INIT[2][1]))
    assert notes(e.receive(ok(asked["id"], {"roots": []}))) == []
    e.new_session()
    e.receive(LEGACY_INIT[0][1])
    (asked,) = sent(e.receive(LEGACY_INIT[2][1]))
    out = e.receive(ok(asked["id"], {"roots": [{"uri": "file:///elsewhere"}]}))
    assert sent(out) == [] and [
        "roots/list differently than recorded" in t for t in notes(out)
    ] == [True]


LOGGING_HELLO = ("s", ok(1, {**SERVER_HELLO, "capabilities": {"tools": {}, "logging": {}}}))
SET_LEVEL = req(2, "logging/setLevel", {"level": "debug"})


@pytest.mark.parametrize(
    ("steps", "answer", "said"),
    [
        ([LEGACY_INIT[0], LOGGING_HELLO], ok(2, {}), "accepted, as a server that declares logging"),
        (LEGACY_INIT[:2], err(2, -32601, "Method not found"), "does not declare logging"),
        (  # the recorded server's own answer to another level comes first
            [*LEGACY_INIT[:2], ("c", req(5, "logging/setLevel", {"level": "info"})), ("s", err(5, -32602, "no"))],
            err(2, -32602, "no"),
            "playing the recorded answer of line 3",
        ),
    ],
)  # fmt: skip
def test_logging_set_level_never_recorded_gets_what_a_server_of_that_era_gives(
    steps: list[Any], answer: dict[str, Any], said: str
) -> None:
    e = engine(*steps)
    e.receive(LEGACY_INIT[0][1])
    first, again = e.receive(SET_LEVEL), e.receive(SET_LEVEL)
    got = sent(first)[0]
    got.get("error", {}).pop("data", None)
    assert got == answer and [said in t for t in notes(first)] == [True]
    assert sent(again)[0]["id"] == 2 and notes(again) == []  # answered every time, noted once


def test_logging_set_level_from_a_2026_client_is_method_not_found_as_2026_removed_it() -> None:
    e = engine(("c", req(1, "tools/list", {"_meta": meta()})), ("s", ok(1, {"tools": []})))
    out = e.receive(req(3, "logging/setLevel", {"level": "info", "_meta": meta()}))
    assert sent(out)[0]["error"]["code"] == -32601 and "2026-07-28" in notes(out)[0]


# -- subscriptions across eras -------------------------------------------------------------------

A, B = "file:///a", "file:///b"
WATCHED = [  # 2026-07-28: a listen stream on file:///a, with one update
    ("c", req(1, "server/discover", {"_meta": meta()})),
    ("s", ok(1, {**DISCOVERED, "capabilities": {"resources": {"subscribe": True}}})),
    ("c", req("L", "subscriptions/listen", {"_meta": meta(), "notifications": {"resourceSubscriptions": [A]}})),
    ("s", note("notifications/subscriptions/acknowledged", {"_meta": {SUB: "L"}, "notifications": {"resourceSubscriptions": [A]}})),
    ("s", note("notifications/resources/updated", {"_meta": {SUB: "L"}, "uri": A})),
    HANGUP,
]  # fmt: skip


def test_a_legacy_subscribe_on_a_2026_cassette_gets_the_recorded_listens_updates() -> None:
    e = engine(*WATCHED)
    e.receive(LEGACY_HELLO)
    e.receive(note("notifications/initialized"))
    out = e.receive(req(4, "resources/subscribe", {"uri": A}))
    assert sent(out) == [note("notifications/resources/updated", {"uri": A}), ok(4, {})]
    assert [o.request_id for o in out if isinstance(o, Send)] == [4, 4]  # on the subscribe's stream
    assert e.unplayed() == [] and "line 3" in notes(out)[0]
    other = e.receive(req(5, "resources/subscribe", {"uri": B}))
    assert sent(other) == [ok(5, {})] and "no recorded subscriptions/listen" in notes(other)[0]
    assert sent(e.receive(req(6, "resources/unsubscribe", {"uri": A}))) == [ok(6, {})]


def test_a_legacy_subscribe_is_refused_as_never_recorded_with_same_era() -> None:
    strict = ReplayEngine.from_cassette(tape(*WATCHED), ReplayConfig(cross_era=False))
    strict.receive(LEGACY_HELLO)
    assert "error" in sent(strict.receive(req(4, "resources/subscribe", {"uri": A})))[0]


SUBSCRIBED = [  # legacy: a subscription to file:///a, updated while a call was in flight
    ("c", _hello({})),
    ("s", ok(1, {**SERVER_HELLO, "capabilities": {"resources": {"subscribe": True}, "tools": {"listChanged": True}}})),
    ("c", note("notifications/initialized")),
    ("c", req(2, "resources/subscribe", {"uri": A})),
    ("s", ok(2, {})),
    ("c", call(3, "touch")),
    ("s", note("notifications/resources/updated", {"uri": A})),
    ("s", note("notifications/tools/list_changed")),
    ("s", ok(3, {"content": []})),
    ("s", note("notifications/resources/updated", {"uri": B})),
]  # fmt: skip


def test_a_2026_listen_on_a_legacy_cassette_gets_the_recorded_subscriptions_updates() -> None:
    e = engine(*SUBSCRIBED)
    filt = {"resourceSubscriptions": [A], "toolsListChanged": True, "promptsListChanged": True}
    out = sent(
        e.receive(req("mine", "subscriptions/listen", {"_meta": meta(), "notifications": filt}))
    )
    honoured = {"resourceSubscriptions": [A], "toolsListChanged": True}  # no prompts declared
    assert out == [
        note("notifications/subscriptions/acknowledged", {"notifications": honoured, "_meta": {SUB: "mine"}}),
        note("notifications/resources/updated", {"uri": A, "_meta": {SUB: "mine"}}),
        note("notifications/tools/list_changed", {"_meta": {SUB: "mine"}}),
    ]  # fmt: skip
    assert e.in_flight == 1
    # the call that triggered them: on its own stream a 2026-07-28 server sends no change notification
    assert sent(e.receive(call(9, "touch", _meta=meta()))) == [
        ok(9, {"resultType": "complete", "content": [], "_meta": {META_SERVER_INFO: {"name": "srv", "version": "1"}}})
    ]  # fmt: skip
    assert e.receive(note("notifications/cancelled", {"requestId": "mine"})) == []
    assert e.in_flight == 0 and e.unplayed() == []


# -- who the client is picks between recordings ---------------------------------------------------


def _hello_from(name: str, msg_id: Any = 1, caps: dict[str, Any] | None = None) -> dict[str, Any]:
    params = {"protocolVersion": "2025-11-25", "capabilities": caps or {},
              "clientInfo": {"name": name, "version": "1"}}  # fmt: skip
    return req(msg_id, "initialize", params)


BY_CLIENT = [  # a server that answers each client by name: two handshakes, two answers
    ("c", _hello_from("inspector")), ("s", ok(1, SERVER_HELLO)), ("c", req(2, "tools/list")), ("s", ok(2, {"tools": [{"name": "debug"}]})),
    ("c", _hello_from("ts")), ("s", ok(1, SERVER_HELLO)), ("c", req(2, "tools/list")), ("s", ok(2, {"tools": []})),
]  # fmt: skip


@pytest.mark.parametrize(("name", "tools"), [("inspector", [{"name": "debug"}]), ("ts", [])])
def test_recordings_that_differ_in_client_info_serve_the_client_that_fits(
    name: str, tools: list[Any]
) -> None:
    for strict in (False, True):
        e = ReplayEngine.from_cassette(tape(*BY_CLIENT), ReplayConfig(exact_clients=strict))
        e.receive(_hello_from(name, "h"))
        out = e.receive(req(5, "tools/list"))
        assert sent(out) == [ok(5, {"tools": tools})] and notes(out) == []


def test_another_client_gets_the_recording_with_one_info_line_and_strict_plays_it_too() -> None:
    for strict in (False, True):
        config = ReplayConfig(allow_repeats=True, exact_clients=strict)
        e = ReplayEngine.from_cassette(tape(*BY_CLIENT[:4]), config)
        e.receive(_hello_from("python", "h"))
        first, second = e.receive(req(5, "tools/list")), e.receive(req(6, "tools/list"))
        assert sent(first) == [ok(5, {"tools": [{"name": "debug"}]})]
        assert [n.level for n in first if isinstance(n, Note)] == ["info"] and notes(second) == []
        assert 'clientInfo/name is "python" (recorded "inspector")' in notes(first)[0]


def test_capabilities_weigh_more_than_client_info_in_the_nearest_recording() -> None:
    steps = [
        ("c", _hello_from("me", caps={"roots": {}})), ("s", ok(1, SERVER_HELLO)), ("c", req(2, "tools/list")), ("s", ok(2, {"tools": ["roots"]})),
        ("c", _hello_from("other")), ("s", ok(1, SERVER_HELLO)), ("c", req(2, "tools/list")), ("s", ok(2, {"tools": ["plain"]})),
    ]  # fmt: skip
    e = engine(*steps)
    e.receive(
        _hello_from("other", "h", caps={"roots": {}})
    )  # same caps as "me", same name as "other"
    out = e.receive(req(5, "tools/list"))
    assert sent(out) == [ok(5, {"tools": ["roots"]})] and "clientInfo/name" in notes(out)[0]


def test_client_info_in_2026_meta_picks_between_recordings() -> None:
    def who(name: str) -> dict[str, Any]:
        return meta(**{"io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}})

    e = engine(("c", req(1, "tools/list", {"_meta": who("a")})), ("s", ok(1, {"tools": ["a"]})),
               ("c", req(2, "tools/list", {"_meta": who("b")})), ("s", ok(2, {"tools": ["b"]})))  # fmt: skip
    assert sent(e.receive(req(3, "tools/list", {"_meta": who("b")}))) == [ok(3, {"tools": ["b"]})]
    assert sent(e.receive(req(4, "tools/list", {"_meta": who("a")}))) == [ok(4, {"tools": ["a"]})]


def test_a_legacy_log_level_picks_between_recordings() -> None:
    logged = ("s", note("notifications/message", {"level": "debug", "data": "x"}))
    steps = [
        *LEGACY_INIT, ("c", req(2, "logging/setLevel", {"level": "debug"})), ("s", ok(2, {})),
        ("c", call(3, "add")), logged, ("s", ok(3, {"n": "logged"})),
        *LEGACY_INIT, ("c", call(3, "add")), ("s", ok(3, {"n": "quiet"})),
    ]  # fmt: skip
    quiet = engine(*steps)
    quiet.receive(LEGACY_INIT[0][1])
    assert sent(quiet.receive(call(7, "add"))) == [ok(7, {"n": "quiet"})]
    chatty = engine(*steps)
    chatty.receive(LEGACY_INIT[0][1])
    chatty.receive(req(8, "logging/setLevel", {"level": "debug"}))
    assert sent(chatty.receive(call(9, "add"))) == [logged[1], ok(9, {"n": "logged"})]
