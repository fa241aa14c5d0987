"""The timeline of a cassette, for `mcptape show`: one row per event, requests paired.

Pure: a `Cassette` in, rows out (the table, the JSON rows, the Mermaid diagram and the HTML
page are drawn from them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from mcptape.cassette import Cassette
from mcptape.cassette.model import Event, Kind, Source
from mcptape.pairing import Session
from mcptape.skeletons import NO_SEQ, NONE, Outline
from mcptape.wire.jsonrpc import MessageType, classify, request_params

SUMMARY_WIDTH = 60


@dataclass(frozen=True, slots=True)
class Row:
    seq: int
    t_ms: float
    direction: str
    """"client->server", "server->client", or "" for process events."""
    what: str
    id: Any
    summary: str
    pair: int | None = None
    """For a response: the seq of its request; for a request: the seq of its response."""
    latency_ms: float | None = None
    session: int = 1
    """Which client session (1, 2, ... in order of appearance) the row belongs to."""

    @property
    def transport_only(self) -> bool:
        """An HTTP request or response that carried no JSON-RPC message (a 202, a GET stream, an end)."""
        return self.what == "http"


def short(value: Any, width: int = SUMMARY_WIDTH) -> str:
    """A one-line rendering of a value, cut to `width` characters."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _summary_request(m: dict[str, Any]) -> str:
    p = request_params(m)
    method = m.get("method")
    if method in ("tools/call", "prompts/get"):
        return f"{p.get('name')} {short(p.get('arguments', {}), 40)}"
    if method in ("resources/read", "resources/subscribe", "resources/unsubscribe"):
        return str(p.get("uri"))
    if method == "initialize":
        info = p.get("clientInfo") or {}
        return f"{info.get('name')} {info.get('version')} asks {p.get('protocolVersion')}"
    if method == "notifications/progress":
        return f"{p.get('progress')}/{p.get('total')} {p.get('message') or ''}".strip()
    if method == "notifications/message":
        return f"[{p.get('level')}] {short(p.get('data'), 50)}"
    rest = {k: v for k, v in p.items() if k != "_meta"}
    return short(rest) if rest else ""


def _input_required(result: dict[str, Any]) -> str | None:
    if result.get("resultType") != "input_required":
        return None
    return f"input_required: {', '.join(result.get('inputRequests', {}) or {})}"


def _listing(result: dict[str, Any]) -> str | None:
    for key in ("tools", "prompts", "resources", "resourceTemplates"):
        if isinstance(result.get(key), list):
            names = [x.get("name") or x.get("uri") for x in result[key] if isinstance(x, dict)]
            return short(f"{len(names)} {key}: {', '.join(map(str, names))}")
    return None


def _handshake(result: dict[str, Any]) -> str | None:
    if "protocolVersion" not in result and "supportedVersions" not in result:
        return None
    meta = result.get("_meta") or {}
    info = result.get("serverInfo") or meta.get("io.modelcontextprotocol/serverInfo") or {}
    ver = result.get("protocolVersion") or result.get("supportedVersions")
    return f"{info.get('name')} {info.get('version')} speaks {short(ver, 30)}"


def _content(result: dict[str, Any]) -> str | None:
    if not isinstance(result.get("content"), list):
        return None
    texts = [c.get("text", c.get("type")) for c in result["content"] if isinstance(c, dict)]
    prefix = "isError " if result.get("isError") else ""
    return prefix + short(" ".join(map(str, texts)), 50)


def _contents(result: dict[str, Any]) -> str | None:
    if not isinstance(result.get("contents"), list):
        return None
    texts = [c.get("text", c.get("uri")) for c in result["contents"] if isinstance(c, dict)]
    return short(" ".join(map(str, texts)))


def _messages(result: dict[str, Any]) -> str | None:
    return (
        f"{len(result['messages'])} messages" if isinstance(result.get("messages"), list) else None
    )


_RESULT_SUMMARIES: tuple[Callable[[dict[str, Any]], str | None], ...] = (
    _input_required, _listing, _handshake, _content, _contents, _messages,
)  # fmt: skip
"""Tried in order; the first that recognises the result's shape summarises it."""


