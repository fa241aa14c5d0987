"""Fault rules, pure: parsing, selection (nth, every, times, probability), and the steps each action makes."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.errors import ConfigError
from mcptape.replay import Note, ReplayConfig, ReplayEngine, Send
from mcptape.replay.faults import (
    FaultRule,
    Hangup,
    Overlay,
    Status,
    Step,
    dry_run,
    load_rules,
    parse_rules,
    rules_from_options,
)
from mcptape.wire.jsonrpc import MessageType
from tests.replay.tape import LEGACY_INIT, call, meta, note, ok, req, tape

ADD = [
    ("c", call(3, "add", {"a": 1}, _meta={"progressToken": 3})),
    ("s", note("notifications/progress", {"progressToken": 3, "progress": 1, "total": 1})),
    (
        "s",
        ok(
            3,
            {
                "content": [{"type": "text", "text": "2"}],
                "structuredContent": {"result": "2"},
                "isError": False,
            },
        ),
    ),
]
CALLS = [
    ("c", call(1, "add", {"a": 1})), ("s", ok(1, {"content": [{"type": "text", "text": "1"}]})),
    ("c", call(2, "add", {"a": 1})), ("s", ok(2, {"content": [{"type": "text", "text": "2"}]})),
    ("c", call(3, "add", {"a": 1})), ("s", ok(3, {"content": [{"type": "text", "text": "3"}]})),
    ("c", call(4, "add", {"a": 1})), ("s", ok(4, {"content": [{"type": "text", "text": "4"}]})),
    ("c", req(5, "resources/read", {"uri": "demo://readme"})), ("s", ok(5, {"contents": []})),
]  # fmt: skip


def run(
    steps_: list[Any],
    rules: list[dict[str, Any]],
    requests: list[dict[str, Any]],
    *,
    http: bool = False,
) -> list[Sequence[Step]]:
    """Replays `requests` on a cassette of `steps_` with the rules: the steps for each request."""
    config = ReplayConfig(allow_repeats=True, overlay=parse_rules(rules), http=http)
    engine = ReplayEngine.from_cassette(tape(*steps_), config)
    return [engine.receive(r) for r in requests]


def delivered(steps: Sequence[Step]) -> list[Any]:
    return [s.raw if s.raw is not None else s.msg for s in steps if isinstance(s, Send)]


def answers(rules: list[dict[str, Any]], n: int = 4) -> list[str]:
    """Which of n add calls were answered normally ('ok') or hit ('x'), by the first rule's action."""
    out = []
    for steps in run(CALLS, rules, [call(i, "add", {"a": 1}) for i in range(1, n + 1)]):
        msgs = delivered(steps)
        out.append("ok" if msgs and isinstance(msgs[-1], dict) and "result" in msgs[-1] else "x")
    return out


# -- parsing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ({"tool": "add", "action": "drop"}, FaultRule("drop", "tools/call", "add")),
        (
            {"prompt": "review", "action": "error", "code": -32000},
            FaultRule("error", "prompts/get", "review", code=-32000),
        ),
        (
            {"resource": "demo://*", "action": "disconnect"},
            FaultRule("disconnect", "resources/read", "demo://*"),
        ),
        (
            {"action": "delay", "seconds": [0.1, 0.2], "seed": 3},
            FaultRule("delay", seconds=(0.1, 0.2), seed=3),
        ),
        ({"faults": [{"action": "reset", "every": 2}]}, FaultRule("reset", every=2)),
        (FaultRule("malformed", line="oops"), FaultRule("malformed", line="oops")),
    ],
)
def test_rules_parse_from_python_values(given: Any, want: FaultRule) -> None:
    assert parse_rules(given) == (want,)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"action": "explode"}, "action 'explode' is not one of: delay, error"),
        ({"action": "drop", "code": 1}, "drop: unknown key(s) code"),
        ({"action": "drop", "nth": 0}, "nth=0: must be a whole number >= 1"),
        ({"action": "drop", "nth": 1, "every": 2}, "nth or every, not both"),
        ({"action": "delay", "seconds": [2, 1]}, "0 <= low <= high"),
        ({"action": "delay", "seconds": "1"}, "seconds='1': must be a number or [low, high]"),
        ({"action": "status", "status": 200}, "must be an HTTP error status"),
        ({"action": "drop", "probability": 2}, "between 0 and 1"),
        (
            {"tool": "add", "name": "x", "action": "drop"},
            "'tool' is short for method 'tools/call' plus name",
        ),
        ({"action": "error", "message": 5}, "message=5: must be a string"),
        ("drop", "a rule is an object with an 'action'"),
    ],
)
def test_bad_rules_say_what_is_wrong(given: Any, message: str) -> None:
    with pytest.raises(ConfigError, match="fault rule 1: ") as info:
        parse_rules([given])
    assert message in str(info.value)


