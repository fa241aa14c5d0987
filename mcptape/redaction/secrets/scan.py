"""The secret scan: `Scanner.spans(text)` finds the parts of a string the rules of
`mcptape.redaction.secrets.rules` call secret (start, end, rule name); `replace_spans` replaces them,
`PemLines` follows a PEM key over several lines. Linear in its input (see the package)."""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from mcptape.redaction.literals import Haystack, b64_runs

from .rules import (
    MARKER,
    NAME_WORDS,
    PEM_BEGIN,
    PEM_END,
    PEM_HINT,
    PEM_NAME,
    SHAPES,
    Shape,
    Strength,
    _printable,
    credential_like,
    name_strength,
    normalize,
    random_looking,
)

_TO_SEPARATOR = re.compile(r"[a-z0-9_.-]{0,40}[\"']?[ \t]{0,16}[=:]")
"""From the end of a name word (in lowercased text) to the separator of an assignment."""
_NAME_BEFORE = re.compile(r"[ \t]{0,16}[\"']?([A-Za-z0-9_.-]{0,63}[A-Za-z_])")
"""Matched on the reversed text before a separator: the name, reversed (bounded, so linear)."""
_VALUE_AFTER = re.compile(
    r"[ \t]{0,16}(?:>[ \t]{0,3})?[\"']?([^\s\"'&,;<>(){}\[\]=:?]{1,512}(?::[^\s\"'&,;<>(){}\[\]=:?]{1,512})?={0,2})"
)
"""The value after a separator (`=`, `:` or `=>`, columns aligned with spaces or tabs before and
after it): no `=`, `:` or `?` in it (but one `user:password` colon), bounded,
so that a string of many separators is still scanned in linear time."""
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{20}[A-Za-z0-9+/]*={0,2}")
"""A base64 run of 20 characters or more, from its first character (the lookbehind makes each
position inside a word fail at once: about twice as fast on prose)."""
B64_MIN = 20
"""How long a base64 run must be to be decoded (`_B64_RUN`)."""
B64_MAX = 8192
"""How long a base64 run (its `=` included) may be to be decoded: a longer one is an image or a
file, not a credential."""
LONG = 4096
"""From this length a string is scanned the long way (`Scanner._rules_long`): the same parts."""


def _b64_matches(text: str) -> Iterator[tuple[int, int]]:
    return (m.span() for m in _B64_RUN.finditer(text))


def _b64_spans(text: str) -> Iterator[tuple[int, int]]:
    """`_B64_RUN`'s matches in an ASCII text, (start, end): each maximal run of `B64_MIN` base64
    characters or more, with up to two `=` after it."""
    n = len(text)
    for start, end in b64_runs(text, B64_MIN):
        stop = end
        while stop < n and stop - end < 2 and text[stop] == "=":
            stop += 1
        yield start, stop


@dataclass(frozen=True, slots=True)
class Span:
    """A secret inside a string: `text[start:end]`, found by the rule `rule`."""

    start: int
    end: int
    rule: str


