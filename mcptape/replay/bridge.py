"""A client of one protocol era served from a recording of the other. Sans-IO.

`mcptape.eras` says how each message translates; this module says when the replay uses it.
Each session has one `Bridge`, chosen when its client shows its era (`UnknownEra` until then,
`LegacyClient` after an `initialize`, `ModernClient` after a request with the 2026 `_meta`).
The bridge gives each exchange it plays a mode (`mcptape.replay.playing.AsRecorded` or a
translation), so that neither the engine nor the player branches on eras:

- `ModernForLegacy`: a 2026-07-28 exchange for a legacy client: results without the 2026-only
  envelope, and each `input_required` as legacy server-to-client requests whose answers pick
  the recorded retry;
- `LegacyForModern`: a legacy exchange for a 2026-07-28 client (`ReplayConfig.cross_era`):
  results with the envelope, each server request as an `input_required` result whose retry
  (`resume`) goes on where the exchange stood, change notifications only on a listen stream.

The other era's own moves are answered here too, from what the recording has: a legacy
`initialize` on a 2026-07-28 cassette (`handshake`), `server/discover` on a legacy one
(`discover_on_legacy`); `resources/subscribe` <-> `subscriptions/listen` is
`mcptape.replay.subscriptions`'s.
"""

from __future__ import annotations

from typing import Any, cast

from mcptape.eras import (
    CHANGE_NOTIFICATIONS,
    discover_result,
    initialize_result,
    input_requests,
    is_input_required,
    modern_error,
    modern_result,
    server_description,
    strip_envelope,
)
from mcptape.pairing import Exchange, Item
from mcptape.versions import META_LOG_LEVEL, META_SERVER_INFO, MODERN, is_modern
from mcptape.wire.jsonrpc import (
    JSONRPC_INVALID_PARAMS,
    JSONRPC_METHOD_NOT_FOUND,
    MCP_UNSUPPORTED_PROTOCOL_VERSION,
    error_response,
    id_key,
    request_meta,
    request_params,
)

from . import logs
from .index import Miss, Pass, ReplayIndex, declared
from .logs import LOG
from .matcher import describe
from .outputs import Note, Output, ReplayConfig, Send
from .playing import AS_RECORDED, AsRecorded, Play, Player
from .report import NO_MATCH, client_name, no_match

STATE_PREFIX = "mcptape:"
"""The `requestState` of an `input_required` made from a legacy server request: exchange and position."""


# -- one exchange, translated ----------------------------------------------------------------


class ModernForLegacy(AsRecorded):
    """A 2026-07-28 exchange for a legacy client."""

    translates = True

    def __init__(self, label: str) -> None:
        self.label = label

    def respond(self, player: Player, play: Play, resp: Item, after: float) -> list[Output] | None:
        """A recorded `input_required`: its questions as server-to-client requests."""
        if not is_input_required(resp.msg.get("result")):
            return None
        play.answers = {}
        out: list[Output] = []
        for key, req in input_requests(resp.msg.get("result")).items():
            fresh = player.fresh_id(0)
            player.waiting[id_key(fresh)] = (play, key)
            ask = {
                "jsonrpc": "2.0",
                "id": fresh,
                "method": req.get("method"),
                "params": req.get("params", {}),
            }
            out.append(Send(ask, resp.event, play.exchange, play.client_id, after))
        return out or self.answered(player, play)

    def result(self, method: str, msg: dict[str, Any]) -> dict[str, Any] | None:
        return {**msg, "result": strip_envelope(msg["result"])[0]} if "result" in msg else None

    def answered(self, player: Player, play: Play) -> list[Output]:
        """Every question answered: play the recorded retry whose answers are the client's (else the next one)."""
        answers, ex, index = play.answers or {}, play.exchange, player.index
        resp = ex.response
        assert resp is not None
        root = ex.retry_of if ex.retry_of is not None else ex.index
        later = [
            r
            for r in index.retries.get(root, [])
            if r.index > ex.index and r.index not in player.pass_.plays
        ]
        fitting = [r for r in later if request_params(r.msg).get("inputResponses") == answers]
        out: list[Output] = []
        if not fitting and later:
            got = request_params(later[0].msg).get("inputResponses")
            out.append(
                Note(
                    f"the client answered {describe(index.subject(ex.msg))}'s questions differently than recorded ({answers} vs {got}); replaying the recorded retry"
                )
            )
        chosen = next(iter(fitting or later), None)
        if chosen is None:
            text = f"{self.label}: {describe(index.subject(ex.msg))} asked for input, and the cassette recorded no retry with the answers"
            data = {
                "cassette": client_name(index.cassette),
                "reason": "no retry",
                "answers": answers,
            }
            player.active.pop(id_key(play.client_id), None)
            error = error_response(play.client_id, NO_MATCH, text, data)
            return [Send(error, request_id=play.client_id, final=True), Note(text, "error")]
        player.pass_.mark(chosen)
        return out + player.start(
            Play(chosen, play.client_id, play.token, resp.event.t, mode=self, logs=play.logs)
        )


