"""Runs the HTTP replay app under uvicorn: bind, say where, serve until a signal, report.

The socket is bound (and listening) before the URL line is printed, so a client that reads
the line can connect at once; `port=0` picks a free port. mcptape's own lines go to stderr:

    mcptape serve: serving cassettes/x.jsonl at http://127.0.0.1:PORT/mcp
"""

from __future__ import annotations

import contextlib
import signal
import socket
import sys
import threading
from collections.abc import Iterator

import uvicorn

from mcptape._perf import settled
from mcptape.cassette import Cassette
from mcptape.errors import ConfigError, McpTapeError

from ..engine import ReplayConfig
from ..faults import FaultRule
from .app import DEFAULT_MAX_BODY, HttpReplayApp
from .checks import is_loopback, is_wildcard


class ServeError(McpTapeError):
    """The server cannot listen where it was asked to."""


class _Server(uvicorn.Server):
    """uvicorn, ending the app's open event streams as soon as shutdown starts."""

    def __init__(self, config: uvicorn.Config, app: HttpReplayApp) -> None:
        super().__init__(config)
        self.app = app

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.app.stopping.set()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT, SIGTERM and SIGHUP stop the server cleanly (exit 0), not re-raised like uvicorn does."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        previous = {
            sig: signal.signal(sig, self.handle_exit)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        }
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on host:port (0: a free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets that say so, and without it
    # Nagle + delayed ACK delay every keep-alive round trip.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    except (OverflowError, socket.gaierror) as exc:
        sock.close()
        raise ConfigError(f"--host {host!r} --port {port}: {exc}") from None
    return sock


def url_of(sock: socket.socket, host: str, path: str) -> str:
    port = sock.getsockname()[1]
    shown = (
        "127.0.0.1"
        if is_wildcard(host) and ":" not in host
        else ("[::1]" if is_wildcard(host) else host)
    )
    if ":" in shown and not shown.startswith("["):
        shown = f"[{shown}]"
    return f"http://{shown}:{port}{path}"


def exposure_warning(host: str) -> str | None:
    """What to tell the user when the replay listens beyond this machine."""
    if is_loopback(host):
        return None
    text = f"mcptape serve: warning: listening on {host}, not a loopback address: anyone who can reach it can use the replay"
    if is_wildcard(host):
        text += " (only requests whose Host and Origin are loopback or a name given with --allow-host are answered)"
    return text


def serve_http(
    cassette: Cassette, config: ReplayConfig, *, name: str, host: str = "127.0.0.1", port: int = 0,
    strict: bool = False, speed: float | None = None, quiet: bool = False, max_body: int = DEFAULT_MAX_BODY,
    faults: tuple[FaultRule, ...] = (), allowed_hosts: tuple[str, ...] = (),
) -> int:  # fmt: skip
    """Serves `cassette` over HTTP until SIGINT/SIGTERM; returns the exit code (1: strict, unplayed).

    Raises:
        ConfigError: a wildcard `host` without `allowed_hosts`, or a bad host or port.
    """
    app = HttpReplayApp(cassette, config, host=host, allowed_hosts=allowed_hosts, speed=speed, max_body=max_body,
                        quiet=quiet, faults=faults)  # fmt: skip
    settled()  # (this process serves this cassette until it exits)
    for warning in cassette.warnings:
        print(f"mcptape serve: warning: {warning}", file=sys.stderr)
    sock = bind(host, port)
    exposure = exposure_warning(host)
    if exposure:
        print(exposure, file=sys.stderr)
    path = app.plan.sse_path if app.plan.legacy_sse else app.plan.path
    print(
        f"mcptape serve: serving {name} at {url_of(sock, host, path)} ({app.plan.transport}; Ctrl-C to stop)",
        file=sys.stderr,
        flush=True,
    )
    config_ = uvicorn.Config(
        app, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=3
    )
    server = _Server(config_, app)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    report = app.unplayed_report() if strict else None
    if report:
        print(report, file=sys.stderr, flush=True)
        return 1
    return 0
