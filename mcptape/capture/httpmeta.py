"""Pure helpers for the `http` metadata of cassette events, shared by the live capture
(`mcptape.capture.mitm_addon`) and `mcptape import` (`mcptape.capture.importer`).

No mitmproxy here: the importer reads HAR files without it. See docs/http-capture.md for
what the metadata means.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any
from urllib.parse import parse_qsl, urlsplit

SSE_TYPE = "text/event-stream"
"""The content type of a server-sent event stream."""


def header_dict(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Headers as a dict, names as on the wire (the first spelling wins); repeated fields are joined with ", "."""
    out: dict[str, str] = {}
    lower: dict[str, str] = {}
    for name, value in items:
        first = lower.setdefault(name.lower(), name)
        out[first] = f"{out[first]}, {value}" if first in out else value
    return out


def flow_meta(
    exchange: int, session: str | None, legacy: bool, stream: str | None
) -> dict[str, Any]:
    """The keys every event of one HTTP flow carries, in the documented order."""
    out: dict[str, Any] = {"exchange": exchange}
    if session is not None:
        out["session"] = session
    if legacy:
        out["legacy"] = True
    if stream is not None:
        out["stream"] = stream
    return out


class LegacyEndpoints:
    """Legacy HTTP+SSE sessions: the POST endpoints announced by `endpoint` events, and their sessions."""

    def __init__(self) -> None:
        self.endpoints: dict[str, str] = {}
        """POST endpoint (path and query) -> session id."""
        self.sessions: set[str] = set()

    def register(self, uri: str) -> str:
        """Records an `endpoint` event's URI; returns its session id: the value of the first query
        parameter whose name contains "session", else the whole path and query."""
        parts = urlsplit(uri)
        key = parts.path + (f"?{parts.query}" if parts.query else "")
        session = next((v for k, v in parse_qsl(parts.query) if "session" in k.lower()), key)
        self.endpoints[key] = session
        self.sessions.add(session)
        return session

    def session_of(self, path: str) -> str | None:
        """The legacy session a request to `path` (path and query) belongs to, if any."""
        if not self.endpoints:
            return None
        session = self.endpoints.get(path)
        if session is None:
            query = urlsplit(path).query
            session = next(
                (v for k, v in parse_qsl(query) if "session" in k.lower() and v in self.sessions),
                None,
            )
        return session