class LegacyForModern(AsRecorded):
    """A legacy exchange for a 2026-07-28 client: its results carry the recorded server's
    serverInfo (`server_info`), as a 2026-07-28 server's do."""

    translates = True
    drops = CHANGE_NOTIFICATIONS
    """2026-07-28 sends these only on a listen stream that asked for them."""

    def __init__(self, server_info: Any = None) -> None:
        self.server_info = server_info

    def server_request(
        self, player: Player, play: Play, item: Item, after: float
    ) -> list[Output] | None:
        """An `input_required` result (ping excepted); the retry resumes here (`resume`)."""
        method = item.msg.get("method")
        if method == "ping":
            return None
        player.active.pop(id_key(play.client_id), None)
        key = f"{method}-{play.pos}"
        state = f"{STATE_PREFIX}{play.exchange.index}:{play.pos}:{key}"
        ask = {"method": method, "params": item.msg.get("params", {})}
        result = {
            "resultType": "input_required",
            "inputRequests": {key: ask},
            "requestState": state,
        }
        result = modern_result(play.exchange.method, result, self.server_info)
        answer = {"jsonrpc": "2.0", "id": play.client_id, "result": result}
        return [Send(answer, item.event, play.exchange, play.client_id, after, final=True)]

    def result(self, method: str, msg: dict[str, Any]) -> dict[str, Any] | None:
        if isinstance(msg.get("result"), dict):
            return {**msg, "result": modern_result(method, msg["result"], self.server_info)}
        if isinstance(msg.get("error"), dict):
            return {**msg, "error": modern_error(method, msg["error"])}
        return None


def resume(
    player: Player, msg: dict[str, Any], state: Any, label: str, mode: AsRecorded
) -> list[Output] | None:
    """The retry of an `input_required` this replay made up (`LegacyForModern`, the session's
    `mode` of legacy exchanges): the recorded exchange goes on after its request. None: `state`
    is no such `requestState`."""
    if not (isinstance(state, str) and state.startswith(STATE_PREFIX)):
        return None
    try:
        index, pos, key = state[len(STATE_PREFIX) :].split(":", 2)
        ex = player.index.session.exchanges[int(index)]
        request = ex.items[int(pos) - 1]
    except (ValueError, IndexError):
        text = f"{label}: requestState {state!r} names no recorded exchange of {client_name(player.index.cassette)}"
        error = error_response(msg["id"], JSONRPC_INVALID_PARAMS, text)
        return [Send(error, request_id=msg["id"], final=True), Note(text, "error")]
    answers = request_params(msg).get("inputResponses")
    got = answers.get(key) if isinstance(answers, dict) else None
    meta = request_meta(msg)
    floor = logs.floor(meta.get(META_LOG_LEVEL), True)
    play = Play(
        ex, msg["id"], meta.get("progressToken"), request.event.t, int(pos), mode, logs=floor
    )
    player.active[id_key(msg["id"])] = play
    recorded = player.recorded_answer(play, request)
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
    return out + player.advance(play)


# -- one session: the client's era -------------------------------------------------------------


