"""The stdio replay shell: stdin lines -> engine -> stdout lines (`mcptape replay FILE`).

Threads, not an event loop: the main thread reads stdin with blocking reads, frames lines
and feeds the engine; with instant timing it writes the answers itself, one `write()` per
input line. With recorded timing a scheduler thread sends each answer at its due time
(arrival of the client message that triggered it + the recorded delay / speed), so a slow
recorded call does not hold up the others. Only JSON-RPC reaches stdout: fd 1 is
redirected to stderr for the life of the server and answers go to a private duplicate.
Diagnostics go to stderr.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from mcptape._perf import settled
from mcptape.cassette import Cassette
from mcptape.errors import McpTapeError
from mcptape.proc.fds import write_all
from mcptape.wire.jsonrpc import (
    JSONRPC_PARSE_ERROR,
    NOT_JSON,
    classify,
    decode,
    error_response,
    shallow,
)
from mcptape.wire.ndjson import DEFAULT_MAX_LINE, LineFramer

from .engine import Note, ReplayConfig, ReplayEngine, Send
from .faults import FaultRule, Hangup, Step
from .pacing import Pacer
from .prepared import parsed_lines
from .report import UnplayedReport
from .sessions import SessionPicker, claims_for

CHUNK = 1 << 16
SETTLE_EVERY = 4096
"""Messages parsed from the cassette file (a replay from its index file keeps each one it
plays) between two `settled()` of a process that serves until it exits: each full collection
walked every message kept so far (`docs/performance.md`)."""
_HANGUP = b""
"""Queued in the scheduler where a fault closes stdout (a real line is never empty)."""


@dataclass
class _Scheduler:
    """Sends lines at their due times, in due order (ties in arrival order)."""

    write: Callable[[bytes, Any], bool]
    """Writes one line (and the message it carries, for pacing); False once the client's end is closed."""
    _heap: list[tuple[float, int, bytes, Any]] = field(default_factory=list)
    _cv: threading.Condition = field(default_factory=threading.Condition)
    _seq: int = 0
    _closing: bool = False

    def __post_init__(self) -> None:
        self._thread = threading.Thread(target=self._run, name="replay-timing", daemon=True)
        self._thread.start()

    def put(self, due: float, line: bytes, msg: Any = None) -> None:
        with self._cv:
            self._seq += 1
            heapq.heappush(self._heap, (due, self._seq, line, msg))
            self._cv.notify()

    def _run(self) -> None:
        while True:
            with self._cv:
                while True:
                    if self._heap:
                        wait = self._heap[0][0] - time.monotonic()
                        if wait <= 0:
                            _, _, line, msg = heapq.heappop(self._heap)
                            break
                        self._cv.wait(wait)
                    elif self._closing:
                        return
                    else:
                        self._cv.wait()
            if not self.write(line, msg):
                return

    def close(self) -> None:
        """Waits until everything queued has been sent."""
        with self._cv:
            self._closing = True
            self._cv.notify()
        self._thread.join()


