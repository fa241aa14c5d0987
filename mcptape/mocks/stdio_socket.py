"""A mock's stdio sessions, served on a local socket from threads of the test process
(`Mock.command`). The command is `python -m mcptape.mocks.relay SOCKET`, which copies its stdin
to the socket and the socket to its stdout: any stdio client reaches the mock in this process,
where its function answers run and its journal sees the calls.

The socket is a Unix socket in a directory of its own that only this user may enter: no port,
and no other user can connect. Each connection is one stdio session, served by the stdio
replay shell (`StdioReplayServer`) on the connection's descriptor, in a thread of its own.
POSIX only: a socket's descriptor is read with `os.read`.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import socket
import sys
import tempfile
import threading

from mcptape.cassette import Cassette
from mcptape.replay.outputs import ReplayConfig
from mcptape.replay.server_stdio import StdioReplayServer

RELAY = "mcptape.mocks.relay"
"""The module a stdio client runs to reach the mock (`python -m`)."""


def supported() -> bool:
    """True where Unix sockets exist (not Windows)."""
    return hasattr(socket, "AF_UNIX")


def _folder() -> str:
    """A new directory only this user may enter (mode 0700), for the socket. A socket's path is
    limited in length (the kernel refuses a long one): a long temporary directory
    (`TMPDIR`) gives way to /tmp."""
    folder = tempfile.mkdtemp(prefix="mcptape-mock-")
    if len(os.path.join(folder, SOCKET).encode()) < SHORT:
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix="mcptape-mock-", dir="/tmp")


SOCKET = "mock.sock"
SHORT = 100
"""Socket paths shorter than this (in bytes) bind everywhere Unix sockets exist."""


class StdioSocket:
    """Serves `cassette` (with `config`'s answerer) to each client of `command`, until `stop`."""

    def __init__(self, cassette: Cassette, config: ReplayConfig) -> None:
        self._cassette, self._config = cassette, config
        self._dir = _folder()
        self.path = os.path.join(self._dir, SOCKET)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.bind(self.path)
        self._sock.listen()
        self._wake = os.pipe()
        """Written by `stop`: the accepting thread waits on it and the socket at once."""
        self._lock = threading.Lock()
        self._open: list[socket.socket] = []
        self._serving: list[threading.Thread] = []
        self._stopping = False
        self._thread = threading.Thread(target=self._accept, name="mcptape-mock-stdio", daemon=True)
        self._thread.start()

    @property
    def command(self) -> list[str]:
        return [sys.executable, "-m", RELAY, self.path]

    def _accept(self) -> None:
        while True:
            ready, _, _ = select.select([self._sock.fileno(), self._wake[0]], [], [])
            if self._wake[0] in ready:
                return
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            with self._lock:
                if self._stopping:
                    conn.close()
                    return
                self._open.append(conn)
                thread = threading.Thread(
                    target=self._serve, args=(conn,), name="mcptape-mock-session", daemon=True
                )
                self._serving.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        """One stdio session on `conn`, until the client's end closes (or `stop`)."""
        try:
            fd = conn.fileno()
            StdioReplayServer(
                self._cassette, self._config, quiet=True, stdin_fd=fd, stdout_fd=fd
            ).run()
        finally:
            with self._lock:  # (`stop` shuts the open ones down under the lock)
                self._open.remove(conn)
                conn.close()

    def stop(self) -> None:
        """Ends every session (its relay sees the end of the socket and exits) and the socket."""
        with self._lock:
            self._stopping = True
            for conn in self._open:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
            serving = list(self._serving)
        os.write(self._wake[1], b"\0")
        self._thread.join()
        for thread in serving:
            thread.join()
        self._sock.close()
        for fd in self._wake:
            os.close(fd)
        shutil.rmtree(self._dir, ignore_errors=True)