class Scanner:
    """Finds the secret parts of strings with the table above (and extra patterns and names).

    `strict` is the `check` mode: a value under a strong name counts only when it also looks
    random (a report should not cry wolf over `password=hunter2` in a fixture); redaction is
    not strict (it replaces `hunter2` too).
    """

    def __init__(self, extra_names: Iterable[str] = (), extra_patterns: Iterable[re.Pattern[str]] = (),
                 strict: bool = False) -> None:  # fmt: skip
        self.extra_names = frozenset(normalize(n) for n in extra_names)
        self.shapes = SHAPES + tuple(Shape("custom pattern", p, ()) for p in extra_patterns)
        self.strict = strict
        words = {*NAME_WORDS, *(max(re.split(r"[-_. ]", n.lower()), key=len) for n in extra_names)}
        self.name_words = tuple(sorted(w for w in words if w))
        literals = {
            *self.name_words,
            *(h for shape in self.shapes for h in shape.hints),
            PEM_HINT,
            "://",
        }
        if any(not shape.hints for shape in self.shapes):
            literals.add("")  # (a custom pattern has no hint: every string may match it)
        self._quick = re.compile(
            "|".join(re.escape(w.lower()) for w in sorted(literals, key=len, reverse=True))
        )
        """Every rule but base64 needs one of these literals (lowercased, searched for in the
        lowercased string): a short string without any is clean."""
        self._strengths: dict[str, Strength] = {}
        self._decoded: dict[str, str | None] = {}

    def strength(self, name: str) -> Strength:
        got = self._strengths.get(name)
        if got is None:
            if len(self._strengths) > 4096:
                self._strengths.clear()
            got = self._strengths[name] = name_strength(name, self.extra_names)
        return got

    def secret_value(self, name: str, value: str) -> bool:
        """Is `value`, held under `name` (a member, header, parameter), a secret?"""
        strength = self.strength(name)
        if self.strict:
            if strength is Strength.NONE or "REDACTED" in value:
                return False
            # (a cookie header, `sid=...; HttpOnly`: the value of each `name=value` part counts)
            parts = (
                [value, *(p.partition("=")[2].strip() for p in value.split(";"))]
                if "=" in value
                else [value]
            )
            return any(random_looking(p) for p in parts)
        return credential_like(value, strength)

    def spans(self, text: str, decode: bool = True, literals: bool = True) -> list[Span]:
        """The secret parts of `text`, sorted, not overlapping.

        `literals=False`: the caller knows that the text, lowercased, holds no literal of a
        rule (`Redactor.message`, from the bytes it was parsed from); only base64 is left.
        """
        if len(text) >= LONG:
            return _merge(self._rules_long(text, decode, literals))
        if literals and self._quick.search(text.lower()) is not None:
            return _merge(self._rules(text, decode))
        if not decode or len(text) < 20 or _B64_RUN.search(text) is None:
            return []
        return _merge(list(self._base64(text, fast=False)))  # (no literal: only base64 is left)

    def _rules(self, text: str, decode: bool) -> list[Span]:
        """Every rule run over `text`, one after the other (the secret parts, unsorted)."""
        found: list[Span] = []
        for shape in self.shapes:
            found.extend(Span(a, b, shape.name) for a, b in shape.find(text))
        if PEM_HINT in text:
            found.extend(pem_spans(text))
        if ("=" in text or ":" in text) and self._has_name_word(text):
            found.extend(self._assignments(text, self._separators(text.lower())))
        if decode and len(text) >= 20:
            found.extend(self._base64(text, fast=False))
        return found

    def _rules_long(self, text: str, decode: bool, literals: bool = True) -> list[Span]:
        """`_rules`, the same parts, for a long string: each literal is ruled out by a character
        it holds that the text does not before it is searched for, each token shape is tried
        only where its anchors are, and base64 runs are found by one `translate` and a `find`."""
        found: list[Span] = []
        if literals:
            hay = Haystack(text)
            for shape in self.shapes:
                found.extend(Span(a, b, shape.name) for a, b in shape.find(text, hay))
            if hay.holds(PEM_HINT):
                found.extend(pem_spans(text))
            if "=" in text or ":" in text:
                found.extend(self._assignments(text, self._separators(hay.low, hay)))
        if decode and len(text) >= 20:
            found.extend(self._base64(text, fast=text.isascii()))
        return found

    def _has_name_word(self, text: str) -> bool:
        if len(text) < LONG:
            low = text.lower()
            return any(w in low for w in self.name_words)
        return True  # lowering a long string costs more than the scan it would spare

    def _assignments(self, text: str, separators: list[int]) -> Iterator[Span]:
        """`name=value`, `name: value`, `"name": "value"` in free text (stderr, env dumps, queries)."""
        for i in separators:
            before = _NAME_BEFORE.match(text[max(0, i - 90) : i][::-1])
            if before is None:
                continue
            name = before.group(1)[::-1]
            after = _VALUE_AFTER.match(text, i + 1)
            if after is None:
                continue
            value = after.group(1)
            if len(value) < (10 if self.strict else 6) or (
                text[i] == ":" and value.startswith("//")
            ):
                continue  # too short to be a credential, or a URL's scheme
            if self.secret_value(name.rsplit(".", 1)[-1].lstrip("-"), value):
                yield Span(after.start(1), after.end(1), f"value of {name!r}")

    def _separators(self, low: str, hay: Haystack | None = None) -> list[int]:
        """Where a `=` or `:` follows a name word closely (a secret name ends with one, or is
        one) in the lowercased text: only there is the name before it looked at. One C-speed
        `find` pass per word (none for a word `hay` rules out), so text full of separators, or
        of words, costs little."""
        found: set[int] = set()
        for word in self.name_words:
            if hay is not None and not hay.holds(word, low=True):
                continue
            pos = low.find(word)
            while pos >= 0:
                m = _TO_SEPARATOR.match(low, pos + len(word))
                if m is not None:
                    found.add(m.end() - 1)
                pos = low.find(word, m.end() if m is not None else pos + len(word))
        return sorted(found)

    def _base64(self, text: str, fast: bool) -> Iterator[Span]:
        for start, end in _b64_spans(text) if fast else _b64_matches(text):
            if end - start > B64_MAX:
                continue
            run = text[start:end]
            if run.isalpha() or run.isdigit():
                continue
            if run not in self._decoded:
                if len(self._decoded) > 4096:
                    self._decoded.clear()
                self._decoded[run] = self._decode(run)
            rule = self._decoded[run]
            if rule is not None:
                yield Span(start, end, f"base64-encoded {rule}")

    def _decode(self, run: str) -> str | None:
        """The rule a base64 run's decoded text breaks, if it is text and breaks one."""
        core = run.rstrip("=")
        try:
            decoded = base64.b64decode(core + "=" * (-len(core) % 4), validate=True)
        except (binascii.Error, ValueError):
            return None
        if not _printable(decoded):
            return None
        inner = self.spans(decoded.decode("ascii", "replace"), decode=False)
        return inner[0].rule if inner else None