class UnknownEra:
    """A session whose client has not shown its era yet: everything plays as recorded."""

    legacy = False
    modern = False
    version: str | None = None
    """The session's protocol version: what its handshake settled on, or 2026-07-28."""
    unsolicited_drops: frozenset[Any] = frozenset()
    """Methods of unsolicited recorded messages this client does not get."""
    for_modern: AsRecorded = LegacyForModern()
    """How a legacy exchange plays for this client once it is a 2026-07-28 one (the retry of an
    `input_required` made from a legacy server request)."""

    def mode(self, ex: Exchange) -> AsRecorded:
        """How exchange `ex` plays for this client."""
        return AS_RECORDED

    def declared(self) -> dict[str, Any] | None:
        """What the client declared by handshake and `logging/setLevel` (None: per request)."""
        return None

    def set_level(self, level: str) -> None:
        """The client's `logging/setLevel` (a legacy client declares its log level so)."""

    def agreed(self, out: list[Output]) -> None:
        """What was sent for the client's `initialize`: its result's `protocolVersion` is the
        session's version."""
        for o in out:
            result = (
                o.msg.get("result") if isinstance(o, Send) and isinstance(o.msg, dict) else None
            )
            if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
                self.version = result["protocolVersion"]

    @property
    def level(self) -> str | None:
        """The log level the client set for the session (`logging/setLevel`; None: none)."""
        return None


class LegacyClient(UnknownEra):
    """A client that opened with `initialize`: 2026-07-28 exchanges are translated for it."""

    legacy = True

    def __init__(self, params: dict[str, Any], label: str) -> None:
        self._caps, self._info = params.get("capabilities"), params.get("clientInfo")
        self._level: str | None = None
        self._who: dict[str, Any] | None = None
        self._translated = ModernForLegacy(label)

    def mode(self, ex: Exchange) -> AsRecorded:
        return self._translated if is_modern(ex.protocol_version) else AS_RECORDED

    def declared(self) -> dict[str, Any]:
        """Made again only when it changed: the same dict on every request lets the pass compare it once."""
        if self._who is None:
            self._who = declared(self._caps, self._level, self._info)
        return self._who

    def set_level(self, level: str) -> None:
        if level != self._level:
            self._level, self._who = level, None

    @property
    def level(self) -> str | None:
        return self._level


class ModernClient(UnknownEra):
    """A 2026-07-28 client: legacy exchanges are translated for it unless `cross_era` is off;
    change notifications reach it only on a listen stream."""

    modern = True
    version = MODERN[0]
    unsolicited_drops = CHANGE_NOTIFICATIONS | {LOG}
    """2026-07-28 sends change notifications only on a listen stream, logs only on the stream of
    a request that asked for them."""

    def __init__(self, cross_era: bool, index: ReplayIndex | None = None) -> None:
        self._cross_era = cross_era
        self.for_modern = LegacyForModern(server_info(index) if index is not None else None)

    def mode(self, ex: Exchange) -> AsRecorded:
        if self._cross_era and not is_modern(ex.protocol_version):
            return self.for_modern
        return AS_RECORDED


# -- the other era's moves, answered from the recording ------------------------------------------


def makes_handshake(index: ReplayIndex, config: ReplayConfig) -> bool:
    """True when an `initialize` the cassette did not record gets a handshake made from its
    2026-07-28 recordings (`handshake`)."""
    return config.cross_era and index.modern


def handshake(
    index: ReplayIndex, pass_: Pass, msg: dict[str, Any], config: ReplayConfig
) -> list[Output]:
    """`initialize` on a cassette that recorded none: the handshake a server with the recorded
    `server/discover` result gives (`makes_handshake`), else -32022 with the versions it speaks."""
    asked = request_params(msg).get("protocolVersion")
    if makes_handshake(index, config):
        return _handshake_from_discover(index, pass_, msg, asked)
    supported = modern_versions(index)
    if not supported:
        subject = index.subject(msg)
        error, text = no_match(
            index, pass_, subject, Miss(b"", 0), msg["id"], config.hints, config.label
        )
        return [Send(error, request_id=msg["id"], final=True), Note(text, "error")]
    text = f"this server speaks {', '.join(supported)} (recorded without a handshake); initialize is not served"
    data = {"supported": supported, "requested": asked}
    error = error_response(msg["id"], MCP_UNSUPPORTED_PROTOCOL_VERSION, text, data)
    return [
        Send(error, request_id=msg["id"], final=True),
        Note(f"client sent initialize ({asked}) to a 2026-07-28 cassette; answered -32022", "info"),
    ]


