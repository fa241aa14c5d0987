"""What a client declared about itself, compared apart from a request's matching key.

Pure. What the client declared (its capabilities, and the log level it asked for, per request
in 2026-07-28 or by handshake and `logging/setLevel` before) is not part of the key: it is
compared apart (`declared_of`), so the same request finds its recordings in either era and
from any client (`mcptape.replay.index`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mcptape.pairing import Session
from mcptape.versions import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
)
from mcptape.wire.jsonrpc import request_meta, request_params

from .matcher import FieldDiff

DECLARED_PATHS: tuple[tuple[str, ...], ...] = (
    ("_meta", META_CLIENT_CAPABILITIES),
    ("_meta", META_LOG_LEVEL),
    ("_meta", META_CLIENT_INFO),
)
"""Where a 2026-07-28 request carries what the client declared: compared apart from the key."""


def declared(capabilities: Any, level: Any, info: Any = None) -> dict[str, Any]:
    """What a client declared, comparable across eras (absent members left out)."""
    out: dict[str, Any] = {}
    if capabilities is not None:
        out["clientCapabilities"] = capabilities
    if isinstance(level, str):
        out["logLevel"] = level
    if info is not None:
        out[CLIENT_INFO] = info
    return out


CLIENT_INFO = "clientInfo"
"""Who the client said it is: picks between recordings, but a difference in it alone is no
reason to refuse (`--strict` still plays it: every other SDK, or SDK version, differs there)."""


def declared_of(msg: dict[str, Any]) -> dict[str, Any] | None:
    """What a 2026-07-28 request declares in its `_meta`; None for a request without the envelope."""
    return declared_in(request_meta(msg))


def declared_in(meta: dict[str, Any]) -> dict[str, Any] | None:
    """`declared_of` for a request whose `_meta` the caller has in hand."""
    if META_PROTOCOL_VERSION not in meta and META_CLIENT_CAPABILITIES not in meta:
        return None
    return declared(
        meta.get(META_CLIENT_CAPABILITIES), meta.get(META_LOG_LEVEL), meta.get(META_CLIENT_INFO)
    )


def only_who(diffs: Iterable[FieldDiff]) -> bool:
    """True when declarations differ in the client's name and version alone (`clientInfo`)."""
    return all(d.path == f"/{CLIENT_INFO}" or d.path.startswith(f"/{CLIENT_INFO}/") for d in diffs)


def recorded_declarations(session: Session) -> dict[int, dict[str, Any]]:
    """exchange index -> what the recorded client had declared when it sent that request.

    A legacy recording whose client never sent `logging/setLevel` says nothing about log levels
    (a legacy server logs at its own default): its entries leave the level out of the comparison
    (`LEVEL_UNKNOWN`), so a client of either era that asks for one still fits.
    """
    recorded = Recorded()
    out: dict[int, dict[str, Any]] = {}
    for ex in session.exchanges:
        msg = ex.request.msg
        out[ex.index] = recorded.of(msg, ex.session)
        if msg.get("method") == "initialize" and ex.response is not None:
            http = ex.response.event.http
            minted = http.get("session") if http else None
            if minted is not None:  # over HTTP the session id comes with the answer
                recorded.minted(str(minted), msg)
    recorded.done()
    return out


class Recorded:
    """`recorded_declarations`, one exchange at a time, in the order they were opened (`of`), for
    a reader that streams the cassette; `done` once all are read."""

    __slots__ = ("caps", "infos", "last", "last_info", "leveled", "levels", "same")

    def __init__(self) -> None:
        self.caps: dict[str, Any] = {}
        self.infos: dict[str, Any] = {}
        self.levels: dict[str, Any] = {}
        self.leveled = False
        self.same: dict[tuple[int, ...], dict[str, Any]] = {}
        """One dict for the requests that declared the same objects (read only; shared rather
        than one per request)."""
        self.last: Any = None
        self.last_info: Any = None

    def of(self, msg: dict[str, Any], sess: str) -> dict[str, Any]:
        """What the client had declared when it sent `msg` (a request or notification) in session
        `sess`. (A hot loop: each message read once, no properties.)"""
        params = request_params(msg)
        method = msg.get("method")
        if method == "initialize":
            self.last = params.get("capabilities")
            self.last_info = params.get("clientInfo")
            self.caps[sess] = self.last
            self.infos[sess] = self.last_info
            self.levels.pop(sess, None)
        elif method == "logging/setLevel":
            self.leveled = True
            self.levels[sess] = params.get("level")
        meta = params.get("_meta")
        own = declared_in(meta) if isinstance(meta, dict) and meta else None
        if own is not None:
            return own
        said = (
            self.caps.get(sess, self.last),
            self.levels.get(sess),
            self.infos.get(sess, self.last_info),
        )
        # the objects live in the session's messages
        which = (id(said[0]), id(said[1]), id(said[2]))
        shared = self.same.get(which)
        if shared is None:
            shared = self.same[which] = declared(*said)
        return shared

    def minted(self, minted: str, msg: dict[str, Any]) -> None:
        """The answer to `initialize` request `msg` named session `minted` (HTTP): what the
        request declared holds there too."""
        params = request_params(msg)
        self.caps[minted] = params.get("capabilities")
        self.infos[minted] = params.get("clientInfo")
        self.levels.pop(minted, None)

    def done(self) -> None:
        """Every exchange was read: without a `logging/setLevel`, no declaration says a level."""
        if not self.leveled:
            for shared in self.same.values():
                shared[LEVEL_UNKNOWN] = True


LEVEL_UNKNOWN = "levelUnknown"
"""Marks a recorded declaration that says nothing about the log level (see `recorded_declarations`)."""


def comparable(
    recorded: dict[str, Any], incoming: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    if LEVEL_UNKNOWN not in recorded:
        return recorded, incoming
    return {k: v for k, v in recorded.items() if k not in (LEVEL_UNKNOWN, "logLevel")}, {
        k: v for k, v in incoming.items() if k != "logLevel"
    }
