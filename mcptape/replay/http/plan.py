"""What a cassette says about serving it over HTTP: paths, statuses, JSON or SSE. Pure.

`HttpPlan` reads the cassette's `http` metadata once (docs/http-capture.md describes it)
and answers the HTTP shell's questions: which transport to serve (Streamable HTTP, or the
legacy HTTP+SSE of 2024-11-05), at which paths, whether an exchange was answered as JSON
or as an event stream and with which status, what a notification POST, a GET stream and a
DELETE got. A stdio cassette has no such metadata: it is served as Streamable HTTP at
`/mcp`, JSON answers unless an exchange has notifications or server requests to carry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from mcptape.cassette import Cassette
from mcptape.cassette.model import Event, Transport
from mcptape.wire.jsonrpc import (
    JSONRPC_INVALID_PARAMS,
    JSONRPC_INVALID_REQUEST,
    JSONRPC_METHOD_NOT_FOUND,
    JSONRPC_PARSE_ERROR,
    MCP_HEADER_MISMATCH,
    MCP_MISSING_CAPABILITY,
    MCP_UNSUPPORTED_PROTOCOL_VERSION,
)

from ..outputs import Send

DEFAULT_PATH = "/mcp"
DEFAULT_SSE_PATH = "/sse"
DEFAULT_ENDPOINT = "/messages/"
DEFAULT_SESSION_PARAM = "session_id"

MODERN_ERROR_STATUS: dict[int, int] = {
    JSONRPC_PARSE_ERROR: 400,
    JSONRPC_INVALID_REQUEST: 400,
    JSONRPC_INVALID_PARAMS: 400,
    MCP_HEADER_MISMATCH: 400,
    MCP_MISSING_CAPABILITY: 400,
    MCP_UNSUPPORTED_PROTOCOL_VERSION: 400,
    JSONRPC_METHOD_NOT_FOUND: 404,
}
"""2026-07-28 Streamable HTTP: the status of a JSON error answer the cassette did not record."""


@dataclass(frozen=True, slots=True)
class Head:
    """A recorded HTTP response head."""

    status: int
    sse: bool
    content_type: str | None = None
    end: str | None = None
    """How an event stream finished: "end" (the server closed it), "disconnect", "error"; None: open."""


class HttpPlan:
    """How to serve one cassette over HTTP; see the module docstring."""

    def __init__(self, cassette: Cassette) -> None:
        events = [e for e in cassette.events if e.http]
        self.legacy_sse = cassette.header.transport is Transport.SSE or any(
            e.http.get("legacy")  # type: ignore[union-attr]
            for e in events
        )
        """Serve the 2024-11-05 HTTP+SSE transport (GET stream + endpoint POSTs)."""
        self.recorded_http = bool(events)
        self.heads: dict[Any, Head] = {}
        self.path = DEFAULT_PATH
        self.sse_path = DEFAULT_SSE_PATH
        self.endpoint = DEFAULT_ENDPOINT
        self.session_param = DEFAULT_SESSION_PARAM
        self.get_status: int | None = None
        """Status of the recorded standalone GET (Streamable HTTP); None: none recorded."""
        self.delete_status = 200
        self.accepted = (202, "application/json", b"")
        """Status, content type and body of the recorded answer to a notification POST."""
        self.sessions = not self.recorded_http
        """The server minted `Mcp-Session-Id` (a stdio cassette: choose to, like the SDK servers)."""
        self._read_target(cassette)
        self._read_events(events)

    def _read_target(self, cassette: Cassette) -> None:
        url = (
            cassette.header.target.get("url") if isinstance(cassette.header.target, dict) else None
        )
        path = urlsplit(url).path if isinstance(url, str) else ""
        if path and self.legacy_sse:
            self.sse_path = path
        elif path:
            self.path = path

    def _read_events(self, events: list[Event]) -> None:
        methods: dict[Any, str] = {}  # each exchange's HTTP method, from its request
        for ev in events:
            http = ev.http or {}
            exchange, phase = http.get("exchange"), http.get("phase")
            if http.get("session") is not None and not http.get("legacy"):
                self.sessions = True
            if phase == "request":
                methods[exchange] = self._request(http)
            elif phase == "response":
                self._response(
                    ev,
                    http,
                    methods.get(exchange) or ("GET" if http.get("stream") == "get" else None),
                )
            elif phase in ("end", "disconnect", "error"):
                self._ended(exchange, str(phase))
            elif phase == "sse" and (http.get("sse") or {}).get("event") == "endpoint":
                self._endpoint(str(http["sse"].get("data", "")))

    def _request(self, http: dict[str, Any]) -> str:
        """A recorded request's method; its path is where the client POSTs (or opens the
        legacy SSE stream)."""
        method = str(http.get("method", "POST"))
        path = urlsplit(str(http.get("path", ""))).path
        if method == "POST" and not http.get("legacy") and path:
            self.path = path
        if method == "GET" and self.legacy_sse and path:
            self.sse_path = path
        return method

    def _ended(self, exchange: Any, phase: str) -> None:
        """How a response's stream ended, kept on its head (the first ending recorded wins)."""
        head = self.heads.get(exchange)
        if head is not None and head.end is None:
            self.heads[exchange] = Head(head.status, head.sse, head.content_type, phase)

    def _response(self, ev: Event, http: dict[str, Any], method: str | None) -> None:
        status = int(http.get("status", 200))
        ctype = http.get("content_type")
        sse = http.get("stream") is not None or str(ctype or "").startswith("text/event-stream")
        self.heads[http.get("exchange")] = Head(status, sse, ctype)
        if method == "GET" and not http.get("legacy") and not self.legacy_sse:
            self.get_status = status if self.get_status in (None, 405) else self.get_status
        elif method == "DELETE":
            self.delete_status = status
        elif method == "POST" and status == 202:
            self.accepted = (202, ctype or "", ev.raw_bytes or b"")

    def _endpoint(self, data: str) -> None:
        parts = urlsplit(data)
        if parts.path:
            self.endpoint = parts.path
        for key, _ in parse_qsl(parts.query):
            if "session" in key.lower():
                self.session_param = key
                break

    def head(self, send: Send) -> Head | None:
        """The recorded response head of the HTTP exchange that carried `send`'s request."""
        ex = send.exchange
        if ex is None or ex.http_exchange is None:
            return None
        return self.heads.get(ex.http_exchange)

    @property
    def transport(self) -> str:
        return "HTTP+SSE (2024-11-05)" if self.legacy_sse else "Streamable HTTP"


def json_status(send: Send, head: Head | None, modern: bool) -> int:
    """The status of a JSON answer: as recorded, else what a real server gives for it."""
    if head is not None and not head.sse:
        return head.status
    msg = send.msg
    if modern and isinstance(msg, dict) and isinstance(msg.get("error"), dict):
        return MODERN_ERROR_STATUS.get(msg["error"].get("code"), 200)
    return 200