def _summary_result(result: Any) -> str:
    if not isinstance(result, dict):
        return short(result)
    for summarize in _RESULT_SUMMARIES:
        text = summarize(result)
        if text is not None:
            return text
    rest = {k: v for k, v in result.items() if k != "_meta"}
    return short(rest) if rest else "{}"


def event_sessions(cassette: Cassette, session: Session) -> dict[int, str]:
    """Event seq -> the client session it belongs to (events outside any exchange: the last one seen)."""
    of: dict[int, str] = {}
    for ex in session.exchanges:
        sid = ex.session
        answer = ex.response.event.http if ex.response else None
        if answer and answer.get("session") is not None:
            sid = str(answer["session"])  # an HTTP initialize: the session id comes with its answer
        for item in (ex.request, *ex.items, *([ex.response] if ex.response else [])):
            of.setdefault(item.event.seq, sid)
    current = next(iter(of.values()), "0")
    for ev in cassette.events:
        header = ev.http.get("session") if ev.http else None
        current = of.get(ev.seq) or (str(header) if header is not None else current)
        of[ev.seq] = current
    return of


def rows(cassette: Cassette, session: Session) -> list[Row]:
    """One row per event, with requests and responses cross-referenced (`session`: the cassette paired)."""
    return list(stream_rows(cassette, session, cassette.events))


def stream_rows(cassette: Cassette, session: Session, events: Iterable[Event]) -> Iterator[Row]:
    """`rows`, drawn from `events` as they come (the cassette's events, in the same order)."""
    partner: dict[int, tuple[int, float]] = {}
    for ex in session.exchanges:
        if ex.response is not None:
            a, b = ex.request.event, ex.response.event
            partner[id(ex.response.msg)] = (a.seq, (b.t - a.t) * 1000)
            partner[id(ex.request.msg)] = (b.seq, (b.t - a.t) * 1000)
    at: dict[tuple[int, int], tuple[int, float]] = {}
    """(position of the event, of the message in its batch) -> its partner's seq and the latency."""
    for pos, ev in enumerate(cassette.events):
        if ev.kind is Kind.MESSAGE:
            for i, m in enumerate(ev.msg if isinstance(ev.msg, list) else [ev.msg]):
                found = partner.get(id(m))
                if found is not None:
                    at[pos, i] = found
    del partner
    sessions = event_sessions(cassette, session)

    def partner_at(pos: int) -> Partner:
        return lambda i: at.get((pos, i))

    return _numbered(events, partner_at, lambda pos, ev: sessions[ev.seq])


def outline_rows(outline: Outline, events: Iterable[Event]) -> Iterator[Row]:
    """`stream_rows` with what pairing found held in an `Outline` (`mcptape.skeletons`): the
    cassette's events are drawn as they come, and only the outline is in memory."""
    first, sessions, partner, latency = (
        outline.first,
        outline.sessions,
        outline.partner,
        outline.latency_ms,
    )
    apart = outline.partner_apart
    current = sessions[0] if sessions else "0"

    def partner_at(pos: int) -> Partner:
        seq = partner[pos]
        if seq != NO_SEQ:
            found = (seq, latency[pos])
            return lambda i: found
        return lambda i: apart.get((pos, i))

    def session_at(pos: int, ev: Event) -> str:
        nonlocal current
        ex = first[pos]
        header = ev.http.get("session") if ev.http else None
        current = (sessions[ex] if ex != NONE else None) or (
            str(header) if header is not None else current
        )
        return current

    return _numbered(events, partner_at, session_at)


def _numbered(
    events: Iterable[Event],
    partner_at: Callable[[int], Partner],
    session_at: Callable[[int, Event], str],
) -> Iterator[Row]:
    """The rows of `events`, each event's client session numbered 1, 2, ... in order of appearance."""
    number: dict[str, int] = {}
    for pos, ev in enumerate(events):
        n = number.setdefault(session_at(pos, ev), len(number) + 1)
        yield from _event_rows(ev, partner_at(pos), n)


def _direction(ev: Event) -> str:
    if ev.src is Source.CLIENT:
        return "client->server"
    if ev.src is Source.SERVER:
        return "server->client"
    return ""