def test_rules_load_from_json_and_toml_files_and_inline_options(tmp_path: Path) -> None:
    (tmp_path / "f.json").write_bytes(
        orjson.dumps({"faults": [{"tool": "add", "nth": 2, "action": "drop"}]})
    )
    (tmp_path / "f.toml").write_text(
        '[[faults]]\ntool = "add"\nnth = 2\naction = "drop"\n', encoding="utf-8"
    )
    want = (FaultRule("drop", "tools/call", "add", nth=2),)
    assert load_rules(tmp_path / "f.json") == load_rules(tmp_path / "f.toml") == want
    both = rules_from_options(tmp_path / "f.json", ['{"action": "delay", "seconds": 1}'])
    assert both == (*want, FaultRule("delay", seconds=1))
    with pytest.raises(ConfigError, match="--fault 'nope': not JSON"):
        rules_from_options(None, ["nope"])
    with pytest.raises(ConfigError, match="cannot read the fault rules"):
        load_rules(tmp_path / "missing.json")


@pytest.mark.parametrize(
    "rule",
    [
        FaultRule("drop", "tools/call", "add", nth=2),
        FaultRule("delay", seconds=(0.5, 1.5), seed=9),
        FaultRule("status", status=429, retry_after=2),
    ],
)
def test_a_rule_round_trips_through_json(rule: FaultRule) -> None:
    assert parse_rules([orjson.loads(orjson.dumps(rule.to_json()))]) == (rule,)


# -- selection -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("selector", "want"),
    [
        ({}, ["x", "x", "x", "x"]),
        ({"nth": 2}, ["ok", "x", "ok", "ok"]),
        ({"every": 2}, ["ok", "x", "ok", "x"]),
        ({"times": 1}, ["x", "ok", "ok", "ok"]),
        ({"every": 1, "times": 3}, ["x", "x", "x", "ok"]),
        ({"name": "ad*"}, ["x", "x", "x", "x"]),
        ({"name": "other"}, ["ok", "ok", "ok", "ok"]),
        ({"method": "tools/*", "nth": 3}, ["ok", "ok", "x", "ok"]),
        ({"method": "prompts/get"}, ["ok", "ok", "ok", "ok"]),
        ({"probability": 0.0}, ["ok", "ok", "ok", "ok"]),
        ({"probability": 1.0}, ["x", "x", "x", "x"]),
    ],
)
def test_selection_by_method_name_and_count(selector: dict[str, Any], want: list[str]) -> None:
    assert answers([{"action": "drop", **selector}]) == want


def test_probability_is_deterministic_for_a_seed_and_differs_across_seeds() -> None:
    runs = {
        seed: answers([{"action": "drop", "probability": 0.5, "seed": seed}], 4)
        for seed in range(6)
    }
    assert all(
        runs[s] == answers([{"action": "drop", "probability": 0.5, "seed": s}], 4) for s in runs
    )
    assert len({tuple(v) for v in runs.values()}) > 1


def test_a_resource_rule_selects_by_uri() -> None:
    [steps] = run(
        CALLS,
        [{"resource": "demo://*", "action": "drop"}],
        [req(9, "resources/read", {"uri": "demo://readme"})],
    )
    assert delivered(steps) == []


def test_rules_without_a_method_leave_the_handshake_alone() -> None:
    rules = [{"action": "drop"}]
    [init, ping] = run([*LEGACY_INIT, *CALLS], rules, [LEGACY_INIT[0][1], req(8, "ping")])
    assert delivered(init)[0]["result"]["protocolVersion"] == "2025-11-25" and delivered(ping) == [
        ok(8, {})
    ]
    [init] = run(
        [*LEGACY_INIT, *CALLS], [{"method": "initialize", "action": "drop"}], [LEGACY_INIT[0][1]]
    )
    assert delivered(init) == []


def test_tool_error_only_hits_tool_calls() -> None:
    steps = run(
        CALLS,
        [{"action": "tool_error"}],
        [req(9, "resources/read", {"uri": "demo://readme"}), call(10, "add", {"a": 1})],
    )
    assert delivered(steps[0]) == [ok(9, {"contents": []})]
    assert delivered(steps[1])[0]["result"]["isError"] is True


