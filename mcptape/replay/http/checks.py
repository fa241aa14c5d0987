"""The checks a real MCP HTTP server makes before it looks at a message. Pure.

- `Guard`: DNS-rebinding protection. `Host` must name the address served, a loopback name or a
  name given with `--allow-host` (a wildcard bind needs those), and an `Origin`, when sent,
  likewise (the spec asks servers to validate Origin and answer 403 to any other).
- `accepts` / `is_json`: the `Accept` and `Content-Type` rules of Streamable HTTP.
- `header_mismatch`: the 2026-07-28 header ladder (`MCP-Protocol-Version`, `Mcp-Method`,
  `Mcp-Name`, `Mcp-Param-*` against the body), answered 400 with -32020 like the SDK servers.
  `Mcp-Param-*` headers are checked against the `x-mcp-header` annotations of the tools in
  the cassette's recorded `tools/list` results.

Headers are given as a dict with lowercase names.
"""

from __future__ import annotations

import base64
import binascii
import ipaddress
import re
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit

from mcptape.errors import ConfigError
from mcptape.versions import META_PROTOCOL_VERSION
from mcptape.wire.jsonrpc import request_meta, request_params

LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}
"""2026-07-28: the methods whose `Mcp-Name` header mirrors a body param."""
X_MCP_HEADER = "x-mcp-header"
_B64 = re.compile(r"^=\?base64\?(.*)\?=$")


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host.strip("[]") in ("", "0.0.0.0", "::")


def _hostname(hostport: str) -> str:
    """`example.com:8000` / `[::1]:8000` / `127.0.0.1` -> the host part, lowercased."""
    hostport = hostport.strip().lower()
    if hostport.startswith("["):
        return hostport[1 : hostport.find("]")] if "]" in hostport else hostport
    return hostport.rsplit(":", 1)[0] if hostport.count(":") == 1 else hostport


class Guard:
    """Host and Origin checks (DNS-rebinding protection) for a server bound to `bind_host`.

    Allowed names: loopback names and addresses, the bound address itself, and `allowed_hosts`
    (`--allow-host`). Every request's `Host` must be one, and its `Origin`, when sent, too: an
    Origin equal to a foreign Host is still foreign. A wildcard bind (`0.0.0.0`, `::`) cannot
    know the names clients use for it, so it needs `allowed_hosts`.
    """

    def __init__(self, bind_host: str, allowed_hosts: Iterable[str] = ()) -> None:
        self.bind_host = bind_host.strip("[]").lower()
        self.allowed = frozenset(_hostname(h) for h in allowed_hosts if h.strip())
        if is_wildcard(bind_host) and not self.allowed:
            raise ConfigError(
                f"--host {bind_host or '0.0.0.0'!r} answers to any name a client uses: give the names it may be reached by "
                "with --allow-host NAME (repeatable, e.g. --allow-host myhost.local --allow-host 192.168.1.5), "
                "so that a DNS-rebinding page cannot use it"
            )

    def _allowed(self, host: str) -> bool:
        return (
            is_loopback(host)
            or host in self.allowed
            or (host == self.bind_host and not is_wildcard(host))
        )

    def host_ok(self, headers: dict[str, str]) -> bool:
        host = headers.get("host")
        return host is not None and self._allowed(_hostname(host))

    def origin_ok(self, headers: dict[str, str]) -> bool:
        origin = headers.get("origin")
        if origin is None:
            return True  # not a browser: nothing to protect against
        try:
            host = urlsplit(origin).hostname
        except ValueError:
            return False
        return host is not None and self._allowed(host.lower())


def _media_types(value: str) -> list[str]:
    return [part.split(";", 1)[0].strip().lower() for part in value.split(",")]


def accepts(headers: dict[str, str], *, json: bool, sse: bool) -> bool:
    """True when `Accept` lists what the answer may be (`*/*` and `type/*` count)."""
    types = _media_types(headers.get("accept", ""))
    ok_json = any(t in ("application/json", "application/*", "*/*") for t in types)
    ok_sse = any(t in ("text/event-stream", "text/*", "*/*") for t in types)
    return (ok_json or not json) and (ok_sse or not sse)


def is_json(headers: dict[str, str]) -> bool:
    return "application/json" in _media_types(headers.get("content-type", ""))


def decode_header_value(value: str | None) -> str | None:
    """A header value with its `=?base64?...?=` form decoded (None when it is not valid base64)."""
    if value is None:
        return None
    m = _B64.match(value)
    if m is None:
        return value
    try:
        return base64.b64decode(m.group(1), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def header_mismatch(
    msg: dict[str, Any], headers: dict[str, str], params: ParamHeaders | None = None
) -> str | None:
    """Why a 2026-07-28 request's headers disagree with its body (-32020), or None."""
    version = request_meta(msg).get(META_PROTOCOL_VERSION)
    if headers.get("mcp-protocol-version") != version or version is None:
        return "MCP-Protocol-Version header does not match the request envelope's protocol version"
    method = msg.get("method")
    if headers.get("mcp-method") != method:
        return "Mcp-Method header does not match the request body's method"
    key = NAME_PARAM.get(str(method))
    body_value = request_params(msg).get(key) if key else None
    if (
        key
        and body_value is not None
        and decode_header_value(headers.get("mcp-name")) != body_value
    ):
        return f"Mcp-Name header does not match the request body's {key!r} parameter"
    if params is not None and method == "tools/call":
        return params.mismatch(msg, headers)
    return None


class ParamHeaders:
    """The `Mcp-Param-*` headers each recorded tool asks for (`x-mcp-header` in its input schema)."""

    def __init__(self, tools_list_results: list[Any]) -> None:
        self.tools: dict[str, list[tuple[tuple[str, ...], str, Any]]] = {}
        for result in tools_list_results:
            for tool in (result.get("tools") if isinstance(result, dict) else None) or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    found = list(_annotated(tool.get("inputSchema"), ()))
                    if found:
                        self.tools[tool["name"]] = found

    def mismatch(self, msg: dict[str, Any], headers: dict[str, str]) -> str | None:
        params = request_params(msg)
        for path, token, typ in self.tools.get(str(params.get("name")), ()):
            value: Any = params.get("arguments")
            for key in path:
                value = value.get(key) if isinstance(value, dict) else None
            header = decode_header_value(headers.get(f"mcp-param-{token.lower()}"))
            if value is None and header is None:
                continue
            if value is None or header is None or not _same(typ, value, header):
                return f"Mcp-Param-{token} header does not match the request body's argument {'.'.join(path)!r}"
        return None


def _annotated(schema: Any, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], str, Any]]:
    if not isinstance(schema, dict):
        return
    token = schema.get(X_MCP_HEADER)
    if path and isinstance(token, str):
        yield path, token, schema.get("type")
    props = schema.get("properties")
    if isinstance(props, dict):
        for name, sub in props.items():
            yield from _annotated(sub, (*path, str(name)))


def _same(typ: Any, value: Any, header: str) -> bool:
    if isinstance(value, bool):
        return header == ("true" if value else "false")
    if (
        typ == "integer"
        and isinstance(value, (int, float))
        and re.fullmatch(r"-?[0-9]+(\.0+)?", header)
    ):
        return int(header.split(".")[0]) == value
    return header == str(value)
