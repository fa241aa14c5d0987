"""Verify's stdio shell: spawn the server (`mcptape.proc.child`), speak ndjson, feed the driver.

Two reader threads sit on the child's stdout and stderr; stdout lines go through a queue
to the driving loop, which waits for the next one at most `timeout` seconds (then the
request in flight is abandoned). Everything is recorded through the `Recorder`, in the
order it was seen. The loop ends when the driver is done or the server closed stdout.
"""

from __future__ import annotations

import os
import queue
import shlex
import threading
from typing import Any

from mcptape.capture.recorder import Recorder
from mcptape.cassette.model import Source
from mcptape.proc.child import Child, StderrTail, exit_status
from mcptape.wire.jsonrpc import NOT_JSON, decode, encode, messages_of
from mcptape.wire.ndjson import LineFramer, Oversize

from .outcome import Outcome
from .plan import Driver

CHUNK = 1 << 16
_EOF = object()


def run_stdio(
    driver: Driver,
    command: list[str],
    recorder: Recorder,
    timeout: float,
    env: dict[str, str] | None = None,
) -> Outcome:
    """Spawns `command`, drives it over ndjson, records both directions, waits for it to exit.

    Raises:
        RecordError: the command cannot be started.
    """
    child = Child.start(command, env)
    proc = child.proc
    assert proc.stdin and proc.stdout and proc.stderr
    lines: queue.Queue[Any] = queue.Queue()
    tail = StderrTail()
    outcome = Outcome(target=shlex.join(command))
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()

    def read_stdout() -> None:
        framer = LineFramer()
        for chunk in iter(lambda: _read(out_fd), b""):
            for line in framer.feed(chunk):
                lines.put(line)
        rest = framer.flush()
        if rest is not None:
            lines.put(rest)
        lines.put(_EOF)

    def read_stderr() -> None:
        framer = LineFramer()
        for chunk in iter(lambda: _read(err_fd), b""):
            for line in framer.feed(chunk):
                head = line if isinstance(line, bytes) else line.head
                tail.add(head)
                recorder.stderr(head)
        rest = framer.flush()
        if rest is not None:
            head = rest if isinstance(rest, bytes) else rest.head
            tail.add(head)
            recorder.stderr(head)

    out_thread = threading.Thread(target=read_stdout, daemon=True, name="verify-stdout")
    err_thread = threading.Thread(target=read_stderr, daemon=True, name="verify-stderr")
    out_thread.start()
    err_thread.start()

    stdin = proc.stdin

    def send(msgs: list[dict[str, Any]]) -> bool:
        for m in msgs:
            data = encode(m)
            recorder.payload(Source.CLIENT, data)
            try:
                stdin.write(data + b"\n")
            except OSError:
                return False
        return True

    closed = False
    try:
        alive = send(driver.start())
        while alive and not driver.done:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                alive = send(driver.timeout())
                continue
            if line is _EOF:
                closed = True
                break
            alive = _deliver(line, recorder, driver, send)
    finally:
        outcome.unanswered = driver.remaining()
        child.close_stdin()
        recorder.eof(Source.CLIENT)
        while not closed:  # what it still says until it closes stdout
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                break
            if line is _EOF:
                closed = True
                break
            recorder.payload(Source.SERVER, line)
        recorder.eof(Source.SERVER)
        code = child.stop(grace=5.0)
        err_thread.join(timeout=5)
        out_thread.join(timeout=1)
    outcome.exit_code, outcome.signal = exit_status(code)
    outcome.stderr = list(tail.lines)
    outcome.abandoned = list(driver.abandoned)
    recorder.exit(outcome.exit_code, outcome.signal)
    return outcome


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, CHUNK)
    except OSError:
        return b""


def _deliver(line: bytes | Oversize, recorder: Recorder, driver: Driver, send: Any) -> bool:
    recorder.payload(Source.SERVER, line)
    value = decode(line) if isinstance(line, bytes) else NOT_JSON
    if value is NOT_JSON:
        return True
    return all(send(driver.on_message(m)) for m in messages_of(value))
