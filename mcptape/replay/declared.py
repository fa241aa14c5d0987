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
    caps: dict[str, Any] = {}
    infos: dict[str, Any] = {}
    levels: dict[str, Any] = {}
    leveled = False
    out: dict[int, dict[str, Any]] = {}
    # one dict for the requests that declared the same objects (read only; shared rather than
    # one per request)
    same: dict[tuple[int, ...], dict[str, Any]] = {}
    last: Any = None
    last_info: Any = None
    for ex in session.exchanges:  # (a hot loop: each message read once, no properties)
        msg, sess = ex.request.msg, ex.session
        params = request_params(msg)
        method = msg.get("method")
        if method == "initialize":
            last = params.get("capabilities")
            last_info = params.get("clientInfo")
            minted = (
                ex.response.event.http.get("session")
                if ex.response is not None and ex.response.event.http
                else None
            )
            for each in {sess, str(minted) if minted is not None else sess}:
                caps[each] = last  # over HTTP the session id comes with the answer
                infos[each] = last_info
                levels.pop(each, None)
        elif method == "logging/setLevel":
            leveled = True
            levels[sess] = params.get("level")
        meta = params.get("_meta")
        own = declared_in(meta) if isinstance(meta, dict) and meta else None
        if own is not None:
            out[ex.index] = own
            continue
        said = (caps.get(sess, last), levels.get(sess), infos.get(sess, last_info))
        # the objects live in the session's messages
        which = (id(said[0]), id(said[1]), id(said[2]))
        shared = same.get(which)
        if shared is None:
            shared = same[which] = declared(*said)
        out[ex.index] = shared
    if not leveled:
        for shared in same.values():
            shared[LEVEL_UNKNOWN] = True
    return out


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
