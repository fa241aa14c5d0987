"""Normalize: a cassette's exchanges -> one canonical, protocol-version-neutral form.

Pure. What is volatile is dropped (JSON-RPC ids, progress tokens, `requestState`, session
and SSE ids, timestamps, client info), what only the protocol era changes goes to a
separate *envelope* record, and the two eras are mapped onto each other:

- the legacy `initialize` result and the 2026-07-28 `server/discover` result become one
  `Handshake` (server name, instructions, capabilities; versions are envelope);
- a legacy server-to-client request (elicitation, sampling, roots) with the client's answer,
  and a 2026-07-28 `inputRequests` entry with the retried call's `inputResponses`, both
  become an entry of the call's `inputs`; the `input_required` chain is one logical call;
- `resultType: "complete"`, `ttlMs`, `cacheScope` and reserved `_meta` keys are envelope;
- resource-not-found -32002 is -32602;
- `logging/setLevel` and the per-request `logLevel` both become the call's `log_level`;
- `resources/subscribe` and each URI of `subscriptions/listen` become a `resources/subscribe`
  call; notifications that belong to no call (list_changed, resources/updated, and whatever
  arrived outside a request or during era plumbing) are the session's, compared as a set,
  `*/list_changed` as signals (`session_notifications`);
- the era is what was negotiated: a refused `server/discover` probe then `initialize` is legacy.

Ids are not kept at all: an exchange is known by its matching key and occurrence.
"""

from __future__ import annotations

from typing import Any

from mcptape.cassette.model import Source
from mcptape.eras import (
    LEGACY,
    era_of,
    input_pairs,
    listen_uris,
    server_description,
    strip_envelope,
)
from mcptape.pairing import Exchange, Item, Session, pair
from mcptape.versions import (
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
)
from mcptape.wire.jsonrpc import MessageType, id_key, request_meta, request_params

from .canonical import (
    Call,
    Canonical,
    Handshake,
    Options,
    canonical_key,
    freeze,
    input_entry,
    notification_entry,
    sort_inputs,
    without_meta,
)  # fmt: skip

__all__ = [
    "Call",
    "Canonical",
    "Handshake",
    "Options",
    "canonical_key",
    "input_entry",
    "normalize_events",
    "normalize_session",
]

LIST_FIELDS: dict[str, str] = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}
"""List methods whose items make up the server surface (compared by `surface`, not per call)."""

CHANGE_NOTIFICATIONS = frozenset({
    "notifications/tools/list_changed", "notifications/prompts/list_changed",
    "notifications/resources/list_changed", "notifications/resources/updated",
})  # fmt: skip
"""Server notifications about the server's state, not about the request they arrived during."""

DROPPED_METHODS = frozenset(
    {"initialize", "server/discover", "ping", "logging/setLevel", "resources/unsubscribe"}
)
"""Client requests that are era plumbing, not behaviour (the handshake is compared on its own)."""

RESOURCE_NOT_FOUND_LEGACY = -32002
INVALID_PARAMS = -32602


