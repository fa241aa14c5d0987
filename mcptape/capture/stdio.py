"""The stdio capture shell: run an MCP server as a child and sit on its pipes.

Three pump threads copy bytes as they arrive (client stdin -> child stdin, child stdout
-> our stdout, child stderr -> our stderr), chunk by chunk, never waiting for a line end,
so the client cannot tell the recorder is there. Each pump also frames its stream into
lines. Every line a chunk completes takes its place in the cassette (`Recorder.reserve`)
*before* the chunk is forwarded, and is parsed, redacted and written just after: the
cassette's order is the wire's order (an answer cannot be seen before the line that caused
it has its place), and the recording work overlaps with the peer's instead of adding to
the round trip. Blocking reads in threads are the lowest-latency way to move pipe bytes
in Python and work the same for pipes, files and terminals.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from mcptape.child import Child, exit_status
from mcptape.errors import CassetteError, RecordError
from mcptape.model import Source
from mcptape.wire.ndjson import DEFAULT_MAX_LINE, LineFramer, Oversize

from .recorder import Recorder, Ticket

CHUNK = 1 << 17
"""Bytes read per system call; large enough for 200+ MB/s through a pipe."""


@dataclass
class StdioCapture:
    """Runs `command` as a child, passing our stdio through it and recording both directions."""

    command: list[str]
    recorder: Recorder
    stdin_fd: int = 0
    stdout_fd: int = 1
    stderr_fd: int = 2
    max_line: int = DEFAULT_MAX_LINE
    env: dict[str, str] | None = None
    on_start: Callable[[subprocess.Popen[bytes]], None] | None = None
    """Called once the child is running (e.g. to say where the cassette goes)."""
    _failure: list[BaseException] = field(default_factory=list)
    _proc: subprocess.Popen[bytes] | None = None

    def run(self) -> int:
        """Runs the session to the child's exit; returns the exit code to pass on.

        Raises:
            RecordError: the child could not start, or the cassette could not be written
                (the child is then stopped: the session never runs on unrecorded).
        """
        proc = Child.start(self.command, self.env).proc
        self._proc = proc
        if self.on_start is not None:
            self.on_start(proc)
        assert proc.stdin and proc.stdout and proc.stderr
        old = {sig: signal.signal(sig, self._forward) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
        up = threading.Thread(target=self._pump_stdin, args=(proc.stdin.fileno(), proc), daemon=True, name="stdin")
        down = threading.Thread(target=self._pump, args=(proc.stdout.fileno(), self.stdout_fd, Source.SERVER), daemon=True)
        err = threading.Thread(target=self._pump_stderr, args=(proc.stderr.fileno(),), daemon=True)
        for th in (up, down, err):
            th.start()
        try:
            code = proc.wait()
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        down.join(timeout=5)
        err.join(timeout=5)
        if self._failure:
            raise RecordError(f"recording stopped: {self._failure[0]}")
        self.recorder.exit(*exit_status(code))
        self.recorder.end()
        return 128 - code if code < 0 else code

    def _forward(self, signum: int, _frame: object) -> None:
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.send_signal(signum)

    def _fail(self, exc: BaseException) -> None:
        self._failure.append(exc)
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()

    def _pump_stdin(self, child_fd: int, proc: subprocess.Popen[bytes]) -> None:
        self._pump(self.stdin_fd, child_fd, Source.CLIENT)
        with contextlib.suppress(OSError):
            assert proc.stdin
            proc.stdin.close()

    def _pump(self, src_fd: int, dst_fd: int, source: Source) -> None:
        """A protocol stream: each line recorded as a payload of `source`, then its end."""
        rec = self.recorder
        try:
            self._copy(src_fd, dst_fd, lambda line, ticket: rec.payload(source, line, ticket=ticket))
            rec.eof(source)
        except CassetteError as exc:
            self._fail(exc)

    def _pump_stderr(self, src_fd: int) -> None:
        """The server's stderr: each line recorded as a stderr event."""
        rec = self.recorder
        try:
            self._copy(src_fd, self.stderr_fd, lambda line, ticket: rec.stderr(line if isinstance(line, bytes) else line.head, ticket))
        except CassetteError as exc:
            self._fail(exc)

    def _copy(self, src_fd: int, dst_fd: int, record: Callable[[bytes | Oversize, Ticket | None], object]) -> None:
        """Copies src to dst chunk by chunk; every line a chunk completes takes its place in the
        cassette before the chunk is forwarded, and is recorded just after."""
        framer = LineFramer(self.max_line)
        reserve = self.recorder.reserve
        dst_open = True
        while True:
            try:
                chunk = os.read(src_fd, CHUNK)
            except OSError:
                chunk = b""
            if not chunk:
                break
            lines = framer.feed(chunk)
            tickets = [reserve() for _ in lines]
            if dst_open:
                dst_open = _write_all(dst_fd, chunk)
            for line, ticket in zip(lines, tickets, strict=True):
                record(line, ticket)
        tail = framer.flush()
        if tail is not None:
            record(tail, None)


def _write_all(fd: int, data: bytes) -> bool:
    """Writes all of `data`; False when the other end has gone (EPIPE)."""
    view = memoryview(data)
    try:
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except (BrokenPipeError, OSError):
        return False
    return True
