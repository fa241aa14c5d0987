"""Matchers, the match policy, field diffs and nearness ranking (pure, table-driven)."""

from __future__ import annotations

from typing import Any

import pytest

from mcptape.replay import matcher as m
from mcptape.replay.matcher import (
    ABSENT,
    FieldDiff,
    MatchPolicy,
    explain_diffs,
    field_diff,
    nearest,
)

BASE: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "add", "arguments": {"a": 1}, "cursor": "c1", "uri": "u://1"},
}


def variant(**params: Any) -> dict[str, Any]:
    return {**BASE, "params": {**BASE["params"], **params}}


@pytest.mark.parametrize(
    ("other", "failing"),
    [
        (BASE, set()),
        ({**BASE, "method": "prompts/get"}, {"method"}),
        (variant(name="sub"), {"params", "name"}),
        (variant(arguments={"a": 2}), {"params", "arguments"}),
        (variant(uri="u://2"), {"params", "uri"}),
        (variant(cursor="c2"), {"params", "cursor"}),
        ({**BASE, "id": 99}, set()),
        (
            variant(
                _meta={
                    "progressToken": 7,
                    "traceparent": "00-x",
                    "io.modelcontextprotocol/clientInfo": {"name": "z"},
                }
            ),
            set(),
        ),
        (variant(requestState="opaque-2"), set()),
        (variant(_meta={"io.modelcontextprotocol/logLevel": "info"}), {"params"}),
    ],
)
def test_each_matcher_fails_only_on_its_own_field(other: dict[str, Any], failing: set[str]) -> None:
    policy = MatchPolicy()
    rec, got = policy.subject(BASE), policy.subject(other)
    named = [m.method, m.params, m.name, m.arguments, m.uri, m.cursor]
    assert {f.__name__ for f in named if f(rec, got) is not None} == failing


def test_ignore_pointers_leave_paths_out_of_matching() -> None:
    policy = MatchPolicy(ignore=("/arguments/a", "/params/cursor"))
    assert policy.subject(BASE).params == {"name": "add", "arguments": {}, "uri": "u://1"}
    assert (
        m.params(policy.subject(BASE), policy.subject(variant(arguments={"a": 9}, cursor="z")))
        is None
    )


def test_policy_is_exact_while_params_matcher_is_present() -> None:
    assert MatchPolicy().exact and MatchPolicy().extra == ()
    loose = MatchPolicy(matchers=(m.method, m.name))
    assert not loose.exact and loose.extra == (m.name,)


@pytest.mark.parametrize(
    ("a", "b", "diffs"),
    [
        ({"x": 1}, {"x": 1}, []),
        ({"x": 1}, {"x": 2}, [FieldDiff("/x", 1, 2)]),
        ({"x": 1}, {}, [FieldDiff("/x", 1, ABSENT)]),
        ({}, {"y": [1]}, [FieldDiff("/y", ABSENT, [1])]),
        ({"l": [1, 2]}, {"l": [1, 3]}, [FieldDiff("/l/1", 2, 3)]),
        ({"l": [1, 2]}, {"l": [1]}, [FieldDiff("/l", [1, 2], [1])]),
        ({"a/b": {"c": True}}, {"a/b": {"c": 1}}, [FieldDiff("/a~1b/c", True, 1)]),
        ({"n": 1}, {"n": 1.0}, [FieldDiff("/n", 1, 1.0)]),
    ],
)
def test_field_diff_names_each_differing_leaf(a: Any, b: Any, diffs: list[FieldDiff]) -> None:
    assert field_diff(a, b) == diffs


def test_explain_diffs_reads_like_a_sentence() -> None:
    text = explain_diffs(
        [
            FieldDiff("/arguments/a", 1, 5),
            FieldDiff("/cursor", "c", ABSENT),
            FieldDiff("/x", ABSENT, 2),
            FieldDiff("/y", 1, 2),
        ]
    )
    assert (
        text
        == 'arguments/a is 5 (recorded 1); cursor is absent (recorded "c"); x was not recorded (got 2); and 1 more'
    )
    assert explain_diffs([FieldDiff("/m", "hi", "bye")]) == 'm is "bye" (recorded "hi")', (
        "values are JSON, as the user wrote them"
    )


def test_nearest_prefers_same_method_then_same_name_then_fewest_differences() -> None:
    policy = MatchPolicy()
    recorded = [
        (1, policy.subject({"method": "prompts/get", "params": {"name": "add"}})),
        (
            2,
            policy.subject(
                {"method": "tools/call", "params": {"name": "sub", "arguments": {"a": 1}}}
            ),
        ),
        (
            3,
            policy.subject(
                {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}}
            ),
        ),
        (
            4,
            policy.subject(
                {"method": "tools/call", "params": {"name": "add", "arguments": {"a": 2}}}
            ),
        ),
    ]
    got = policy.subject({"method": "tools/call", "params": {"name": "add", "arguments": {"a": 1}}})
    near = nearest(recorded, got, policy, limit=3)
    assert [n.seq for n in near] == [3, 4, 2]
    assert near[0].to_json()["diff"] == [
        {"path": "/arguments/b", "recorded": 1, "incoming": ABSENT}
    ]
    assert near[0].failed
