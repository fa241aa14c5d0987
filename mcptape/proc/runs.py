"""Which recording (or replay) run a launch belongs to.

A client that starts the server for every operation launches mcptape many times in one run
(`mcptape.capture.sessions`, `mcptape.replay.sessions`). The run is `MCPTAPE_RUN` when set
(the pytest plugin can set it once per test session), else the process that launched mcptape:
its pid and, where the system says, its start time, so that a reused pid is another run.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

RUN_ENV = "MCPTAPE_RUN"
"""The environment variable that names a run (launches with the same value are one run)."""


def run_id(env: Mapping[str, str] | None = None) -> str:
    """A digest of this launch's run (see the module's docstring). A digest, so a cassette shows
    no pid or run name, and the same run always gives the same digest."""
    named = (os.environ if env is None else env).get(RUN_ENV, "")
    what = f"env:{named}" if named else f"parent:{os.getppid()}:{_started(os.getppid())}"
    return hashlib.sha256(what.encode()).hexdigest()[:16]


def _started(pid: int) -> str:
    """When process `pid` started, in the system's clock ticks ('' where /proc is missing)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return ""
    fields = stat[stat.rfind(b")") + 2 :].split()
    return fields[19].decode() if len(fields) > 19 else ""


def private_folder(name: str) -> Path:
    """A folder of the temporary directory that is this user's (`<name>-<uid>`), created: the
    lock and claim files of runs live there, never beside a cassette in a project."""
    import tempfile

    uid = os.getuid() if hasattr(os, "getuid") else 0
    folder = Path(tempfile.gettempdir()) / f"{name}-{uid}"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder
