"""The pairing check (`mcptape.pairing`): every request has its response, unless the recording
says why not (a cancel, a listen stream, the server exited: warnings), and every response
answers a request. Pairing works on the messages' skeletons (`mcptape.pairing.skeleton_event`)
as the lines are read (`PairingStream`: what is in flight is kept, not the exchanges), and
plans the protocol check of each message as it is filed (`mcptape.check.protocol`)."""

from __future__ import annotations

from typing import Any

import orjson

from mcptape.cassette.model import Event, Kind, Source
from mcptape.pairing import Exchange, Item, PairingStream, skeleton_event
from mcptape.wire.jsonrpc import MessageType

from .protocol import OUTSIDE, McpValidator, batch_place
from .report import Report

__all__ = ["Exchanges", "skeleton"]


def skeleton(lineno: int, ev: Event) -> Event:
    """`skeleton_event(ev)` with its file line for `seq`, and no time: the checks after the
    first pass report lines and read no time, and a big cassette has an event a line (the
    line's own `seq` and `t` were two more objects kept for each)."""
    out = skeleton_event(ev)
    out.seq, out.t = lineno, 0.0
    return out


class Exchanges:
    """The pairing and protocol checks, told by a `PairingStream` as the first pass pairs the
    skeletons: memory holds what is in flight and the protocol plan, not the exchanges.

    Pairing: an unanswered request is a finding, or a warning when the recording says why (a
    cancel, a listen stream, a refused or failed HTTP exchange, the server gone, the recording
    cut short); a response to no request is a finding. Protocol: `McpValidator` plans each
    message's check when it is filed (an `initialize` exchange's when it is answered, since its
    answer names the revision), in the order of the exchanges, then of the server messages
    outside any request and the client's answers to them."""

    def __init__(self, validator: McpValidator | None) -> None:
        self.stream = PairingStream(self)
        self.plan = validator
        self.open: dict[int, Exchange] = {}
        """Requests not answered yet, by index (in index order: they are opened in it)."""
        self.cancelled: set[int] = set()
        """Exchanges the client cancelled."""
        self.held: dict[int, tuple[Exchange, list[tuple[int, Item]]]] = {}
        """`initialize` exchanges not answered yet -> their messages, and when each came (in
        index order, as `open`)."""
        self.pending: dict[int, dict[bytes, str]] = {}
        """Exchange -> its server requests (their id) and their method, for the client's answers."""
        self.later: list[tuple[int, int, int, MessageType, Any]] = []
        """Server messages outside any request: (line, place in the batch, when, type, method)."""
        self.latest: tuple[int, str | None] = (-1, None)
        """The last exchange that has a protocol revision, and that revision."""
        self.filed = 0
        """Messages filed so far (which came first, for the plan's order)."""
        self.last: Event | None = None
        self.refused: set[Any] = set()
        self.failed: set[Any] = set()
        self.exits: list[int] = []

    def event(self, ev: Event) -> None:
        """Files one event (a `skeleton`) of the first pass."""
        self.last = ev
        if _http_error(ev):
            self.refused.add(_exchange(ev))
        if ev.kind is not Kind.MESSAGE or ev.src is None:
            if _phase(ev) in ("disconnect", "error"):
                self.failed.add(_exchange(ev))
            if _server_gone(ev):
                self.exits.append(ev.seq)
            return
        self.stream.add(ev)

    def _version(self, ex: Exchange) -> None:
        if ex.protocol_version and ex.index >= self.latest[0]:
            self.latest = (ex.index, ex.protocol_version)

    def opened(self, ex: Exchange) -> None:
        self._version(ex)
        if not ex.is_notification:
            self.open[ex.index] = ex
        if self.plan is None:
            return
        if ex.method == "initialize":
            self.held[ex.index] = (ex, [])
        else:
            self.plan.request(ex)

    def added(self, ex: Exchange, item: Item) -> None:
        self.filed += 1
        if item.src is Source.CLIENT and item.msg.get("method") == "notifications/cancelled":
            self.cancelled.add(ex.index)
        held = self.held.get(ex.index)
        if held is not None:
            held[1].append((self.filed, item))
        elif self.plan is not None:
            self._item(ex, item, self.filed)

    def _item(self, ex: Exchange, item: Item, when: int) -> None:
        assert self.plan is not None
        at, v = (ex.index, when), ex.protocol_version
        if item.src is Source.SERVER:
            self.plan.server_message(item, v, at)
            if item.type is MessageType.REQUEST:
                asked = self.pending.setdefault(ex.index, {})
                asked[orjson.dumps(item.msg.get("id"))] = str(item.msg.get("method"))
        else:
            asked = self.pending.get(ex.index, {})
            self.plan.answer(item, asked.get(orjson.dumps(item.msg.get("id"))), v, at)

    def answered(self, ex: Exchange) -> None:
        self._version(ex)
        self.open.pop(ex.index, None)
        self._release(ex)
        if self.plan is not None:
            self.plan.response(ex)

    def _release(self, ex: Exchange) -> None:
        """An `initialize` exchange's checks, once its revision is known."""
        held = self.held.pop(ex.index, None)
        if held is not None and self.plan is not None:
            self.plan.request(ex)
            for when, item in held[1]:
                self._item(ex, item, when)

    def unsolicited(self, before: int, item: Item) -> None:
        self.filed += 1
        if self.plan is not None:
            place = batch_place(item)
            self.later.append(
                (item.event.seq, place, self.filed, item.type, item.msg.get("method"))
            )

    def end(self, pairing: Report | None) -> None:
        """The checks that need the whole file: unanswered requests; the plan of the messages
        outside any request, in the latest revision."""
        for ex, _ in list(self.held.values()):  # never answered: in the revision they were sent in
            self._release(ex)
        if self.plan is not None:
            latest = self.latest[1]
            for line, place, when, typ, method in self.later:
                self.plan.outside(line, place, typ, method, latest, (OUTSIDE, when))
            for request, answer in self.stream.replies:
                self.plan.client_answer(request, answer, latest)
        if pairing is not None:
            self._pairing(pairing)

    def _pairing(self, report: Report) -> None:
        for item in self.stream.orphans:
            if (
                item.type in (MessageType.RESULT, MessageType.ERROR)
                and item.msg.get("id") is not None
            ):
                report.add(
                    item.event.seq,
                    "pairing",
                    f"a response (id {item.msg.get('id')!r}) that answers no request",
                )
        cut_short = self.last is None or self.last.kind is not Kind.END
        for ex in self.open.values():
            if self._excused(ex):
                continue
            line = ex.request.event.seq
            what = f"{ex.method} (id {ex.request.msg.get('id')!r}) was never answered"
            reason = self._reason(ex, line, cut_short)
            if reason is None:
                report.add(line, "pairing", what)
            else:
                report.warn(line, "pairing", f"{what}: {reason}")
        if cut_short:
            report.warn(
                0,
                "pairing",
                "the recording was cut short (no end marker; the recorder was killed?)",
            )

    def _excused(self, ex: Exchange) -> bool:
        """Needs no answer: a listen stream, refused, or cancelled."""
        if ex.method == "subscriptions/listen" or ex.index in self.cancelled:
            return True
        return ex.http_exchange is not None and ex.http_exchange in self.refused

    def _reason(self, ex: Exchange, line: int, cut_short: bool) -> str | None:
        """Why an unanswered request went unanswered, when the recording says so."""
        if ex.http_exchange is not None and ex.http_exchange in self.failed:
            return "its HTTP exchange failed or the client went away"
        if any(x > line for x in self.exits):
            return "the server exited first"
        return "the recording was cut short" if cut_short else None


def _phase(ev: Event) -> Any:
    return ev.http.get("phase") if ev.http else None


def _exchange(ev: Event) -> Any:
    return ev.http.get("exchange") if ev.http else None


def _http_error(ev: Event) -> bool:
    if ev.src is not Source.SERVER or _phase(ev) != "response":
        return False
    status = ev.http.get("status") if ev.http else None
    return isinstance(status, int) and status >= 400


def _server_gone(ev: Event) -> bool:
    return ev.kind is Kind.EXIT or (ev.kind is Kind.EOF and ev.src is Source.SERVER)
