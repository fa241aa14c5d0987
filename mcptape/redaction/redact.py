"""Redaction: secrets are replaced before anything is written to a cassette.

Pure and composable, like vcrpy's filters. The rules are the table of `mcptape.redaction.secrets`, which
`mcptape check` shares:
- secret names: the value of any JSON object member (whatever its type: a string, a number, a
  list, an object), HTTP header, query parameter or `name=value` in text whose name is a secret
  name is replaced with `REDACTED` (short words such as `pass` and `auth` only when the value
  looks like a credential);
- token shapes: any part of any string value, raw line, stderr line, header, SSE field that is a
  token (`Bearer ...`, `sk_live_...`, `ghp_...`, PEM private keys, `user:password@` in URLs,
  base64 holding any of these) is replaced with `REDACTED`;
- protocol fields and cursors are never touched: `progressToken`, `cursor`, `nextCursor`,
  `pageToken`, `nextPageToken`, `requestState`, ids and the `io.modelcontextprotocol/*` keys.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcptape.pointer import pointer
from mcptape.redaction.literals import holds_any, holds_b64_run, minimal, trie_pattern
from mcptape.redaction.secrets import (
    B64_MAX,
    B64_MIN,
    MARKER,
    PEM_BEGIN,
    SECRET_NAMES,
    SHAPES,
    PemLines,
    Scanner,
    Strength,
    replace_spans,
)

REDACTED = MARKER
"""What a redacted value (or the redacted part of a string) becomes."""

DEFAULT_KEYS: tuple[str, ...] = tuple(sorted(SECRET_NAMES))
"""The whole secret names of the table (normalized); names ending in a secret word count too."""

DEFAULT_PATTERNS: tuple[str, ...] = (*(s.pattern.pattern for s in SHAPES), PEM_BEGIN.pattern)
"""The token shapes of the table, as the cassette header describes them."""

_SCHEMA_WORDS = frozenset(
    {"type", "$ref", "anyOf", "oneOf", "allOf", "enum", "const", "format", "properties", "items"}
)
"""A member named `password` whose value is an object with these keys is a JSON Schema (a tool's
`inputSchema`), not a secret: it is walked, not replaced."""


@dataclass(frozen=True, slots=True)
class RedactConfig:
    """Which rules apply. `RedactConfig()` is the default, on; `RedactConfig(enabled=False)` is off."""

    enabled: bool = True
    keys: tuple[str, ...] = DEFAULT_KEYS
    patterns: tuple[str, ...] = DEFAULT_PATTERNS

    def with_extra(self, keys: Iterable[str] = (), patterns: Iterable[str] = ()) -> RedactConfig:
        return RedactConfig(self.enabled, self.keys + tuple(keys), self.patterns + tuple(patterns))

    def describe(self) -> dict[str, Any]:
        """What the cassette header records about redaction."""
        return {
            "enabled": self.enabled,
            "marker": REDACTED,
            "keys": list(self.keys),
            "patterns": list(self.patterns),
        }


@dataclass
class Redactor:
    """Applies a `RedactConfig` to messages, strings and HTTP metadata."""

    config: RedactConfig = field(default_factory=RedactConfig)

    def __post_init__(self) -> None:
        extra_keys = [k for k in self.config.keys if k not in SECRET_NAMES]
        custom: list[re.Pattern[str]] = []
        for p in self.config.patterns:
            if p in DEFAULT_PATTERNS:
                continue
            try:
                custom.append(re.compile(p))
            except re.error as exc:
                from mcptape.errors import ConfigError

                raise ConfigError(f"bad --redact-pattern {p!r}: {exc}") from None
        self.scanner = Scanner(extra_keys, custom)
        self.pem = PemLines()
        hints = {h for s in self.scanner.shapes for h in s.hints}
        needles = sorted({*(w.encode() for w in self.scanner.name_words), *(h.lower().encode() for h in hints),
                          b"://", b"private key"})  # fmt: skip
        self._needles = minimal(needles)
        self._needle_rx = re.compile(trie_pattern(self._needles))
        self._blind = any(not s.hints for s in self.scanner.shapes) or any(
            not _SHOWN.issuperset(n) for n in self._needles
        )
        """A rule no literal announces (a custom pattern), or a literal an escape could form:
        the bytes of a payload cannot tell that it holds none."""
        self._header_memo: dict[tuple[str, str], tuple[str, bool]] = {}

    def might_hold_secrets(self, raw: bytes) -> bool:
        """A cheap, conservative test on a payload's bytes: False only when nothing in it can be redacted."""
        return self.config.enabled and any(self._raw_facts(raw))

    def _raw_facts(self, raw: bytes) -> tuple[bool, bool]:
        """What the strings and names parsed from `raw` may hold: (a base64 run short enough to
        be decoded, `B64_MIN` to `B64_MAX` characters; a literal of a rule, lowercased). False
        is certain: without the characters of `_OPAQUE`, each of them is a piece of `raw` as it
        is, and lowercases as `raw` does."""
        if self._blind or _opaque(raw):
            return True, True
        # (one translate, one find: cheaper than a regex). A string's run is a run of `raw`, or
        # one character shorter after an escape such as `\n` (its letter is a base64 character)
        runs = holds_b64_run(raw, B64_MIN, B64_MAX + 1)
        if len(raw) < 8192:  # the literals' prefix tree, in one pass
            return runs, self._needle_rx.search(raw.lower()) is not None
        if raw.count(b'"') < len(raw) // 1024:
            return runs, True  # (few, long strings: walking them costs less than the literals)
        return runs, holds_any(raw.lower(), self._needles)  # memchr, then memmem per needle

    def strength(self, name: str) -> Strength:
        return self.scanner.strength(name)

    def is_secret_key(self, name: str) -> bool:
        """A name whose value is a secret whatever it is (`password`, `GITHUB_TOKEN`)."""
        return self.scanner.strength(name) is Strength.STRONG

    def text(self, value: str) -> str:
        """A string with every secret part replaced."""
        if not self.config.enabled:
            return value
        return replace_spans(value, self.scanner.spans(value))

    def line(self, stream: object, value: str) -> str:
        """One line of a line stream (stderr, non-JSON stdout lines): `text`, and the lines of a
        PEM private key whose BEGIN was on an earlier line of the same `stream`."""
        if not self.config.enabled:
            return value
        value, whole = self.pem.line(stream, value)
        return value if whole else self.text(value)

    def message(self, msg: Any, raw: bytes | None = None) -> tuple[Any, list[str]]:
        """A copy of a JSON value with secrets replaced, and the JSON pointers that changed.

        The value itself is returned unchanged (not copied) when nothing is redacted. With
        `raw`, the bytes the value was parsed from, a cheap test skips the walk when
        nothing in them could be a secret, and the rules those bytes rule out for every string.
        """
        if not self.config.enabled:
            return msg, []
        runs, literals = self._raw_facts(raw) if raw is not None else (True, True)
        if not (runs or literals):
            return msg, []
        paths: list[str] = []
        out = _Walk(self, runs, literals, paths).value(msg, None)
        return (out, paths) if paths else (msg, [])

    def _member(self, name: str, value: Any) -> bool:
        """Is the member `name: value` a secret to replace whole?"""
        strength = self.scanner.strength(name)
        if strength is Strength.NONE or value is None or isinstance(value, bool):
            return False
        if value in ("", REDACTED):
            return False
        if strength is Strength.STRONG:
            return not (
                isinstance(value, dict) and _SCHEMA_WORDS.intersection(value)
            ) and value not in ([], {})
        return isinstance(value, str) and self.scanner.secret_value(name, value)

    def headers(self, headers: dict[str, str]) -> tuple[dict[str, str], list[str]]:
        """HTTP headers with secret-named headers replaced and the table applied to the rest
        (a `Location` with `?access_token=`, `WWW-Authenticate` with `token=`)."""
        if not self.config.enabled:
            return headers, []
        out: dict[str, str] = {}
        names: list[str] = []
        memo = self._header_memo
        for name, value in headers.items():
            done = memo.get((name, value))
            if done is None:
                if len(memo) > 1024:
                    memo.clear()
                done = memo[name, value] = self._header(name, value)
            out[name] = done[0]
            if done[1]:
                names.append(name)
        return out, names

    def _header(self, name: str, value: str) -> tuple[str, bool]:
        """One header's value as recorded, and whether it was redacted (the same headers come
        with every request of a session: `headers` remembers the answers)."""
        if self._member(name, value):
            return REDACTED, True
        new = self.text(value)
        return new, new != value

    def url(self, url: str) -> tuple[str, list[str]]:
        """A URL (or path with a query) with secret query parameters and userinfo replaced."""
        if not self.config.enabled:
            return url, []
        names: list[str] = []
        if "?" in url:
            try:
                parts = urlsplit(url)
            except ValueError:  # (a malformed netloc: the table still applies to the text)
                parts = None
            pairs = parse_qsl(parts.query, keep_blank_values=True) if parts is not None else []
            names = [k for k, v in pairs if self._member(k, v)]
            if parts is not None and names:
                query = urlencode([(k, REDACTED if self._member(k, v) else v) for k, v in pairs])
                url = urlunsplit(parts._replace(query=query))
        new = self.text(url)
        return new, names if names or new == url else [""]

    def argv(self, args: Iterable[str]) -> list[str]:
        """A command line with secrets replaced: the table in any argument, secret query
        parameters in URLs, and the value of `--name=value`, `NAME=value` and `--name value`
        whose name is a secret name (`--api-key`, `GITHUB_TOKEN=...`)."""
        if not self.config.enabled:
            return list(args)
        out: list[str] = []
        value_next = False
        for arg in args:
            name, eq, value = arg.partition("=")
            bare = name.lstrip("-")
            if value_next:
                out.append(REDACTED)
                value_next = False
            elif eq and value and bare and "://" not in name and self.is_secret_key(bare):
                out.append(f"{name}={REDACTED}")
            else:
                value_next = (
                    not eq and arg.startswith("-") and bool(bare) and self.is_secret_key(bare)
                )
                out.append(_userinfo(self.url(arg)[0]) if "://" in arg else self.text(arg))
        return out

    def target(self, target: dict[str, Any]) -> dict[str, Any]:
        """A cassette header's target (`command`, `url`) with secrets replaced."""
        if not self.config.enabled:
            return target
        out = dict(target)
        if isinstance(out.get("command"), list):
            out["command"] = self.argv(str(a) for a in out["command"])
        if isinstance(out.get("url"), str):
            out["url"] = _userinfo(self.url(out["url"])[0])
        return out


