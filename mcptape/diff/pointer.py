"""JSON pointers as the diff uses them: build, escape, and match `--ignore` patterns.

Pure. Every difference names where it is with an RFC 6901 pointer into the canonical form
of an exchange (`/result/content/0/text`), of the server surface
(`/tools/echo/inputSchema/properties/tone`) or of the handshake (`/server/instructions`).
An `--ignore` pattern is such a pointer, where `*` matches any one token; it ignores the
path and everything under it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from mcptape.pointer import escape, pointer, tokens

__all__ = ["escape", "matches", "pointer", "tokens"]


def matches(pattern: Sequence[str], path: Sequence[str]) -> bool:
    """True when `path` is `pattern` or lies under it (`*` matches any one token)."""
    if len(path) < len(pattern):
        return False
    return all(p == "*" or p == str(t) for p, t in zip(pattern, path, strict=False))


def ignored(patterns: Iterable[Sequence[str]], path: Sequence[Any]) -> bool:
    """True when any pattern covers `path`."""
    return any(matches(p, [str(t) for t in path]) for p in patterns)


def drop(value: Any, pattern: Sequence[str]) -> Any:
    """A copy of `value` without what `pattern` points at (`*` expands); untouched parts are shared."""
    if not pattern:
        return value
    head, rest = pattern[0], pattern[1:]
    if isinstance(value, dict):
        keys = list(value) if head == "*" else ([head] if head in value else [])
        if not keys:
            return value
        out = dict(value)
        for k in keys:
            if rest:
                out[k] = drop(out[k], rest)
            else:
                del out[k]
        return out
    if isinstance(value, list):
        idx = (
            range(len(value))
            if head == "*"
            else ([int(head)] if head.isdigit() and int(head) < len(value) else [])
        )
        if not idx:
            return value
        out_list = list(value)
        for i in idx:
            out_list[i] = drop(out_list[i], rest) if rest else None
        return out_list
    return value
