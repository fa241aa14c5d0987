"""The HTTP capture shell: mitmproxy in reverse-proxy mode, in this process, with the mcptape addon.

`record_http` is what `mcptape record --http` runs. mitmproxy listens on `--host`/`--port`, forwards
every request to the upstream server with `Host` rewritten to the upstream's (servers with
DNS-rebinding protection answer 421 to a foreign Host), and the addon
(`mcptape.capture.mitm_addon`) records each exchange into the cassette as it passes;
event-stream responses are streamed, never buffered. SIGINT, SIGTERM or SIGHUP stop the
proxy cleanly: the cassette then ends with an `end` event.

mcptape's own lines go to stderr (stdout stays free for whatever the user pipes):
    mcptape record: proxying http://127.0.0.1:PORT/mcp -> http://127.0.0.1:8000/mcp
    mcptape record: recording to cassettes/x.jsonl (Ctrl-C to stop)
The first one names the real port, also when `--port 0` asked for a free one.
"""

from __future__ import annotations

import base64
import logging
import os
import signal
import socket
import sys
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
from mitmproxy import ctx, master, options
from mitmproxy.addons import (
    core,
    disable_h2c,
    errorcheck,
    next_layer,
    proxyserver,
    tlsconfig,
)
from mitmproxy.net import server_spec

from mcptape.errors import ConfigError, RecordError
from mcptape.redaction.redact import DEFAULT_KEYS, DEFAULT_PATTERNS, RedactConfig, Redactor

from .mitm_addon import McpTape
from .summary import summary


def record_http(
    upstream: str,
    listen: tuple[str, int],
    out_path: Path,
    config: RedactConfig,
    *,
    quiet: bool = False,
    fresh: bool = False,
) -> int:
    """Records the HTTP MCP server at `upstream` through a reverse proxy on `listen` (host,
    port; port 0 picks a free one) until a signal.

    `fresh`: `out_path` is a default name, numbered when taken (see `CassetteWriter`).

    Returns:
        0 once stopped by SIGINT/SIGTERM/SIGHUP with the cassette complete.

    Raises:
        ConfigError: a bad upstream URL, listen address or redaction pattern.
        RecordError: the proxy cannot listen, or the cassette cannot be written.
    """
    upstream, authorization = check_upstream(upstream)
    host, port = listen
    Redactor(config)  # raises ConfigError on a bad pattern
    _check_listen(host, port)
    _check_writable(out_path)
    proxy = _Proxy(upstream, host, port, out_path, config, quiet, fresh)
    proxy.credentials = _Credentials(authorization)
    return anyio.run(proxy.run, backend="asyncio")


def check_upstream(url: str) -> tuple[str, str | None]:
    """The upstream URL without its credentials, and the `Authorization` value they stand for.

    Raises:
        ConfigError: not an http:// or https:// URL with a valid host and port (one line,
            before mitmproxy starts: it would print a traceback for a host it cannot parse).
    """
    shown, authorization = split_credentials(url)
    example = "e.g. http://127.0.0.1:8000/mcp"
    if any(c.isspace() or ord(c) < 32 for c in url):
        raise ConfigError(
            f"--upstream {shown!r}: a URL has no spaces or control characters; {example}"
        )
    parts = urlsplit(shown)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"--upstream {shown!r}: give an http:// or https:// URL, {example}")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number in 0..65535
        server_spec.parse(f"{parts.scheme}://{parts.netloc}", default_scheme="https")
    except ValueError as exc:
        port = "port" in str(exc).lower()
        why = (
            "the port must be a number in 0..65535"
            if port
            else f"{parts.hostname!r} is no valid host name"
        )
        raise ConfigError(f"--upstream {shown!r}: {why}; {example}") from None
    return shown, authorization


def split_credentials(url: str) -> tuple[str, str | None]:
    """`http://user:password@host/mcp` -> (`http://host/mcp`, the `Authorization: Basic` value).

    The URL without its userinfo is what is printed, proxied to and written in the cassette
    header; the credentials go only to the upstream, as the header the URL stands for.
    """
    head, sep, rest = url.partition("://")
    netloc = rest.split("/", 1)[0].split("?", 1)[0].split("#", 1)[0]
    if not sep or "@" not in netloc:
        return url, None
    userinfo, host = netloc.rsplit("@", 1)
    user, _, password = userinfo.partition(":")
    token = base64.b64encode(f"{unquote(user)}:{unquote(password)}".encode()).decode()
    return f"{head}://{host}{rest[len(netloc) :]}", f"Basic {token}"


class _Credentials:
    """Adds the upstream URL's credentials to each request the proxy forwards, after the tape
    recorded it as the client sent it (a client's own Authorization wins)."""

    def __init__(self, authorization: str | None) -> None:
        self.authorization = authorization

    def request(self, flow: Any) -> None:
        if self.authorization and "authorization" not in flow.request.headers:
            flow.request.headers["Authorization"] = self.authorization


def parse_listen(listen: str) -> tuple[str, int]:
    """`HOST:PORT` (or `[v6]:PORT`, or `PORT` alone for 127.0.0.1) -> (host, port)."""
    host, sep, port_text = listen.rpartition(":")
    if not sep:
        host, port_text = "127.0.0.1", listen
    host = host.strip("[]") or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise ConfigError(
            f"listen address {listen!r}: give --host HOST --port PORT (port 0 picks a free one)"
        ) from None
    if not 0 <= port <= 65535:
        raise ConfigError(f"listen address {listen!r}: the port must be 0..65535")
    return host, port


