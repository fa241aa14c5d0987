"""Is this HTTP flow MCP? Pure: the live addon (as a forward proxy it sees every flow of the
browser or tool behind it) and `mcptape import` ask it, and record only the flows it says are.

A flow is MCP when:
- `endpoints` (the addon's `mcptape_endpoints` option) names its path, or a legacy HTTP+SSE
  POST endpoint announced by an `endpoint` event is its path; with `endpoints` given, nothing
  else is MCP;
- it carries MCP headers (`Mcp-Session-Id`, `MCP-Protocol-Version`);
- its request body is JSON-RPC 2.0 (an object or a batch) with an MCP method (`initialize`,
  `ping`, `tools/...`, `notifications/...`: `MCP_METHODS`, `MCP_PREFIXES`); JSON-RPC of another
  protocol (Ethereum's `eth_blockNumber`) is not;
- it goes to a path that already carried MCP (a client's answers to server requests, the GET
  listen stream, the DELETE that ends a session);
- it is a GET that accepts an event stream (or anything) at a path named `/sse` or `/mcp` (the
  legacy and the usual Streamable HTTP endpoints: their first event arrives after the head must
  be recorded).
Everything else (pages, forms, images, other JSON APIs, OAuth metadata) is not: it passes
through untouched and is counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from mcptape.wire.jsonrpc import NOT_JSON, decode

MCP_METHODS: frozenset[str] = frozenset({"initialize", "ping"})
"""MCP methods outside the prefixed families."""

MCP_PREFIXES: tuple[str, ...] = (
    "tools/", "resources/", "prompts/", "notifications/", "completion/", "logging/", "sampling/", "elicitation/",
    "roots/", "tasks/", "subscriptions/", "server/",
)  # fmt: skip
"""The method families of MCP (every revision, 2024-11-05 to 2026-07-28)."""

MCP_HEADERS: tuple[str, ...] = ("mcp-session-id", "mcp-protocol-version")

STREAM_PATHS: tuple[str, ...] = ("sse", "mcp")
"""Last path segments of event-stream GETs taken as MCP without seeing their events."""


def is_mcp_method(method: Any) -> bool:
    return isinstance(method, str) and (method in MCP_METHODS or method.startswith(MCP_PREFIXES))


def mcp_payload(body: bytes | str | None) -> tuple[bool, bool]:
    """(is JSON-RPC 2.0, has an MCP method) for a body or an SSE event's data."""
    if not body:
        return False, False
    value = decode(body)
    if value is NOT_JSON:
        return False, False
    msgs = [
        m
        for m in (value if isinstance(value, list) else [value])
        if isinstance(m, dict) and m.get("jsonrpc") == "2.0"
    ]
    return bool(msgs), any(is_mcp_method(m.get("method")) for m in msgs)


def _path(target: str) -> str:
    """The path of a request target or URL, without query, `/` for an empty one, no trailing `/`."""
    path = urlsplit(target).path if "://" in target else target.split("?", 1)[0].split("#", 1)[0]
    return path.rstrip("/") or "/"


class McpFlows:
    """Decides which flows are MCP, remembering the paths that carried MCP; counts the others."""

    def __init__(self, endpoints: Iterable[str] = ()) -> None:
        self.endpoints = frozenset(_path(e) for e in endpoints if e)
        self.seen: set[str] = set()
        """Paths that carried MCP so far."""
        self.skipped = 0
        """Flows decided not MCP."""

    def request(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None,
                legacy: bool = False) -> bool:  # fmt: skip
        """Is the flow whose request this is MCP? `headers` with lowercased names; `legacy`: its
        target is an announced legacy POST endpoint."""
        path = _path(target)
        if self.endpoints:
            verdict = legacy or path in self.endpoints
        else:
            verdict = legacy or self._looks_mcp(method, path, headers, body)
        if verdict:
            self.seen.add(path)
        else:
            self.skipped += 1
        return verdict

    def _looks_mcp(
        self, method: str, path: str, headers: Mapping[str, str], body: bytes | None
    ) -> bool:
        if any(headers.get(h) for h in MCP_HEADERS) or path in self.seen:
            return True
        jsonrpc, mcp = mcp_payload(body)
        if mcp:
            return True
        if jsonrpc:
            return False  # JSON-RPC of another protocol
        accept = headers.get("accept", "*/*").lower()
        wants_stream = "text/event-stream" in accept or "*/*" in accept
        return method.upper() == "GET" and wants_stream and path.rsplit("/", 1)[-1] in STREAM_PATHS

    def whole_flow(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None,
                   response_headers: Mapping[str, str], events: Iterable[tuple[str | None, str]] = (),
                   response_body: bytes | None = None, legacy: bool = False) -> bool:  # fmt: skip
        """`request`, for a flow known whole (an import): also MCP when its response carries MCP
        headers, an `endpoint` event, or MCP JSON-RPC in a body or an event's data."""
        path = _path(target)
        if not self.endpoints and not legacy and not self._looks_mcp(method, path, headers, body):
            answer = any(response_headers.get(h) for h in MCP_HEADERS)
            answer = answer or any(
                name == "endpoint" or mcp_payload(data)[1] for name, data in events
            )
            answer = answer or mcp_payload(response_body)[1]
            if answer:
                self.seen.add(path)
                return True
        return self.request(method, target, headers, body, legacy)
