"""Custom matching, vcrpy style: named matchers, `match_on`, and a registration hook.

    import mcptape

    def same_city(recorded, incoming):      # two `mcptape.Subject`s
        a = recorded.params.get("arguments", {}).get("city", "").lower()
        b = incoming.params.get("arguments", {}).get("city", "").lower()
        return a == b                      # True/None: a match; False or a string: why not

    mcptape.register_matcher("same_city", same_city)
    async with mcptape.use_cassette(path, match_on=["method", "name", "same_city"]) as tape: ...

A matcher compares a recorded request with an incoming one, both as a `Subject` (method and
params without the volatile parts and the ignored paths, and the message as on the wire). It
returns None or True when they match, False or a short reason when they do not; an
`AssertionError` (vcrpy's way) counts as a reason, any other exception too (named). Matchers
see every request of the method (the handshake included), so read params with `.get`. The built-in names are `method`,
`params` (every significant param: the default pair is `method` + `params`), `name`,
`arguments`, `uri` and `cursor`. This module only builds a `MatchPolicy`: the engine's
matching is the policy's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mcptape.errors import ConfigError
from mcptape.replay import matcher as _m
from mcptape.replay.matcher import DEFAULT_MATCHERS, Matcher, MatchPolicy, Subject

__all__ = [
    "DEFAULT_REGISTRY",
    "MatchPolicy",
    "Matcher",
    "MatcherRegistry",
    "Subject",
    "match_policy",
    "matcher_names",
    "register_matcher",
    "resolve_matchers",
]

UserMatcher = Callable[[Subject, Subject], Any]

_BUILTIN: dict[str, Matcher] = {
    "method": _m.method,
    "params": _m.params,
    "name": _m.name,
    "arguments": _m.arguments,
    "uri": _m.uri,
    "cursor": _m.cursor,
}


def _adapt(label: str, fn: UserMatcher) -> Matcher:
    """A user's matcher in the engine's form: None for a match, else a reason."""

    def match(recorded: Subject, incoming: Subject) -> str | None:
        try:
            result = fn(recorded, incoming)
        except AssertionError as exc:
            return f"{label}: {exc}" if str(exc) else f"{label} refused"
        except (
            Exception
        ) as exc:  # a bug in the user's matcher: a reason that names it, not a dead replay
            return f"{label} raised {type(exc).__name__}: {exc}"
        if result is None or result is True:
            return None
        if result is False:
            return f"{label} refused"
        return f"{label}: {result}"

    match.__name__ = label
    match.__doc__ = fn.__doc__
    return match


class MatcherRegistry:
    """Matcher names a configuration resolves `match_on` with: the built-in ones, then those
    registered here. Each configuration may hold its own (`copy` the default one, register,
    pass it to `match_policy`): what one registers is not seen by another. `register_matcher`
    registers into the process's default registry (`DEFAULT_REGISTRY`), which configurations
    given none use, as vcrpy's does."""

    __slots__ = ("_registered",)

    def __init__(self, registered: dict[str, Matcher] | None = None) -> None:
        self._registered: dict[str, Matcher] = dict(registered or {})

    def copy(self) -> MatcherRegistry:
        """A registry with the same names, registered into apart from now on."""
        return MatcherRegistry(self._registered)

    def register(self, name: str, matcher: UserMatcher) -> None:
        """Makes `matcher` usable by name in `match_on` resolved with this registry.

        Raises:
            ConfigError: `name` is a built-in matcher's name.
        """
        if name in _BUILTIN:
            raise ConfigError(f"matcher name {name!r} is built in; choose another name")
        self._registered[name] = _adapt(name, matcher)

    def names(self) -> list[str]:
        """The names `match_on` accepts: built-in first, then registered ones."""
        return [*_BUILTIN, *self._registered]

    def get(self, name: str) -> Matcher | None:
        return _BUILTIN.get(name) or self._registered.get(name)

    def resolve(self, match_on: Iterable[str | UserMatcher]) -> tuple[Matcher, ...]:
        """Names (built-in or registered here) and plain functions as the engine's matchers.

        Raises:
            ConfigError: an unknown name (the message lists the known ones), or an empty list.
        """
        out: list[Matcher] = []
        for item in match_on:
            if isinstance(item, str):
                found = self.get(item)
                if found is None:
                    raise ConfigError(f"unknown matcher {item!r} in match_on; known: {', '.join(self.names())} "
                                      "(register others with mcptape.register_matcher)")  # fmt: skip
                out.append(found)
            elif callable(item):
                out.append(
                    item
                    if item in _BUILTIN.values()
                    else _adapt(getattr(item, "__name__", "matcher"), item)
                )
            else:
                raise ConfigError(f"match_on takes matcher names or functions; got {item!r}")
        if not out:
            raise ConfigError(
                "match_on is empty: name at least one matcher, e.g. match_on=['method', 'params']"
            )
        return tuple(out)


DEFAULT_REGISTRY = MatcherRegistry()
"""The registry `register_matcher` registers into, and that a configuration given none uses."""


def register_matcher(name: str, matcher: UserMatcher) -> None:
    """Makes `matcher` usable by name in `match_on` (like vcrpy's `register_matcher`), for every
    configuration that uses the default registry (`DEFAULT_REGISTRY`; a `MatcherRegistry` of its
    own keeps a configuration apart).

    Raises:
        ConfigError: `name` is a built-in matcher's name.
    """
    DEFAULT_REGISTRY.register(name, matcher)


def matcher_names(registry: MatcherRegistry | None = None) -> list[str]:
    """The names `match_on` accepts: built-in first, then registered ones."""
    return (registry or DEFAULT_REGISTRY).names()


def resolve_matchers(
    match_on: Iterable[str | UserMatcher], registry: MatcherRegistry | None = None
) -> tuple[Matcher, ...]:
    """`MatcherRegistry.resolve` with `registry` (None: the default one)."""
    return (registry or DEFAULT_REGISTRY).resolve(match_on)


def match_policy(
    match_on: Sequence[str | UserMatcher] | None = None,
    ignore: Sequence[str] = (),
    registry: MatcherRegistry | None = None,
) -> MatchPolicy:
    """The policy for `match_on` (None: the default, method + params) and ignore pointers, its
    names resolved with `registry` (None: the default registry)."""
    matchers = DEFAULT_MATCHERS if match_on is None else resolve_matchers(match_on, registry)
    return MatchPolicy(tuple(ignore), matchers)


def builtin_names(matchers: Sequence[Matcher]) -> list[str] | None:
    """The built-in names of `matchers`, or None when one of them is not built in."""
    names = {fn: n for n, fn in _BUILTIN.items()}
    found = [names.get(m) for m in matchers]
    return None if any(n is None for n in found) else [n for n in found if n is not None]
