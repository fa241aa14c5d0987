"""The sessions of a stdio cassette, and several cassettes read as the sessions of one.

A stdio cassette holds one session per launch of the recorder (see docs/recording.md): the
first starts with the file, each later one at the event whose `info.session` marks its start
(when it was recorded, by which run). `split` cuts a cassette at those marks; `merge` makes
one cassette of several, each of them one session or more; `load_many` reads files and
folders (their `*.jsonl`, by name) that way.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mcptape.cassette.codec import SESSION
from mcptape.cassette.format import Cassette, load
from mcptape.cassette.model import Event, Header, Kind
from mcptape.errors import CassetteError, CassetteNotFoundError


def mark_of(event: Event) -> dict[str, Any] | None:
    """The session mark `event` carries (None: it starts no session)."""
    info = event.info
    if info is None:
        return None
    mark = info.get(SESSION)
    return mark if isinstance(mark, dict) else None


def starts(events: list[Event]) -> list[int]:
    """Where each session begins: 0, then the position of every marked event."""
    return [0, *(i for i, e in enumerate(events) if i and e.info is not None and mark_of(e))]


@dataclass(frozen=True)
class SessionInfo:
    """One session of a cassette, as `show` lists it."""

    n: int
    first_seq: int
    last_seq: int
    recorded_at: str
    run: str | None
    target: dict[str, Any]
    requests: list[str]
    """The methods (tool names for `tools/call`) of its client requests, in order."""
    ended: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "first_seq": self.first_seq,
            "last_seq": self.last_seq,
            "recorded_at": self.recorded_at,
            "run": self.run,
            "target": self.target,
            "requests": self.requests,
            "ended": self.ended,
        }


def split(cassette: Cassette) -> list[Cassette]:
    """The cassette's sessions, each a cassette of its own (its events keep their `seq` and
    `t`, so what is said about them names the line of the file); one session: the cassette."""
    events = cassette.events
    cuts = starts(events) if cassette.header.transport == "stdio" else [0]
    if len(cuts) == 1:
        return [cassette]
    parts: list[Cassette] = []
    for n, (lo, hi) in enumerate(zip(cuts, [*cuts[1:], len(events)], strict=True)):
        mark = mark_of(events[lo]) if n else None
        header = cassette.header
        if mark is not None:
            header = replace(
                header,
                recorded_at=str(mark.get("recorded_at", header.recorded_at)),
                target=dict(mark.get("target") or header.target),
            )
        parts.append(
            Cassette(
                header,
                events[lo:hi],
                path=cassette.path,
                warnings=cassette.warnings if n == 0 else [],
                lines=cassette.lines,
            )
        )
    return parts


def sessions(cassette: Cassette) -> list[SessionInfo]:
    """What `show` says of each session of the cassette."""
    return session_infos(cassette.header, cassette.events)


def session_infos(header: Header, events: Iterable[Event]) -> list[SessionInfo]:
    """`sessions` of a cassette read one event at a time (one pass)."""
    out: list[SessionInfo] = []
    run = header.extra.get("run")
    current: dict[str, Any] | None = None
    stdio = header.transport == "stdio"
    for e in events:
        mark = mark_of(e) if stdio and e.info is not None else None
        if current is None or mark is not None:
            if current is not None:
                out.append(_info(current))
            if mark is not None:
                run = mark.get("run", run)
            current = {
                "n": len(out) + 1,
                "first": e.seq,
                "at": str(mark.get("recorded_at", header.recorded_at))
                if mark
                else header.recorded_at,
                "run": run if isinstance(run, str) else None,
                "target": dict(mark.get("target") or header.target) if mark else header.target,
                "requests": [],
            }
        current["last"], current["ended"] = e.seq, e.kind is Kind.END
        request = _request(e)
        if request is not None:
            current["requests"].append(request)
    return [*out, _info(current)] if current is not None else []


def _info(c: dict[str, Any]) -> SessionInfo:
    return SessionInfo(
        c["n"], c["first"], c["last"], c["at"], c["run"], c["target"], c["requests"], c["ended"]
    )


def _request(e: Event) -> str | None:
    """A client request's method (with the tool's name for `tools/call`); None for the rest."""
    msg = e.msg if e.kind is Kind.MESSAGE and e.src == "client" else None
    if not isinstance(msg, dict) or "id" not in msg:
        return None
    method = msg.get("method")
    if not isinstance(method, str):
        return None
    params = msg.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return f"{method} {name}" if method == "tools/call" and name else method


def merge(cassettes: list[Cassette]) -> Cassette:
    """One cassette whose sessions are those of `cassettes`, in order: the first one's header,
    the events of each later one numbered and timed on, its first event marked as a session
    start (with its own recording time and target). One cassette: itself."""
    if len(cassettes) == 1:
        return cassettes[0]
    first = cassettes[0]
    events = list(first.events)
    warnings = list(first.warnings)
    for other in cassettes[1:]:
        if other.header.transport != first.header.transport:
            raise CassetteError(
                f"{other.name}: a {other.header.transport} cassette cannot be a session of "
                f"{first.name} ({first.header.transport}); give cassettes of one transport"
            )
        warnings += other.warnings
        seq = events[-1].seq if events else 0
        t = events[-1].t if events else 0.0
        run = other.header.extra.get("run")
        for i, e in enumerate(other.events):
            moved = e._replace(seq=seq + i + 1, t=round(t + e.t, 6))
            if i == 0 and mark_of(e) is None:
                mark: dict[str, Any] = {"recorded_at": other.header.recorded_at}
                if isinstance(run, str):
                    mark["run"] = run
                if other.header.target != first.header.target:
                    mark["target"] = other.header.target
                moved = moved._replace(info={**(e.info or {}), SESSION: mark})
            events.append(moved)
    return Cassette(first.header, events, path=first.path, warnings=warnings)


def cassette_files(paths: list[str | os.PathLike[str]]) -> list[Path]:
    """The files `paths` name: each file, and the `*.jsonl` of each folder, by name.

    Raises:
        CassetteNotFoundError: a folder holds no cassette (a usage error).
    """
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("*.jsonl"))
            if not found:
                raise CassetteNotFoundError(
                    f"{p}: is a directory with no cassette (*.jsonl) in it; "
                    "give a cassette file or a folder of cassettes"
                )
            out += found
        else:
            out.append(p)
    return out


def load_many(paths: list[str | os.PathLike[str]]) -> Cassette:
    """Several cassettes (files, folders) read as the sessions of one (`merge`)."""
    return merge([load(p) for p in cassette_files(paths)])
