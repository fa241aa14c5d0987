"""Re-driving a recorded client side, sans-IO: what to send next, and how to answer the server.

Pure, no I/O and no clock. `build_steps` turns a paired session into the client messages
to re-send (rewritten for another protocol era when asked); `collect_answers` gathers the
client's recorded answers to server questions; `Driver` walks the steps one request at a
time with fresh ids, answers server requests and `input_required` results from the
recorded answers, and says what to send next. `mcptape.verify.run` feeds it real I/O.
"""

from __future__ import annotations

import copy
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from mcptape.cassette.model import Source
from mcptape.diff.canonical import input_entry
from mcptape.eras import (
    LEGACY,
    MODERN_ERA,
    Identity,
    era_of,
    identity_meta,
    input_pairs,
    legacy_version,
    retry_params,
    set_level,
    strip_identity,
)
from mcptape.pairing import Exchange, Session
from mcptape.versions import META_LOG_LEVEL, META_PROTOCOL_VERSION
from mcptape.wire.jsonrpc import MessageType, classify, id_key, request_meta, request_params

MAX_INPUT_ROUNDS = 8
"""How many `input_required` rounds one call may take before the driver gives up on it."""

ERA_METHODS = frozenset(
    {"initialize", "notifications/initialized", "server/discover", "logging/setLevel", "ping"}
)
"""Client messages that belong to an era's plumbing; rewritten when the era changes."""


@dataclass(slots=True)
class RedriveStep:
    """One client message to send, with the recorded exchange whose answers it may need."""

    msg: dict[str, Any]
    source: int | None = None


@dataclass(slots=True)
class Answers:
    """Recorded client answers to server input requests: per recorded exchange, and all together."""

    by_exchange: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    every: list[dict[str, Any]] = field(default_factory=list)

    def add(self, index: int, entry: dict[str, Any]) -> None:
        self.by_exchange.setdefault(index, []).append(entry)
        self.every.append(entry)

    def find(self, index: int | None, method: Any, params: Any) -> Any:
        """The recorded answer: same exchange and params, else same method, else anywhere."""
        want = input_entry(method, params, None)["params"]
        local = self.by_exchange.get(index, []) if index is not None else []
        for pool in (local, self.every):
            for entry in pool:
                if (
                    entry["method"] == method
                    and entry["params"] == want
                    and entry["answer"] is not None
                ):
                    return entry["answer"]
            for entry in pool:
                if entry["method"] == method and entry["answer"] is not None:
                    return entry["answer"]
        return None


def session_era(session: Session) -> tuple[str, str | None]:
    """("legacy" | "modern", protocol version) of a recorded session: what was negotiated
    (a refused `server/discover` probe followed by `initialize` is legacy)."""
    for ex in session.exchanges:
        if ex.method == "server/discover" and not isinstance(ex.result, dict):
            continue
        ver = request_meta(ex.msg).get(META_PROTOCOL_VERSION)
        if isinstance(ver, str):
            return era_of(ver), ver
        if ex.method == "initialize":
            res = ex.result
            ver = (
                res.get("protocolVersion")
                if isinstance(res, dict)
                else request_params(ex.msg).get("protocolVersion")
            )
            return LEGACY, ver if isinstance(ver, str) else None
    return LEGACY, None


def collect_answers(session: Session) -> Answers:
    """Every client answer the cassette recorded, legacy and 2026-07-28 alike."""
    answers = Answers()
    for ex in session.exchanges:
        root = ex.retry_of if ex.retry_of is not None else ex.index
        replies = {id_key(it.msg.get("id")): it.msg for it in ex.items
                   if it.src is Source.CLIENT and it.type in (MessageType.RESULT, MessageType.ERROR)}  # fmt: skip
        for it in ex.items:
            if it.src is Source.SERVER and it.type is MessageType.REQUEST:
                reply = replies.get(id_key(it.msg.get("id")))
                answer = (
                    None if reply is None else reply.get("result", {"error": reply.get("error")})
                )
                answers.add(root, input_entry(it.msg.get("method"), it.msg.get("params"), answer))
        params = request_params(ex.msg)
        if isinstance(params.get("inputResponses"), dict):
            prev = _previous_in_chain(session, ex)
            for p in input_pairs(prev.result if prev is not None else None, params):
                answers.add(root, input_entry(p.method, p.params, p.answer))
    return answers