def _what_and_summary(m: Any, typ: MessageType) -> tuple[str, str]:
    if typ in (MessageType.REQUEST, MessageType.NOTIFICATION):
        return str(m["method"]), _summary_request(m)
    if typ is MessageType.RESULT:
        return "result", _summary_result(m.get("result"))
    if typ is MessageType.ERROR:
        err = m.get("error") or {}
        return f"error {err.get('code')}", short(err.get("message", ""))
    return "invalid", short(m)


Partner = Callable[[int], tuple[int, float] | None]
"""The partner (seq, latency in ms) of the event's message at a position in its batch, if any."""


def _message_rows(ev: Event, partner: Partner, session: int) -> list[Row]:
    batch = isinstance(ev.msg, list)
    out = []
    for i, m in enumerate(ev.msg if batch else [ev.msg]):
        typ = classify(m)
        pr = partner(i)
        what, summary = _what_and_summary(m, typ)
        latency = pr[1] if pr and typ in (MessageType.RESULT, MessageType.ERROR) else None
        rid = m.get("id") if isinstance(m, dict) else None
        out.append(Row(ev.seq, ev.t * 1000, _direction(ev), f"[batch] {what}" if batch else what, rid, summary,
                       pr[0] if pr else None, latency, session))  # fmt: skip
    return out


def _raw_row(ev: Event, session: int) -> Row:
    body = ev.text if ev.text is not None else f"<{len(ev.raw_bytes or b'')} bytes, not UTF-8>"
    note = f" ({ev.size} bytes, oversize)" if ev.size else ""
    return Row(
        ev.seq, ev.t * 1000, _direction(ev), "not JSON", None, short(body) + note, session=session
    )


def _stderr_row(ev: Event, session: int) -> Row:
    text = short(ev.text if ev.text is not None else "<binary>")
    return Row(ev.seq, ev.t * 1000, "server stderr", "stderr", None, text, session=session)


def _exit_row(ev: Event, session: int) -> Row:
    info = ev.info or {}
    text = f"code {info.get('code')}" + (f" ({info['signal']})" if info.get("signal") else "")
    return Row(ev.seq, ev.t * 1000, "", "exit", None, text, session=session)


def _eof_row(ev: Event, session: int) -> Row:
    return Row(
        ev.seq,
        ev.t * 1000,
        _direction(ev),
        "eof",
        None,
        f"{ev.src} closed its stream",
        session=session,
    )


def _http_row(ev: Event, session: int) -> Row:
    h = ev.http or {}
    bits = [str(h.get(k)) for k in ("method", "path", "status") if h.get(k) is not None]
    text = short(" ".join(bits) + (f" {ev.info}" if ev.info else ""))
    return Row(ev.seq, ev.t * 1000, _direction(ev), "http", None, text, session=session)


_ROW_OF: dict[Kind, Callable[[Event, int], Row]] = {
    Kind.RAW: _raw_row, Kind.STDERR: _stderr_row, Kind.EXIT: _exit_row, Kind.EOF: _eof_row, Kind.HTTP: _http_row,
}  # fmt: skip


def _event_rows(ev: Event, partner: Partner, session: int = 1) -> list[Row]:
    if ev.kind is Kind.MESSAGE:
        return _message_rows(ev, partner, session)
    make = _ROW_OF.get(ev.kind)
    if make is not None:
        return [make(ev, session)]
    return [
        Row(
            ev.seq,
            ev.t * 1000,
            "",
            str(ev.kind),
            None,
            short(ev.info) if ev.info else "",
            session=session,
        )
    ]


def protocol_versions(session: Session) -> list[str]:
    """The protocol versions the session used, in order of first use."""
    return first_uses(ex.protocol_version for ex in session.exchanges)


def first_uses(versions: Iterable[Any]) -> list[str]:
    """The protocol versions of exchanges in order (None for one without), each once, in order
    of first use (`mcptape.skeletons.Outline.versions`, or a session's)."""
    seen: list[str] = []
    for ver in versions:
        if ver and ver not in seen:
            seen.append(ver)
    return seen
