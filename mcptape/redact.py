"""Redaction: secrets are replaced before anything is written to a cassette.

Pure and composable, like vcrpy's filters. Three kinds of rule:
- secret keys: the value of any JSON object member (or HTTP header, or query parameter)
  whose name is a known secret name is replaced with `REDACTED`;
- patterns: any substring of any string value, raw line or stderr line matching a
  regular expression (token shapes such as ``Bearer ...``, ``sk-...``, ``ghp_...``) is
  replaced with `REDACTED`;
- protocol fields are never touched: `progressToken`, `cursor`, `nextCursor`,
  `requestState`, ids and the `io.modelcontextprotocol/*` keys carry protocol meaning.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mcptape.pointer import escape

REDACTED = "[REDACTED]"
"""What a redacted value (or the redacted part of a string) becomes."""

DEFAULT_KEYS: tuple[str, ...] = (
    "authorization", "proxy-authorization", "cookie", "set-cookie",
    "api_key", "apikey", "x-api-key", "api-key", "x-auth-token", "auth_token", "auth",
    "token", "access_token", "refresh_token", "id_token", "bearer", "session_token",
    "password", "passwd", "pass", "secret", "client_secret", "private_key",
    "credentials", "credential",
)  # fmt: skip
"""Names (compared case-insensitively, ignoring `-`, `_` and `.`) whose values are secrets."""

DEFAULT_SUFFIXES: tuple[str, ...] = ("token", "apikey", "secret", "password", "privatekey")
"""A name ending with one of these (normalized) is a secret too: `github_token`, `OPENAI_API_KEY`."""

PROTOCOL_KEYS: frozenset[str] = frozenset(
    {"progresstoken", "cursor", "nextcursor", "requeststate", "id", "requestid", "method", "jsonrpc"}
)
"""Normalized names that are never redacted: they carry protocol meaning."""

DEFAULT_PATTERNS: tuple[str, ...] = (
    r"\b(?i:bearer)\s+[A-Za-z0-9._~+/=-]{8,}",
    r"\bsk-(?:live-|test-|proj-|ant-)?[A-Za-z0-9_-]{16,}",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bgithub_pat_[A-Za-z0-9_]{40,}",
    r"\bxox[abpors]-[A-Za-z0-9-]{10,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"\bAIza[0-9A-Za-z_-]{35}\b",
    r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
)
"""Token shapes redacted wherever they appear: bearer tokens, OpenAI/Anthropic-style `sk-` keys,
GitHub tokens, Slack tokens, AWS access key ids, Google API keys, JWTs, PEM private keys."""

_HINTS: dict[str, tuple[str, ...]] = dict(zip(DEFAULT_PATTERNS, (
    ("earer", "EARER"), ("sk-",), ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), ("github_pat_",), ("xox",),
    ("AKIA",), ("AIza",), ("eyJ",), ("PRIVATE KEY",),
), strict=True))  # fmt: skip
"""Literal substrings one of which every match of a default pattern contains: a cheap test
(`in`, C speed) that spares running the regular expression over strings that cannot match."""

_KEY_WORDS: tuple[str, ...] = ("auth", "cookie", "key", "token", "pass", "secret", "bearer", "credential")
"""Every default secret name, lowercased, contains one of these words."""


def _norm(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "").replace(".", "")


_DEFAULT_NORMS = frozenset(_norm(k) for k in DEFAULT_KEYS)


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
        return {"enabled": self.enabled, "marker": REDACTED, "keys": list(self.keys), "patterns": list(self.patterns)}


@dataclass
class Redactor:
    """Applies a `RedactConfig` to messages, strings and HTTP metadata."""

    config: RedactConfig = field(default_factory=RedactConfig)

    def __post_init__(self) -> None:
        self._keys = frozenset(_norm(k) for k in self.config.keys)
        extra_words = {max(re.split(r"[-_.]", k.lower()), key=len) for k in self.config.keys if _norm(k) not in _DEFAULT_NORMS}
        self._key_words = tuple(sorted({*_KEY_WORDS, *extra_words}))
        self._rules: list[tuple[re.Pattern[str], tuple[str, ...]]] = []
        for p in self.config.patterns:
            try:
                self._rules.append((re.compile(p), _HINTS.get(p, ())))
            except re.error as exc:
                from mcptape.errors import ConfigError

                raise ConfigError(f"bad --redact-pattern {p!r}: {exc}") from None
        self._pattern = bool(self._rules)
        # Literals one of which every secret needs, lowercased (a superset test, so it stays
        # conservative): a payload holding none of them cannot hold anything to redact.
        needles = sorted({*(w.encode().lower() for w in self._key_words),
                          *(h.encode().lower() for _, hs in self._rules for h in hs), b"\\u"})  # fmt: skip
        self._needles = tuple(needles)
        self._needle_rx = re.compile(b"|".join(re.escape(n) for n in needles))
        self._unhinted = any(not hs for _, hs in self._rules)

    def might_hold_secrets(self, raw: bytes) -> bool:
        """A cheap, conservative test on a payload's bytes: False only when nothing in it can be redacted."""
        if not self.config.enabled:
            return False
        # (a `\\u` escape could hide a name or a token shape from a byte-level test: it counts as a hit)
        if self._unhinted:
            return True
        lower = raw.lower()
        if len(lower) < 8192:
            return self._needle_rx.search(lower) is not None  # one pass, best for small payloads
        return any(n in lower for n in self._needles)  # memmem per needle, best for large ones

    def is_secret_key(self, name: str) -> bool:
        n = _norm(name)
        if n in PROTOCOL_KEYS or n.startswith("iomodelcontextprotocol"):
            return False
        return n in self._keys or n.endswith(DEFAULT_SUFFIXES)

    def text(self, value: str) -> str:
        """A string with every pattern match replaced."""
        if not self.config.enabled:
            return value
        for rx, hints in self._rules:
            if not hints or any(h in value for h in hints):
                value = rx.sub(REDACTED, value)
        return value

    def message(self, msg: Any, raw: bytes | None = None) -> tuple[Any, list[str]]:
        """A copy of a JSON value with secrets replaced, and the JSON pointers that changed.

        The value itself is returned unchanged (not copied) when nothing is redacted. With
        `raw`, the bytes the value was parsed from, a cheap test skips the walk when
        nothing in them could be a secret.
        """
        if not self.config.enabled or (raw is not None and not self.might_hold_secrets(raw)):
            return msg, []
        paths: list[str] = []
        out = self._walk(msg, "", paths)
        return (out, paths) if paths else (msg, [])

    def _walk(self, value: Any, path: str, paths: list[str]) -> Any:
        if isinstance(value, dict):
            changed = False
            out = {}
            for k, v in value.items():
                sub = f"{path}/{escape(k)}"
                if self.is_secret_key(k) and isinstance(v, (str, int, float)) and not isinstance(v, bool) and v not in ("", REDACTED):
                    out[k] = REDACTED
                    paths.append(sub)
                    changed = True
                    continue
                nv = self._walk(v, sub, paths)
                changed = changed or nv is not v
                out[k] = nv
            return out if changed else value
        if isinstance(value, list):
            items = [self._walk(v, f"{path}/{i}", paths) for i, v in enumerate(value)]
            return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
        if isinstance(value, str) and self._pattern:
            new = self.text(value)
            if new != value:
                paths.append(path)
                return new
        return value

    def headers(self, headers: dict[str, str]) -> tuple[dict[str, str], list[str]]:
        """HTTP headers with secret-named headers replaced and patterns applied to the rest."""
        if not self.config.enabled:
            return headers, []
        out: dict[str, str] = {}
        names: list[str] = []
        for name, value in headers.items():
            if self.is_secret_key(name):
                out[name] = REDACTED
                names.append(name)
            else:
                new = self.text(value)
                if new != value:
                    names.append(name)
                out[name] = new
        return out, names

    def url(self, url: str) -> tuple[str, list[str]]:
        """A URL (or path with a query) with secret query parameters replaced."""
        if not self.config.enabled or "?" not in url:
            return url, []
        parts = urlsplit(url)
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        names = [k for k, _ in pairs if self.is_secret_key(k)]
        if not names:
            return url, []
        query = urlencode([(k, REDACTED if self.is_secret_key(k) else v) for k, v in pairs])
        return urlunsplit(parts._replace(query=query)), names


    def argv(self, args: Iterable[str]) -> list[str]:
        """A command line with secrets replaced: token shapes in any argument, secret query
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
                value_next = not eq and arg.startswith("-") and bool(bare) and self.is_secret_key(bare)
                new = self.text(arg)
                out.append(_userinfo(self.url(new)[0]) if "://" in new else new)
        return out

    def target(self, target: dict[str, Any]) -> dict[str, Any]:
        """A cassette header's target (`command`, `url`) with secrets replaced."""
        if not self.config.enabled:
            return target
        out = dict(target)
        if isinstance(out.get("command"), list):
            out["command"] = self.argv(str(a) for a in out["command"])
        if isinstance(out.get("url"), str):
            out["url"] = _userinfo(self.url(self.text(out["url"]))[0])
        return out


def _userinfo(url: str) -> str:
    """A URL without the password of its `user:password@` part."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:{REDACTED}@{host}"))
