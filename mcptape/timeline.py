"""The timeline of a cassette, for `mcptape show`: one row per event, requests paired.

Pure: a `Cassette` in, rows and renderings (table, mermaid, JSON-ready dicts) out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from mcptape.cassette import Cassette
from mcptape.model import Event, Kind, Source
from mcptape.pairing import Session
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


def short(value: Any, width: int = SUMMARY_WIDTH) -> str:
    """A one-line rendering of a value, cut to `width` characters."""
    text = value if isinstance(value, str) else orjson.dumps(value).decode()
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _summary_request(m: dict[str, Any]) -> str:
    p = request_params(m)
    method = m.get("method")
    if method == "tools/call":
        return f"{p.get('name')} {short(p.get('arguments', {}), 40)}"
    if method == "prompts/get":
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


def _summary_result(result: Any) -> str:
    if not isinstance(result, dict):
        return short(result)
    if result.get("resultType") == "input_required":
        return f"input_required: {', '.join(result.get('inputRequests', {}) or {})}"
    for key in ("tools", "prompts", "resources", "resourceTemplates"):
        if isinstance(result.get(key), list):
            names = [x.get("name") or x.get("uri") for x in result[key] if isinstance(x, dict)]
            return short(f"{len(names)} {key}: {', '.join(map(str, names))}")
    if "protocolVersion" in result or "supportedVersions" in result:
        info = result.get("serverInfo") or (result.get("_meta") or {}).get("io.modelcontextprotocol/serverInfo") or {}
        ver = result.get("protocolVersion") or result.get("supportedVersions")
        return f"{info.get('name')} {info.get('version')} speaks {short(ver, 30)}"
    if isinstance(result.get("content"), list):
        texts = [c.get("text", c.get("type")) for c in result["content"] if isinstance(c, dict)]
        prefix = "isError " if result.get("isError") else ""
        return prefix + short(" ".join(map(str, texts)), 50)
    if isinstance(result.get("contents"), list):
        texts = [c.get("text", c.get("uri")) for c in result["contents"] if isinstance(c, dict)]
        return short(" ".join(map(str, texts)))
    if isinstance(result.get("messages"), list):
        return f"{len(result['messages'])} messages"
    rest = {k: v for k, v in result.items() if k not in ("_meta",)}
    return short(rest) if rest else "{}"


def rows(cassette: Cassette, session: Session) -> list[Row]:
    """One row per event, with requests and responses cross-referenced (`session`: the cassette paired)."""
    partner: dict[int, tuple[int, float]] = {}
    for ex in session.exchanges:
        if ex.response is not None:
            a, b = ex.request.event, ex.response.event
            partner[id(ex.response.msg)] = (a.seq, (b.t - a.t) * 1000)
            partner[id(ex.request.msg)] = (b.seq, (b.t - a.t) * 1000)
    out: list[Row] = []
    for ev in cassette.events:
        out.extend(_event_rows(ev, partner))
    return out


def _direction(ev: Event) -> str:
    if ev.src is Source.CLIENT:
        return "client->server"
    if ev.src is Source.SERVER:
        return "server->client"
    return ""


def _event_rows(ev: Event, partner: dict[int, tuple[int, float]]) -> list[Row]:
    t = ev.t * 1000
    d = _direction(ev)
    if ev.kind is Kind.MESSAGE:
        msgs = ev.msg if isinstance(ev.msg, list) else [ev.msg]
        out = []
        for m in msgs:
            typ = classify(m)
            pr = partner.get(id(m))
            if typ in (MessageType.REQUEST, MessageType.NOTIFICATION):
                what, summary = str(m["method"]), _summary_request(m)
            elif typ is MessageType.RESULT:
                what, summary = "result", _summary_result(m.get("result"))
            elif typ is MessageType.ERROR:
                err = m.get("error") or {}
                what, summary = f"error {err.get('code')}", short(err.get("message", ""))
            else:
                what, summary = "invalid", short(m)
            if isinstance(ev.msg, list):
                what = f"[batch] {what}"
            latency = pr[1] if pr and typ in (MessageType.RESULT, MessageType.ERROR) else None
            out.append(Row(ev.seq, t, d, what, m.get("id") if isinstance(m, dict) else None, summary, pr[0] if pr else None, latency))
        return out
    if ev.kind is Kind.RAW:
        body = ev.text if ev.text is not None else f"<{len(ev.raw_bytes or b'')} bytes, not UTF-8>"
        note = f" ({ev.size} bytes, oversize)" if ev.size else ""
        return [Row(ev.seq, t, d, "not JSON", None, short(body) + note)]
    if ev.kind is Kind.STDERR:
        return [Row(ev.seq, t, "server stderr", "stderr", None, short(ev.text if ev.text is not None else "<binary>"))]
    if ev.kind is Kind.EXIT:
        info = ev.info or {}
        return [Row(ev.seq, t, "", "exit", None, f"code {info.get('code')}" + (f" ({info['signal']})" if info.get("signal") else ""))]
    if ev.kind is Kind.EOF:
        return [Row(ev.seq, t, d, "eof", None, f"{ev.src} closed its stream")]
    if ev.kind is Kind.HTTP:
        h = ev.http or {}
        bits = [str(h.get(k)) for k in ("method", "path", "status") if h.get(k) is not None]
        return [Row(ev.seq, t, d, "http", None, short(" ".join(bits) + (f" {ev.info}" if ev.info else "")))]
    return [Row(ev.seq, t, "", str(ev.kind), None, short(ev.info) if ev.info else "")]


def protocol_versions(session: Session) -> list[str]:
    """The protocol versions the session used, in order of first use."""
    seen: list[str] = []
    for ex in session.exchanges:
        if ex.protocol_version and ex.protocol_version not in seen:
            seen.append(ex.protocol_version)
    return seen


def mermaid(timeline: list[Row]) -> str:
    """A Mermaid sequence diagram of the session's rows (renders on GitHub)."""
    lines = ["sequenceDiagram", "    participant C as Client", "    participant S as Server"]
    for r in timeline:
        if r.direction not in ("client->server", "server->client"):
            if r.what in ("exit", "stderr"):
                lines.append(f"    Note over S: {_mm(r.what + ' ' + r.summary)}")
            continue
        arrow = "C->>S" if r.direction == "client->server" else "S-->>C"
        if r.what.startswith(("result", "error")) or r.what.startswith("[batch] result"):
            arrow = "S-->>C" if r.direction == "server->client" else "C-->>S"
        label = r.what + (f" #{r.id}" if r.id is not None else "") + (f": {r.summary}" if r.summary else "")
        lines.append(f"    {arrow}: {_mm(label)}")
    return "\n".join(lines) + "\n"


def _mm(text: str) -> str:
    """Escapes what Mermaid would read as syntax in a message label."""
    return text.replace(";", ",").replace("#", "＃").replace(":", "∶").replace("\n", " ")
