"""The secret rules: the table that redaction and `mcptape check` share (see the package).

Token shapes (`SHAPES`, PEM keys), secret names (`name_strength` over `SECRET_NAMES`,
`SECRET_ENDINGS`, the weak and exempt words) and what a credential looks like
(`random_looking`, `credential_like`). Pure data and small predicates; `scan` runs them.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum

from mcptape.redaction.literals import Haystack

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


def _printable(data: bytes) -> bool:
    if not data:
        return False
    text = sum(1 for b in data if 32 <= b < 127 or b in (9, 10, 13))
    return text >= 0.9 * len(data)
