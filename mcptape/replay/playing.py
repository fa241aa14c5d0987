"""Playing a recorded exchange for one client request: its messages in recorded order. Sans-IO.

`Player.start` plays an exchange from its request on: notifications first (progress with the
client's token, dropped when it asked for none; logs from the level the client asked for,
`Play.logs`), then the response with the client's id.
A recorded server-to-client request gets a fresh id and the exchange waits (`Player.answer`)
for the client's answer before it goes on. What the recording's server sent unasked after an
exchange (`ReplayIndex.after`) follows that exchange's response, once per session.

How an exchange plays for a client of the other protocol era is its `Play.mode`: `AsRecorded`
(this module) plays it as recorded; `mcptape.replay.bridge` subclasses it to translate. The
player itself knows no era.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcptape.cassette.model import Source
from mcptape.pairing import Exchange, Item, LazyProgress
from mcptape.wire.jsonrpc import MessageType, Response, id_key

from .encoded import PROGRESS, Templates, rewrite, rewrite_kind
from .index import Pass, ReplayIndex
from .logs import ALL, admitted
from .outputs import Note, Output, Send


class AsRecorded:
    """How an exchange plays when nothing is translated: as recorded. The base of the era
    bridges (`mcptape.replay.bridge`), whose hooks the player calls at the three points where
    a translation can differ."""

    translates = False
    """False: every response goes out as recorded (and may be spliced into its recorded bytes)."""
    drops: frozenset[Any] = frozenset()
    """Methods of recorded server notifications this client does not get."""

    def server_request(
        self, player: Player, play: Play, item: Item, after: float
    ) -> list[Output] | None:
        """A recorded server-to-client request, translated; None: sent as recorded."""
        return None

    def respond(self, player: Player, play: Play, resp: Item, after: float) -> list[Output] | None:
        """The recorded response, when it is not one message with the client's id; None: it is."""
        return None

    def result(self, method: str, msg: dict[str, Any]) -> dict[str, Any] | None:
        """The response as this client gets it; None: as recorded."""
        return None

    def answered(self, player: Player, play: Play) -> list[Output]:
        """Every question a translated response put to the client is answered: what follows."""
        return []


AS_RECORDED = AsRecorded()


@dataclass(slots=True)
class Play:
    """A recorded exchange being replayed for one client request."""

    exchange: Exchange
    client_id: Any
    token: Any
    """The client's progress token (None: it asked for no progress)."""
    since: float
    """Recorded time of the message that last moved this exchange on."""
    pos: int = 0
    mode: AsRecorded = AS_RECORDED
    """How the exchange plays for this client (translated for a client of the other era)."""
    answers: dict[str, Any] | None = None
    """The client's answers to the `input_required` questions asked so far, by recorded key."""
    logs: int = ALL
    """The rank of the lowest log level the client gets (`mcptape.replay.logs.floor`)."""


