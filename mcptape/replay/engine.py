"""The replay engine: client messages in, the recorded server's messages out. Sans-IO.

No I/O, no event loop, no clock: a shell (stdio, HTTP, in-memory) feeds each client
message to `ReplayEngine.receive` and sends what comes back, in order. Each `Send` carries
the recorded event it replays (so a shell can reproduce HTTP status and JSON-vs-SSE, and the
recorded time offsets for `--timing recorded`) and the client request id it answers.

The engine is a dispatcher. `receive` checks the message (-32700 for a line that is not JSON,
-32600 for JSON that is not JSON-RPC, see `mcptape.wire.jsonrpc.invalid`; a batch's answers
as one array) and hands it on by kind: a request to its method's handler in `HANDLERS`
(`_match`, matching against the cassette, when the method has none), a notification to the
session's `Housekeeping`, the client's answer to a server request to the `Player`. Around it:

- `index.Pass`: finds the recorded exchange for a request (`ReplayIndex` + the session's pass);
  what the client declared (capabilities, log level) is compared apart from the key: the
  recording that fits, else the nearest with a note (`exact_clients`: refused);
- `playing.Player`: plays that exchange: notifications, server requests (waiting for the
  client's answer), the response with the client's id, then what the server sent unasked;
- `bridge`: the session's client era (`UnknownEra`, `LegacyClient`, `ModernClient`), which
  says how each exchange plays (as recorded, or translated for a client of the other era,
  `ReplayConfig.cross_era`) and answers the other era's own moves (a handshake made from the
  recorded `server/discover`, `server/discover` on a legacy cassette, subscriptions);
- `housekeeping.Housekeeping`: `ping`, `logging/setLevel` the recording has no answer left for,
  client notifications (`notifications/cancelled` ends a request or a listen stream), and the
  notes said once per session;
- `report`: the no-match error (see `NO_MATCH`, `EXHAUSTED`), whose message and data teach;
- `ReplayConfig.answerer` (`mcptape.mock`): declared answers, asked before the cassette is
  matched (an overlay's precedence; a made-up `Answer` plays as a recorded exchange, so the
  bridge translates it for either era), and told what each client message was answered;
- `overlay.Overlay`: the session's overlay rules (fault rules, `ReplayConfig.overlay`, then the
  answerer's `overlay_rules`) select requests and decide how their answers, recorded or
  declared, are delivered: later, replaced by an error, or with a wire fault the shell carries
  out (`Hangup`, `Status`, raw bytes). Without rules there is no overlay and no cost.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from mcptape.cassette import Cassette
from mcptape.pairing import Exchange
from mcptape.wire.jsonrpc import (
    EMPTY_BATCH,
    JSONRPC_INVALID_REQUEST,
    JSONRPC_PARSE_ERROR,
    NOT_JSON,
    MessageType,
    classify,
    decode,
    error_response,
    id_key,
    invalid,
    parse_error_message,
    request_meta,
    request_params,
    usable_id,
)
from mcptape.wire.jsonrpc import shallow as shallow_json

from . import bridge, logs
from .bridge import LegacyClient, ModernClient, UnknownEra
from .housekeeping import Housekeeping
from .index import Miss, Pass, ReplayIndex, declared_in, only_who
from .matcher import Subject, describe, explain_diffs
from .outputs import Answer, Note, Output, ReplayConfig, Send, Step, stacked
from .overlay import Overlay, rules_of
from .playing import Play, Player
from .report import NO_MATCH, client_name, no_match
from .subscriptions import subscriptions

__all__ = ["HANDLERS", "Note", "Output", "ReplayConfig", "ReplayEngine", "Send"]

Handler = Callable[["ReplayEngine", dict[str, Any]], list[Output]]
"""Answers one client request (a JSON-RPC request object) for the engine's session."""
OnMiss = Callable[[dict[str, Any], bool], list[Output] | None]
"""What a method answers when the cassette has no recording of the request left: (the
request, whether it carried the 2026 `_meta`) -> the answer, or None for the no-match error."""


