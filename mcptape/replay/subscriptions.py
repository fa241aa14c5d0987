"""Resource updates asked for the other era's way, answered from the recording. Sans-IO.

A legacy client's `resources/subscribe` on a 2026-07-28 cassette plays the updates of a recorded
`subscriptions/listen` that asked about the URI; a 2026-07-28 client's `subscriptions/listen` on
a legacy cassette is acknowledged with what the recorded server could honour, then carries the
recorded change notifications it asks for, tagged with the listen's id. `mcptape.eras` does the
translations; the engine calls `subscriptions` when the cassette recorded no answer of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcptape.cassette.model import Kind, Source
from mcptape.eras import (
    acknowledged,
    honoured,
    listen_filter,
    listen_uris,
    tagged,
    untagged,
    wanted,
)
from mcptape.wire.jsonrpc import id_key, request_params

from .bridge import server_capabilities
from .outputs import Note, Output, Send
from .playing import Player

NoteFn = Callable[..., list[Output]]
"""Says a note once per session (`Housekeeping.note`): (text, level, key) -> the note or nothing."""


def subscriptions(
    player: Player, msg: dict[str, Any], modern: bool, note: NoteFn
) -> list[Output] | None:
    """`resources/subscribe` on a 2026-07-28 cassette, `subscriptions/listen` on a legacy one
    (neither recorded): the other era's way of asking for the same updates; None otherwise."""
    method, index = msg["method"], player.index
    if method in ("resources/subscribe", "resources/unsubscribe") and not modern:
        if index.modern and not index.legacy:
            return _subscribe_on_modern(player, msg, note)
    elif method == "subscriptions/listen" and modern and index.legacy:
        return _listen_on_legacy(player, msg)
    return None


def _subscribe_on_modern(player: Player, msg: dict[str, Any], note: NoteFn) -> list[Output]:
    """A legacy client's `resources/subscribe`: `{}`, then the `notifications/resources/updated`
    of a recorded `subscriptions/listen` that asked about the URI, as a legacy server sends them."""
    uri = request_params(msg).get("uri")
    answer = Send(
        {"jsonrpc": "2.0", "id": msg["id"], "result": {}}, request_id=msg["id"], final=True
    )
    if msg["method"] == "resources/unsubscribe":
        text = "resources/unsubscribe on a 2026-07-28 cassette: accepted (there, a subscription ends with its listen stream)"
        return [answer, *note(text, "info", key="resources/unsubscribe")]
    listens = [
        ex
        for ex in player.index.session.exchanges
        if ex.method == "subscriptions/listen" and uri in listen_uris(request_params(ex.msg))
    ]
    if not listens:
        text = f"resources/subscribe ({uri}) on a 2026-07-28 cassette: no recorded subscriptions/listen asked about it; accepted, with no update to play"
        return [answer, Note(text, "info")]
    ex = listens[0]
    player.pass_.mark(ex)
    only = {"resourceSubscriptions": [uri]}
    # on the subscribe's own stream, before its answer: a 2026-07-28 cassette's server has no
    # stream outside a request (over HTTP, no GET stream) for a legacy server's unsolicited ones
    updates: list[Output] = [
        Send(untagged(item.msg), None, None, msg["id"])
        for item in ex.items
        if item.src is Source.SERVER and wanted(only, item.msg)
    ]
    text = (f"resources/subscribe ({uri}) on a 2026-07-28 cassette: accepted, with the {len(updates)} "
            f"update(s) of the subscriptions/listen of line {ex.request.event.seq}")  # fmt: skip
    return [Note(text, "info"), *updates, answer]


def _listen_on_legacy(player: Player, msg: dict[str, Any]) -> list[Output]:
    """A 2026-07-28 client's `subscriptions/listen`: the acknowledgement of what the recorded
    server could honour, then every recorded change notification the filter asks for (the
    updates of the recorded `resources/subscribe`s), tagged; the stream stays open."""
    index = player.index
    filt = honoured(listen_filter(request_params(msg)), server_capabilities(index))
    uris = listen_uris({"notifications": filt})
    subs = [
        ex
        for ex in index.session.exchanges
        if ex.method in ("resources/subscribe", "resources/unsubscribe")
        and request_params(ex.msg).get("uri") in uris
    ]
    for ex in subs:
        player.pass_.mark(ex)
    updates = [
        (ev, m)
        for ev in index.cassette.events
        if ev.kind is Kind.MESSAGE and ev.src is Source.SERVER
        for m in (ev.msg if isinstance(ev.msg, list) else [ev.msg])
        if wanted(filt, m)
    ]  # fmt: skip
    t0 = subs[0].request.event.t if subs else updates[0][0].t if updates else 0.0
    player.streams.add(id_key(msg["id"]))
    text = (f"subscriptions/listen on a legacy cassette: acknowledged {filt or 'nothing'} (what the recorded server "
            f"declared), with {len(updates)} recorded notification(s)")  # fmt: skip
    return [
        Send(acknowledged(msg["id"], filt), request_id=msg["id"]),
        Note(text, "info"),
        *(Send(tagged(m, msg["id"]), ev, None, msg["id"], max(0.0, ev.t - t0)) for ev, m in updates),
    ]  # fmt: skip
