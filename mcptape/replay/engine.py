"""The replay engine: client messages in, the recorded server's messages out. Sans-IO.

No I/O, no event loop, no clock: a shell (stdio, HTTP, in-memory) feeds each client
message to `ReplayEngine.receive` and sends what comes back, in order. Each `Send` carries
the recorded event it replays (so a shell can reproduce HTTP status and JSON-vs-SSE, and the
recorded time offsets for `--timing recorded`) and the client request id it answers.

What the engine owns:
- finding the recorded exchange (`ReplayIndex` + `Pass`) and replaying its messages in
  recorded order: notifications first, then the response with the client's id;
- rewriting on the way out: progress tokens become the client's, subscription ids the
  client's `subscriptions/listen` id, server-to-client requests get fresh ids and the engine
  waits for the client's answer before it goes on (legacy sampling, elicitation, roots);
- the protocol's own moves: legacy `initialize` (the recorded result, a new pass per
  handshake), `ping` (the recorded answer first), `notifications/initialized`,
  `notifications/cancelled` (ends a request or a listen stream, nothing answered), a
  `server/discover` probe against a legacy cassette (the recorded error, else
  method-not-found, so clients fall back to initialize); housekeeping the recording client
  never sent, answered as a server of the recording's era does, with a note: `logging/setLevel`
  (the recorded answer to another level, else `{}` when the server declared `logging`, else
  -32601), `notifications/roots/list_changed` and `notifications/cancelled` (nothing answered;
  a cancelled request's recorded response is not sent);
- a client of the other era (`ReplayConfig.cross_era`, see `mcptape.eras`): a legacy client
  on a 2026-07-28 cassette gets a handshake made from the recorded `server/discover`, results
  without the 2026-only envelope, and each `input_required` as legacy server-to-client
  requests whose answers pick the recorded retry;
- what the client declared (capabilities, log level) is matched apart from the key: the
  recording that fits, else the nearest with a note (`exact_clients`: refused);
- errors: -32700 for a line that is not JSON, -32600 for JSON that is not JSON-RPC
  (`mcptape.wire.jsonrpc.invalid`: ids, version, method, nesting), a batch's answers as one
  array, and a no-match error (see `NO_MATCH`, `EXHAUSTED`) whose message and data teach,
  quoting the request cut to a few hundred characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from mcptape.cassette import Cassette
from mcptape.eras import (
    CHANGE_NOTIFICATIONS,
    LEGACY,
    MODERN_ERA,
    acknowledged,
    discover_result,
    honoured,
    initialize_result,
    input_requests,
    is_input_required,
    listen_filter,
    listen_uris,
    modern_error,
    modern_result,
    strip_envelope,
    tagged,
    untagged,
    wanted,
)
from mcptape.model import Kind, Source
from mcptape.pairing import Exchange, Item, LazyProgress
from mcptape.versions import META_LOG_LEVEL as META_LOG_LEVEL_KEY
from mcptape.versions import META_SERVER_INFO, MODERN, is_modern
from mcptape.wire.jsonrpc import (
    EMPTY_BATCH,
    JSONRPC_INVALID_PARAMS,
    JSONRPC_INVALID_REQUEST,
    JSONRPC_METHOD_NOT_FOUND,
    JSONRPC_PARSE_ERROR,
    MCP_UNSUPPORTED_PROTOCOL_VERSION,
    NOT_JSON,
    MessageType,
    Request,
    Response,
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
from mcptape.wire.jsonrpc import (
    shallow as shallow_json,
)

from .encoded import PROGRESS, Templates, rewrite, rewrite_kind
from .index import Miss, Pass, ReplayIndex, declared, declared_in, only_who
from .matcher import describe, explain_diffs
from .outputs import Note, Output, ReplayConfig, Send
from .report import NO_MATCH, no_match

__all__ = ["Note", "Output", "ReplayConfig", "ReplayEngine", "Send"]

STATE_PREFIX = "mcptape:"
"""The `requestState` of an `input_required` made from a legacy server request: exchange and position."""


@dataclass(slots=True)
class _Play:
    """A recorded exchange being replayed for one client request."""

    exchange: Exchange
    client_id: Any
    token: Any
    """The client's progress token (None: it asked for no progress)."""
    since: float
    """Recorded time of the message that last moved this exchange on."""
    pos: int = 0
    legacy_out: bool = False
    """A legacy client on a 2026-07-28 recording: results lose the envelope, input becomes requests."""
    answers: dict[str, Any] | None = None
    """The client's answers to the `input_required` questions asked so far, by recorded key."""
    modern_out: bool = False
    """A 2026-07-28 client on a legacy recording: server requests become `input_required` results."""


class ReplayEngine:
    """Answers one client session from a cassette. Not thread-safe; one per connection."""

    def __init__(
        self,
        index: ReplayIndex,
        config: ReplayConfig | None = None,
        *,
        shared_pass: Pass | None = None,
    ) -> None:
        """Args:
        index: the cassette, indexed (build it once; engines for several sessions share it).
        config: repeats; its match policy must be the one the index was built with.
        shared_pass: play from this pass, shared with other engines (the HTTP shell's
            2026-07-28 stateless requests, one engine each), instead of a pass of its own.
        """
        self.index = index
        self.config = config or ReplayConfig(index.policy)
        if self.config.match != index.policy:
            raise ValueError(
                "the engine's match policy differs from the one its index was built with"
            )
        self.handshakes = 0
        self._reset(shared_pass)

    @classmethod
    def from_cassette(cls, cassette: Cassette, config: ReplayConfig | None = None) -> ReplayEngine:
        config = config or ReplayConfig()
        return cls(ReplayIndex(cassette, config.match), config)

    def _reset(self, pass_: Pass | None = None) -> None:
        self.pass_ = pass_ if pass_ is not None else self.index.new_pass(self.config.allow_repeats)
        self._active: dict[tuple[str, Any], _Play] = {}
        self._waiting: dict[tuple[str, Any], tuple[_Play | None, Item | str]] = {}
        self._next_id = 0
        self._unsolicited_sent: set[int] = set()
        self._era: str | None = None
        """The client's era, once it showed it (an `initialize`, or a request with the 2026 `_meta`)."""
        self._caps: Any = None
        self._info: Any = None
        self._level: str | None = None
        self._who: dict[str, Any] | None = None
        self._who_state: tuple[Any, ...] = ()
        """A legacy client's declared capabilities and clientInfo (handshake) and log level
        (`logging/setLevel`)."""
        self._cancelled_ids: set[Any] = set()
        """Requests the client cancelled (a shell that delays answers drops what is left of them)."""
        self._bridged: set[Any] = set()
        """Listen streams answered from a legacy cassette's subscriptions (open until cancelled)."""
        self._noted: set[str] = set()
        self._told: tuple[Any, ...] | None = None
        """The declaration differences last explained (the pass hands the same tuple while they
        stay the same: explaining them again would only find the note said)."""
        self._notified: dict[str, int] = {}
        """Client notifications received so far, by method (the n-th plays what the n-th recorded one triggered)."""

    def new_session(self) -> None:
        """Starts a new client session: every recorded exchange can play again, from the top."""
        self.handshakes = 0
        self._reset()

    def unplayed(self) -> list[Exchange]:
        """Recorded requests this session never asked for, in cassette order."""
        return [e.exchange for e in self.pass_.unplayed()]

    @property
    def legacy_client(self) -> bool:
        """True once the client opened with the `initialize` handshake."""
        return self._era == LEGACY

    @property
    def in_flight(self) -> int:
        """Client requests started and not yet answered (a listen stream, a wait for the client)."""
        return len(self._active) + len(self._bridged)

    # -- input -------------------------------------------------------------------------

    def receive_bytes(self, payload: bytes | str) -> list[Output]:
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
    ) -> list[Output]:
        """One parsed JSON value from the client: a message, or a batch array.

        `kind`: what the message is, when the shell has classified it already. `shallow`: the
        shell knows from the bytes that it nests no deeper than allowed (`jsonrpc.shallow`).
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
            return self._notification(value)
        if typ in (MessageType.RESULT, MessageType.ERROR):
            return self._answer(value)
        return _invalid_request(value, "Invalid Request: not a request, notification or response")

    def _batch(self, values: list[Any]) -> list[Output]:
        """A batch: its answers as one array (JSON-RPC 2.0 §6), none for notifications only."""
        if not values:
            return _invalid_request(None, EMPTY_BATCH)
        out: list[Output] = []
        answers: list[Any] = []
        for value in values:
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

    # -- requests --------------------------------------------------------------------------

    def cancelled(self, request_id: Any) -> bool:
        """True when the client cancelled request `request_id`: a shell that delays answers
        (`--timing`) does not send what it still holds of it."""
        return request_id is not None and id_key(request_id) in self._cancelled_ids

    def _request(self, request: Request) -> list[Output]:
        msg = cast("dict[str, Any]", request)  # the matcher and the helpers keep the raw message
        method = msg["method"]
        if self._cancelled_ids:
            self._cancelled_ids.discard(id_key(msg["id"]))  # an id used again is a new request
        if method == "initialize":
            return self._initialize(request)
        if method == "ping":
            return self._ping(msg)
        params = request_params(msg)
        meta = params.get("_meta")
        own = declared_in(meta) if isinstance(meta, dict) else None
        if own is not None:
            self._era = MODERN_ERA
        elif method == "logging/setLevel":
            level = params.get("level")
            self._level = level if isinstance(level, str) else self._level
        who = own if own is not None else self._declared() if self._era == LEGACY else None
        state = params.get("requestState")
        if isinstance(state, str) and state.startswith(STATE_PREFIX):
            return self._resume(msg, state)
        subject = self.index.subject(msg)
        found = self.pass_.take(subject, who, self.config.exact_clients)
        if isinstance(found, Miss):
            if method == "server/discover" and self.index.legacy:
                return self._discover_on_legacy(request)
            if method == "logging/setLevel":
                return self._set_level(msg, modern=own is not None)
            bridged = self._subscriptions(msg, modern=own is not None)
            if bridged is not None:
                return bridged
            if found.declared:
                text = (f"mcptape replay: {describe(subject)} was recorded only for a client that declared otherwise: "
                        f"{explain_diffs(found.declared)}; strict replay plays only recordings that fit")  # fmt: skip
                data = {
                    "cassette": self.index.cassette.name,
                    "reason": "declared",
                    "diff": [d.to_json() for d in found.declared],
                }
                return [
                    Send(
                        error_response(msg["id"], NO_MATCH, text, data),
                        request_id=msg["id"],
                        final=True,
                    ),
                    Note(text, "error"),
                ]
            error, text = no_match(
                self.index, self.pass_, subject, found, msg["id"], self.config.hints
            )
            return [Send(error, request_id=msg["id"], final=True), Note(text, "error")]
        differs = self.pass_.differs
        if not differs or differs is self._told:
            return self._start(found.exchange, request)  # (what it would say was said: a note once)
        self._told = differs
        what = explain_diffs(differs)
        if only_who(differs):
            text = (
                f"playing recordings made by another client: {what} (no recording by this client)"
            )
            notes = self._note(text, "info", key=what)
        else:
            text = (f"{describe(subject)}: no recording by a client that declared the same; playing line {self.index.cassette.line_of(found.seq)}, "
                    f"recorded by one that declared otherwise: {what} (--strict refuses this)")  # fmt: skip
            notes = self._note(text, key=what)
        return notes + self._start(found.exchange, request)

    def _declared(self) -> dict[str, Any]:
        """What the legacy client declared (by handshake and `logging/setLevel`), made again only
        when that changed: the same dict on every request lets the pass compare it once."""
        state = (self._caps, self._level, self._info)
        if self._who is None or state != self._who_state:
            self._who, self._who_state = declared(*state), state
        return self._who

    def _note(self, text: str, level: str = "warning", key: str | None = None) -> list[Output]:
        """A note said once per session (the same difference on every request is one line)."""
        if (key or text) in self._noted:
            return []
        self._noted.add(key or text)
        return [Note(text, level)]

    def _ping(self, msg: dict[str, Any]) -> list[Output]:
        pings = self.index.pings
        if pings:
            ex = pings[min(self.pass_.plays.get(-2, 0), len(pings) - 1)]
            self.pass_.plays[-2] = self.pass_.plays.get(-2, 0) + 1
            assert ex.response is not None
            return [
                Send(
                    {**ex.response.msg, "id": msg["id"]},
                    ex.response.event,
                    ex,
                    msg["id"],
                    final=True,
                )
            ]
        if self.index.modern and not self.index.legacy and self._era != LEGACY:
            # removed in 2026-07-28: a modern-only server answers it as a real one does
            error = error_response(
                msg["id"], JSONRPC_INVALID_PARAMS, "ping is not part of protocol 2026-07-28"
            )
            return [Send(error, request_id=msg["id"], final=True)]
        return [
            Send(
                {"jsonrpc": "2.0", "id": msg["id"], "result": {}}, request_id=msg["id"], final=True
            )
        ]

    def _set_level(self, msg: dict[str, Any], modern: bool) -> list[Output]:
        """`logging/setLevel` the recording has no answer left for (the Inspector sends it to every
        server that declares `logging`): the recorded server's own answer to a `logging/setLevel`,
        else what a server of the recording's era gives: accepted when it declared `logging`,
        else method not found (so too in 2026-07-28, which removed the method)."""
        level = request_params(msg).get("level")
        answered = [
            ex
            for ex, method in zip(self.index.session.exchanges, self.index.methods, strict=True)
            if method == "logging/setLevel" and ex.response is not None
        ]
        if answered:
            resp = answered[0].response
            assert resp is not None
            text = f"logging/setLevel ({level}): no recording of it left; playing the recorded answer of line {answered[0].request.event.seq}"
            return [
                Send({**resp.msg, "id": msg["id"]}, resp.event, answered[0], msg["id"], final=True),
                *self._note(text, "info", key="logging/setLevel"),
            ]
        translated = not modern and any(
            META_LOG_LEVEL_KEY in request_meta(ex.msg)
            for ex in self.index.session.exchanges
            if is_modern(ex.protocol_version)
        )
        declares = "logging" in self._server_capabilities()
        if translated or (declares and not (modern and not self.index.legacy)):
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
                if modern and not self.index.legacy
                else "the recorded server does not declare logging"
            )
            text = f"logging/setLevel was never recorded and {why}; answered -32601, as such a server does"
        return [
            Send(answer, request_id=msg["id"], final=True),
            *self._note(text, "info", key="logging/setLevel"),
        ]

    # -- subscriptions across eras -----------------------------------------------------------

    def _subscriptions(self, msg: dict[str, Any], modern: bool) -> list[Output] | None:
        """`resources/subscribe` on a 2026-07-28 cassette, `subscriptions/listen` on a legacy one
        (neither recorded): the other era's way of asking for the same updates; None otherwise."""
        method = msg["method"]
        if not self.config.cross_era:
            return None
        if method in ("resources/subscribe", "resources/unsubscribe") and not modern:
            if self.index.modern and not self.index.legacy:
                return self._subscribe_on_modern(msg)
        elif method == "subscriptions/listen" and modern and self.index.legacy:
            return self._listen_on_legacy(msg)
        return None

    def _subscribe_on_modern(self, msg: dict[str, Any]) -> list[Output]:
        """A legacy client's `resources/subscribe`: `{}`, then the `notifications/resources/updated`
        of a recorded `subscriptions/listen` that asked about the URI, as a legacy server sends them."""
        uri = request_params(msg).get("uri")
        answer = Send(
            {"jsonrpc": "2.0", "id": msg["id"], "result": {}}, request_id=msg["id"], final=True
        )
        if msg["method"] == "resources/unsubscribe":
            text = "resources/unsubscribe on a 2026-07-28 cassette: accepted (there, a subscription ends with its listen stream)"
            return [answer, *self._note(text, "info", key="resources/unsubscribe")]
        listens = [
            ex
            for ex in self.index.session.exchanges
            if ex.method == "subscriptions/listen" and uri in listen_uris(request_params(ex.msg))
        ]
        if not listens:
            text = f"resources/subscribe ({uri}) on a 2026-07-28 cassette: no recorded subscriptions/listen asked about it; accepted, with no update to play"
            return [answer, Note(text, "info")]
        ex = listens[0]
        self.pass_.mark(ex)
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

    def _listen_on_legacy(self, msg: dict[str, Any]) -> list[Output]:
        """A 2026-07-28 client's `subscriptions/listen`: the acknowledgement of what the recorded
        server could honour, then every recorded change notification the filter asks for (the
        updates of the recorded `resources/subscribe`s), tagged; the stream stays open."""
        filt = honoured(listen_filter(request_params(msg)), self._server_capabilities())
        uris = listen_uris({"notifications": filt})
        subs = [
            ex
            for ex in self.index.session.exchanges
            if ex.method in ("resources/subscribe", "resources/unsubscribe")
            and request_params(ex.msg).get("uri") in uris
        ]
        for ex in subs:
            self.pass_.mark(ex)
        updates = [
            (ev, m)
            for ev in self.index.cassette.events
            if ev.kind is Kind.MESSAGE and ev.src is Source.SERVER
            for m in (ev.msg if isinstance(ev.msg, list) else [ev.msg])
            if wanted(filt, m)
        ]  # fmt: skip
        t0 = subs[0].request.event.t if subs else updates[0][0].t if updates else 0.0
        self._bridged.add(id_key(msg["id"]))
        text = (f"subscriptions/listen on a legacy cassette: acknowledged {filt or 'nothing'} (what the recorded server "
                f"declared), with {len(updates)} recorded notification(s)")  # fmt: skip
        return [
            Send(acknowledged(msg["id"], filt), request_id=msg["id"]),
            Note(text, "info"),
            *(Send(tagged(m, msg["id"]), ev, None, msg["id"], max(0.0, ev.t - t0)) for ev, m in updates),
        ]  # fmt: skip

    def _server_capabilities(self) -> dict[str, Any]:
        """What the recorded server declared: in its `initialize` result, else its `server/discover`
        result, else what the recorded traffic says."""
        for ex in (*self.index.initialize, *self.index.discover):
            caps = ex.result.get("capabilities") if isinstance(ex.result, dict) else None
            if isinstance(caps, dict):
                return caps
        return cast(dict[str, Any], self._inferred_discover()["capabilities"])

    def _start(self, ex: Exchange, msg: Request) -> list[Output]:
        token = request_meta(msg).get("progressToken")
        play = _Play(ex, msg["id"], token, ex.request.event.t)
        if self._era is not None:  # a client that showed its era may get the other's answers
            modern = is_modern(ex.protocol_version)
            play.legacy_out = self._era == LEGACY and modern
            play.modern_out = self._era == MODERN_ERA and not modern and self.config.cross_era
        self._active[id_key(msg["id"])] = play
        return self._advance(play)

    def _initialize(self, msg: Request) -> list[Output]:
        if self.handshakes:
            self._reset()  # a new handshake is a new client session
        self.handshakes += 1
        params = request_params(msg)
        asked = params.get("protocolVersion")
        recorded = [ex for ex in self.index.initialize if ex.response is not None]
        if recorded or (self.config.cross_era and self.index.modern):
            self._era, self._caps, self._level = LEGACY, params.get("capabilities"), None
            self._info = params.get("clientInfo")
        if not recorded and self.config.cross_era and self.index.modern:
            return self._initialize_on_modern(cast(dict[str, Any], msg), asked)
        if not recorded:
            supported = self._modern_versions()
            if not supported:
                error, text = no_match(
                    self.index,
                    self.pass_,
                    self.index.subject(cast(dict[str, Any], msg)),
                    Miss(b"", 0),
                    msg["id"],
                    self.config.hints,
                )
                return [Send(error, request_id=msg["id"], final=True), Note(text, "error")]
            text = f"this server speaks {', '.join(supported)} (recorded without a handshake); initialize is not served"
            data = {"supported": supported, "requested": asked}
            return [
                Send(
                    error_response(msg["id"], MCP_UNSUPPORTED_PROTOCOL_VERSION, text, data),
                    request_id=msg["id"],
                    final=True,
                ),
                Note(
                    f"client sent initialize ({asked}) to a 2026-07-28 cassette; answered -32022",
                    "info",
                ),
            ]
        ex = recorded[0]
        out: list[Output] = []
        rec_asked = request_params(ex.msg).get("protocolVersion")
        if asked != rec_asked:
            answered = ex.result.get("protocolVersion") if isinstance(ex.result, dict) else None
            out.append(
                Note(
                    f"client asked for protocol version {asked}; the recorded client asked for {rec_asked}; answering as recorded ({answered})"
                )
            )
        return out + self._start(ex, msg)

    def _initialize_on_modern(self, msg: dict[str, Any], asked: Any) -> list[Output]:
        """A legacy client on a 2026-07-28 cassette: the handshake a server with that discover result gives."""
        found = [ex for ex in self.index.discover if isinstance(ex.result, dict)]
        if found:
            self.pass_.mark(found[0])
            assert found[0].response is not None
            result = initialize_result(found[0].result, asked)
            event = found[0].response.event
            where = f"the recorded server/discover (line {self.index.cassette.line_of(found[0].request.event.seq)})"
        else:
            result, event = initialize_result(self._inferred_discover(), asked), None
            where = "what the recorded results say (no server/discover was recorded)"
        answer = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        text = f"initialize ({asked}) on a 2026-07-28 cassette: answered {result['protocolVersion']} with a handshake made from {where}"
        return [
            Send(answer, event, found[0] if found else None, msg["id"], final=True),
            Note(text, "info"),
        ]

    def _inferred_discover(self) -> dict[str, Any]:
        """A discover result from the recorded traffic: serverInfo from results, a capability per method family."""
        caps: dict[str, Any] = {}
        info: Any = None
        for ex in self.index.session.exchanges:
            family = ex.method.split("/")[0]
            if family in ("tools", "prompts", "resources"):
                caps.setdefault(family, {})
            elif ex.method == "completion/complete":
                caps.setdefault("completions", {})
            if META_LOG_LEVEL_KEY in request_meta(ex.msg):
                caps.setdefault("logging", {})
            meta = ex.result.get("_meta") if isinstance(ex.result, dict) else None
            if info is None and isinstance(meta, dict):
                info = meta.get(META_SERVER_INFO)
        out: dict[str, Any] = {"capabilities": caps}
        if info is not None:
            out["_meta"] = {META_SERVER_INFO: info}
        return out

    def _modern_versions(self) -> list[str]:
        for ex in self.index.discover:
            if isinstance(ex.result, dict) and isinstance(ex.result.get("supportedVersions"), list):
                return list(ex.result["supportedVersions"])
        return list(MODERN) if self.index.modern else []

    def _discover_on_legacy(self, msg: Request) -> list[Output]:
        errors = [ex for ex in self.index.discover if ex.error is not None]
        if errors:
            assert errors[0].response is not None
            self.pass_.mark(errors[0])
            sent = {**errors[0].response.msg, "id": msg["id"]}
            return [Send(sent, errors[0].response.event, errors[0], msg["id"], final=True)]
        handshakes = [ex for ex in self.index.initialize if isinstance(ex.result, dict)]
        if handshakes and self.config.cross_era:
            assert handshakes[0].response is not None
            self._era = MODERN_ERA
            answer = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": discover_result(handshakes[0].result),
            }
            text = f"server/discover on a legacy cassette: answered from the recorded initialize result (line {self.index.cassette.line_of(handshakes[0].request.event.seq)})"
            return [
                Send(answer, handshakes[0].response.event, handshakes[0], msg["id"], final=True),
                Note(text, "info"),
            ]
        error = error_response(
            msg["id"], JSONRPC_METHOD_NOT_FOUND, "Method not found", "server/discover"
        )
        return [
            Send(error, request_id=msg["id"], final=True),
            Note(
                "server/discover on a legacy cassette: answered -32601 (the client should fall back to initialize)",
                "info",
            ),
        ]

    # -- playing an exchange -----------------------------------------------------------------

    def _advance(self, play: _Play) -> list[Output]:
        """Sends the exchange's recorded messages from where it stands, up to a server request or the end."""
        out: list[Output] = []
        ex, index = play.exchange, self.index
        items = ex.items
        cid, token, hangup = play.client_id, play.token, index.hangup
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
            method = m.get("method")
            if play.modern_out and method in CHANGE_NOTIFICATIONS:
                continue  # 2026-07-28 sends these only on a listen stream that asked for them
            if item.type is MessageType.REQUEST:
                after = max(0.0, item.event.t - play.since)
                if play.modern_out and method != "ping":
                    return out + self._input_required(play, item, after)
                fresh = self._fresh_id(m.get("id"))
                self._waiting[id_key(fresh)] = (play, item)
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
        self, play: _Play, resp: Item, encodings: Templates | None, out: list[Output]
    ) -> list[Output]:
        """`out`, then the exchange's recorded response for the client (and what follows it)."""
        ex, cid, token = play.exchange, play.client_id, play.token
        after = max(0.0, resp.event.t - play.since)
        rmsg = resp.msg
        if play.legacy_out and is_input_required(rmsg.get("result")):
            return out + self._ask(play, resp, after)
        kind = rewrite_kind(rmsg)
        msg = rewrite({**rmsg, "id": cid}, kind, cid, token)
        assert msg is not None  # (only progress notifications are dropped)
        as_recorded = False
        if play.legacy_out and "result" in msg:
            msg = {**msg, "result": strip_envelope(msg["result"])[0]}
        elif play.modern_out and isinstance(msg.get("result"), dict):
            msg = {**msg, "result": modern_result(ex.method, msg["result"])}
        elif play.modern_out and isinstance(msg.get("error"), dict):
            msg = {**msg, "error": modern_error(ex.method, msg["error"])}
        else:
            as_recorded = True
        send = Send(msg, resp.event, ex, cid, after, final=True)
        if (
            as_recorded and encodings is not None
        ):  # but for the client's ids: spliced into its bytes
            tpl = encodings.template(len(ex.items), rmsg, kind, response=True)
            send.spliced(tpl, cid, token)
        out.append(send)
        self._active.pop(id_key(cid), None)
        if self.index.after:
            out.extend(self._unsolicited(ex.index, resp.event.t))
        return out

    def _ask(self, play: _Play, resp: Item, after: float) -> list[Output]:
        """A recorded `input_required`, for a legacy client: its questions as server-to-client requests."""
        play.answers = {}
        out: list[Output] = []
        for key, req in input_requests(resp.msg.get("result")).items():
            fresh = self._fresh_id(0)
            self._waiting[id_key(fresh)] = (play, key)
            ask = {
                "jsonrpc": "2.0",
                "id": fresh,
                "method": req.get("method"),
                "params": req.get("params", {}),
            }
            out.append(Send(ask, resp.event, play.exchange, play.client_id, after))
        if not out:
            out.extend(self._retry(play, resp))
        return out

    def _retry(self, play: _Play, resp: Item) -> list[Output]:
        """Every question answered: play the recorded retry whose answers are the client's (else the next one)."""
        answers = play.answers or {}
        ex = play.exchange
        root = ex.retry_of if ex.retry_of is not None else ex.index
        later = [
            r
            for r in self.index.retries.get(root, [])
            if r.index > ex.index and r.index not in self.pass_.plays
        ]
        fitting = [r for r in later if request_params(r.msg).get("inputResponses") == answers]
        out: list[Output] = []
        if not fitting and later:
            got = request_params(later[0].msg).get("inputResponses")
            out.append(
                Note(
                    f"the client answered {describe(self.index.subject(ex.msg))}'s questions differently than recorded ({answers} vs {got}); replaying the recorded retry"
                )
            )
        chosen = next(iter(fitting or later), None)
        if chosen is None:
            text = f"mcptape replay: {describe(self.index.subject(ex.msg))} asked for input, and the cassette recorded no retry with the answers"
            data = {"cassette": self.index.cassette.name, "reason": "no retry", "answers": answers}
            self._active.pop(id_key(play.client_id), None)
            return [
                Send(
                    error_response(play.client_id, NO_MATCH, text, data),
                    request_id=play.client_id,
                    final=True,
                ),
                Note(text, "error"),
            ]
        self.pass_.mark(chosen)
        nxt = _Play(chosen, play.client_id, play.token, resp.event.t, legacy_out=True)
        self._active[id_key(play.client_id)] = nxt
        return out + self._advance(nxt)

    def _input_required(self, play: _Play, item: Item, after: float) -> list[Output]:
        """A legacy server request, for a 2026-07-28 client: an `input_required` result; the retry resumes here."""
        self._active.pop(id_key(play.client_id), None)
        key = f"{item.msg.get('method')}-{play.pos}"
        state = f"{STATE_PREFIX}{play.exchange.index}:{play.pos}:{key}"
        ask = {"method": item.msg.get("method"), "params": item.msg.get("params", {})}
        result = {
            "resultType": "input_required",
            "inputRequests": {key: ask},
            "requestState": state,
        }
        return [
            Send(
                {"jsonrpc": "2.0", "id": play.client_id, "result": result},
                item.event,
                play.exchange,
                play.client_id,
                after,
                final=True,
            )
        ]

    def _resume(self, msg: dict[str, Any], state: str) -> list[Output]:
        """The retry of an `input_required` this replay made up: the recorded exchange goes on after its request."""
        try:
            index, pos, key = state[len(STATE_PREFIX) :].split(":", 2)
            ex = self.index.session.exchanges[int(index)]
            request = ex.items[int(pos) - 1]
        except (ValueError, IndexError):
            text = f"mcptape replay: requestState {state!r} names no recorded exchange of {self.index.cassette.name}"
            return [
                Send(
                    error_response(msg["id"], JSONRPC_INVALID_PARAMS, text),
                    request_id=msg["id"],
                    final=True,
                ),
                Note(text, "error"),
            ]
        answers = request_params(msg).get("inputResponses")
        got = answers.get(key) if isinstance(answers, dict) else None
        play = _Play(
            ex,
            msg["id"],
            request_meta(msg).get("progressToken"),
            request.event.t,
            int(pos),
            modern_out=True,
        )
        self._active[id_key(msg["id"])] = play
        recorded = self._recorded_answer(play, request)
        out: list[Output] = []
        want = (
            recorded.msg.get("result", {"error": recorded.msg.get("error")})
            if recorded is not None
            else None
        )
        if recorded is not None and got != want:
            out.append(
                Note(
                    f"the client answered {request.msg.get('method')} differently than recorded ({got} vs {want}); replaying the recorded outcome"
                )
            )
        return out + self._advance(play)

    def _fresh_id(self, recorded: Any) -> Any:
        self._next_id += 1
        return (
            self._next_id
            if isinstance(recorded, int) and not isinstance(recorded, bool)
            else f"mcptape-{self._next_id}"
        )

    def _unsolicited(self, after_exchange: int, t: float) -> list[Output]:
        out: list[Output] = []
        for position in (-1, after_exchange):
            if position in self._unsolicited_sent or position not in self.index.after:
                continue
            self._unsolicited_sent.add(position)
            for item in self.index.after[position]:
                if self.index.played_out(item) or (
                    self._era == MODERN_ERA and item.msg.get("method") in CHANGE_NOTIFICATIONS
                ):
                    continue  # (2026-07-28 sends change notifications only on a listen stream)
                msg = item.msg
                if item.type is MessageType.REQUEST:
                    fresh = self._fresh_id(msg.get("id"))
                    self._waiting[id_key(fresh)] = (None, item)
                    msg = {**msg, "id": fresh}
                out.append(Send(msg, item.event, None, None, max(0.0, item.event.t - t)))
        return out

    # -- client notifications and answers ---------------------------------------------------

    def _notification(self, msg: dict[str, Any]) -> list[Output]:
        """A notification is never answered, but what the recorded one triggered follows it; one
        the recording client never sent (this often) gets a note, as a server that ignores it."""
        method = msg["method"]
        nth = self._notified.get(method, 0)
        self._notified[method] = nth + 1
        recorded = self.index.notified.get(method, [])
        unrecorded = nth >= len(recorded)
        out: list[Output] = []
        if method == "notifications/cancelled":
            out.extend(self._cancelled(request_params(msg).get("requestId"), unrecorded))
        elif unrecorded and method != "notifications/initialized":
            text = f"{method}: the recording client never sent it{' this often' if recorded else ''}; nothing answered, as a server does"
            out.extend(self._note(text, "info", key=method))
        if not unrecorded:
            ex = self.index.session.exchanges[recorded[nth]]
            out.extend(self._unsolicited(ex.index, ex.request.event.t))
        return out

    def _cancelled(self, rid: Any, unrecorded: bool) -> list[Output]:
        """Ends a request in flight (waiting for the client's answer, or a listen stream): what is
        left of its recorded exchange, the response too, is not sent."""
        self._cancelled_ids.add(id_key(rid))
        if id_key(rid) in self._bridged:
            self._bridged.discard(id_key(rid))
            return []  # how a listen stream ends
        play = self._active.pop(id_key(rid), None)
        if play is not None:
            for k in [k for k, (p, _) in self._waiting.items() if p is play]:
                del self._waiting[k]
        if not unrecorded or (play is not None and play.exchange.method == "subscriptions/listen"):
            return []  # as recorded, or how a listen stream ends (the recording's ended at hangup)
        if play is None:
            text = f"notifications/cancelled for request {rid!r}, which is not in flight (answered already, or never sent); what is left of its answer is not sent"
        else:
            text = f"notifications/cancelled for request {rid!r} ({play.exchange.method}), which the recording client never cancelled: the rest of its recorded exchange is not sent"
        return [Note(text, "info")]

    def _answer(self, msg: Response) -> list[Output]:
        waiting = self._waiting.pop(id_key(msg.get("id")), None)
        if waiting is None:
            return [
                Note(
                    f"the client answered id {msg.get('id')!r}, which is no request of the replay; ignored"
                )
            ]
        play, request = waiting
        if play is None and isinstance(request, Item):  # a server request outside any request
            return self._differs(msg, request, self.index.replies.get(id(request)))
        if play is None or self._active.get(id_key(play.client_id)) is not play:
            return []  # its exchange was cancelled meanwhile
        if isinstance(request, str):  # an answer to an input_required question
            assert play.answers is not None and play.exchange.response is not None
            play.answers[request] = (
                msg["result"] if "result" in msg else {"error": msg.get("error")}
            )
            if any(p is play for p, _ in self._waiting.values()):
                return []
            return self._retry(play, play.exchange.response)
        recorded = self._recorded_answer(play, request)
        if recorded is not None:
            play.since = recorded.event.t
        return self._differs(msg, request, recorded) + self._advance(play)

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

    def _recorded_answer(self, play: _Play, request: Item) -> Item | None:
        want = id_key(request.msg.get("id"))
        for item in play.exchange.items[play.pos :]:
            if (
                item.src is Source.CLIENT
                and item.type in (MessageType.RESULT, MessageType.ERROR)
                and id_key(item.msg.get("id")) == want
            ):
                return item
        return None


def _invalid_request(value: Any, problem: str) -> list[Output]:
    """The -32600 answer (the message's id when an answer can carry it, else null) and its note."""
    msg_id = usable_id(value)
    return [
        Send(error_response(msg_id, JSONRPC_INVALID_REQUEST, problem), final=True),
        Note(f"a client message is not valid JSON-RPC ({problem}); answered -32600"),
    ]
