"""Ignores: JSON pointers to leave out of a diff, everywhere or in one method, tool, prompt or resource.

Pure (the CLI reads the config file and hands its text to `parse_config`). An ignore is written

    /result/content/0/text                            everywhere
    tools/call:/result/content/0/text                 in every tools/call
    tools/call get_current_time:/result/content/0/text   in the calls of one tool
    prompts/get review:/result/messages/*/content/text   one prompt (names may use * and ?)
    resources/read file:///tmp/log.txt:/result/contents/0/text   one resource (the last ":/" splits)

and is given with `--ignore` or in `mcptape-diff.toml` in the folder of the cassettes:

    ignore = ["tools/call get_current_time:/result/content/0/text"]

An unscoped `/params/...` pointer also leaves the matching key (the call still pairs up);
a scoped one only hides the rows.
"""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from mcptape.errors import ConfigError

from .pointer import matches, tokens
from .types import Difference

CONFIG_NAME = "mcptape-diff.toml"
"""The config file `diff` and `verify` read from the folder of the (first) cassette."""


@dataclass(frozen=True, slots=True)
class Ignore:
    """One ignore: a pointer pattern, optionally scoped to a method and a name."""

    text: str
    """As the user wrote it."""
    pattern: tuple[str, ...]
    method: str | None = None
    name: str | None = None

    @property
    def scoped(self) -> bool:
        return self.method is not None

    def covers(self, d: Difference) -> bool:
        """True when the row `d` lies under this ignore's pointer, in its scope."""
        if not matches(self.pattern, [str(t) for t in tokens(d.path)]):
            return False
        if self.method is None:
            return True
        method, name = split_label(d.exchange)
        if method != self.method:
            return False
        return self.name is None or (name is not None and fnmatch.fnmatchcase(name, self.name))


def split_label(label: str) -> tuple[str, str | None]:
    """(method, name) of an exchange label: `tools/call greet #2` -> ("tools/call", "greet")."""
    parts = label.split(" ")
    name = parts[1] if len(parts) > 1 and not parts[1].startswith("#") else None
    return parts[0], name


def parse_ignore(text: str) -> Ignore:
    """Parses one ignore.

    Raises:
        ConfigError: not a pointer below the root, or a scope without a pointer.
    """
    spec = text.strip()
    scope, pointer = "", spec
    if not spec.startswith("/"):
        at = spec.rfind(":/")
        if at < 0:
            raise ConfigError(f"ignore {text!r}: give a JSON pointer such as /result/content/0/text, "
                              "or scope it as 'tools/call NAME:/result/...' (see docs/diff.md)")  # fmt: skip
        scope, pointer = spec[:at].strip(), spec[at + 1 :]
    if pointer == "/":
        raise ConfigError(
            f"ignore {text!r}: the root would ignore everything; give a JSON pointer below it, such as /result/content/0/text"
        )
    method, _, name = scope.partition(" ")
    return Ignore(spec, tuple(tokens(pointer)), method or None, name.strip() or None)


def parse_ignores(texts: Iterable[str]) -> list[Ignore]:
    return [parse_ignore(t) for t in texts]


def parse_config(raw: str, where: str) -> list[Ignore]:
    """The ignores of a `mcptape-diff.toml` whose text is `raw` (`where` names it in errors).

    Raises:
        ConfigError: not valid TOML, or an entry is not a valid ignore (with its line).
    """
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"ignore"})
    if unknown:
        raise ConfigError(
            f"{where}:{_line_of(raw, unknown[0])}: unknown setting {unknown[0]!r}; known: ignore"
        )
    entries = data.get("ignore", [])
    if not isinstance(entries, list) or not all(isinstance(e, str) for e in entries):
        raise ConfigError(f"{where}:{_line_of(raw, 'ignore')}: ignore must be a list of strings")
    out = []
    for entry in entries:
        try:
            out.append(parse_ignore(entry))
        except ConfigError as exc:
            raise ConfigError(f"{where}:{_line_of(raw, entry)}: {exc}") from None
    return out


def _line_of(raw: str, needle: str) -> int:
    for n, line in enumerate(raw.splitlines(), 1):
        if needle in line:
            return n
    return 1


def unscoped_patterns(ignores: Sequence[Ignore]) -> tuple[tuple[str, ...], ...]:
    """The pointer patterns that apply everywhere (normalizing drops them, `/params` from the key too)."""
    return tuple(i.pattern for i in ignores if not i.scoped)


def covered(ignores: Sequence[Ignore], d: Difference) -> bool:
    return any(i.covers(d) for i in ignores)