class ReplayEngine:
    """Answers one client session from a cassette. Not thread-safe; one per connection."""

    def __init__(
        self,
        index: ReplayIndex,
        config: ReplayConfig | None = None,
        *,
        shared_pass: Pass | None = None,
        shared_housekeeping: Housekeeping | None = None,
        shared_overlay: Overlay | None = None,
    ) -> None:
        """Args:
        index: the cassette, indexed (build it once; engines for several sessions share it).
        config: repeats; its match policy must be the one the index was built with.
        shared_pass: play from this pass, shared with other engines (the HTTP shell's
            2026-07-28 stateless requests, one engine each), instead of a pass of its own;
        shared_housekeeping: with `shared_pass`, the session's housekeeping, shared by those
            engines too (what they noted, the pings they answered), so that a session's
            notes are said once, not once per engine;
        shared_overlay: with `shared_pass`, the overlay those engines share (one count of its
            rules' hits), instead of one of this engine's own.
        """
        self.index = index
        self.config = config or ReplayConfig(index.policy)
        if index.cassette.answerer is not None:  # a mock file's declarations, first
            answerer = stacked(index.cassette.answerer, self.config.answerer)
            self.config = replace(self.config, answerer=answerer)
        if self.config.match != index.policy:
            raise ValueError(
                "the engine's match policy differs from the one its index was built with"
            )
        self.rules = rules_of(self.config.overlay, self.config.answerer)
        """The overlay rules each session of this engine applies (none: no overlay)."""
        self.overlay = shared_overlay if shared_overlay is not None else self._overlay()
        self.handshakes = 0
        self._reset(shared_pass, shared_housekeeping)

    def _overlay(self) -> Overlay | None:
        """A fresh overlay of the engine's rules: a session's own counters (None: no rules)."""
        return Overlay(self.rules, self.config.http) if self.rules else None

    def _renew(self) -> None:
        """The answerer's rules as they are now: a mock may declare more once its client is
        connected (`async with mcptape.mock() as mock`)."""
        rules = rules_of(self.config.overlay, self.config.answerer)
        if rules == self.rules:
            return
        self.rules = rules
        if self.overlay is None:
            self.overlay = self._overlay()
        else:
            self.overlay.renew(rules)

    @classmethod
    def from_cassette(cls, cassette: Cassette, config: ReplayConfig | None = None) -> ReplayEngine:
        config = config or ReplayConfig()
        return cls(ReplayIndex(cassette, config.match), config)

    def _reset(self, pass_: Pass | None = None, housekeeping: Housekeeping | None = None) -> None:
        self.pass_ = pass_ if pass_ is not None else self.index.new_pass(self.config.allow_repeats)
        self.housekeeping = housekeeping if housekeeping is not None else Housekeeping()
        self.player = Player(self.index, self.pass_)
        self.bridge: UnknownEra = UnknownEra()
        """The client's era, once it showed it (an `initialize`, or a request with the 2026 `_meta`)."""

    def _meet(self, client: UnknownEra) -> None:
        """The client showed its era: `client` says how the session's exchanges play for it."""
        self.bridge = client
        self.player.unsolicited_drops = client.unsolicited_drops

    def new_session(self) -> None:
        """Starts a new client session: every recorded exchange can play again, from the top."""
        self.handshakes = 0
        self.overlay = self._overlay()
        self._reset()

    def unplayed(self) -> list[Exchange]:
        """Recorded requests this session never asked for, in cassette order."""
        return [e.exchange for e in self.pass_.unplayed()]

    @property
    def played(self) -> int:
        """Recorded exchanges played this session (recorded `ping` answers included)."""
        return sum(self.pass_.plays.values()) + self.housekeeping.pings

    @property
    def legacy_client(self) -> bool:
        """True once the client opened with the `initialize` handshake."""
        return self.bridge.legacy

    @property
    def in_flight(self) -> int:
        """Client requests started and not yet answered (a listen stream, a wait for the client)."""
        return len(self.player.active) + len(self.player.streams)

    def cancelled(self, request_id: Any) -> bool:
        """True when the client cancelled request `request_id`: a shell that delays answers
        (`--timing`) does not send what it still holds of it."""
        return request_id is not None and id_key(request_id) in self.housekeeping.cancelled

    # -- input -------------------------------------------------------------------------

    def receive_bytes(self, payload: bytes | str) -> Sequence[Step]:
        """One wire payload (a stdio line, an HTTP body): parse errors are answered with -32700."""
        value = decode(payload)
        if value is NOT_JSON:
            text = parse_error_message(payload)
            return [
                Send(error_response(None, JSONRPC_PARSE_ERROR, text), final=True),
                Note(f"a client line is not JSON ({text}); answered -32700"),
            ]
        return self.receive(value, shallow=isinstance(payload, bytes) and shallow_json(payload))

    def receive(
        self, value: Any, kind: MessageType | None = None, *, shallow: bool = False
    ) -> Sequence[Step]:
        """One parsed JSON value from the client: a message, or a batch array.

        `kind`: what the message is, when the shell has classified it already. `shallow`: the
        shell knows from the bytes that it nests no deeper than allowed (`jsonrpc.shallow`).
        What comes back is the engine's outputs, as the session's overlay delivers them.
        """
        if isinstance(value, list):
            return self._batch(value)
        problem = invalid(value, shallow=shallow)
        if problem is not None:
            return _invalid_request(value, problem)
        typ = classify(value) if kind is None else kind
        if typ is MessageType.REQUEST:
            return self._request(value)
        if typ is MessageType.NOTIFICATION:
            notified = self.housekeeping.notification(self.player, value)
            if self.overlay is None:
                return notified
            return self.overlay.apply(value, notified, typ)
        if typ in (MessageType.RESULT, MessageType.ERROR):
            out: Sequence[Step] = self.player.answer(value)
            if self.overlay is not None:
                out = self.overlay.apply(value, out, typ)
            if self.config.answerer is not None:
                self.config.answerer.saw(value, out)
            return out
        return _invalid_request(value, "Invalid Request: not a request, notification or response")

    def _batch(self, values: list[Any]) -> Sequence[Step]:
        """A batch: its answers as one array (JSON-RPC 2.0 §6), none for notifications only.
        Its messages pass the overlay by (a batch is answered as it is)."""
        if not values:
            return _invalid_request(None, EMPTY_BATCH)
        overlay, self.overlay = self.overlay, None
        try:
            return self._batched(values)
        finally:
            self.overlay = overlay

    def _batched(self, values: list[Any]) -> list[Step]:
        out: list[Step] = []
        answers: list[Any] = []
        for value in values:
            outputs: Sequence[Step]
            if isinstance(value, list):  # a batch inside a batch is no message
                problem = "Invalid Request: a message must be a JSON object, not an array"
                outputs = _invalid_request(value, problem)
            else:
                outputs = self.receive(value)
            for o in outputs:
                if (
                    isinstance(o, Send)
                    and o.final
                    and isinstance(o.msg, dict)
                    and "method" not in o.msg
                ):
                    answers.append(o.msg)
                else:
                    out.append(o)
        if answers:
            out.append(Send(answers, final=True))
        return out

    # -- requests: the handlers ----------------------------------------------------------------

    def _request(self, msg: dict[str, Any]) -> Sequence[Step]:
        """A client request, to its method's handler (`HANDLERS`), else matched against the
        cassette; delivered as the session's overlay decides."""
        cancelled = self.housekeeping.cancelled
        if cancelled:
            cancelled.discard(id_key(msg["id"]))  # an id used again is a new request
        handler = HANDLERS.get(msg["method"])
        if self.config.answerer is not None:
            self._renew()
        out: Sequence[Step] = self._match(msg) if handler is None else handler(self, msg)
        if self.overlay is not None:
            out = self.overlay.apply(msg, out, MessageType.REQUEST)
        if self.config.answerer is not None:
            self.config.answerer.saw(msg, out)
        return out

    def _initialize(self, msg: dict[str, Any]) -> list[Output]:
        """Legacy `initialize`: the recorded handshake (a new session after the first), else
        the one the bridge makes or refuses."""
        if self.handshakes:
            self._reset()  # a new handshake is a new client session
        self.handshakes += 1
        params = request_params(msg)
        recorded = [ex for ex in self.index.initialize if ex.response is not None]
        if recorded or bridge.makes_handshake(self.index, self.config):
            self._meet(LegacyClient(params, self.config.label))
        declared = self._declared(msg) if self.bridge.legacy else None  # a mock's own handshake
        if declared is not None:
            out = declared
        elif not recorded:
            out = bridge.handshake(self.index, self.pass_, msg, self.config)
        else:
            out = self._recorded_handshake(recorded[0], msg)
        self.bridge.agreed(out)
        return out

    def _recorded_handshake(self, ex: Exchange, msg: dict[str, Any]) -> list[Output]:
        """The recorded `initialize` answer, as recorded (a note when the client asked another version)."""
        out: list[Output] = []
        asked = request_params(msg).get("protocolVersion")
        rec_asked = request_params(ex.msg).get("protocolVersion")
        if asked != rec_asked:
            answered = ex.result.get("protocolVersion") if isinstance(ex.result, dict) else None
            out.append(
                Note(
                    f"client asked for protocol version {asked}; the recorded client asked for {rec_asked}; answering as recorded ({answered})"
                )
            )
        return out + self._start(ex, msg)

    def _ping(self, msg: dict[str, Any]) -> list[Output]:
        return self.housekeeping.ping(self.index, msg, self.bridge.legacy)

    def _discover(self, msg: dict[str, Any]) -> list[Output]:
        """`server/discover`: as recorded; on a legacy cassette without one, the bridge's answer."""
        return self._match(msg, self._discover_on_legacy)

    def _discover_on_legacy(self, msg: dict[str, Any], modern: bool) -> list[Output] | None:
        answered = bridge.discover_on_legacy(self.index, self.pass_, msg, self.config.cross_era)
        if answered is None:
            return None
        out, shown = answered
        if shown:
            self._meet(ModernClient(self.config.cross_era, self.index))
        return out

    def _set_level(self, msg: dict[str, Any]) -> list[Output]:
        """`logging/setLevel`: a legacy client declares its log level so (matched apart, as its
        capabilities); as recorded, else answered as the recording's server would."""
        params = request_params(msg)
        meta = params.get("_meta")
        level = params.get("level")
        if isinstance(level, str) and not (
            isinstance(meta, dict) and declared_in(meta) is not None
        ):
            self.bridge.set_level(level)
            self.player.logs = logs.floor(level, False)
        return self._match(msg, self._level_unrecorded)

    def _level_unrecorded(self, msg: dict[str, Any], modern: bool) -> list[Output] | None:
        return self.housekeeping.set_level(self.index, msg, modern)

    def _subscribe(self, msg: dict[str, Any]) -> list[Output]:
        """`resources/subscribe`, `resources/unsubscribe`, `subscriptions/listen`: as recorded;
        else the other era's way of asking for the same updates, when the cassette has it."""
        return self._match(msg, self._subscribe_across_eras)

    def _subscribe_across_eras(self, msg: dict[str, Any], modern: bool) -> list[Output] | None:
        if not self.config.cross_era:
            return None
        return subscriptions(self.player, msg, modern, self.housekeeping.note)

    # -- requests: matching against the cassette -----------------------------------------------

    def _match(self, msg: dict[str, Any], on_miss: OnMiss | None = None) -> list[Output]:
        """The default handler: the recorded exchange for this request, played; else
        `on_miss`'s answer, else the no-match error."""
        params = request_params(msg)
        meta = params.get("_meta")
        own = declared_in(meta) if isinstance(meta, dict) else None
        if own is not None and not self.bridge.modern:
            self._meet(ModernClient(self.config.cross_era, self.index))
        who = own if own is not None else self.bridge.declared()
        declared = self._declared(msg)  # declarations first (`mcptape.mock`): overlays
        if declared is not None:
            return declared
        state = params.get("requestState")
        if state is not None:  # the retry of an `input_required` the bridge made up?
            resumed = bridge.resume(
                self.player, msg, state, self.config.label, self.bridge.for_modern
            )
            if resumed is not None:
                return resumed
        subject = self.index.subject(msg)
        found = self.pass_.take(subject, who, self.config.exact_clients)
        if isinstance(found, Miss):
            answer = on_miss(msg, own is not None) if on_miss is not None else None
            return answer if answer is not None else self._no_match(msg, subject, found)
        floor, played = self._logs(own, found.declared)
        said = self.housekeeping
        differs = self.pass_.differs
        if not differs or differs is said.told:
            # (what it would say was said: a note once)
            return played + self._start(found.exchange, msg, floor)
        said.told = differs
        what = explain_diffs(differs)
        if only_who(differs):
            text = (
                f"playing recordings made by another client: {what} (no recording by this client)"
            )
            notes = said.note(text, "info", key=what)
        else:
            text = (f"{describe(subject)}: no recording by a client that declared the same; playing line {self.index.cassette.line_of(found.seq)}, "
                    f"recorded by one that declared otherwise: {what} (--strict refuses this)")  # fmt: skip
            notes = said.note(text, key=what)
        return notes + played + self._start(found.exchange, msg, floor)

    def _logs(
        self, own: dict[str, Any] | None, recorded: dict[str, Any]
    ) -> tuple[int, list[Output]]:
        """The floor of the recorded logs this request gets (`mcptape.replay.logs`), and the
        note, once per session, when the recording holds fewer than the client is owed."""
        level = own.get("logLevel") if own is not None else self.bridge.level
        modern = own is not None or self.bridge.modern
        short = logs.shortfall(level, recorded, modern) if self.bridge.legacy or modern else None
        notes = self.housekeeping.note(*short, key="log level") if short else []
        return logs.floor(level, modern), notes

    def _declared(self, msg: dict[str, Any]) -> list[Output] | None:
        """What `ReplayConfig.answerer` answers `msg` (a made-up exchange, played as recorded:
        the bridge translates it for the client's era), None: the cassette's to answer."""
        answerer = self.config.answerer
        answer = answerer.answer(msg, self.bridge.version) if answerer is not None else None
        if not isinstance(answer, Answer):
            return answer
        outs = self._start(answer.exchange, msg)
        if not answer.delay:
            return outs
        return [o.later(answer.delay) if isinstance(o, Send) else o for o in outs]

    def _no_match(self, msg: dict[str, Any], subject: Subject, miss: Miss) -> list[Output]:
        """The error for a request the cassette has no recording of (left, or that fits)."""
        if miss.declared:
            text = (f"{self.config.label}: {describe(subject)} was recorded only for a client that declared otherwise: "
                    f"{explain_diffs(miss.declared)}; strict replay plays only recordings that fit")  # fmt: skip
            data = {
                "cassette": client_name(self.index.cassette),
                "reason": "declared",
                "diff": [d.to_json() for d in miss.declared],
            }
            error = error_response(msg["id"], NO_MATCH, text, data)
        else:
            error, text = no_match(
                self.index,
                self.pass_,
                subject,
                miss,
                msg["id"],
                self.config.hints,
                self.config.label,
            )
        return [Send(error, request_id=msg["id"], final=True), Note(text, "error")]

    def _start(self, ex: Exchange, msg: dict[str, Any], floor: int = logs.ALL) -> list[Output]:
        """Plays exchange `ex` for request `msg`, as the session's client era wants it (its logs
        from rank `floor` on, `mcptape.replay.logs`)."""
        token = request_meta(msg).get("progressToken")
        play = Play(ex, msg["id"], token, ex.request.event.t, mode=self.bridge.mode(ex), logs=floor)
        return self.player.start(play)


HANDLERS: dict[str, Handler] = {
    "initialize": ReplayEngine._initialize,
    "ping": ReplayEngine._ping,
    "server/discover": ReplayEngine._discover,
    "logging/setLevel": ReplayEngine._set_level,
    "subscriptions/listen": ReplayEngine._subscribe,
    "resources/subscribe": ReplayEngine._subscribe,
    "resources/unsubscribe": ReplayEngine._subscribe,
}
"""Client request method -> its handler; any other method is matched against the cassette
(`ReplayEngine._match`). Each handler answers the whole request, notes included."""


def _invalid_request(value: Any, problem: str) -> list[Output]:
    """The -32600 answer (the message's id when an answer can carry it, else null) and its note."""
    msg_id = usable_id(value)
    return [
        Send(error_response(msg_id, JSONRPC_INVALID_REQUEST, problem), final=True),
        Note(f"a client message is not valid JSON-RPC ({problem}); answered -32600"),
    ]