def _handshake_from_discover(
    index: ReplayIndex, pass_: Pass, msg: dict[str, Any], asked: Any
) -> list[Output]:
    """A legacy client on a 2026-07-28 cassette: the handshake a server with that discover result gives."""
    found = [ex for ex in index.discover if isinstance(ex.result, dict)]
    if found:
        pass_.mark(found[0])
        assert found[0].response is not None
        result = initialize_result(found[0].result, asked)
        event = found[0].response.event
        where = f"the recorded server/discover (line {index.cassette.line_of(found[0].request.event.seq)})"
    else:
        result, event = initialize_result(inferred_discover(index), asked), None
        where = "what the recorded results say (no server/discover was recorded)"
    answer = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
    text = f"initialize ({asked}) on a 2026-07-28 cassette: answered {result['protocolVersion']} with a handshake made from {where}"
    return [
        Send(answer, event, found[0] if found else None, msg["id"], final=True),
        Note(text, "info"),
    ]


def discover_on_legacy(
    index: ReplayIndex, pass_: Pass, msg: dict[str, Any], cross_era: bool
) -> tuple[list[Output], bool] | None:
    """`server/discover` a legacy cassette has no answer for: the recorded error, else (with
    `cross_era`) a result made from the recorded `initialize` result, else method-not-found, so
    that the client falls back to `initialize`; and True when the client is now served as a
    2026-07-28 one. None on a cassette without a handshake (the no-match error)."""
    if not index.legacy:
        return None
    errors = [ex for ex in index.discover if ex.error is not None]
    if errors:
        assert errors[0].response is not None
        pass_.mark(errors[0])
        sent = {**errors[0].response.msg, "id": msg["id"]}
        return [Send(sent, errors[0].response.event, errors[0], msg["id"], final=True)], False
    handshakes = [ex for ex in index.initialize if isinstance(ex.result, dict)]
    if handshakes and cross_era:
        ex = handshakes[0]
        assert ex.response is not None
        answer = {"jsonrpc": "2.0", "id": msg["id"], "result": discover_result(ex.result)}
        text = f"server/discover on a legacy cassette: answered from the recorded initialize result (line {index.cassette.line_of(ex.request.event.seq)})"
        return [
            Send(answer, ex.response.event, ex, msg["id"], final=True),
            Note(text, "info"),
        ], True
    error = error_response(
        msg["id"], JSONRPC_METHOD_NOT_FOUND, "Method not found", "server/discover"
    )
    text = "server/discover on a legacy cassette: answered -32601 (the client should fall back to initialize)"
    return [Send(error, request_id=msg["id"], final=True), Note(text, "info")], False


# -- what the recorded server says about itself -------------------------------------------------


def server_capabilities(index: ReplayIndex) -> dict[str, Any]:
    """What the recorded server declared: in its `initialize` result, else its `server/discover`
    result, else what the recorded traffic says."""
    for ex in (*index.initialize, *index.discover):
        caps = ex.result.get("capabilities") if isinstance(ex.result, dict) else None
        if isinstance(caps, dict):
            return caps
    return cast(dict[str, Any], inferred_discover(index)["capabilities"])


def inferred_discover(index: ReplayIndex) -> dict[str, Any]:
    """A discover result from the recorded traffic: serverInfo from results, a capability per method family."""
    caps: dict[str, Any] = {}
    info: Any = None
    for ex in index.session.exchanges:
        family = ex.method.split("/")[0]
        if family in ("tools", "prompts", "resources"):
            caps.setdefault(family, {})
        elif ex.method == "completion/complete":
            caps.setdefault("completions", {})
        if META_LOG_LEVEL in request_meta(ex.msg):
            caps.setdefault("logging", {})
        meta = ex.result.get("_meta") if isinstance(ex.result, dict) else None
        if info is None and isinstance(meta, dict):
            info = meta.get(META_SERVER_INFO)
    out: dict[str, Any] = {"capabilities": caps}
    if info is not None:
        out["_meta"] = {META_SERVER_INFO: info}
    return out


def server_info(index: ReplayIndex) -> Any:
    """The recorded server's serverInfo: in its `initialize` result, else in its `server/discover`
    result (None when neither was recorded)."""
    for ex in (*index.initialize, *index.discover):
        info, _ = server_description(ex.method, ex.result)
        if isinstance(info, dict):
            return info
    return None


def modern_versions(index: ReplayIndex) -> list[str]:
    """The 2026-07-28 versions the recorded server speaks (none for a legacy-only cassette)."""
    for ex in index.discover:
        if isinstance(ex.result, dict) and isinstance(ex.result.get("supportedVersions"), list):
            return list(ex.result["supportedVersions"])
    return list(MODERN) if index.modern else []
