"""JSON pointers (RFC 6901): escape a token, build a pointer, split one into tokens.

Pure. Shared by redaction (which paths it replaced), matching (ignore paths), the replay's
no-match diffs and the diff engine, so every part of mcptape writes and reads the same form.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def escape(token: Any) -> str:
    """One pointer token: `~` and `/` escaped."""
    return str(token).replace("~", "~0").replace("/", "~1")


def pointer(tokens: Iterable[Any]) -> str:
    """`("result", "content", 0)` -> `/result/content/0`; no tokens -> `""` (the whole value)."""
    return "".join("/" + escape(t) for t in tokens)


def tokens(ptr: str) -> tuple[str, ...]:
    """Splits a pointer into its unescaped tokens (a missing leading `/` is tolerated)."""
    if ptr in ("", "/"):
        return ()
    if not ptr.startswith("/"):
        ptr = "/" + ptr
    return tuple(t.replace("~1", "/").replace("~0", "~") for t in ptr[1:].split("/"))
