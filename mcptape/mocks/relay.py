"""`python -m mcptape.mocks.relay SOCKET`: the stdio command of a mock (`Mock.command`).

Internal, not a command of the CLI: `mock.command` gives it the Unix socket of a mock open in
the test process (`mcptape.mocks.stdio_socket`). It copies its stdin to the socket and the
socket to its stdout, bytes as they come, and exits when the mock's end closes: after the
client closed stdin and the session ended, or when the mock closed. Standard library only,
so that it starts quickly.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
import threading

CHUNK = 1 << 16


def _to_mock(sock: socket.socket) -> None:
    """stdin -> the socket; at the end of stdin, the mock sees the end of its input."""
    while True:
        try:
            chunk = os.read(0, CHUNK)
            if not chunk:
                break
            sock.sendall(chunk)
        except OSError:
            break
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_WR)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m mcptape.mocks.relay SOCKET (mock.command runs it)", file=sys.stderr)
        return 2
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(args[0])
    except OSError as exc:
        print(
            f"mcptape mock: cannot reach the mock at {args[0]} ({exc.strerror}); mock.command serves only while its mock is open: run it inside `with mcptape.mock() as mock`",
            file=sys.stderr,
        )
        return 1
    threading.Thread(target=_to_mock, args=(sock,), daemon=True).start()
    while True:  # the socket -> stdout, until the mock's end closes
        try:
            chunk = sock.recv(CHUNK)
        except OSError:
            break
        if not chunk:
            break
        view = memoryview(chunk)
        try:
            while view:
                view = view[os.write(1, view) :]
        except OSError:
            break  # the client closed its end
    sock.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