Trail = tuple["Trail | None", str | int] | None
"""Where a value sits, as (parent trail, key or index): the pointer is spelled out only when
something there is redacted."""


def _pointer(trail: Trail) -> str:
    keys: list[str | int] = []
    while trail is not None:
        trail, key = trail
        keys.append(key)
    return pointer(reversed(keys))


class _Walk:
    """One message walked for secrets (`Redactor.message`): a member under a secret name is
    replaced whole, each string has the table applied; `runs` and `literals` are what the
    payload's bytes say its strings may hold."""

    __slots__ = ("clean", "literals", "member", "paths", "plain", "runs", "scan", "strength")

    def __init__(self, red: Redactor, runs: bool, literals: bool, paths: list[str]) -> None:
        self.scan = red.scanner.spans
        self.member = red._member
        self.strength = red.scanner.strength
        self.runs = runs
        self.literals = literals
        self.paths = paths
        self.plain: set[str] = set()
        """Names seen in this message that are no secret names (most of them, repeated)."""
        self.clean: set[str] = set()
        """Short strings seen in this message with nothing to redact (values repeat too)."""

    def value(self, value: Any, trail: Trail) -> Any:
        if isinstance(value, str):
            short = len(value) < 256
            if short and value in self.clean:
                return value
            spans = self.scan(value, self.runs, self.literals)
            new = replace_spans(value, spans) if spans else value
            if new != value:
                self.paths.append(_pointer(trail))
            elif short and len(self.clean) < 4096:
                self.clean.add(value)
            return new
        if isinstance(value, dict):
            return self._object(value, trail)
        if isinstance(value, list):
            items = [self.value(v, (trail, i)) for i, v in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        return value

    def _object(self, value: dict[str, Any], trail: Trail) -> dict[str, Any]:
        changed = False
        out: dict[str, Any] = {}
        plain = self.plain
        for k, v in value.items():
            if k not in plain:
                if self.strength(k) is Strength.NONE:
                    plain.add(k)
                elif self.member(k, v):
                    out[k] = REDACTED
                    self.paths.append(_pointer((trail, k)))
                    changed = True
                    continue
            nv = v if v is None or v.__class__ in _SCALARS else self.value(v, (trail, k))
            changed = changed or nv is not v
            out[k] = nv
        return out if changed else value


_SCALARS = frozenset({int, float, bool})
"""Values the walk has nothing to do with."""

_LOWER_TO_ASCII: tuple[bytes, ...] = ("\u0130".encode(), "\u212a".encode())
_OPAQUE: tuple[bytes, ...] = (b"\\u", b"\\/", *_LOWER_TO_ASCII)
"""Bytes after which a parsed string may hold what the payload's bytes do not show there:
JSON's `\\u` and `\\/` escapes (a `/` inside a base64 run, `://`), and the two characters
that lowercase to ASCII letters (`İ` to `i` and a dot, the Kelvin sign to `k`)."""


def _opaque(raw: bytes) -> bool:
    """Does `raw` hold one of `_OPAQUE`? (For most payloads two C passes answer: no backslash,
    nothing outside ASCII, cheaper than a regex of the four.)"""
    if b"\\" in raw and (b"\\u" in raw or b"\\/" in raw):
        return True
    return not raw.isascii() and any(o in raw for o in _LOWER_TO_ASCII)


_SHOWN = frozenset(range(32, 127)) - {ord('"'), ord("\\")}
"""Characters a JSON string holds only as themselves (or as `\\u`): a literal made of them
is in the payload's bytes when a string parsed from them holds it."""


def _userinfo(url: str) -> str:
    """A URL without the password of its `user:password@` part."""
    try:
        parts = urlsplit(url)
        password = parts.password
    except ValueError:
        return url
    if password is None or password == REDACTED:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{REDACTED}@{host}"))
