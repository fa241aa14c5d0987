"""engine: what differs between two cassettes, named by exchange and path, classified once."""

from __future__ import annotations

from typing import Any

import pytest

from mcptape.diff.engine import diff_cassettes
from mcptape.diff.types import MISSING, DiffOptions, DiffReport

from .builders import (
    LEGACY,
    SERVER_INFO,
    cassette,
    err,
    legacy_handshake,
    meta,
    modern_handshake,
    note,
    req,
    res,
    text_result,
    tool,
)  # fmt: skip


def diff(a: list[Any], b: list[Any], **opts: Any) -> DiffReport:
    return diff_cassettes(cassette(*a), cassette(*b), DiffOptions(**opts))


def rows(report: DiffReport) -> list[tuple[str, str, str, str]]:
    return [(d.kind, str(d.section), d.exchange, d.path) for d in report.differences]


V1_TOOLS = [
    tool(
        "add",
        {"a": {"type": "integer"}, "b": {"type": "integer"}},
        ["a", "b"],
        description="Add two integers.",
    ),
    tool("echo", {"message": {"type": "string"}}, ["message"]),
    tool("weather", {"city": {"type": "string"}}, ["city"]),
]
V2_TOOLS = [
    tool(
        "add",
        {"a": {"type": "integer"}, "b": {"type": "integer"}},
        ["a", "b"],
        description="Add two integers and return the sum.",
    ),
    tool("echo", {"message": {"type": "string"}, "tone": {"type": "string"}}, ["message", "tone"]),
    tool("multiply", {"a": {"type": "integer"}}, ["a"]),
]


def session(tools: list[Any], greeting: str, fail_code: int, *, modern: bool = False) -> list[Any]:
    m = {"_meta": meta("info")} if modern else {}
    extra = (
        {"resultType": "complete", "_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
        if modern
        else {}
    )
    list_extra = {"resultType": "complete", "ttlMs": 0, "cacheScope": "private"} if modern else {}
    return [
        *(modern_handshake() if modern else legacy_handshake()),
        req(2, "tools/list", {**m}), res(2, {"tools": tools, **list_extra}),
        req(3, "tools/call", {"name": "greet", "arguments": {}, **m}), res(3, {**text_result(greeting), "structuredContent": {"result": greeting}, **extra}),
        req(4, "tools/call", {"name": "fail", "arguments": {}, **m}), err(4, fail_code, "failed: boom"),
        req(5, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}, **m}),
        note("notifications/progress", {"progressToken": 5, "progress": 1, "total": 2}),
        note("notifications/message", {"level": "info", "data": "adding"}),
        res(5, {**text_result("3"), **extra}),
    ]  # fmt: skip


V1 = session(V1_TOOLS, "Hello, Ada!", -32000)
V2 = session(V2_TOOLS, "Hi, Ada!", -32001)

EXPECTED_V1_V2 = [
    ("cosmetic", "tools", "tool add", "/tools/add/description"),
    ("breaking", "tools", "tool echo", "/tools/echo/inputSchema/properties/tone"),
    ("added", "tools", "tool multiply", "/tools/multiply"),
    ("breaking", "tools", "tool weather", "/tools/weather"),
    ("changed", "result", "tools/call greet", "/result/content/0/text"),
    ("changed", "error", "tools/call fail", "/error/code"),
]


def test_the_same_session_is_equivalent() -> None:
    report = diff(V1, V1)
    assert report.equivalent and report.exit_code == 0
    assert report.differences == [] and report.envelope == []


def test_legacy_and_modern_recordings_of_one_server_differ_only_in_the_envelope() -> None:
    report = diff(V1, session(V1_TOOLS, "Hello, Ada!", -32000, modern=True))
    assert rows(report) == []
    assert report.equivalent
    paths = {d.path for d in report.envelope}
    assert {
        "/protocol/version",
        "/result/resultType",
        "/result/ttlMs",
        "/result/cacheScope",
    } <= paths
    assert (
        "/server/capabilities/tools/listChanged" in paths
    )  # sub-flags differ across eras: envelope
    strict = diff(V1, session(V1_TOOLS, "Hello, Ada!", -32000, modern=True), strict_envelope=True)
    assert not strict.equivalent and strict.exit_code == 1 and strict.differences == []