def _previous_in_chain(session: Session, ex: Exchange) -> Exchange | None:
    for prev in reversed(session.exchanges[: ex.index]):
        if prev.method == ex.method and prev.name == ex.name and isinstance(prev.result, dict) \
                and prev.result.get("resultType") == "input_required":  # fmt: skip
            return prev
    return None


NOT_RESENT = frozenset({"notifications/cancelled", "subscriptions/listen"})
"""Never re-sent: a cancel names a recorded id; a listen stream never answers, so it would stall the driver."""


def build_steps(
    session: Session, protocol: str | None = None
) -> tuple[list[RedriveStep], str, str | None]:
    """The client messages to re-send, in order, rewritten for `protocol` when given."""
    era, version = session_era(session)
    target = protocol or version
    target_era = era_of(target)
    firsts = [ex for ex in session.exchanges if ex.retry_of is None]
    who = _client_identity(firsts)
    if who.level is None and era == LEGACY:
        who = Identity(who.capabilities, who.info, _observed_log_level(session))
    steps = _handshake_steps(era, target_era, target, who)
    state = _Rewrite(target, who)
    for ex in firsts:
        if ex.method in NOT_RESENT:
            continue
        if era == target_era:
            steps.append(_same_era_step(ex, protocol))
        else:
            steps.extend(_cross_era_steps(ex, state, target_era))
    return steps, target_era, target


