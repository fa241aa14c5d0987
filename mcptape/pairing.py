"""Pairing: a cassette's events -> exchanges (a client request and all that belongs to it).

Pure. Works on stdio order alone (ids, progress tokens, subscription ids, and which
request was in flight) and uses HTTP hints when the recorder left them (`http.exchange`:
the HTTP request/response a message travelled in). Batches are exploded into their
messages. Legacy id spaces are per direction, so a server request `id: 1` and a client
request `id: 1` never collide. A server request outside any client request (server-filesystem's
`roots/list` right after `notifications/initialized`) is unsolicited, and pairs with the client's
answer wherever that falls (`Session.replies`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcptape.cassette.model import Event, Kind, Source
from mcptape.versions import META_PROTOCOL_VERSION, META_SUBSCRIPTION_ID
from mcptape.wire.jsonrpc import MessageType, classify, id_key, request_params


@dataclass(slots=True)
class Item:
    """One message inside an exchange: who sent it, what it is, and the event it came in."""

    src: Source
    msg: dict[str, Any]
    event: Event
    type: MessageType


_ITEM_MSG = Item.__dict__["msg"]


class LazyItem(Item):
    """An `Item` of a `LazyEvent` (`mcptape.cassette.lazy`): its `msg` is read from the event's line on
    first access. An index file makes them, with the pairing it keeps (`mcptape.replay.cache`).

    Until a message is assigned to it, its `msg` slot holds the message's place in its event's
    batch (-1: the event's message is not a batch): an object per message, as small as an `Item`.
    """

    __slots__ = ()

    @property
    def msg(self) -> dict[str, Any]:
        pos = _ITEM_MSG.__get__(self)
        if type(pos) is not int:  # assigned
            return pos  # type: ignore[no-any-return]
        whole: dict[str, Any] | list[dict[str, Any]] = self.event.msg
        return whole[pos] if isinstance(whole, list) else whole

    @msg.setter
    def msg(self, value: dict[str, Any]) -> None:
        _ITEM_MSG.__set__(self, value)

    @property
    def pos(self) -> int | None:
        """The message's place in its event's batch (-1: not a batch; None: a message was assigned)."""
        pos = _ITEM_MSG.__get__(self)
        return pos if type(pos) is int else None


class LazyProgress(LazyItem):
    """A `LazyItem` known to be a `notifications/progress` with a `progressToken` (an index file
    says so): a replay for a client that asked for no progress skips it without reading it."""

    __slots__ = ()


_new_item = LazyItem.__new__
_set_pos = _ITEM_MSG.__set__


def lazy_item(src: Source, ev: Event, typ: MessageType, pos: int, progress: bool = False) -> Item:
    """The `Item` of the message at `pos` in `ev`'s batch (-1: not a batch), of kind `typ` (a
    `LazyProgress` with `progress`), which reads it from `ev` when first asked."""
    out = _new_item(LazyProgress if progress else LazyItem)
    out.src, out.event, out.type = src, ev, typ
    _set_pos(out, pos)
    return out


def lazy_items(
    events: Sequence[Event], types: Iterable[MessageType], progress: Iterable[int] = ()
) -> list[Item]:
    """`lazy_item(ev.src, ev, typ, -1)` of each event of `events` and kind of `types`, in bulk;
    a `LazyProgress` for the `k`s of `progress`."""
    out: list[Item] = []
    add, new, set_pos = out.append, _new_item, _set_pos
    for ev, typ in zip(events, types, strict=True):
        item = new(LazyItem)
        item.src, item.event, item.type = ev.src, ev, typ  # type: ignore[assignment]
        set_pos(item, -1)
        add(item)
    for k in progress:
        out[k].__class__ = LazyProgress  # (the same slots)
    return out


@dataclass(slots=True)
class Exchange:
    """A client request with its response and everything that belongs to it, in wire order.

    A client notification is an exchange with `type == NOTIFICATION` and no response.
    `items` holds, between the request and the response, the server's notifications and
    requests for it and the client's answers to those requests.
    """

    index: int
    request: Item
    response: Item | None = None
    items: list[Item] = field(default_factory=list)
    session: str = "0"
    """Which client session it belongs to (a stdio process, a legacy handshake, an HTTP session)."""
    protocol_version: str | None = None
    retry_of: int | None = None
    """For a 2026-07-28 retry carrying `inputResponses`: the index of the exchange it continues."""
    http_exchange: Any = None

    @property
    def method(self) -> str:
        return str(self.request.msg.get("method", ""))

    @property
    def msg(self) -> dict[str, Any]:
        return self.request.msg

    @property
    def is_notification(self) -> bool:
        return self.request.type is MessageType.NOTIFICATION

    @property
    def result(self) -> Any:
        return self.response.msg.get("result") if self.response else None

    @property
    def error(self) -> Any:
        return self.response.msg.get("error") if self.response else None

    @property
    def name(self) -> str | None:
        """The tool or prompt name, or the resource URI, the request is about."""
        params = request_params(self.request.msg)
        value = params.get("name", params.get("uri"))
        return value if isinstance(value, str) else None


@dataclass(slots=True)
class Session:
    """All exchanges of a cassette, plus what the server sent that belongs to no request."""

    exchanges: list[Exchange] = field(default_factory=list)
    unsolicited: list[tuple[int, Item]] = field(default_factory=list)
    """(number of exchanges before it, item): server messages outside any request."""
    replies: list[tuple[Item, Item]] = field(default_factory=list)
    """(server request outside any client request, the client's answer to it), in answer order:
    server-filesystem asks `roots/list` right after the client's `notifications/initialized`,
    while no client request is in flight, and the client answers it wherever it falls."""
    orphans: list[Item] = field(default_factory=list)
    """Responses to no known request, and other messages that could not be placed."""
    others: list[Event] = field(default_factory=list)
    """Non-message events: raw lines, stderr, exits, HTTP metadata."""


ANSWERED = Item(Source.SERVER, {}, Event(0, 0.0, Kind.MESSAGE), MessageType.INVALID)
"""What an exchange a `PairingStream` answered holds as its request and response."""


def pair(events: list[Event]) -> Session:
    """Builds the session's exchanges from events in wire order."""
    return _Pairer().run(events)


class Watcher(Protocol):
    """What a `PairingStream` tells, as it pairs."""

    def opened(self, ex: Exchange) -> None:
        """A client request or notification: a new exchange (its `retry_of` is final, and its
        `protocol_version` but for an `initialize`, which takes the one its answer names)."""

    def added(self, ex: Exchange, item: Item) -> None:
        """A message that belongs to `ex` (which may have been answered already: a late progress
        notification); a stream keeps no `ex.items`."""

    def answered(self, ex: Exchange) -> None:
        """`ex.response` came (and `ex.protocol_version` with it, for an `initialize`). After
        this call the stream drops `ex.request` and `ex.response` (`ANSWERED` stands for both)."""

    def unsolicited(self, before: int, item: Item) -> None:
        """A server message outside any request, after `before` exchanges."""


class PairingStream:
    """`pair`, one message event at a time, for a reader that streams a cassette: it keeps what
    is in flight, not the exchanges. Each exchange, and each message as it is filed, goes to
    the watcher; an answered exchange keeps only its index, session and version (what a late
    message filed under it needs). Responses to nothing and the answers to unsolicited server
    requests are kept (`orphans`, `replies`), as in a `Session`. With `keep`, an answered
    exchange keeps its request and response (the watcher is told all the same): for a reader
    that keeps the exchanges itself. `make` makes each message's `Item` (as `Item` does) but
    for an invalid one's, which is an `Item` holding its message."""

    def __init__(
        self,
        watcher: Watcher,
        keep: bool = False,
        make: Callable[[Source, Any, Event, MessageType], Item] = Item,
    ) -> None:
        self._pairer = _Pairer(watcher, keep, make)
        self.orphans = self._pairer.s.orphans
        self.replies = self._pairer.s.replies

    def add(self, ev: Event) -> None:
        """Files the message (or batch) of `ev`, a message event with a source."""
        self._pairer.event(ev)

    def add_one(self, ev: Event, msg: Any) -> None:
        """`add` of `ev` whose message, not a batch, is `msg` (the caller has it in hand)."""
        self._pairer.one(ev, msg)


class _Pairer:
    def __init__(
        self,
        watch: Watcher | None = None,
        keep: bool = False,
        make: Callable[[Source, Any, Event, MessageType], Item] = Item,
    ) -> None:
        self.s = Session()
        self.watch = watch
        self.keep = keep
        """An answered exchange keeps its request and response (with a watcher)."""
        self.make = make
        self.count = 0
        """Exchanges so far."""
        self.inflight: dict[tuple[str, Any, Any], Exchange] = {}  # (session, id key) -> exchange
        self.server_pending: dict[tuple[str, Any, Any], Exchange | Item] = {}
        """A server request awaiting the client's answer -> the exchange it belongs to, or the
        request itself when it belongs to none (unsolicited)."""
        self.progress: dict[str, dict[Any, Exchange]] = {}
        """Session -> progress token (`_token`) -> the request it came with (kept to the end: late
        progress is filed under its request)."""
        self.by_http: dict[Any, Exchange] = {}
        self.session = "0"
        self.sessions_seen = 0
        self.version: dict[str, str] = {}
        self.input_required: dict[tuple[str, str, str | None], Exchange] = {}

    def run(self, events: list[Event]) -> Session:
        event, others = self.event, self.s.others
        for ev in events:
            if ev.kind is not Kind.MESSAGE or ev.src is None:
                others.append(ev)
            else:
                event(ev)
        return self.s

    def event(self, ev: Event) -> None:
        """Files the message (or each message of the batch) of `ev`, a message event with a source."""
        one = self.one
        if isinstance(ev.msg, list):  # a batch
            for m in ev.msg:
                one(ev, m)
        else:
            one(ev, ev.msg)

    def _attach(self, ex: Exchange, item: Item) -> None:
        if self.watch is None:
            ex.items.append(item)
        else:
            self.watch.added(ex, item)

    def _session_of(self, ev: Event) -> str:
        if ev.http:
            sid = ev.http.get("session")
            if sid is not None:
                return str(sid)
        return self.session

    def one(self, ev: Event, m: Any) -> None:
        """Files message `m` of `ev`."""
        typ = classify(m)
        if typ is MessageType.INVALID:
            self.s.orphans.append(Item(ev.src, m if isinstance(m, dict) else {"value": m}, ev, typ))  # type: ignore[arg-type]
            return
        item = self.make(ev.src, m, ev, typ)  # type: ignore[arg-type]
        if ev.src is Source.CLIENT:
            self.client(item, m)
        else:
            self.server(item, m)

    def client(self, item: Item, m: dict[str, Any]) -> None:
        ev = item.event
        method = m.get("method")
        if item.type is MessageType.REQUEST and method == "initialize" and not ev.http:
            self.sessions_seen += 1
            self.session = str(self.sessions_seen - 1)
        sess = self._session_of(ev)
        if item.type in (MessageType.REQUEST, MessageType.NOTIFICATION):
            ex = Exchange(self.count, item, session=sess)
            ex.http_exchange = ev.http.get("exchange") if ev.http else None
            params = request_params(m)
            meta = params.get("_meta")
            if not isinstance(meta, dict):
                meta = {}
            ver = meta.get(META_PROTOCOL_VERSION)
            ex.protocol_version = ver if isinstance(ver, str) else self.version.get(sess)
            if method == "initialize":
                ex.protocol_version = params.get("protocolVersion")
            self.count += 1
            if ex.http_exchange is not None:
                self.by_http[ex.http_exchange] = ex
            if item.type is MessageType.REQUEST:
                self.inflight[(sess, *id_key(m["id"]))] = ex
                token = meta.get("progressToken")
                if token is not None:
                    self.progress.setdefault(sess, {})[_token(token)] = ex
                if "inputResponses" in params or "requestState" in params:
                    self._link_retry(ex)
            if self.watch is None:  # (told once `retry_of` is known)
                self.s.exchanges.append(ex)
            else:
                self.watch.opened(ex)
            if item.type is not MessageType.REQUEST and method == "notifications/cancelled":
                rid = params.get("requestId")
                target = self.inflight.get((sess, *id_key(rid)))
                if target is not None:
                    self._attach(target, item)
            return
        # a client response to a server request
        owner = self.server_pending.pop((sess, *id_key(m.get("id"))), None)
        if isinstance(owner, Exchange):
            self._attach(owner, item)
        elif owner is not None:
            self.s.replies.append((owner, item))
        else:
            self.s.orphans.append(item)

    def server(self, item: Item, m: dict[str, Any]) -> None:
        ev = item.event
        sess = self._session_of(ev)
        if item.type in (MessageType.RESULT, MessageType.ERROR):
            ex = self.inflight.pop((sess, *id_key(m.get("id"))), None)
            if ex is None and ev.http and ev.http.get("exchange") is not None:
                ex = self._minted(ev.http["exchange"], m.get("id"), item.type is MessageType.ERROR)
            if ex is None:
                self.s.orphans.append(item)
                return
            ex.response = item
            result = m.get("result")  # ex.result, read from the message in hand
            if isinstance(result, dict):
                if ex.request.msg.get("method") == "initialize":
                    ver = result.get("protocolVersion")
                    if isinstance(ver, str):
                        self.version[sess] = ver
                        ex.protocol_version = ver
                if result.get("resultType") == "input_required":
                    self.input_required[(sess, ex.method, ex.name)] = ex
            if self.watch is not None:
                self.watch.answered(ex)
                if not self.keep:  # (what the pairer's maps still hold it for needs neither)
                    ex.request = ex.response = ANSWERED
            return
        owner = self._owner(item, m, sess)
        if item.type is MessageType.REQUEST:
            self.server_pending[(sess, *id_key(m["id"]))] = owner if owner is not None else item
        if owner is not None:
            self._attach(owner, item)
        elif self.watch is None:
            self.s.unsolicited.append((self.count, item))
        else:
            self.watch.unsolicited(self.count, item)

    def _owner(self, item: Item, m: dict[str, Any], sess: str) -> Exchange | None:
        ev = item.event
        params = request_params(m)
        if ev.http and ev.http.get("exchange") is not None:
            ex = self.by_http.get(ev.http["exchange"])
            if ex is not None:
                return ex
        meta = params.get("_meta")
        sub = meta.get(META_SUBSCRIPTION_ID) if isinstance(meta, dict) else None
        if sub is not None:
            return self.inflight.get((sess, *id_key(sub)))
        if m.get("method") == "notifications/progress" and "progressToken" in params:
            return self.progress.get(sess, {}).get(_token(params["progressToken"]))
        if m.get("method") == "notifications/cancelled":
            return self.inflight.get((sess, *id_key(params.get("requestId"))))
        if ev.http and not ev.http.get("legacy"):
            return None  # on HTTP, a message outside a request's stream is unsolicited (GET stream)
        live = None  # the latest request of this session in flight (a listen stream aside)
        for key, ex in self.inflight.items():
            if key[0] == sess and ex.request.msg.get("method") != "subscriptions/listen":
                live = ex
        return live

    def _minted(self, http_exchange: Any, rid: Any, is_error: bool = False) -> Exchange | None:
        """The request answered in HTTP exchange `http_exchange` when its response carries a session
        id the request did not (the response to `initialize` mints the Mcp-Session-Id), or when it is
        an error with a null id (servers that reject a request before reading its id answer so, on
        the request's own HTTP response)."""
        ex = self.by_http.get(http_exchange)
        if ex is None or ex.response is not None or ex.request.type is not MessageType.REQUEST:
            return None
        if rid is None and is_error:
            rid = ex.request.msg.get("id")
        if self.inflight.get((ex.session, *id_key(rid))) is not ex:
            return None
        del self.inflight[(ex.session, *id_key(rid))]
        return ex

    def _link_retry(self, ex: Exchange) -> None:
        """Links a request that carries `inputResponses` or `requestState` to the chain it retries."""
        first = self.input_required.get((ex.session, ex.method, ex.name))
        if first is not None:
            ex.retry_of = first.retry_of if first.retry_of is not None else first.index


def _token(token: Any) -> Any:
    """A progress token as a key that keeps `1` and `"1"` apart, as `id_key` does: a string is
    its own (a progress map holds one for each request that asked for progress)."""
    if type(token) is str:
        return token
    key = id_key(token)
    return key[1] if key[0] == "str" else key


_PARAMS_READ = ("name", "uri", "protocolVersion", "requestId", "progressToken", "_meta")
"""The request params pairing reads (besides whether a retry's `inputResponses` or `requestState`
are there)."""
_HTTP_READ = ("session", "exchange", "legacy", "phase", "status")


def skeleton(msg: Any) -> Any:
    """What `pair` reads of a message, and only that: `pair` of skeletons builds the same
    exchanges as `pair` of the messages, holding a fraction of their memory (the commands that
    stream a big cassette keep skeletons, and parse a line again where they need its content).
    A result keeps its type and, when an object, its `protocolVersion` and `resultType`."""
    if isinstance(msg, list):
        return [skeleton(m) for m in msg]
    if not isinstance(msg, dict):
        return msg
    out = {k: msg[k] for k in ("id", "method", "error") if k in msg}
    method = out.get("method")
    if type(method) is str and len(method) <= 64:  # (a short name: an interned string stays)
        out["method"] = sys.intern(method)  # one string for every message of a method
    params = msg.get("params")
    if isinstance(params, dict):
        kept = {k: params[k] for k in _PARAMS_READ if k in params}
        kept.update((k, None) for k in ("inputResponses", "requestState") if k in params)
        out["params"] = kept
    elif "params" in msg:
        out["params"] = None
    if "result" in msg:
        result = msg["result"]
        if isinstance(result, dict):
            out["result"] = {k: result[k] for k in ("protocolVersion", "resultType") if k in result}
        else:
            out["result"] = [] if isinstance(result, list) else result
    return out


def skeleton_event(ev: Event) -> Event:
    """The event with only what `pair` and the checks of its pairing read: the message's
    `skeleton`, the HTTP hints; no text, no info."""
    http = {k: ev.http[k] for k in _HTTP_READ if k in ev.http} if ev.http else ev.http
    return Event(ev.seq, ev.t, ev.kind, ev.src, skeleton(ev.msg), None, None, None, http)