def _check_listen(host: str, port: int) -> None:
    """Fails early, with a clear message, when the listen address is taken or not ours."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError as exc:
            raise RecordError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def _check_writable(path: Path) -> None:
    """Fails early when the cassette cannot be written (without touching it: the recording
    goes to a sibling file, see `CassetteWriter`)."""
    try:
        if path.exists() and not path.is_file():
            raise RecordError(f"{path}: cannot write the cassette: not a regular file")
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RecordError(f"{path}: cannot write the cassette: {exc.strerror or exc}") from None
    if not os.access(path.parent, os.W_OK):
        raise RecordError(f"{path}: cannot write the cassette: {path.parent} is not writable")


class _Announce:
    """Says where clients should connect, once mitmproxy listens (the real port when 0 was asked)."""

    def __init__(self, upstream: str, tape: McpTape, quiet: bool) -> None:
        self.upstream = upstream
        self.tape = tape
        self.quiet = quiet
        self.url: str | None = None

    def running(self) -> None:
        addrs = ctx.master.addons.get("proxyserver").listen_addrs()
        if not addrs:
            return
        host, port = addrs[0][0], addrs[0][1]
        if ":" in host:
            host = f"[{host}]"
        parts = urlsplit(self.upstream)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        self.url = f"http://{host}:{port}{path}"
        if not self.quiet:
            print(
                f"mcptape record: proxying {self.url} -> {self.upstream}",
                file=sys.stderr,
                flush=True,
            )
            print(
                f"mcptape record: recording to {self.tape.path} (Ctrl-C to stop)",
                file=sys.stderr,
                flush=True,
            )


class _Proxy:
    def __init__(
        self,
        upstream: str,
        host: str,
        port: int,
        out_path: Path,
        config: RedactConfig,
        quiet: bool,
        fresh: bool,
    ) -> None:
        self.upstream = upstream
        self.host = host
        self.port = port
        self.out_path = out_path
        self.fresh = fresh
        self.config = config
        self.quiet = quiet
        self.tape = McpTape()
        self.credentials = _Credentials(None)
        self.tape.log_failure = False  # record_http raises it

    async def run(self) -> int:
        _log_to_stderr(self.quiet)
        parts = urlsplit(self.upstream)
        opts = options.Options(
            mode=[f"reverse:{parts.scheme}://{parts.netloc}"], listen_host=self.host, listen_port=self.port,
        )  # fmt: skip
        m = master.Master(opts)
        m.addons.add(
            core.Core(), disable_h2c.DisableH2C(), proxyserver.Proxyserver(), next_layer.NextLayer()
        )
        if parts.scheme == "https":
            m.addons.add(tlsconfig.TlsConfig())
        m.addons.add(
            errorcheck.ErrorCheck(repeat_errors_on_stderr=True),
            self.tape,
            _Announce(self.upstream, self.tape, self.quiet),
            self.credentials,
        )
        opts.update(
            keep_host_header=False,  # the upstream sees its own Host: DNS-rebinding protection answers 421 otherwise
            connection_strategy="lazy",  # read the request first: an unreachable upstream is a recorded 502, not a reset
            mcptape_cassette=str(self.out_path),
            mcptape_fresh=self.fresh,
            mcptape_target=self.upstream,
            mcptape_redact=self.config.enabled,
            mcptape_redact_keys=[k for k in self.config.keys if k not in DEFAULT_KEYS],
            mcptape_redact_patterns=[p for p in self.config.patterns if p not in DEFAULT_PATTERNS],
        )  # fmt: skip
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._stop_on_signal, m)
            try:
                await m.run()
            except SystemExit as exc:  # errorcheck: mitmproxy could not start (it printed why)
                raise RecordError("the proxy could not start") from exc
            finally:
                tg.cancel_scope.cancel()
        failed = self.tape.failed
        if isinstance(failed, RecordError):
            raise failed
        if failed is not None:
            raise RecordError(f"recording stopped: {failed}")
        if not self.quiet and self.tape.path is not None:
            print(f"mcptape record: {summary(self.tape.path)}", file=sys.stderr, flush=True)
        return 0

    @staticmethod
    async def _stop_on_signal(m: master.Master) -> None:
        with anyio.open_signal_receiver(signal.SIGINT, signal.SIGTERM, signal.SIGHUP) as signals:
            async for _ in signals:
                m.shutdown()


class _Labelled(logging.Formatter):
    """A log record as one of `mcptape record`'s lines: a warning, or an error (docs/cli.md).
    The addon's own `mcptape: ` (which names it in mitmdump's log) is dropped for the label."""

    def format(self, record: logging.LogRecord) -> str:
        text = record.getMessage().removeprefix("mcptape: ")
        if record.levelno >= logging.ERROR:
            return f"mcptape: error: {text}"
        return f"mcptape record: warning: {text}"


def _log_to_stderr(quiet: bool) -> None:
    """mitmproxy logs through `logging`: its warnings (and ours) go to stderr, one line each."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Labelled())
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.ERROR if quiet else logging.WARNING)
