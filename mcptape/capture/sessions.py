"""Many launches, one cassette: a recording that appends its session to the cassette of its run.

Clients that start a new server process for every operation (langchain-mcp-adapters'
`MultiServerMCPClient`, llama-index's `BasicMCPClient`) launch `mcptape record -o X.jsonl`
once per operation, all with the same path. Each launch is one session. Which launches
belong together is told by the **run**: `MCPTAPE_RUN` when set (the pytest plugin sets it
once per test session), else the process that launched the recorder (its pid and start
time): a library launching servers from one agent process is one run; running the script
again is a new run.

Record modes, in vcrpy's words:
- `all` (the default; `rewrite` is its other name): the first launch of a run replaces the
  cassette; every later launch of the same run appends its session;
- `new_episodes`: every launch appends its session, whichever run wrote the cassette.

The append happens when the session ends, under a lock (so concurrent launches land one after
the other, never interleaved), and atomically: the cassette's lines and the new session's are
written to a temporary file that is renamed over the cassette, so a reader sees the cassette
before the session or after it, never half of it, and a failed append leaves it as it was.

A session after the first starts with an event whose `info.session` says when it was recorded
and by which run (see docs/cassette-format.md); its events are numbered on from the
cassette's last, and timed from the cassette's start.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from filelock import FileLock

from mcptape.cassette import CassetteWriter
from mcptape.cassette.atomic import AtomicWriter
from mcptape.cassette.codec import (
    RUN_FIELD,
    event_head,
    header_fields,
    renumbered,
    session_marks,
    session_run,
    with_session,
)
from mcptape.errors import CassetteError
from mcptape.proc.runs import RUN_ENV, private_folder, run_id

__all__ = ["MODE_NAMES", "RUN_ENV", "RUN_FIELD", "RecordMode", "SessionPolicy", "commit", "run_id"]


class RecordMode(StrEnum):
    """What a launch does with a cassette already at its path."""

    ALL = "all"
    """Replace it, unless the same run wrote it: then append this session."""
    NEW_EPISODES = "new_episodes"
    """Append this session, whichever run wrote it."""


MODE_NAMES = {"all": RecordMode.ALL, "rewrite": RecordMode.ALL,
              "new_episodes": RecordMode.NEW_EPISODES}  # fmt: skip
"""Every spelling `--record-mode` takes."""


@dataclass(frozen=True)
class SessionPolicy:
    """How a recording commits when a cassette is already at its path (`commit`)."""

    mode: RecordMode
    run: str
    recorded_at: str
    """When this session's recording started (its header's `recorded_at`)."""
    target: dict[str, Any]


@dataclass(frozen=True)
class _Tail:
    """What appending needs of a cassette on disk."""

    data: bytes
    header: dict[str, Any]
    last_run: str | None
    last_seq: int
    last_t: float


def commit(writer: CassetteWriter, policy: SessionPolicy) -> Path:
    """Ends `writer`'s recording: appends it as a session to the cassette at its path when
    `policy` says so, else moves it into place as `CassetteWriter.commit` does. Returns where
    the session is.

    Raises:
        CassetteError: the recording cannot be moved or appended (it stays at `partial`, the
            cassette as it was).
    """
    lock = FileLock(_lock_path(writer.path))
    with lock:
        for _ in range(100):
            tail = _read_tail(writer.path)
            if tail is None or not _appends(tail, policy):
                return writer.commit()
            if _append(writer, tail, policy):
                return writer.path
        raise CassetteError(
            f"{writer.path}: cannot append the session: the cassette keeps changing"
        )


def _lock_path(path: Path) -> str:
    """A lock file for `path` in the temporary directory, so no lock file litters a project."""
    folder = private_folder("mcptape-locks")
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return str(folder / f"{digest}.lock")


def _appends(tail: _Tail, policy: SessionPolicy) -> bool:
    if tail.header.get("transport") != "stdio":
        return False  # an HTTP cassette has its own sessions: a stdio one replaces it
    return policy.mode is RecordMode.NEW_EPISODES or tail.last_run == policy.run


def _read_tail(path: Path) -> _Tail | None:
    """The cassette at `path` as appending needs it; None when there is none or it is not a
    whole cassette (it is then replaced as before)."""
    try:
        data = path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        return None
    if not data.endswith(b"\n"):
        return None
    lines = data.splitlines()
    header = header_fields(lines[0]) if lines else None
    if header is None:
        return None
    run = header.get(RUN_FIELD)
    last_seq, last_t = 0, 0.0
    if len(lines) > 1:
        head = event_head(lines[-1])
        if head is None:
            return None
        last_seq, last_t = head
    for line in reversed(lines[1:]):
        if (marked := session_run(line)) is not None:
            run = marked
            break
    return _Tail(data, header, run if isinstance(run, str) else None, last_seq, last_t)


def _append(writer: CassetteWriter, tail: _Tail, policy: SessionPolicy) -> bool:
    """Writes the cassette and this session to a temporary file and renames it over the
    cassette, if the cassette is still what `tail` read (False: it changed, read it again)."""
    writer.close_recording()
    session = writer.partial.read_bytes().splitlines()[1:]
    out = AtomicWriter(writer.path)
    try:
        out.write(tail.data)
        out.write(session_lines(session, tail, policy))
        with writer.dir_lock():
            try:
                now = writer.path.read_bytes()
            except FileNotFoundError:
                now = b""
            if now != tail.data:
                return False
            out.commit()
    finally:
        out.abort()
    writer.partial.unlink(missing_ok=True)
    writer.appended = session_marks(tail.data) + 2
    return True


def session_lines(lines: list[bytes], tail: _Tail, policy: SessionPolicy) -> bytes:
    """The event lines of a recorded session, numbered and timed on from the cassette's, the
    first marked as a session start."""
    offset = max(tail.last_t, _seconds_between(tail.header.get("recorded_at"), policy.recorded_at))
    marker: dict[str, Any] = {"recorded_at": policy.recorded_at, RUN_FIELD: policy.run}
    if policy.target != tail.header.get("target"):
        marker["target"] = policy.target
    out: list[bytes] = []
    for n, line in enumerate(lines, start=1):
        head = event_head(line)
        new = None if head is None else renumbered(line, tail.last_seq + n, offset + head[1])
        if new is None:
            continue  # (a recording's own lines always match)
        if n == 1:
            new = with_session(new, marker)
        out.append(new + b"\n")
    return b"".join(out)


def _seconds_between(start: object, end: str) -> float:
    try:
        a = datetime.fromisoformat(str(start).replace("Z", "+00:00"))
        b = datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (b - a).total_seconds())
