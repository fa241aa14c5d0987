"""The matcher API (`mcptape.matching`): names, registration, what a user's function may return."""

from __future__ import annotations

from typing import Any

import pytest

import mcptape
from mcptape.errors import ConfigError
from mcptape.matching import matcher_names, resolve_matchers
from mcptape.replay import matcher as builtin


def subject(**params: Any) -> mcptape.Subject:
    return mcptape.Subject("tools/call", params, {"method": "tools/call", "params": params})


def test_names_resolve_to_the_engines_own_matchers() -> None:
    assert resolve_matchers(["method", "params"]) == builtin.DEFAULT_MATCHERS
    assert mcptape.match_policy(None).exact and mcptape.match_policy(["method", "params"]).exact
    assert not mcptape.match_policy(["method", "name"]).exact
    assert matcher_names()[:6] == ["method", "params", "name", "arguments", "uri", "cursor"]


@pytest.mark.parametrize(
    ("returns", "reason"),
    [(True, None), (None, None), (False, "mine refused"), ("a differs", "mine: a differs")],
)
def test_a_users_matcher_may_return_a_bool_none_or_a_reason(
    returns: Any, reason: str | None
) -> None:
    (inline,) = resolve_matchers([lambda rec, inc: returns])
    assert inline(subject(), subject()) == (
        None if reason is None else reason.replace("mine", "<lambda>")
    )
    mcptape.register_matcher("mine", lambda rec, inc: returns)
    (named,) = resolve_matchers(["mine"])
    assert named(subject(), subject()) == reason


def test_assertions_and_bugs_in_a_matcher_become_reasons() -> None:
    def strict_a(rec: mcptape.Subject, inc: mcptape.Subject) -> None:
        if rec.params["a"] != inc.params["a"]:
            raise AssertionError(
                "a differs"
            )  # vcrpy's way (a bare assert here would be rewritten by pytest)

    mcptape.register_matcher("strict_a", strict_a)
    (m,) = resolve_matchers(["strict_a"])
    assert m(subject(a=1), subject(a=1)) is None
    assert m(subject(a=1), subject(a=2)) == "strict_a: a differs"
    assert m(subject(), subject(a=2)) == "strict_a raised KeyError: 'a'"


def test_bad_names_say_what_is_known() -> None:
    with pytest.raises(
        ConfigError, match=r"unknown matcher 'nope' in match_on; known: method, params"
    ):
        resolve_matchers(["nope"])
    with pytest.raises(ConfigError, match="is empty"):
        resolve_matchers([])
    with pytest.raises(ConfigError, match="built in"):
        mcptape.register_matcher("method", lambda a, b: True)
    with pytest.raises(ConfigError, match="take lists"):
        mcptape.use_cassette("x.jsonl", match_on="method")  # type: ignore[arg-type]