@pytest.mark.parametrize("modern", [False, True])
def test_a_second_release_lists_each_change_once_with_its_class(modern: bool) -> None:
    report = diff(
        session(V1_TOOLS, "Hello, Ada!", -32000, modern=modern),
        session(V2_TOOLS, "Hi, Ada!", -32001, modern=modern),
    )
    assert sorted(rows(report)) == sorted(EXPECTED_V1_V2)
    assert report.counts() == {
        "breaking": 2,
        "changed": 2,
        "added": 1,
        "removed": 0,
        "relaxed": 0,
        "tightened": 0,
        "cosmetic": 1,
    }
    assert report.exit_code == 1
    greet = next(d for d in report.differences if d.exchange == "tools/call greet")
    assert (greet.a, greet.b) == ("Hello, Ada!", "Hi, Ada!")
    assert "structuredContent" in greet.message  # its twin is not listed a second time


def test_the_server_version_is_envelope_and_the_name_is_behaviour() -> None:
    report = diff(
        legacy_handshake(),
        legacy_handshake(info={"name": "other", "version": "9"}, instructions="bye"),
    )
    assert sorted(rows(report)) == [
        ("changed", "server", "server", "/server/name"),
        ("cosmetic", "server", "server", "/server/instructions"),
    ]
    assert [(d.path, d.a, d.b) for d in report.envelope] == [("/server/version", "1.0.0", "9")]


def test_error_messages_count_only_when_strict() -> None:
    a = [req(1, "tools/call", {"name": "f"}), err(1, -32000, "one")]
    b = [req(1, "tools/call", {"name": "f"}), err(1, -32000, "two")]
    assert diff(a, b).equivalent
    strict = diff(a, b, strict_messages=True)
    assert rows(strict) == [("changed", "error", "tools/call f", "/error/message")]


def test_a_result_that_became_an_error_is_one_difference() -> None:
    a = [req(1, "tools/call", {"name": "f"}), res(1, text_result("ok"))]
    b = [req(1, "tools/call", {"name": "f"}), err(1, -32601, "nope")]
    report = diff(a, b)
    assert rows(report) == [("changed", "error", "tools/call f", "/error")]
    assert report.differences[0].b == {"code": -32601}


def test_resource_not_found_codes_are_equivalent_but_noted() -> None:
    a = [req(1, "resources/read", {"uri": "x://y"}), err(1, -32002, "not found")]
    b = [req(1, "resources/read", {"uri": "x://y"}), err(1, -32602, "not found")]
    report = diff(a, b)
    assert report.equivalent
    assert [(d.path, d.a, d.b) for d in report.envelope] == [("/error/code", -32002, -32602)]


def test_progress_steps_and_logs_are_compared_in_order() -> None:
    def call(steps: list[int], logs: list[str]) -> list[Any]:
        return [req(1, "tools/call", {"name": "t", "_meta": {"progressToken": 1}}),
                *[note("notifications/progress", {"progressToken": 1, "progress": s}) for s in steps],
                *[note("notifications/message", {"level": "info", "data": d}) for d in logs],
                res(1, text_result("ok"))]  # fmt: skip

    report = diff(call([1, 2], ["a"]), call([1, 3], ["a", "b"]))
    assert rows(report) == [
        ("added", "notifications", "tools/call t", "/logs/1"),
        ("changed", "notifications", "tools/call t", "/progress/1/progress"),
    ]


def test_logs_are_not_compared_when_different_levels_were_asked() -> None:
    a = [
        req(1, "tools/call", {"name": "t", "_meta": meta("debug")}),
        note("notifications/message", {"level": "debug", "data": "x"}),
        res(1, text_result("ok")),
    ]
    b = [req(1, "tools/call", {"name": "t", "_meta": meta("error")}), res(1, text_result("ok"))]
    report = diff(a, b)
    assert report.equivalent
    assert [(d.path, d.a, d.b) for d in report.envelope] == [
        ("/params/_meta/logLevel", "debug", "error")
    ]


def test_exchanges_only_in_one_cassette_are_added_or_removed() -> None:
    a = [
        req(1, "tools/call", {"name": "x"}),
        res(1, text_result("1")),
        req(2, "tools/call", {"name": "x"}),
        res(2, text_result("1")),
    ]
    b = [
        req(1, "tools/call", {"name": "x"}),
        res(1, text_result("1")),
        req(2, "prompts/get", {"name": "p"}),
        res(2, {"messages": []}),
    ]
    report = diff(a, b)
    assert rows(report) == [
        ("removed", "exchange", "tools/call x #2", ""),
        ("added", "exchange", "prompts/get p", ""),
    ]
    assert report.differences[0].a == text_result("1") and report.differences[0].b is MISSING


