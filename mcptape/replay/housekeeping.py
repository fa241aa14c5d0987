"""The protocol's housekeeping in a replay: `ping`, `logging/setLevel`, client notifications
(`notifications/cancelled` included), and the notes said once per session. Sans-IO.

Housekeeping is what a client sends that the recording may not have, or not as often: a
replay answers it as a server of the recording's era does, with a note (said once per session,
`note`), rather than as a request the cassette cannot answer. `Housekeeping` keeps what it
counts: the recorded ping answers played, the client notifications received by method, the
requests the client cancelled.
"""

from __future__ import annotations

from typing import Any

from mcptape.versions import META_LOG_LEVEL, is_modern
from mcptape.wire.jsonrpc import (
    JSONRPC_INVALID_PARAMS,
    JSONRPC_METHOD_NOT_FOUND,
    error_response,
    id_key,
    request_meta,
    request_params,
)

from .bridge import server_capabilities
from .index import ReplayIndex
from .outputs import Note, Output, Send
from .playing import Player


class Housekeeping:
    """One session's housekeeping: what it counted and what it said."""

    def __init__(self) -> None:
        self.pings = 0
        """Recorded `ping` answers played (the n-th ping gets the n-th recorded answer, then the last)."""
        self.notified: dict[str, int] = {}
        """Client notifications received so far, by method (the n-th plays what the n-th recorded one triggered)."""
        self.cancelled: set[Any] = set()
        """Requests the client cancelled, by `id_key` (a shell that delays answers drops what is left of them)."""
        self.told: tuple[Any, ...] | None = None
        """The declaration differences last explained (the pass hands the same tuple while they
        stay the same: explaining them again would only find the note said)."""
        self._said: set[str] = set()

    def note(self, text: str, level: str = "warning", key: str | None = None) -> list[Output]:
        """A note said once per session (the same difference on every request is one line)."""
        if (key or text) in self._said:
            return []
        self._said.add(key or text)
        return [Note(text, level)]

    # -- requests ------------------------------------------------------------------------------

    def ping(self, index: ReplayIndex, msg: dict[str, Any], legacy_client: bool) -> list[Output]:
        """The recorded answers first, in order; else `{}`, or on a 2026-07-28-only cassette (which
        has no ping) for a client that did not open with `initialize`, the error a server gives."""
        pings = index.pings
        if pings:
            ex = pings[min(self.pings, len(pings) - 1)]
            self.pings += 1
            assert ex.response is not None
            answer = {**ex.response.msg, "id": msg["id"]}
            return [Send(answer, ex.response.event, ex, msg["id"], final=True)]
        if index.modern and not index.legacy and not legacy_client:
            # removed in 2026-07-28: a modern-only server answers it as a real one does
            error = error_response(
                msg["id"], JSONRPC_INVALID_PARAMS, "ping is not part of protocol 2026-07-28"
            )
            return [Send(error, request_id=msg["id"], final=True)]
        answer = {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
        return [Send(answer, request_id=msg["id"], final=True)]

    def set_level(self, index: ReplayIndex, msg: dict[str, Any], modern: bool) -> list[Output]:
        """`logging/setLevel` the recording has no answer left for (the Inspector sends it to every
        server that declares `logging`): the recorded server's own answer to a `logging/setLevel`,
        else what a server of the recording's era gives: accepted when it declared `logging`,
        else method not found (so too in 2026-07-28, which removed the method)."""
        level = request_params(msg).get("level")
        answered = [
            ex
            for ex, method in zip(index.session.exchanges, index.methods, strict=True)
            if method == "logging/setLevel" and ex.response is not None
        ]
        if answered:
            resp = answered[0].response
            assert resp is not None
            text = f"logging/setLevel ({level}): no recording of it left; playing the recorded answer of line {answered[0].request.event.seq}"
            return [
                Send({**resp.msg, "id": msg["id"]}, resp.event, answered[0], msg["id"], final=True),
                *self.note(text, "info", key="logging/setLevel"),
            ]
        translated = not modern and any(
            META_LOG_LEVEL in request_meta(ex.msg)
            for ex in index.session.exchanges
            if is_modern(ex.protocol_version)
        )
        declares = "logging" in server_capabilities(index)
        if translated or (declares and not (modern and not index.legacy)):
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": msg["id"], "result": {}}
            text = (
                "logging/setLevel was never recorded; accepted: it stands for the per-request log level the 2026-07-28 recordings carry"
                if translated
                else "logging/setLevel was never recorded; accepted, as a server that declares logging does"
            )
        else:
            answer = error_response(
                msg["id"], JSONRPC_METHOD_NOT_FOUND, "Method not found", "logging/setLevel"
            )
            why = (
                "a 2026-07-28 server does not have the method"
                if modern and not index.legacy
                else "the recorded server does not declare logging"
            )
            text = f"logging/setLevel was never recorded and {why}; answered -32601, as such a server does"
        return [
            Send(answer, request_id=msg["id"], final=True),
            *self.note(text, "info", key="logging/setLevel"),
        ]

    # -- notifications ---------------------------------------------------------------------------

    def notification(self, player: Player, msg: dict[str, Any]) -> list[Output]:
        """A notification is never answered, but what the recorded one triggered follows it; one
        the recording client never sent (this often) gets a note, as a server that ignores it."""
        method, index = msg["method"], player.index
        nth = self.notified.get(method, 0)
        self.notified[method] = nth + 1
        recorded = index.notified.get(method, [])
        unrecorded = nth >= len(recorded)
        out: list[Output] = []
        if method == "notifications/cancelled":
            out.extend(self._cancel(player, request_params(msg).get("requestId"), unrecorded))
        elif unrecorded and method != "notifications/initialized":
            text = f"{method}: the recording client never sent it{' this often' if recorded else ''}; nothing answered, as a server does"
            out.extend(self.note(text, "info", key=method))
        if not unrecorded:
            ex = index.session.exchanges[recorded[nth]]
            out.extend(player.unsolicited(ex.index, ex.request.event.t))
        return out

    def _cancel(self, player: Player, rid: Any, unrecorded: bool) -> list[Output]:
        """Ends a request in flight (waiting for the client's answer, or a listen stream): what is
        left of its recorded exchange, the response too, is not sent."""
        self.cancelled.add(id_key(rid))
        if player.end_stream(rid):
            return []  # how a listen stream ends
        play = player.stop(rid)
        if not unrecorded or (play is not None and play.exchange.method == "subscriptions/listen"):
            return []  # as recorded, or how a listen stream ends (the recording's ended at hangup)
        if play is None:
            text = f"notifications/cancelled for request {rid!r}, which is not in flight (answered already, or never sent); what is left of its answer is not sent"
        else:
            text = f"notifications/cancelled for request {rid!r} ({play.exchange.method}), which the recording client never cancelled: the rest of its recorded exchange is not sent"
        return [Note(text, "info")]
