"""Literals in long strings, found with C-speed passes only (the secret scan of a large result).

Looking for a few dozen literals (token prefixes, secret-name words) in a long string costs
one `str.find` pass each. Most of them are ruled out at once by a character they hold that
the text does not: `c in text` is a `memchr` pass, much cheaper than a `find`, its answer is kept per text, and one absent character rules out every
literal holding it. `Haystack` asks those questions of one text and of its lowercased copy;
`b64_class` maps bytes so that one `find` locates runs of base64 characters.

Pure, no dependencies: the rules stay in `mcptape.redaction.secrets`, which uses this to run them fast.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

B64_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

B64_CLASS = bytes(0x41 if i in B64_CHARS else 0x20 for i in range(256))
"""A `bytes.translate` table: each base64 character becomes `A`, every other byte a space."""


class Chars[S: (bytes, str)]:
    """Which characters (bytes) one text holds, each asked of the text once (then remembered)."""

    __slots__ = ("_seen", "_text")

    def __init__(self, text: S) -> None:
        self._text: S = text
        self._seen: dict[S, bool] = {}

    def may_hold(self, literal: S) -> bool:
        """False when a character of `literal` is not in the text (then neither is `literal`)."""
        seen = self._seen
        for i in range(len(literal)):
            c = literal[i : i + 1]
            got = seen.get(c)
            if got is None:
                got = seen[c] = c in self._text
            if not got:
                return False
        return True


class Haystack:
    """One long string, asked for many literals: `holds` and `positions` rule a literal out by
    its characters first and search for it only when they are all there. `low` is the text
    lowercased, made once, on first use."""

    __slots__ = ("_chars", "_low", "_low_chars", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        self._chars = Chars(text)
        self._low: str | None = None
        self._low_chars: Chars[str] | None = None

    @property
    def low(self) -> str:
        if self._low is None:
            self._low = self.text.lower()
        return self._low

    @property
    def folds_in_place(self) -> bool:
        """Lowercasing keeps every position (and ASCII case-insensitive matching is the whole
        story): the text is ASCII."""
        return self.text.isascii()

    def holds(self, literal: str, low: bool = False) -> bool:
        """`literal in text` (in `low` when `low`)."""
        chars, hay = self._side(low)
        return chars.may_hold(literal) and literal in hay

    def positions(self, literal: str, low: bool = False) -> Iterator[int]:
        """Where `literal` starts in the text (in `low` when `low`), in order, overlaps included."""
        chars, hay = self._side(low)
        if not literal or not chars.may_hold(literal):
            return
        pos = hay.find(literal)
        while pos >= 0:
            yield pos
            pos = hay.find(literal, pos + 1)

    def _side(self, low: bool) -> tuple[Chars[str], str]:
        if not low:
            return self._chars, self.text
        if self._low_chars is None:
            self._low_chars = Chars(self.low)
        return self._low_chars, self.low


def b64_runs(text: str, minimum: int) -> Iterator[tuple[int, int]]:
    """Each maximal run of at least `minimum` base64 characters in an ASCII `text`, as
    (start, end), left to right (one `translate` pass, then one `find` per run)."""
    mapped = text.encode("ascii").translate(B64_CLASS)
    seed = b"A" * minimum
    n = len(mapped)
    start = mapped.find(seed)
    while start >= 0:
        end = mapped.find(b" ", start + minimum)
        end = n if end < 0 else end
        yield start, end
        start = mapped.find(seed, end)


def minimal[S: (bytes, str)](literals: Iterable[S]) -> tuple[S, ...]:
    """The literals that hold no other one: a text holds one of `literals` when it holds one of
    these (`"key"` stands for `"accountkey"` and `"private key"`)."""
    unique = sorted(set(literals), key=len)
    kept: list[S] = []
    for lit in unique:
        if not any(k in lit for k in kept):
            kept.append(lit)
    return tuple(kept)


def trie_pattern(literals: Iterable[bytes]) -> bytes:
    """A regular expression that matches where one of `literals` does, written as their prefix
    tree (`p(?:in|w)` for `pin` and `pw`): the regex engine tries an alternation branch by
    branch at every position, and a tree rules out most positions at its first byte instead of
    once per literal (for the 34 literals of the default rules, half the time of `a|b|c...`)."""
    tree: dict[int, dict[int, Any]] = {}
    ends: set[int] = set()
    for lit in set(literals):
        if not lit:
            return b""  # the empty literal: found everywhere
        node = tree
        for byte in lit:
            node = node.setdefault(byte, {})
        ends.add(id(node))

    def branch(node: dict[int, Any]) -> bytes:
        if id(node) in ends:  # a literal ends here: what a longer one adds need not be found
            return b""
        alts = [re.escape(bytes([b])) + branch(sub) for b, sub in sorted(node.items())]
        return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"

    return branch(tree) if tree else b"(?!)"


def holds_any[S: (bytes, str)](text: S, literals: tuple[S, ...]) -> bool:
    """Does `text` hold one of `literals`? One `memchr` per distinct character first, then one
    `find` for each literal whose characters are all there."""
    chars = Chars(text)
    return any(chars.may_hold(lit) and lit in text for lit in literals)


def holds_b64_run(data: bytes, minimum: int, maximum: int | None = None) -> bool:
    """Does `data` hold a maximal run of `minimum` to `maximum` base64 characters (no upper
    bound: None)? A short head first: a long payload that has one usually has it early."""
    seed = b"A" * minimum
    if len(data) > 65536 and _run_in(data[:65536].translate(B64_CLASS), seed, maximum, False):
        return True
    return _run_in(data.translate(B64_CLASS), seed, maximum, True)


def _run_in(mapped: bytes, seed: bytes, maximum: int | None, whole: bool) -> bool:
    """Is there a run of `seed` or more `A`s in `mapped`, `maximum` at most? (`whole`: `mapped`
    is all of the data; else a run that reaches its end is not known to end there.)"""
    start = mapped.find(seed)
    while start >= 0:
        if maximum is None:
            return True
        end = mapped.find(b" ", start + len(seed))
        if end < 0:
            return whole and len(mapped) - start <= maximum
        if end - start <= maximum:
            return True
        start = mapped.find(seed, end)
    return False