def test_ignore_patterns_leave_out_paths_everywhere() -> None:
    a = [
        req(1, "tools/call", {"name": "now"}),
        res(1, {"content": [{"type": "text", "text": "12:00"}], "isError": False}),
    ]
    b = [
        req(1, "tools/call", {"name": "now"}),
        res(1, {"content": [{"type": "text", "text": "12:01"}], "isError": False}),
    ]
    assert not diff(a, b).equivalent
    assert diff(a, b, ignore=("/result/content/*/text",)).equivalent
    assert diff(a, b, ignore=("/result",)).equivalent
    assert not diff(a, b, ignore=("/result/content/1",)).equivalent


def test_ignore_tool_descriptions_with_a_wildcard() -> None:
    a = [req(1, "tools/list"), res(1, {"tools": [tool("t", description="one")]})]
    b = [req(1, "tools/list"), res(1, {"tools": [tool("t", description="two")]})]
    assert rows(diff(a, b)) == [("cosmetic", "tools", "tool t", "/tools/t/description")]
    assert diff(a, b, ignore=("/tools/*/description",)).equivalent


def test_surfaces_are_compared_only_when_both_sides_listed_them() -> None:
    a = [req(1, "tools/list"), res(1, {"tools": [tool("t")]})]
    b = [req(1, "prompts/list"), res(1, {"prompts": []})]
    assert [d.section for d in diff(a, b).differences] == ["exchange", "exchange"]


def test_prompt_arguments_are_classified() -> None:
    def prompts(args: list[dict[str, Any]]) -> list[Any]:
        return [
            req(1, "prompts/list"),
            res(1, {"prompts": [{"name": "review", "arguments": args}]}),
        ]

    report = diff(prompts([{"name": "code", "required": True}, {"name": "lang"}]),
                  prompts([{"name": "code", "required": True, "description": "the code"}, {"name": "style", "required": True}]))  # fmt: skip
    assert sorted((d.kind, d.path) for d in report.differences) == [
        ("breaking", "/prompts/review/arguments/lang"),
        ("breaking", "/prompts/review/arguments/style"),
        ("cosmetic", "/prompts/review/arguments/code/description"),
    ]
    relaxed = diff(prompts([{"name": "code", "required": True}]), prompts([{"name": "code"}]))
    assert [(d.kind, d.change, d.impact, d.message) for d in relaxed.differences] == [
        ("relaxed", "relaxed", "compatible", "argument 'code' is now optional (relaxed)")
    ]


def test_resources_and_templates_added_and_removed() -> None:
    def lists(uris: list[str], templates: list[str]) -> list[Any]:
        return [req(1, "resources/list"), res(1, {"resources": [{"uri": u, "name": u} for u in uris]}),
                req(2, "resources/templates/list"), res(2, {"resourceTemplates": [{"uriTemplate": t, "name": t} for t in templates]})]  # fmt: skip

    report = diff(lists(["a://1", "a://2"], ["t://{x}"]), lists(["a://1"], ["t://{x}", "t://{y}"]))
    assert sorted((d.kind, d.exchange) for d in report.differences) == [
        ("added", "template t://{y}"),
        ("breaking", "resource a://2"),
    ]


def test_change_notification_streams_are_compared() -> None:
    a = [*legacy_handshake(), note("notifications/tools/list_changed")]
    b = [*legacy_handshake()]
    assert rows(diff(a, b)) == [
        ("removed", "notifications", "(server notifications)", "/changes/0")
    ]


def test_legacy_versions_are_detected_from_the_handshake() -> None:
    report = diff(V1, V1)
    assert (report.a.era, report.a.protocol_version) == ("legacy", LEGACY)


def test_a_session_without_handshake_compares_only_what_results_said() -> None:
    served = {"_meta": {"io.modelcontextprotocol/serverInfo": SERVER_INFO}}
    modern = [
        req(1, "tools/call", {"name": "t", "_meta": meta()}),
        res(1, {**text_result("ok"), **served}),
    ]
    legacy = [*legacy_handshake(), req(2, "tools/call", {"name": "t"}), res(2, text_result("ok"))]
    assert rows(diff(legacy, modern)) == []
    renamed = [req(1, "tools/call", {"name": "t", "_meta": meta()}),
               res(1, {**text_result("ok"), "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "other"}}})]  # fmt: skip
    assert rows(diff(legacy, renamed)) == [("changed", "server", "server", "/server/name")]
