"""The one way mcptape runs an MCP server as a child process (the stdio recorder and verify).

An I/O shell helper, no protocol: `Child.start` spawns the command with its three standard
streams on unbuffered pipes (or says in one line why it cannot), `stop` closes it down
(a grace period, then SIGKILL), `exit_status` names how it ended, and `StderrTail` keeps
the last lines the server wrote to stderr for an error message.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
from collections import deque
from dataclasses import dataclass, field

from mcptape.errors import RecordError

STDERR_TAIL = 20
"""How many of the server's last stderr lines an error message quotes."""


@dataclass(slots=True)
class Child:
    """A running server: the command and its `Popen` (pipes for stdin, stdout, stderr)."""

    command: list[str]
    proc: subprocess.Popen[bytes]

    @classmethod
    def start(cls, command: list[str], env: dict[str, str] | None = None) -> Child:
        """Spawns `command`.

        Raises:
            RecordError: it cannot be started (not found, not executable, ...).
        """
        if not command:
            raise RecordError("no server command given")
        try:
            proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0, env=env,
            )  # fmt: skip
        except OSError as exc:
            raise RecordError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from None
        return cls(list(command), proc)

    @property
    def running(self) -> bool:
        return self.proc.poll() is None

    def send_signal(self, signum: int) -> None:
        """Passes a signal on, if the child still runs."""
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signum)

    def kill(self) -> None:
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()

    def close_stdin(self) -> None:
        with contextlib.suppress(OSError):
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def stop(self, grace: float = 5.0) -> int:
        """Waits up to `grace` seconds for the child to exit, then kills it; returns its exit code."""
        try:
            return self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            self.kill()
            return self.proc.wait()


def exit_status(code: int | None) -> tuple[int | None, str | None]:
    """(exit code, signal name or None): a negative `Popen` code is a signal."""
    if code is not None and code < 0:
        try:
            return code, signal.Signals(-code).name
        except ValueError:
            return code, None
    return code, None


def describe_exit(code: int | None) -> str:
    """How the child ended, for people: `exit status 3`, `killed by SIGKILL`, `still running`."""
    if code is None:
        return "still running"
    _, sig = exit_status(code)
    if code < 0:
        return f"killed by {sig or f'signal {-code}'}"
    return f"exit status {code}"


@dataclass(slots=True)
class StderrTail:
    """The last `size` lines a child wrote to stderr (decoded leniently)."""

    size: int = STDERR_TAIL
    lines: deque[str] = field(default_factory=deque)

    def add(self, line: bytes) -> None:
        self.lines.append(line.decode("utf-8", "replace").rstrip("\r\n"))
        while len(self.lines) > self.size:
            self.lines.popleft()

    def text(self) -> str:
        return "\n".join(self.lines)
