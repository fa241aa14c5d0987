"""The processes the end-to-end tests start: awaited by their port or by the line that
announces their URL on stderr (bounded waits, never a sleep for its own sake), and stopped
by a signal with a bounded wait."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import mcptape_cmd


def wait_port(port: int, proc: subprocess.Popen[Any], timeout: float = 30) -> None:
    """Returns once something accepts connections on 127.0.0.1:port (bounded poll)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{proc.args} exited with {proc.returncode} before listening")
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on port {port} after {timeout}s")


def stop(proc: subprocess.Popen[Any], sig: int = signal.SIGINT) -> int:
    """Sends `sig` and returns the exit code; fails the test when the process does not stop."""
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError(f"{proc.args} did not stop on {signal.Signals(sig).name}") from None


class Announced:
    """An mcptape command as a subprocess that says on stderr where clients connect: `url`,
    group `GROUP` of the first stderr line that `LINE` matches. Every stderr line is kept."""

    LINE: re.Pattern[str]
    GROUP: int
    WHAT: str

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen(
            mcptape_cmd(*args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self.stderr: list[str] = []
        self.url = ""
        self._ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        if not self._ready.wait(30) or not self.url:
            stop(self.proc)
            raise AssertionError(f"{self.WHAT} did not announce its URL: {self.stderr}")

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.stderr.append(line.rstrip("\n"))
            m = self.LINE.match(line.strip())
            if m and not self.url:
                self.url = m.group(self.GROUP)
                self._ready.set()
        self._ready.set()


class Recorder(Announced):
    """`mcptape record --http` as a subprocess; `url` is where clients connect."""

    LINE = re.compile(r"^mcptape record: proxying (\S+) -> (\S+)$")
    GROUP = 1
    WHAT = "the recorder"

    def __init__(self, upstream: str, cassette: Path, *extra: str) -> None:
        super().__init__(
            "record", "--http", "--upstream", upstream, "--host", "127.0.0.1", "--port", "0",
            "-o", str(cassette), *extra,
        )  # fmt: skip

    def stop(self, sig: int = signal.SIGINT) -> None:
        code = stop(self.proc, sig)
        self._reader.join(10)  # (its last lines read)
        assert code == 0, self.stderr


class Served(Announced):
    """`mcptape serve FILE` as a subprocess; `url` is the URL it announced."""

    LINE = re.compile(r"^mcptape serve: serving (\S+) at (\S+)")
    GROUP = 2
    WHAT = "mcptape serve"

    def __init__(self, cassette: Path, *extra: str) -> None:
        super().__init__("serve", str(cassette), *extra)

    def stop(self) -> int:
        return stop(self.proc, signal.SIGINT)
