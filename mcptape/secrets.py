"""The secret rules: one table, shared by redaction (`mcptape.redact`) and `mcptape check`.

Pure, and linear in its input: every regular expression here has bounded repeats or a single
greedy run, and each rule has a cheap literal hint (a C-speed `in` test) that spares the
expression on strings that cannot match. Three kinds of rule:

- **shapes** (`SHAPES`): token formats found anywhere in any string (`ghp_...`, `sk_live_...`,
  PEM private keys, `user:password@` in URLs, `Basic ...`, `AccountKey=...`);
- **names** (`name_strength`): the value of a member, header, query parameter or `name=value`
  in text is a secret when its name is one. Whole names from `SECRET_NAMES`, or names whose last
  word(s) are in `SECRET_ENDINGS`, never a bare suffix: `pageToken`, `nextPageToken`, `cursor`,
  `nextCursor` and other pagination or protocol names (`EXEMPT_NAMES`, `EXEMPT_WORDS`) are not;
  short words (`pass`, `auth`, `key`, `sig`...: `WEAK_NAMES`, `WEAK_ENDINGS`) only when the value
  looks like a credential (`random_looking`), so `"pass": "yes"` and `"auth": "oauth"` stay;
- **base64**: a base64 run that decodes to text holding a secret of the two kinds above.

`Scanner.spans(text)` gives the secret parts of a string (start, end, rule name); redaction
replaces them, `check` reports them. docs/cassette-format.md#redaction is the table in prose.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from enum import IntEnum

from mcptape.literals import Haystack, b64_runs

MARKER = "[REDACTED]"
"""What a redacted value (or the redacted part of a string) becomes."""


class Strength(IntEnum):
    """How much a name says about its value."""

    NONE = 0
    WEAK = 1
    """A short or ambiguous word (`pass`, `auth`, `*_key`): a secret only if the value looks like one."""
    STRONG = 2
    """A secret name (`password`, `api_key`, `GITHUB_TOKEN`): any value is a secret."""


@dataclass(frozen=True, slots=True)
class Shape:
    """One token format: where it is (`pattern`, its `group`), and literals every match holds."""

    name: str
    pattern: re.Pattern[str]
    hints: tuple[str, ...]
    group: int = 0
    valid: Callable[[str], bool] | None = None
    """A last test on the matched part (a Basic credential must decode to `user:password`)."""
    finder: Callable[[str], Iterator[re.Match[str]]] | None = None
    """Finds the matches instead of `pattern.finditer` (the same pattern, anchored on its hint)."""
    anchors: tuple[tuple[str, int], ...] = ()
    """In a long string: (literal, offset) such that every match holds `literal` at `offset`
    from its start (in the lowercased text when `fold`), so only those places are tried.
    Without `fold`, the literals are the `hints`."""
    fold: bool = False

    def find(self, text: str, hay: Haystack | None = None) -> Iterator[tuple[int, int]]:
        """The matched parts, (start, end). With `hay` (the same text, long), the same
        matches, found by trying the pattern only where an anchor is."""
        matches = self._matches(text) if hay is None else self._matches_long(hay)
        for m in matches:
            part = m.group(self.group)
            if part and MARKER not in part and (self.valid is None or self.valid(part)):
                yield m.start(self.group), m.end(self.group)

    def _matches(self, text: str) -> Iterator[re.Match[str]]:
        if self.hints and not any(h in text for h in self.hints):
            return iter(())
        return (self.finder or self.pattern.finditer)(text)

    def _matches_long(self, hay: Haystack) -> Iterator[re.Match[str]]:
        if not self.anchors or self.finder is not None or (self.fold and not hay.folds_in_place):
            if self.hints and not any(hay.holds(h) for h in self.hints):
                return iter(())
            return (self.finder or self.pattern.finditer)(hay.text)
        if self.fold and not any(hay.holds(h) for h in self.hints):
            return iter(())  # (without `fold` the anchors are the hints: none found, no match)
        return self._anchored(hay)

    def _anchored(self, hay: Haystack) -> Iterator[re.Match[str]]:
        """`pattern.finditer(text)`, trying only where an anchor puts a match's start: every
        match starts at one of those places, and `match(text, pos)` sees the text before `pos`
        (`\\b`, lookbehinds) as the scan does."""
        starts = sorted(
            {
                p - off
                for lit, off in self.anchors
                for p in hay.positions(lit, self.fold)
                if p >= off
            }
        )
        end = 0
        for start in starts:
            if start < end:
                continue
            m = self.pattern.match(hay.text, start)
            if m is not None:
                yield m
                end = m.end()


_USERINFO_TAIL = re.compile(r"//[^\s/?#:@\"'<>]{0,200}:([^\s/?#@\"'<>]{1,200})@")


def _userinfo_matches(text: str) -> Iterator[re.Match[str]]:
    """`scheme://user:password@` from each `://` (a regex run over the whole text would try every
    word as a scheme): the character before must be a scheme's, the rest is matched in place."""
    pos = text.find("://")
    while pos >= 0:
        m = (
            _USERINFO_TAIL.match(text, pos + 1)
            if pos and (text[pos - 1].isalnum() or text[pos - 1] in "+.-")
            else None
        )
        if m is not None:
            yield m
        pos = text.find("://", m.end() if m is not None else pos + 3)