class StdioReplayServer:
    """Serves one client session on stdin/stdout from a cassette."""

    def __init__(
        self, cassette: Cassette, config: ReplayConfig, *, strict: bool = False, speed: float | None = None,
        quiet: bool = False, stdin_fd: int = 0, stdout_fd: int = 1, faults: tuple[FaultRule, ...] = (),
        max_line: int = DEFAULT_MAX_LINE, report: Path | None = None,
    ) -> None:  # fmt: skip
        self.cassette = cassette
        config = config.with_faults(faults)
        self.sessions = SessionPicker(cassette, config, claims_for(cassette))
        """Which of the cassette's sessions this launch plays (the client's first request picks)."""
        self.engine: ReplayEngine = self.sessions.engine
        self.strict = strict
        self.speed = speed
        self.quiet = quiet
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self.max_line = max_line
        """Longest client line parsed (bytes); a longer one is answered -32700 and never held whole."""
        self.report = report
        """Where to append a JSON line listing the unplayed exchanges at disconnect (`--report`)."""
        self.settle = False
        """True in a process that serves this replay until it exits (`serve_stdio`): the messages
        it parses from the cassette file are taken out of the collector's sight as they pile up."""
        self._out_open = True
        self._pacer = Pacer.on(stdout_fd, self._write)
        """Holds a response back until the client has read the progress before it (pacing.py)."""

    def _write(self, data: bytes) -> bool:
        if self._out_open:
            self._out_open = write_all(self.stdout_fd, data)
        return self._out_open

    def _write_or_hangup(self, data: bytes, msg: Any = None) -> bool:
        if data != _HANGUP:
            return self._pacer.send([data], [msg])
        if (
            self._out_open
        ):  # the client sees end of file; fd 1's number stays valid for serve_stdio's close
            self._out_open = False
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stdout_fd)
            os.close(devnull)
        return False

    def _note(self, note: Note) -> None:
        if self.quiet and note.level != "error":
            return
        text = (
            note.text
            if note.text.startswith("mcptape")
            else f"mcptape replay: {note.level}: {note.text}"
        )
        print(text, file=sys.stderr, flush=True)

    def _emit(self, steps: Sequence[Step], arrived: float, scheduler: _Scheduler | None) -> None:
        """Carries out one chunk's steps: at once (one write, or one more before each response that
        follows progress: see pacing.py), or through the scheduler when timed."""
        lines: list[bytes] = []
        messages: list[Any] = []  # what each line carries, for pacing
        for step in steps:
            if isinstance(step, Send):
                if scheduler is None:
                    lines.append(step.line())
                    messages.append(step.msg)
                    continue
                recorded = step.after / self.speed if self.speed is not None else 0.0
                scheduler.put(arrived + recorded + step.delay, step.line(), step.msg)
            elif isinstance(step, Note):
                self._note(step)
            elif isinstance(step, Hangup):
                # only overlay rules hang up, and with rules there is a scheduler
                if scheduler is not None:
                    scheduler.put(arrived + step.delay, _HANGUP)
                else:
                    self._pacer.send(lines, messages)
                    lines, messages = [], []
                    self._write_or_hangup(_HANGUP)
            # Status is HTTP-only: a stdio overlay never makes one
        if lines:
            self._pacer.send(lines, messages)

    def run(self) -> int:
        """Serves until stdin ends; returns the exit code (1: strict and exchanges left unplayed)."""
        for warning in self.cassette.warnings:
            self._note(Note(warning))
        overlay = self.engine.overlay
        for note in overlay.notes if overlay is not None else ():
            self._note(note)
        scheduler = (
            _Scheduler(self._write_or_hangup)
            if self.speed is not None or overlay is not None or _delays(self.engine)
            else None
        )  # (with overlay rules, every line goes through the scheduler, which also hangs up)
        framer = LineFramer(self.max_line)
        settle = self.settle
        frozen = parsed_lines(self.cassette)
        try:
            while self._out_open:
                try:
                    chunk = os.read(self.stdin_fd, CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    break
                arrived = time.monotonic()
                steps: list[Step] = []
                for line in framer.feed(chunk):
                    steps.extend(self._receive(line))
                self._emit(steps, arrived, scheduler)  # one write for every line of the chunk
                if settle and parsed_lines(self.cassette) - frozen >= SETTLE_EVERY:
                    settled()  # the messages parsed from the file since, kept: out of sight too
                    frozen = parsed_lines(self.cassette)
            tail = framer.flush()
            if tail is not None:
                self._emit(self._receive(tail), time.monotonic(), scheduler)
        finally:
            if scheduler is not None:
                scheduler.close()
        if self.report is not None:
            _append_report(
                self.report, UnplayedReport.of(self.cassette, self.engine.unplayed()).to_json()
            )
        if self.strict:
            unplayed = self.engine.unplayed()
            if unplayed:
                print(
                    UnplayedReport.of(self.cassette, unplayed).text(),
                    file=sys.stderr,
                    flush=True,
                )
                return 1
        return 0

    def _receive(self, line: bytes | object) -> Sequence[Step]:
        """One client line through the engine (and its overlay)."""
        if not isinstance(line, bytes):  # an oversize line: not kept, so not parseable
            return [
                Send(error_response(None, JSONRPC_PARSE_ERROR, "Parse error: line too long")),
                Note("a client line was too long; answered -32700"),
            ]
        if not line.strip():
            return []
        value = decode(line)
        if value is NOT_JSON:
            return self.engine.receive_bytes(line)
        kind = classify(value) if isinstance(value, dict) else None
        if self.sessions.chosen is None:
            self.engine = self.sessions.route(value)
        return self.engine.receive(value, kind, shallow=shallow(line))


def _delays(engine: ReplayEngine) -> bool:
    """True when declared answers (`mcptape.mock`) may come late: they need the scheduler."""
    answerer = engine.config.answerer
    return answerer is not None and answerer.delays


def _append_report(path: Path, report: dict[str, object]) -> None:
    """Appends one JSON line (one write, so sessions sharing the file do not interleave)."""
    try:
        with path.open("ab") as f:
            f.write(orjson.dumps(report) + b"\n")
    except OSError as exc:
        raise McpTapeError(f"{path}: cannot write the replay report: {exc.strerror}") from None


def serve_stdio(
    cassette: Cassette, config: ReplayConfig, *, strict: bool = False, speed: float | None = None, quiet: bool = False,
    faults: tuple[FaultRule, ...] = (), max_line: int = DEFAULT_MAX_LINE, report: Path | None = None,
) -> int:  # fmt: skip
    """Runs the replay on this process's stdin/stdout, keeping stray output off stdout."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    out_fd = os.dup(1)
    os.dup2(2, 1)  # anything else that writes to fd 1 now lands on stderr
    sys.stdout = sys.stderr
    try:
        server = StdioReplayServer(
            cassette, config, strict=strict, speed=speed, quiet=quiet, stdout_fd=out_fd, faults=faults, max_line=max_line,
            report=report,
        )  # fmt: skip
        settled()  # (this process serves this cassette until it exits)
        server.settle = True
        return server.run()
    finally:
        os.close(out_fd)
