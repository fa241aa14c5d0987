"""A mcptape child process that says on stderr where it listens (`serve`, `record --http`).

`Background` starts it, waits (bounded) for its URL line, keeps draining its stderr so the
pipe never fills, and stops it with a signal, returning its exit code and what it printed.
"""

from __future__ import annotations

import re
import signal
import subprocess
import threading
from collections.abc import Sequence

from mcptape.errors import McpTapeError

URL_LINE = re.compile(r"^mcptape(?: serve| record)?: (?:serving .* at|proxying) (http://\S+)")
"""The line saying where the child listens; the bare `mcptape:` form is an older mcptape's."""


class BackgroundError(McpTapeError):
    """The child exited, or said nothing, before it listened."""


class Background:
    """See the module docstring."""

    def __init__(self, argv: Sequence[str], *, what: str, timeout: float = 60.0) -> None:
        self.argv = list(argv)
        self.lines: list[str] = []
        self.url: str | None = None
        self._ready = threading.Event()
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True, errors="replace")  # fmt: skip
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if not self._ready.wait(timeout) or self.url is None:
            code = self.stop()
            said = "".join(self.lines).strip() or "nothing"
            state = (
                f"exited with {code}"
                if code is not None
                else f"did not listen within {timeout:.0f} s"
            )
            raise BackgroundError(f"{what} {state}; it printed: {said}")

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line)
            if self.url is None and (m := URL_LINE.match(line)):
                self.url = m.group(1)
                self._ready.set()
        self._ready.set()

    def stop(self, sig: int = signal.SIGINT, timeout: float = 30.0) -> int | None:
        """Signals the child and waits for it; its exit code (None if it had to be killed)."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self._reader.join(timeout)
                return None
        self._reader.join(timeout)
        return self.proc.returncode

    @property
    def stderr(self) -> str:
        return "".join(self.lines)