class Player:
    """The exchanges in play for one session, and the server requests waiting for the client."""

    def __init__(self, index: ReplayIndex, pass_: Pass) -> None:
        self.index = index
        self.pass_ = pass_
        self.active: dict[tuple[str, Any], Play] = {}
        """Client request (by `id_key`) -> its exchange in play, until its response is sent."""
        self.waiting: dict[tuple[str, Any], tuple[Play | None, Item | str]] = {}
        """Fresh id of a server request sent -> its play (None: sent unasked) and the recorded
        request, or the key of an `input_required` question."""
        self.streams: set[tuple[str, Any]] = set()
        """Listen streams a bridge answered (open until the client cancels them)."""
        self.unsolicited_drops: frozenset[Any] = frozenset()
        """Methods of unsolicited recorded messages this client does not get (its era's choice)."""
        self.logs = ALL
        """The rank of the lowest log level the client gets outside its requests (`logging/setLevel`)."""
        self._next_id = 0
        self._unsolicited_sent: set[int] = set()

    # -- starting and moving on ------------------------------------------------------------

    def start(self, play: Play) -> list[Output]:
        """Plays `play` from where it stands, as the client's request `play.client_id`."""
        self.active[id_key(play.client_id)] = play
        return self.advance(play)

    def advance(self, play: Play) -> list[Output]:
        """Sends the exchange's recorded messages from where it stands, up to a server request or the end."""
        out: list[Output] = []
        ex, index = play.exchange, self.index
        items = ex.items
        cid, token, hangup = play.client_id, play.token, index.hangup
        drops, logs = play.mode.drops, play.logs
        encodings = index.encodings.of(ex.index, len(items) + 1)
        """The exchange's messages' templates, when it plays again (None the first time)."""
        while play.pos < len(items):
            item = items[play.pos]
            play.pos += 1
            if token is None and type(item) is LazyProgress:
                continue  # progress this client did not ask for, skipped unread (an index file's)
            if item.src is Source.CLIENT or (hangup is not None and index.played_out(item)):
                continue  # the live client sends its own answers and cancellations
            m = item.msg  # (once: a lazy item reads it through two properties)
            if (drops and m.get("method") in drops) or (logs and not admitted(m, logs)):
                continue  # not for this client's era, or below the log level it asked for
            if item.type is MessageType.REQUEST:
                after = max(0.0, item.event.t - play.since)
                bridged = play.mode.server_request(self, play, item, after)
                if bridged is not None:
                    return out + bridged
                fresh = self.fresh_id(m.get("id"))
                self.waiting[id_key(fresh)] = (play, item)
                out.append(Send({**m, "id": fresh}, item.event, ex, cid, after))
                return out
            kind = rewrite_kind(m)
            if kind == PROGRESS and token is None:
                continue  # this client asked for no progress
            msg = rewrite(m, kind, cid, token)
            assert msg is not None
            send = Send(msg, item.event, ex, cid, max(0.0, item.event.t - play.since))
            if encodings is not None:
                send.spliced(encodings.template(play.pos - 1, m, kind), cid, token)
            out.append(send)
        resp = ex.response
        if resp is None or index.played_out(resp):
            return out  # recorded without an answer (a listen stream, a cancelled call): stays open
        return self._respond(play, resp, encodings, out)

    def _respond(
        self, play: Play, resp: Item, encodings: Templates | None, out: list[Output]
    ) -> list[Output]:
        """`out`, then the exchange's recorded response for the client (and what follows it)."""
        ex, cid, token, mode = play.exchange, play.client_id, play.token, play.mode
        after = max(0.0, resp.event.t - play.since)
        rmsg = resp.msg
        if mode.translates:
            bridged = mode.respond(self, play, resp, after)
            if bridged is not None:
                return out + bridged
        kind = rewrite_kind(rmsg)
        msg = rewrite({**rmsg, "id": cid}, kind, cid, token)
        assert msg is not None  # (only progress notifications are dropped)
        translated = mode.result(ex.method, msg) if mode.translates else None
        send = Send(msg if translated is None else translated, resp.event, ex, cid, after, final=True)  # fmt: skip
        if (
            translated is None and encodings is not None
        ):  # but for the client's ids: spliced into its bytes
            tpl = encodings.template(len(ex.items), rmsg, kind, response=True)
            send.spliced(tpl, cid, token)
        out.append(send)
        self.active.pop(id_key(cid), None)
        if self.index.after:
            out.extend(self.unsolicited(ex.index, resp.event.t))
        return out

    def fresh_id(self, recorded: Any) -> Any:
        """An id for a server request the replay sends: a number when the recorded one was."""
        self._next_id += 1
        return (
            self._next_id
            if isinstance(recorded, int) and not isinstance(recorded, bool)
            else f"mcptape-{self._next_id}"
        )

    def unsolicited(self, after_exchange: int, t: float) -> list[Output]:
        """What the recorded server sent unasked after exchange `after_exchange` (and before any
        exchange), the first time the session gets there."""
        out: list[Output] = []
        for position in (-1, after_exchange):
            if position in self._unsolicited_sent or position not in self.index.after:
                continue
            self._unsolicited_sent.add(position)
            for item in self.index.after[position]:
                if (
                    self.index.played_out(item)
                    or item.msg.get("method") in self.unsolicited_drops
                    or not admitted(item.msg, self.logs)
                ):
                    continue
                msg = item.msg
                if item.type is MessageType.REQUEST:
                    fresh = self.fresh_id(msg.get("id"))
                    self.waiting[id_key(fresh)] = (None, item)
                    msg = {**msg, "id": fresh}
                out.append(Send(msg, item.event, None, None, max(0.0, item.event.t - t)))
        return out

    # -- the client's answers and cancellations --------------------------------------------

    def answer(self, msg: Response) -> list[Output]:
        """The client's answer to a server request the replay sent: the exchange goes on."""
        waiting = self.waiting.pop(id_key(msg.get("id")), None)
        if waiting is None:
            return [
                Note(
                    f"the client answered id {msg.get('id')!r}, which is no request of the replay; ignored"
                )
            ]
        play, request = waiting
        if play is None and isinstance(request, Item):  # a server request outside any request
            return self._differs(msg, request, self.index.replies.get(id(request)))
        if play is None or self.active.get(id_key(play.client_id)) is not play:
            return []  # its exchange was cancelled meanwhile
        if isinstance(request, str):  # an answer to an input_required question
            assert play.answers is not None and play.exchange.response is not None
            play.answers[request] = (
                msg["result"] if "result" in msg else {"error": msg.get("error")}
            )
            if any(p is play for p, _ in self.waiting.values()):
                return []
            return play.mode.answered(self, play)
        recorded = self.recorded_answer(play, request)
        if recorded is not None:
            play.since = recorded.event.t
        return self._differs(msg, request, recorded) + self.advance(play)

    def _differs(self, msg: Response, request: Item, recorded: Item | None) -> list[Output]:
        """A note when the client answered a server request otherwise than the recorded client."""
        if recorded is None:
            return []
        got = {k: v for k, v in msg.items() if k not in ("id", "jsonrpc")}
        want = {k: v for k, v in recorded.msg.items() if k not in ("id", "jsonrpc")}
        if got == want:
            return []
        return [
            Note(
                f"the client answered {request.msg.get('method')} differently than recorded ({got} vs {want}); replaying the recorded outcome"
            )
        ]

    def recorded_answer(self, play: Play, request: Item) -> Item | None:
        """The recorded client's answer to `request`, later in the exchange (None: unanswered)."""
        want = id_key(request.msg.get("id"))
        for item in play.exchange.items[play.pos :]:
            if (
                item.src is Source.CLIENT
                and item.type in (MessageType.RESULT, MessageType.ERROR)
                and id_key(item.msg.get("id")) == want
            ):
                return item
        return None

    def end_stream(self, rid: Any) -> bool:
        """Ends client request `rid` when it is a listen stream a bridge answered (True)."""
        key = id_key(rid)
        if key in self.streams:
            self.streams.discard(key)
            return True
        return False

    def stop(self, rid: Any) -> Play | None:
        """Ends client request `rid`: its play (None when none was in flight), whose server
        requests no longer wait for an answer."""
        play = self.active.pop(id_key(rid), None)
        if play is not None:
            for k in [k for k, (p, _) in self.waiting.items() if p is play]:
                del self.waiting[k]
        return play
