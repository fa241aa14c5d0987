"""The stdio capture shell: run an MCP server as a child and sit on its pipes.

Three pump threads copy bytes as they arrive (client stdin -> child stdin, child stdout
-> our stdout, child stderr -> our stderr), chunk by chunk, never waiting for a line end,
so the client cannot tell the recorder is there. Each pump also frames its stream into
lines. Every line a chunk completes is written to the cassette *before* the chunk is
forwarded: what a peer received is on disk even if the recorder is killed the next moment,
and the cassette's order is the wire's order (an answer cannot be seen before the line that
caused it is written). A chunk that completes no line (the middle of a long line) is
forwarded at once, so big lines still stream. Blocking reads in threads are the
lowest-latency way to move pipe bytes in Python and work the same for pipes, files and
terminals.

A cassette that cannot be written (disk full) does not disturb the session: the bytes keep
flowing, and the recorder reports the failure when the session ends (`Recorder.finish`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mcptape.cassette import CassetteWriter
from mcptape.cassette.model import Source
from mcptape.errors import RecordError
from mcptape.proc.child import Child, exit_status
from mcptape.proc.fds import unread_input, write_all
from mcptape.wire.ndjson import DEFAULT_MAX_LINE, LineFramer, Oversize

from .recorder import Recorder, Ticket

CHUNK = 1 << 17
"""Bytes read per system call; large enough for 200+ MB/s through a pipe."""
SETTLE_SECONDS = 2.0
"""How long the end of a session waits for the client's last unread lines to be recorded."""


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
    _proc: subprocess.Popen[bytes] | None = None
    cassette: Path | None = None
    """Where the cassette went, once `run` returned."""
    _busy: set[int] = field(default_factory=set)
    """Source fds whose last chunk is being recorded and forwarded."""

    def run(self) -> int:
        """Runs the session to the child's exit, then ends the recording (`Recorder.finish`):
        returns the exit code to pass on: the server's (128 + N when signal N ended it, as a
        shell says), also when the recording failed (the server answered nothing, the cassette
        could not be written), which is said in one line on our stderr (`cassette` stays None,
        an existing cassette is left as it was). Only a server that exited 0 while its
        recording failed gives 1, so a failed recording never looks like a success.

        Raises:
            RecordError: the child could not start (there is no exit code to pass on).
        """
        writer = self.recorder.writer
        assert isinstance(writer, CassetteWriter), "the stdio recorder writes a cassette file"
        try:
            proc = Child.start(self.command, self.env).proc
        except RecordError as exc:
            writer.discard()
            kept = "was left as it was" if writer.path.exists() else "was not written"
            raise RecordError(f"{exc}; {writer.path} {kept}") from None
        self._proc = proc
        if self.on_start is not None:
            self.on_start(proc)
        assert proc.stdin and proc.stdout and proc.stderr
        old = {
            sig: signal.signal(sig, self._forward)
            for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
        }
        up = threading.Thread(
            target=self._pump_stdin, args=(proc.stdin.fileno(), proc), daemon=True, name="stdin"
        )
        down = threading.Thread(
            target=self._pump,
            args=(proc.stdout.fileno(), self.stdout_fd, Source.SERVER),
            daemon=True,
        )
        err = threading.Thread(target=self._pump_stderr, args=(proc.stderr.fileno(),), daemon=True)
        for th in (up, down, err):
            th.start()
        try:
            code = proc.wait()
        finally:
            for sig, handler in old.items():
                signal.signal(sig, handler)
        self._settle(up)
        down.join(timeout=5)
        err.join(timeout=5)
        code_, sig_name = exit_status(code)
        self.recorder.exit(code_, sig_name)
        why = f"it was stopped by {sig_name}" if sig_name else f"it exited with code {code}"
        passed_on = 128 - code if code < 0 else code
        try:
            self.cassette = self.recorder.finish(why=why)
        except RecordError as exc:
            line = " ".join(str(exc).splitlines())
            write_all(self.stderr_fd, f"mcptape: error: {line}\n".encode(errors="replace"))
            return passed_on or 1
        return passed_on

    def _settle(self, up: threading.Thread) -> None:
        """Lets the client pump record what the client wrote before the server went (a client
        that sends a request and then SIGTERM at once): bytes still unread in our stdin, or a
        chunk being recorded. Bounded; immediate when the client closed its input or is idle."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while up.is_alive() and time.monotonic() < deadline:
            if self.stdin_fd not in self._busy and unread_input(self.stdin_fd) == 0:
                return
            time.sleep(0.002)

    def _forward(self, signum: int, _frame: object) -> None:
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.send_signal(signum)

    def _pump_stdin(self, child_fd: int, proc: subprocess.Popen[bytes]) -> None:
        self._pump(self.stdin_fd, child_fd, Source.CLIENT)
        with contextlib.suppress(OSError):
            assert proc.stdin
            proc.stdin.close()

    def _pump(self, src_fd: int, dst_fd: int, source: Source) -> None:
        """A protocol stream: each line recorded as a payload of `source`, then its end."""
        rec = self.recorder
        self._copy(src_fd, dst_fd, lambda line, ticket: rec.payload(source, line, ticket=ticket))
        rec.eof(source)

    def _pump_stderr(self, src_fd: int) -> None:
        """The server's stderr: each line recorded as a stderr event."""
        rec = self.recorder
        self._copy(
            src_fd,
            self.stderr_fd,
            lambda line, ticket: rec.stderr(line if isinstance(line, bytes) else line.head, ticket),
        )

    def _copy(
        self, src_fd: int, dst_fd: int, record: Callable[[bytes | Oversize, Ticket | None], object]
    ) -> None:
        """Copies src to dst chunk by chunk; every line a chunk completes is recorded before the
        chunk is forwarded."""
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
            self._busy.add(src_fd)
            lines = framer.feed(chunk)
            tickets = [reserve() for _ in lines]
            done = 0
            try:
                for line, ticket in zip(lines, tickets, strict=True):
                    record(line, ticket)  # gives its own place up if it fails
                    done += 1
            finally:
                for ticket in tickets[done + 1 :]:
                    self.recorder.release(ticket)  # a recording bug must not stop the other pumps
            if dst_open:
                dst_open = write_all(dst_fd, chunk)
            self._busy.discard(src_fd)
        tail = framer.flush()
        if tail is not None:
            record(tail, None)