def pem_spans(text: str) -> Iterator[Span]:
    """Each PEM private key, BEGIN to END; a key with no END (cut short, or split over lines)
    runs to the end of the text. Linear: every search starts where the last one ended."""
    pos = 0
    while (begin := PEM_BEGIN.search(text, pos)) is not None:
        end = PEM_END.search(text, begin.end())
        stop = end.end() if end is not None else len(text)
        yield Span(begin.start(), stop, PEM_NAME)
        pos = stop


def _merge(spans: list[Span]) -> list[Span]:
    if len(spans) < 2:
        return spans
    spans.sort(key=lambda s: (s.start, -s.end))
    out = [spans[0]]
    for s in spans[1:]:
        last = out[-1]
        if s.start < last.end:
            if s.end > last.end:
                out[-1] = Span(last.start, s.end, last.rule)
            continue
        out.append(s)
    return out


def replace_spans(text: str, spans: list[Span], marker: str = MARKER) -> str:
    """`text` with each span replaced by `marker`."""
    if not spans:
        return text
    parts: list[str] = []
    pos = 0
    for s in spans:
        parts.append(text[pos : s.start])
        parts.append(marker)
        pos = s.end
    parts.append(text[pos:])
    return "".join(parts)


class PemLines:
    """A PEM private key split over several lines (stderr, non-JSON stdout lines): BEGIN and END
    never meet in one string, so each stream remembers whether a key is open."""

    def __init__(self) -> None:
        self._open: set[object] = set()

    def line(self, stream: object, text: str) -> tuple[str, bool]:
        """The line with the key's parts replaced, and whether anything was."""
        if stream in self._open:
            end = PEM_END.search(text)
            if end is None:
                return MARKER, True
            self._open.discard(stream)
            return MARKER + text[end.end() :], True
        if PEM_HINT in text:
            begin = None
            for match in PEM_BEGIN.finditer(text):  # the last BEGIN line
                begin = match
            if begin is not None and PEM_END.search(text, begin.end()) is None:
                self._open.add(stream)
        return text, False

    def is_open(self, stream: object) -> bool:
        return stream in self._open