def _basic_credential(value: str) -> bool:
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    return b":" in decoded and _printable(decoded)


def _userinfo_password(value: str) -> bool:
    return value not in ("", "*", "****") and "REDACTED" not in value


SHAPES: tuple[Shape, ...] = (
    Shape("bearer token", re.compile(r"\b(?i:bearer)\s{1,8}[A-Za-z0-9._~+/=-]{8,}"), ("earer", "EARER"),
          anchors=(("bearer", 0),), fold=True),
    Shape("Basic credential", re.compile(r"\b(?i:basic)\s{1,8}([A-Za-z0-9+/]{8,}={0,2})"), ("asic", "ASIC"), 1,
          _basic_credential, anchors=(("basic", 0),), fold=True),
    Shape("sk- API key", re.compile(r"\bsk-(?:live-|test-|proj-|ant-)?[A-Za-z0-9_-]{16,}"), ("sk-",),
          anchors=(("sk-", 0),)),
    Shape("Stripe key", re.compile(r"\b[rsp]k_(?:live|test)_[A-Za-z0-9]{16,}"), ("k_live_", "k_test_"),
          anchors=(("k_live_", 1), ("k_test_", 1))),
    Shape("GitHub token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}"), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
          anchors=(("ghp_", 0), ("gho_", 0), ("ghu_", 0), ("ghs_", 0), ("ghr_", 0))),
    Shape("GitHub fine-grained token", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{40,}"), ("github_pat_",),
          anchors=(("github_pat_", 0),)),
    Shape("GitLab token", re.compile(r"\bgl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}"), ("glpat-", "gldt-", "glrt-", "glptt-"),
          anchors=(("glpat-", 0), ("gldt-", 0), ("glrt-", 0), ("glptt-", 0))),
    Shape("Hugging Face token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), ("hf_",), anchors=(("hf_", 0),)),
    Shape("npm token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), ("npm_",), anchors=(("npm_", 0),)),
    Shape("Slack token", re.compile(r"\bxox[abpors]-[A-Za-z0-9-]{10,}"), ("xox",), anchors=(("xox", 0),)),
    Shape("AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), ("AKIA", "ASIA"),
          anchors=(("AKIA", 0), ("ASIA", 0))),
    Shape("Google API key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b"), ("AIza",), anchors=(("AIza", 0),)),
    Shape("JWT", re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), ("eyJ",),
          anchors=(("eyJ", 0),)),
    Shape("Azure key", re.compile(r"(?i:AccountKey|SharedAccessKey|SharedAccessSignature)=([^\s;\"'&<>]{8,})"),
          ("ccountKey", "ccessKey", "ccessSignature", "CCOUNTKEY", "CCESSKEY"), 1,
          anchors=(("accountkey", 0), ("sharedaccesskey", 0), ("sharedaccesssignature", 0)), fold=True),
    Shape("URL userinfo", re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s/?#:@\"'<>]{0,200}:([^\s/?#@\"'<>]{1,200})@"),
          ("://",), 1, _userinfo_password, _userinfo_matches),
)  # fmt: skip
"""The token formats, redacted wherever they appear (PEM private keys are `pem_spans`)."""

PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
PEM_HINT = "PRIVATE KEY"
PEM_NAME = "private key"

SECRET_NAMES: frozenset[str] = frozenset({
    "authorization", "proxyauthorization", "cookie", "setcookie", "apikey", "xapikey", "xauthtoken", "authtoken",
    "token", "accesstoken", "refreshtoken", "idtoken", "bearer", "sessiontoken", "password", "passwd", "passphrase",
    "secret", "clientsecret", "privatekey", "credentials", "credential", "secretkey", "xsecretkey",
    "secretaccesskey", "awssecretaccesskey", "awssessiontoken", "xamzsecuritytoken", "accountkey",
    "sharedaccesskey", "connectionstring", "dsn", "xgoogapikey", "xfunctionskey", "ocpapimsubscriptionkey",
})  # fmt: skip
"""Whole names (lowercased, without `-`, `_`, `.` and spaces) whose values are secrets."""

