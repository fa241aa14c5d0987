"""Matchers registered per configuration (`mcptape.matching.MatcherRegistry`): what one registers
another does not see; `mcptape.register_matcher` registers into the default registry."""

from __future__ import annotations

import pytest

import mcptape
from mcptape.errors import ConfigError
from mcptape.matching import DEFAULT_REGISTRY, MatcherRegistry, match_policy, resolve_matchers

from .test_matching import subject


def test_a_registry_of_its_own_keeps_its_matchers_apart() -> None:
    mine, theirs = MatcherRegistry(), MatcherRegistry()
    mine.register("only_a", lambda rec, inc: inc.params.get("a") == 1)
    (only_a,) = mine.resolve(["only_a"])
    assert only_a(subject(), subject(a=1)) is None
    assert only_a(subject(), subject(a=2)) == "only_a refused"
    with pytest.raises(ConfigError, match="unknown matcher 'only_a'"):
        theirs.resolve(["only_a"])
    with pytest.raises(ConfigError, match="unknown matcher 'only_a'"):
        resolve_matchers(["only_a"])  # (the default registry)
    assert not match_policy(["method", "only_a"], registry=mine).exact
    assert mine.names()[-1] == "only_a" and "only_a" not in theirs.names()


def test_a_copy_of_the_default_registry_keeps_what_was_registered_and_then_goes_its_own_way() -> (
    None
):
    mcptape.register_matcher("shared_b", lambda rec, inc: True)
    copy = DEFAULT_REGISTRY.copy()
    copy.register("copied_c", lambda rec, inc: False)
    assert copy.resolve(["shared_b"])[0](subject(), subject()) is None
    assert "copied_c" not in DEFAULT_REGISTRY.names()
    with pytest.raises(ConfigError, match="built in"):
        copy.register("params", lambda rec, inc: True)
