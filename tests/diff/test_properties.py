"""Properties: any message soup normalizes without crashing; a cassette equals itself; ids never matter."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcptape.diff.engine import diff_cassettes

from .builders import cassette

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "_meta", "name", "uri"]), inner, max_size=3)
    ),
    max_leaves=8,
)
methods = st.sampled_from([
    "initialize", "server/discover", "tools/list", "tools/call", "prompts/get", "resources/read", "logging/setLevel",
    "notifications/progress", "notifications/message", "elicitation/create", "subscriptions/listen", "ping",
])  # fmt: skip
ids = st.integers(0, 4) | st.sampled_from(["a", "b"])


@st.composite
def wire_message(draw: Any) -> tuple[str, Any]:
    who = draw(st.sampled_from(["c", "s"]))
    shape = draw(st.sampled_from(["request", "notification", "result", "error", "junk"]))
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if shape in ("request", "notification"):
        msg["method"] = draw(methods)
        msg["params"] = draw(json_values)
    if shape in ("request", "result", "error"):
        msg["id"] = draw(ids)
    if shape == "result":
        msg["result"] = draw(json_values)
    if shape == "error":
        msg["error"] = draw(
            st.fixed_dictionaries(
                {"code": st.integers(-32700, -32000), "message": st.text(max_size=3)}
            )
            | json_values
        )
    if shape == "junk":
        return who, draw(json_values)
    return who, msg


sessions = st.lists(wire_message(), max_size=14)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions)
def test_any_session_diffs_equivalent_to_itself(wire: list[tuple[str, Any]]) -> None:
    report = diff_cassettes(cassette(*wire), cassette(*wire))
    assert report.equivalent and report.envelope == []


@settings(max_examples=100, deadline=None)
@given(sessions, sessions)
def test_any_two_sessions_diff_without_crashing(
    a: list[tuple[str, Any]], b: list[tuple[str, Any]]
) -> None:
    report = diff_cassettes(cassette(*a), cassette(*b))
    assert report.exit_code in (0, 1)
    assert all(
        d.kind in ("breaking", "changed", "added", "removed", "cosmetic")
        for d in report.differences
    )


def _shift(value: Any) -> Any:
    if isinstance(value, list):
        return [_shift(v) for v in value]
    if isinstance(value, dict):
        out = dict(value)
        if isinstance(out.get("id"), int) and not isinstance(out["id"], bool):
            out["id"] = f"renumbered-{out['id']}"
        return out
    return value


@settings(max_examples=100, deadline=None)
@given(sessions)
def test_renaming_every_id_consistently_changes_nothing(wire: list[tuple[str, Any]]) -> None:
    shifted = [(who, _shift(msg)) for who, msg in wire]
    assert diff_cassettes(cassette(*wire), cassette(*shifted)).equivalent