SECRET_ENDINGS: frozenset[str] = frozenset({
    "token", "secret", "password", "passwd", "passphrase", "credential", "credentials", "apikey", "secretkey",
    "privatekey", "accountkey", "accesskey", "sessionkey", "masterkey", "signingkey", "encryptionkey",
    "clientsecret", "connectionstring",
})  # fmt: skip
"""A name whose last word, or last two words joined, is one of these is a secret (`GITHUB_TOKEN`,
`OpenAI-Api-Key`, `db_password`), unless one of its words is in `EXEMPT_WORDS`."""

WEAK_NAMES: frozenset[str] = frozenset(
    {"pass", "auth", "pw", "pwd", "key", "sig", "signature", "pat", "pin"}
)
"""Short or ambiguous names: their value is a secret only if it looks like a credential."""

WEAK_ENDINGS: frozenset[str] = frozenset({"key", "auth", "signature", "sig", "pass", "pwd"})
"""Likewise for the last word (`ssh_key`, `basic_auth`, `X-Amz-Signature`; `primary_key`: `id` stays)."""

EXEMPT_NAMES: frozenset[str] = frozenset({
    "progresstoken", "cursor", "nextcursor", "prevcursor", "requeststate", "id", "requestid", "method", "jsonrpc",
    "pagetoken", "nextpagetoken", "prevpagetoken", "previouspagetoken", "continuationtoken", "nexttoken",
    "synctoken", "resumetoken", "keyid", "publickey", "tokentype", "tokenurl", "tokenendpoint", "authurl",
})  # fmt: skip
"""Names that are never secrets: protocol fields and pagination cursors (a replay needs them)."""

EXEMPT_WORDS: frozenset[str] = frozenset({
    "page", "next", "prev", "previous", "continuation", "progress", "cursor", "sync", "resume", "pagination",
    "paging", "max", "min", "count", "num", "total", "limit", "public", "type", "url", "uri", "endpoint", "file",
    "path", "name", "id", "length", "len", "expires", "expiry", "ttl", "used", "format", "required", "policy",
})  # fmt: skip
"""A word that makes a name about a secret rather than one (`token_count`, `password_file`, `public_key`)."""

_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def normalize(name: str) -> str:
    """`X-Api-Key` -> `xapikey`: lowercased, without `-`, `_`, `.` and spaces."""
    return name.lower().replace("-", "").replace("_", "").replace(".", "").replace(" ", "")


def name_strength(name: str, extra: frozenset[str] = frozenset()) -> Strength:
    """What the name of a member, header, query parameter or assignment says about its value.

    `extra` holds more whole names (normalized) that are secrets (`--redact-key`).
    """
    n = normalize(name)
    if n in EXEMPT_NAMES or n.startswith("iomodelcontextprotocol") or len(name) > 100:
        return Strength.NONE
    if n in SECRET_NAMES or n in extra:
        return Strength.STRONG
    if n in WEAK_NAMES:
        return Strength.WEAK
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or EXEMPT_WORDS.intersection(words):
        return Strength.NONE
    if words[-1] in SECRET_ENDINGS or "".join(words[-2:]) in SECRET_ENDINGS:
        return Strength.STRONG
    if words[-1] in WEAK_ENDINGS:
        return Strength.WEAK
    return Strength.NONE


NAME_WORDS: tuple[str, ...] = (
    "auth", "cookie", "key", "token", "pass", "pwd", "pw", "secret", "bearer", "credential", "sig", "pat", "pin", "dsn",
    "connectionstring",
)  # fmt: skip
"""Every secret name, lowercased, contains one of these: no such word, no name rule to run."""


def random_looking(value: str, minimum: int = 10) -> bool:
    """A value that looks like a key or token rather than a word: long enough, no spaces, at least
    two kinds of character, and high Shannon entropy (bits per character)."""
    if not minimum <= len(value) <= 10_000 or any(c.isspace() for c in value):
        return False
    kinds = sum((any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value),
                 any(not c.isalnum() for c in value)))  # fmt: skip
    if kinds < 2:
        return False
    counts = Counter(value)
    entropy = -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())
    return entropy >= min(3.0, math.log2(len(value)) - 0.1)


def credential_like(value: str, strength: Strength) -> bool:
    """Is `value`, found under a name of `strength`, to be redacted? A strong name: any value
    that is not a plain word (`hunter2`, `s3cr3t!`; `none`, `required` stay); a weak one: a
    random-looking value only."""
    if strength is Strength.NONE or not value or "REDACTED" in value:
        return False
    if strength is Strength.WEAK:
        return random_looking(value, 8)
    return (len(value) >= 6 and not value.isalpha()) or random_looking(value, 8)


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


def _printable(data: bytes) -> bool:
    if not data:
        return False
    text = sum(1 for b in data if 32 <= b < 127 or b in (9, 10, 13))
    return text >= 0.9 * len(data)


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