def _handshake_steps(
    era: str, target_era: str, target: str | None, who: Identity
) -> list[RedriveStep]:
    """The opening the target era needs when the recording's era had another: a
    `server/discover` probe (to 2026-07-28), or `initialize` and `initialized` (to legacy)."""
    if target_era == MODERN_ERA and era == LEGACY:
        meta = identity_meta(target, Identity(who.capabilities, who.info))
        return [
            RedriveStep(
                {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": meta}}
            )
        ]
    if target_era == LEGACY and era == MODERN_ERA:
        init = {
            "protocolVersion": legacy_version(target),
            "capabilities": who.capabilities or {},
            "clientInfo": who.info or {"name": "mcptape-verify", "version": "0"},
        }
        return [
            RedriveStep({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}),
            RedriveStep({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        ]
    return []


def _same_era_step(ex: Exchange, protocol: str | None) -> RedriveStep:
    """The recorded request as it was, but `initialize` asking for `protocol` when given."""
    msg = copy.deepcopy(ex.msg)
    if ex.method == "initialize" and protocol:
        msg.setdefault("params", {})["protocolVersion"] = protocol
    return RedriveStep(msg, ex.index)


def _cross_era_steps(ex: Exchange, state: _Rewrite, target_era: str) -> list[RedriveStep]:
    """The recorded request moved to the other era: the era's own plumbing is dropped (a
    `logging/setLevel` only remembers its level), the rest rewritten by `state`."""
    if ex.method == "logging/setLevel":
        lvl = request_params(ex.msg).get("level")
        if isinstance(lvl, str):
            state.who = Identity(state.who.capabilities, state.who.info, lvl)
        return []
    if ex.method in ERA_METHODS or ex.is_notification:
        return []
    msg = copy.deepcopy(ex.msg)
    moved = state.to_modern(msg) if target_era == MODERN_ERA else state.to_legacy(msg)
    return [RedriveStep(m, ex.index) for m in moved]


@dataclass(slots=True)
class _Rewrite:
    """Moves one request across eras: the handshake's identity into `_meta`, or `_meta` back out."""

    target: str | None
    who: Identity
    sent_level: str | None = None

    def to_modern(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        params = msg.setdefault("params", {})
        if not isinstance(params, dict):
            return [msg]
        params.setdefault("_meta", {}).update(identity_meta(self.target, self.who))
        return [msg]

    def to_legacy(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        params = msg.setdefault("params", {})
        if not isinstance(params, dict):
            return [msg]
        want = request_meta(msg).get(META_LOG_LEVEL)
        if isinstance(want, str) and want != self.sent_level:
            out.append(set_level(want))
            self.sent_level = want
        msg["params"] = strip_identity(params)
        return [*out, msg]


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""MCP log levels, most verbose first."""


def _observed_log_level(session: Session) -> str | None:
    """The most verbose level among recorded log messages: what a legacy server sent unasked."""
    seen = {it.msg.get("params", {}).get("level") for ex in session.exchanges for it in ex.items
            if it.src is Source.SERVER and it.msg.get("method") == "notifications/message"}  # fmt: skip
    return next((lvl for lvl in LOG_LEVELS if lvl in seen), None)


def _client_identity(exchanges: list[Exchange]) -> Identity:
    """Client capabilities, client info and log level, from the handshake or the first modern request."""
    who = Identity()
    for ex in exchanges:
        meta = request_meta(ex.msg)
        if ex.method == "initialize":
            who = Identity.of_initialize(request_params(ex.msg))
        elif META_PROTOCOL_VERSION in meta and who.capabilities is None:
            who = Identity.of_meta(meta)
        if who.capabilities is not None:
            break
    return who


class Driver:
    """Sans-IO: what to send next, given what the server said. One request in flight at a time."""

    def __init__(
        self, steps: list[RedriveStep], answers: Answers, era: str, protocol: str | None
    ) -> None:
        self.steps = deque(steps)
        self.answers = answers
        self.era = era
        self.protocol = protocol
        """The version to announce in HTTP headers (legacy: as negotiated)."""
        self._next_id = 1
        self.pending: dict[str, Any] | None = None
        self._pending_source: int | None = None
        self._rounds = 0
        self.abandoned: list[str] = []
        """Requests that got no answer in time (method names), for the report."""

    @property
    def done(self) -> bool:
        return self.pending is None and not self.steps

    def remaining(self) -> list[str]:
        """The requests not answered yet: the one in flight, then those not sent (method names)."""
        left = [str(s.msg.get("method")) for s in self.steps if "id" in s.msg]
        return ([str(self.pending.get("method"))] if self.pending is not None else []) + left

    def _fresh(self, msg: dict[str, Any]) -> dict[str, Any]:
        msg = dict(msg)
        msg["id"] = self._next_id
        self._next_id += 1
        return msg

    def start(self) -> list[dict[str, Any]]:
        """The first messages to send."""
        return self._advance()

    def _advance(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        self.pending = None
        while self.steps:
            step = self.steps.popleft()
            if "id" not in step.msg:
                out.append(step.msg)
                continue
            msg = self._fresh(step.msg)
            self.pending, self._pending_source, self._rounds = msg, step.source, 0
            out.append(msg)
            break
        return out

    def on_message(self, msg: Any) -> list[dict[str, Any]]:
        """A message from the server; returns what to send in reply (answers, then the next request)."""
        typ = classify(msg)
        if typ is MessageType.REQUEST:
            return [self._answer(msg)]
        if typ not in (MessageType.RESULT, MessageType.ERROR) or self.pending is None:
            return []
        if id_key(msg.get("id")) != id_key(self.pending.get("id")):
            return []
        result = msg.get("result")
        if self.pending.get("method") == "initialize" and isinstance(result, dict):
            ver = result.get("protocolVersion")
            self.protocol = ver if isinstance(ver, str) else self.protocol
        if (
            isinstance(result, dict)
            and result.get("resultType") == "input_required"
            and self._rounds < MAX_INPUT_ROUNDS
        ):
            retry = self._retry(result)
            if retry is not None:
                self._rounds += 1
                self.pending = self._fresh(retry)
                return [self.pending]
        return self._advance()

    def timeout(self) -> list[dict[str, Any]]:
        """Nothing came in time: give up on the request in flight and go on."""
        if self.pending is not None:
            self.abandoned.append(str(self.pending.get("method")))
        return self._advance()

    def _answer(self, req: dict[str, Any]) -> dict[str, Any]:
        method = req.get("method")
        if method == "ping":
            return {"jsonrpc": "2.0", "id": req.get("id"), "result": {}}
        answer = self.answers.find(self._pending_source, method, req.get("params"))
        if answer is None:
            err = {
                "code": -32601,
                "message": f"mcptape verify: the cassette has no recorded answer to {method}",
            }
            return {"jsonrpc": "2.0", "id": req.get("id"), "error": err}
        if isinstance(answer, dict) and set(answer) == {"error"}:
            return {"jsonrpc": "2.0", "id": req.get("id"), "error": answer["error"]}
        return {"jsonrpc": "2.0", "id": req.get("id"), "result": answer}

    def _retry(self, result: dict[str, Any]) -> dict[str, Any] | None:
        assert self.pending is not None
        responses = {}
        for key, req in (result.get("inputRequests") or {}).items():
            answer = (
                self.answers.find(self._pending_source, req.get("method"), req.get("params"))
                if isinstance(req, dict)
                else None
            )
            if answer is None:
                return None
            responses[key] = answer
        params = retry_params(request_params(self.pending), result, responses)
        return {k: v for k, v in self.pending.items() if k != "params"} | {"params": params}