def test_counters_are_per_plan_and_rules_count_independently() -> None:
    rules = [{"action": "drop", "nth": 2}, {"action": "error", "nth": 1}]
    got = [delivered(s) for s in run(CALLS, rules, [call(i, "add", {"a": 1}) for i in (1, 2, 3)])]
    assert got[0][0]["error"]["code"] == -32603 and got[1] == [] and "result" in got[2][0]


# -- actions -------------------------------------------------------------------------------


def one(
    rule: dict[str, Any], *, http: bool = False, request: dict[str, Any] | None = None
) -> Sequence[Step]:
    [steps] = run(
        ADD,
        [rule],
        [request or call("c1", "add", {"a": 1}, _meta={"progressToken": "t"})],
        http=http,
    )
    return steps


PROGRESS_OUT = note("notifications/progress", {"progressToken": "t", "progress": 1, "total": 1})
RECORDED = ok(
    "c1",
    {
        "content": [{"type": "text", "text": "2"}],
        "structuredContent": {"result": "2"},
        "isError": False,
    },
)


@pytest.mark.parametrize(
    ("rule", "want"),
    [
        ({"action": "delay", "seconds": 1}, [PROGRESS_OUT, RECORDED]),
        ({"action": "error", "code": -32000, "message": "boom", "data": {"x": 1}},
         [PROGRESS_OUT, {"jsonrpc": "2.0", "id": "c1", "error": {"code": -32000, "message": "boom", "data": {"x": 1}}}]),
        ({"action": "error"}, [PROGRESS_OUT, {"jsonrpc": "2.0", "id": "c1", "error": {"code": -32603, "message": "Internal error (injected by mcptape)"}}]),
        ({"action": "tool_error", "text": "no"}, [PROGRESS_OUT, ok("c1", {"content": [{"type": "text", "text": "no"}], "isError": True})]),
        ({"action": "malformed"}, [PROGRESS_OUT, b"mcptape fault: this line is not JSON"]),
        ({"action": "malformed", "line": "Loading...", "keep_answer": True}, [PROGRESS_OUT, b"Loading...", RECORDED]),
        ({"action": "invalid"}, [PROGRESS_OUT, orjson.dumps({k: v for k, v in RECORDED.items() if k != "jsonrpc"})]),
        ({"action": "invalid", "send": {"jsonrpc": "1.0"}}, [PROGRESS_OUT, b'{"jsonrpc":"1.0"}']),
        ({"action": "truncate"}, [PROGRESS_OUT, orjson.dumps(RECORDED)[: len(orjson.dumps(RECORDED)) // 2]]),
        ({"action": "drop"}, [PROGRESS_OUT]),
        ({"action": "disconnect"}, [PROGRESS_OUT]),
    ],
)  # fmt: skip
def test_each_action_changes_only_the_answer(rule: dict[str, Any], want: list[Any]) -> None:
    assert delivered(one(rule)) == want


def test_a_modern_tool_error_says_it_is_complete() -> None:
    modern = [
        ("c", call(3, "add", {}, _meta=meta())),
        ("s", ok(3, {"content": [], "resultType": "complete"})),
    ]
    [steps] = run(modern, [{"action": "tool_error"}], [call(4, "add", {}, _meta=meta())])
    assert delivered(steps)[0]["result"] == {
        "content": [{"type": "text", "text": "Tool failed (injected by mcptape)"}],
        "isError": True,
        "resultType": "complete",
    }
    [steps] = run(
        modern, [{"action": "tool_error"}], [call(4, "weather", {}, _meta=meta())]
    )  # unmatched: an error answer
    assert delivered(steps)[0]["result"]["resultType"] == "complete"


def test_a_plan_without_rules_delivers_every_answer_as_the_engine_made_it() -> None:
    engine = ReplayEngine.from_cassette(tape(*ADD), ReplayConfig(allow_repeats=True))
    outputs = engine.receive(call(3, "add", {"a": 1}, _meta={"progressToken": 3}))
    steps = Overlay(()).apply(call(3, "add", {"a": 1}), outputs, MessageType.REQUEST)
    assert engine.overlay is None  # no rules, no overlay: the engine's outputs are delivered
    assert list(steps) == outputs and len(steps) == 2  # the progress notification, the answer


def test_disconnect_and_reset_hang_up_after_what_came_before() -> None:
    steps = one({"action": "disconnect", "seconds": 0.5})
    assert isinstance(steps[-1], Hangup) and steps[-1] == Hangup(0.5, False, "c1")
    assert one({"action": "reset"}, http=True)[-1] == Hangup(0.0, True, "c1")


def test_status_is_http_only() -> None:
    steps = one({"action": "status", "status": 429, "retry_after": 3}, http=True)
    status = [s for s in steps if isinstance(s, Status)]
    assert len(status) == 1 and (status[0].status, status[0].retry_after) == (429, 3)
    assert status[0].send.msg == RECORDED
    plan = Overlay(parse_rules([{"action": "status"}, {"action": "reset"}]))
    assert [n.text.split(" (")[0] for n in plan.notes] == ["fault rule 1", "fault rule 2"]
    assert delivered(one({"action": "status"})) == [PROGRESS_OUT, RECORDED]


def test_delays_add_up_and_the_first_other_rule_wins() -> None:
    rules = [
        {"action": "delay", "seconds": 1},
        {"action": "error", "code": 1},
        {"action": "delay", "seconds": 0.5},
        {"action": "drop"},
    ]
    [steps] = run(ADD, rules, [call("c1", "add", {"a": 1})])
    [answer] = [s for s in steps if isinstance(s, Send)]
    assert answer.delay == 1.5 and answer.msg["error"]["code"] == 1


def test_jitter_is_seeded_within_its_range() -> None:
    def delays(seed: int) -> list[float]:
        rules = [{"action": "delay", "seconds": [0.2, 0.4], "seed": seed}]
        return [
            next(s.delay for s in steps if isinstance(s, Send))
            for steps in run(CALLS, rules, [call(i, "add", {"a": 1}) for i in range(4)])
        ]

    first = delays(1)
    assert first == delays(1) and first != delays(2)
    assert all(0.2 <= d <= 0.4 for d in first) and len(set(first)) == 4


def test_a_delayed_answer_holds_back_what_follows_it() -> None:
    cassette = [*CALLS[:2], ("s", note("notifications/tools/list_changed"))]
    [steps] = run(cassette, [{"action": "delay", "seconds": 2}], [call(1, "add", {"a": 1})])
    assert [(s.msg.get("method", "answer"), s.delay) for s in steps if isinstance(s, Send)] == [
        ("answer", 2),
        ("notifications/tools/list_changed", 2),
    ]


def test_the_fault_waits_for_the_answer_across_server_requests() -> None:
    elicit = [
        ("c", call(6, "greet")), ("s", req(1, "elicitation/create", {"message": "name?"})),
        ("c", ok(1, {"action": "accept", "content": {"name": "Ada"}})), ("s", ok(6, {"content": [{"type": "text", "text": "Hi"}]})),
    ]  # fmt: skip
    first, second = run(
        elicit,
        [{"tool": "greet", "action": "error", "code": 7}],
        [call("g", "greet"), ok(1, {"action": "accept", "content": {"name": "Ada"}})],
    )
    assert delivered(first)[0]["method"] == "elicitation/create"
    assert delivered(second)[0]["error"]["code"] == 7


def test_a_cancelled_request_forgets_its_fault() -> None:
    plan = Overlay(parse_rules([{"action": "drop"}]))
    plan.apply(call(1, "add"), [], MessageType.REQUEST)
    plan.apply(note("notifications/cancelled", {"requestId": 1}), [], MessageType.NOTIFICATION)
    answer = Send(ok(1, {}), request_id=1, final=True)
    assert plan.apply(ok(99, {}), [answer], MessageType.RESULT) == [answer]


def test_notes_name_the_rule_and_the_request() -> None:
    steps = one({"action": "drop"})
    assert [s.text for s in steps if isinstance(s, Note)] == [
        "fault rule 1 (drop) hits tools/call add (id 'c1')"
    ]


# -- dry run -------------------------------------------------------------------------------


def test_dry_run_lists_the_recorded_requests_each_rule_hits() -> None:
    rules = [
        {"tool": "add", "every": 2, "action": "error"},
        {"action": "delay", "seconds": 0.25},
        {"tool": "nope", "action": "drop"},
        {"action": "reset"},
    ]
    text = dry_run(rules, tape(*CALLS))
    assert text.splitlines() == [
        "<memory>: 4 fault rule(s), as if the client made the recorded requests in order",
        "rule 1: error -32603 on tools/call add, every=2",
        "    #3 tools/call add  (match 2)",
        "    #7 tools/call add  (match 4)",
        "rule 2: delay 0.25s on any request",
        "    #1 tools/call add  (match 1, 0.250s)",
        "    #3 tools/call add  (match 2, 0.250s)",
        "    #5 tools/call add  (match 3, 0.250s)",
        "    #7 tools/call add  (match 4, 0.250s)",
        "    #9 resources/read demo://readme  (match 5, 0.250s)",
        "rule 3: drop on tools/call nope",
        "    hits no recorded request",
        "rule 4: reset on any request",
        "    skipped: HTTP-only (mcptape serve)",
    ]