def session_notifications(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The session's own notifications, by meaning: a set, not a sequence.

    `*/list_changed` are signals: one entry per kind, whether it came once or five times,
    before or during whatever request. Every other one (`resources/updated` of a URI, a log
    line sent outside any request) is kept once per distinct value. Sorted, so two sessions
    compare equal whatever order the server's races put them in.
    """
    seen: dict[Any, dict[str, Any]] = {}
    for entry in entries:
        method = str(entry.get("method"))
        value = {"method": method} if method.endswith("/list_changed") else entry
        seen.setdefault(freeze(value), value)
    return [seen[k] for k in sorted(seen, key=repr)]


def normalize_session(session: Session, opts: Options = Options()) -> Canonical:
    """The canonical form of a paired session."""
    return _Normalizer(session, opts).run()


def normalize_events(events: list[Any], opts: Options = Options()) -> Canonical:
    """Pairs events, then normalizes."""
    return normalize_session(pair(events), opts)


class _Normalizer:
    def __init__(self, session: Session, opts: Options) -> None:
        self.s = session
        self.opts = opts
        self.levels: dict[str, str | None] = {}
        self.calls: list[Call] = []
        self.changes: list[dict[str, Any]] = []
        self.handshake = Handshake()
        self.surface: dict[str, dict[str, Any] | None] = {k: None for k in LIST_FIELDS.values()}
        self.era = "unknown"
        self.version: str | None = None
        self.server_info_seen = False
        self.negotiated = False
        """An `initialize` was answered: the era is settled."""

    def run(self) -> Canonical:
        exchanges = self.s.exchanges
        retries: dict[int, list[Exchange]] = {}
        for ex in exchanges:
            if ex.retry_of is not None:
                retries.setdefault(ex.retry_of, []).append(ex)
        for ex in exchanges:
            self._era_of(ex)
            if ex.retry_of is not None or ex.is_notification:
                continue
            self._exchange(ex, retries.get(ex.index, []))
        for _, item in self.s.unsolicited:
            self._change(item.msg)
        changes = session_notifications(self.changes)
        return Canonical(
            self.era,
            self.version,
            self.handshake,
            self.calls,
            self.surface,
            changes,
            len(exchanges),
        )

    def _era_of(self, ex: Exchange) -> None:
        """The era is what was negotiated: a refused `server/discover` probe followed by
        `initialize` is legacy, at the version `initialize` agreed on."""
        if ex.is_notification:
            return
        if ex.method == "initialize" and not self.negotiated:
            self.negotiated = ex.result is not None
            self.era, self.version = LEGACY, ex.protocol_version or self.version
            return
        if self.negotiated or (self.era != "unknown" and self.version):
            return
        if ex.method == "server/discover" and not isinstance(ex.result, dict):
            return  # a probe the server refused (or never answered) says nothing about the session
        ver = request_meta(ex.msg).get(META_PROTOCOL_VERSION)
        if isinstance(ver, str):
            self.era, self.version = era_of(ver), ver
        elif ex.protocol_version:
            self.era, self.version = LEGACY, ex.protocol_version

    def _exchange(self, ex: Exchange, chain: list[Exchange]) -> None:
        method = ex.method
        if method == "initialize":
            self._initialize(ex)
        elif method == "server/discover":
            self._discover(ex)
        elif method == "logging/setLevel":
            level = request_params(ex.msg).get("level")
            self.levels[ex.session] = level if isinstance(level, str) else None
        elif method == "subscriptions/listen":
            self._listen(ex)
        if method in DROPPED_METHODS or method == "subscriptions/listen":
            self._plumbing_items(ex)
            return
        self._client_caps(request_meta(ex.msg).get(META_CLIENT_CAPABILITIES))
        self.calls.append(self._call(ex, chain))

    def _plumbing_items(self, ex: Exchange) -> None:
        """Server notifications that arrived during era plumbing (`logging/setLevel`,
        `initialize`, ...) belong to no call: they go to the session's notifications."""
        if ex.method == "subscriptions/listen":
            return  # _listen took them
        for it in ex.items:
            if it.src is Source.SERVER and it.type is MessageType.NOTIFICATION:
                self._change(it.msg)

    # -- handshake -------------------------------------------------------------------------

    def _server_fields(self, info: Any, fields: dict[str, Any]) -> None:
        server = self.handshake.server
        if isinstance(info, dict):
            self.server_info_seen = True
            for k in ("name", "title", "description", "websiteUrl", "icons"):
                if k in info:
                    server[k] = info[k]
            if "version" in info:
                self.handshake.envelope["/server/version"] = info["version"]
        for k in ("instructions", "capabilities"):
            if k in fields:
                server[k] = fields[k]

    def _initialize(self, ex: Exchange) -> None:
        params = request_params(ex.msg)
        self._client_caps(params.get("capabilities"))
        result = ex.result
        if isinstance(result, dict):
            self.handshake.partial = False
            self._server_fields(*server_description(ex.method, result))
            self.handshake.envelope["/server/protocolVersion"] = result.get("protocolVersion")
        elif ex.error is not None:
            self.handshake.server["error"] = self._error(ex.method, ex.error, {})

    def _discover(self, ex: Exchange) -> None:
        self._client_caps(request_meta(ex.msg).get(META_CLIENT_CAPABILITIES))
        result = ex.result
        if isinstance(result, dict):
            self.handshake.partial = False
            self._server_fields(*server_description(ex.method, result))
            self.handshake.envelope["/server/protocolVersion"] = result.get("supportedVersions")

    def _client_caps(self, caps: Any) -> None:
        if caps is not None and "/client/capabilities" not in self.handshake.envelope:
            self.handshake.envelope["/client/capabilities"] = caps

    # -- calls -----------------------------------------------------------------------------

    def _call(self, ex: Exchange, chain: list[Exchange]) -> Call:
        meta = request_meta(ex.msg)
        level = meta.get(META_LOG_LEVEL) if META_LOG_LEVEL in meta else self.levels.get(ex.session)
        name = ex.name
        call = Call(ex.method, name, canonical_key(ex.method, ex.msg.get("params"), self.opts), {},
                    log_level=level if isinstance(level, str) else None, seq=ex.request.event.seq)  # fmt: skip
        if level is not None:
            call.envelope["/params/_meta/logLevel"] = level
        inputs: list[dict[str, Any]] = []
        streams: dict[str, list[Any]] = {"progress": [], "logs": [], "notifications": []}
        links = [ex, *chain]
        for i, link in enumerate(links):
            self._items(link, inputs, streams)
            inputs.extend(self._mrtr_inputs(link, links[i + 1] if i + 1 < len(links) else None))
        final = links[-1]
        self._outcome(final, call)
        if inputs:
            call.body["inputs"] = sort_inputs(inputs)
        for k, v in streams.items():
            if v:
                call.body[k] = v
        if ex.method in LIST_FIELDS:
            self._collect_surface(ex.method, final.result)
        return call

    def _items(
        self, ex: Exchange, inputs: list[dict[str, Any]], streams: dict[str, list[Any]]
    ) -> None:
        answers: dict[Any, Item] = {}
        for it in ex.items:
            if it.src is Source.CLIENT and it.type in (MessageType.RESULT, MessageType.ERROR):
                answers[id_key(it.msg.get("id"))] = it
        for it in ex.items:
            if it.src is not Source.SERVER:
                continue
            m = it.msg
            if it.type is MessageType.REQUEST:
                if m.get("method") == "ping":
                    continue
                ans = answers.get(id_key(m.get("id")))
                answer = None
                if ans is not None:
                    answer = (
                        ans.msg.get("result")
                        if "result" in ans.msg
                        else {"error": ans.msg.get("error")}
                    )
                inputs.append(input_entry(m.get("method"), m.get("params"), answer))
            elif it.type is MessageType.NOTIFICATION:
                if (
                    m.get("method") in CHANGE_NOTIFICATIONS
                    or m.get("method") == "notifications/subscriptions/acknowledged"
                ):
                    self._change(m)
                    continue
                stream, entry = notification_entry(m)
                streams[stream].append(entry)

    def _mrtr_inputs(self, ex: Exchange, retry: Exchange | None) -> list[dict[str, Any]]:
        answered = request_params(retry.msg) if retry is not None else None
        return [input_entry(p.method, p.params, p.answer) for p in input_pairs(ex.result, answered)]

    def _outcome(self, ex: Exchange, call: Call) -> None:
        if ex.response is None:
            return
        if ex.error is not None or "error" in ex.response.msg:
            call.body["error"] = self._error(ex.method, ex.error, call.envelope)
            return
        result = ex.result
        if not isinstance(result, dict):
            call.body["result"] = result
            return
        out, taken = strip_envelope(result)
        rtype = result.get("resultType")
        call.envelope["/result/resultType"] = rtype
        if rtype not in (None, "complete"):
            out.pop("inputRequests", None)
            out.pop("requestState", None)
        if "_meta" in out and not isinstance(out["_meta"], dict):
            del out["_meta"]
        call.envelope.update(taken)
        meta = result.get("_meta")
        if (
            isinstance(meta, dict)
            and not self.server_info_seen
            and isinstance(meta.get(META_SERVER_INFO), dict)
        ):
            self._server_fields(meta[META_SERVER_INFO], {})
            self.handshake.partial = True
        list_field = LIST_FIELDS.get(ex.method)
        if list_field:
            out.pop(list_field, None)
        call.body["result"] = out

    def _error(self, method: str, error: Any, envelope: dict[str, Any]) -> dict[str, Any]:
        if not isinstance(error, dict):
            return {"code": None, "data": error}
        code = error.get("code")
        if code in (RESOURCE_NOT_FOUND_LEGACY, INVALID_PARAMS) and method.startswith("resources/"):
            envelope["/error/code"] = (
                code  # resource not found: -32002 until 2025-11-25, -32602 since
            )
            code = INVALID_PARAMS
        out: dict[str, Any] = {"code": code}
        if self.opts.strict_messages:
            out["message"] = error.get("message")
        if "data" in error:
            out["data"] = error["data"]
        return out

    # -- subscriptions and surface ---------------------------------------------------------

    def _listen(self, ex: Exchange) -> None:
        for uri in listen_uris(request_params(ex.msg)):
            key = canonical_key("resources/subscribe", {"uri": uri}, self.opts)
            body: dict[str, Any] = (
                {"error": self._error(ex.method, ex.error, {})} if ex.error else {"result": {}}
            )
            self.calls.append(
                Call("resources/subscribe", str(uri), key, body, seq=ex.request.event.seq)
            )
        for it in ex.items:
            if it.src is Source.SERVER and it.type is MessageType.NOTIFICATION:
                self._change(it.msg)

    def _change(self, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        if (
            method == "notifications/subscriptions/acknowledged"
            or method == "notifications/cancelled"
        ):
            return
        params = request_params(msg)
        entry: dict[str, Any] = {"method": method}
        rest = without_meta(params)
        if isinstance(rest, dict) and rest:
            entry["params"] = rest
        self.changes.append(entry)

    def _collect_surface(self, method: str, result: Any) -> None:
        kind = LIST_FIELDS[method]
        items = result.get(kind) if isinstance(result, dict) else None
        if not isinstance(items, list):
            return
        table = self.surface[kind]
        if table is None:
            table = self.surface[kind] = {}
        for item in items:
            if isinstance(item, dict):
                ident = (
                    item.get("uriTemplate")
                    if kind == "resourceTemplates"
                    else item.get("uri" if kind == "resources" else "name")
                )
                table[str(ident)] = item
