"""What the HTML page of one cassette shows, as JSON-ready data: rows, links, sessions, the server surface.

Pure: a cassette and its pairing in, plain dicts out; `page` embeds them in the template.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcptape.cassette import Cassette
from mcptape.cassette.model import Event, Kind
from mcptape.pairing import Exchange, Session

from . import timeline

LIST_KEYS = {"tools/list": "tools", "resources/list": "resources", "resources/templates/list": "resourceTemplates",
             "prompts/list": "prompts"}  # fmt: skip
"""Listing methods and the member of their result that holds the items."""


@dataclass(slots=True)
class _Links:
    """Per message (by `id()`): the exchange it belongs to."""

    exchange: dict[int, Exchange] = field(default_factory=dict)

    @classmethod
    def of(cls, session: Session) -> _Links:
        links = cls()
        for ex in session.exchanges:
            for item in (ex.request, *ex.items, *([ex.response] if ex.response else [])):
                links.exchange[id(item.msg)] = ex
        return links


def _payload(ev: Event, index: int) -> Any:
    if ev.kind is Kind.MESSAGE:
        return ev.msg[index] if isinstance(ev.msg, list) else ev.msg
    if ev.text is not None:
        return ev.text
    return ev.info if ev.info else None


def surface(session: Session) -> dict[str, Any]:
    """The server as its answers describe it: info, protocol version, capabilities, tools, resources, prompts."""
    out: dict[str, Any] = {"tools": [], "resources": [], "resourceTemplates": [], "prompts": []}
    seen: dict[str, set[str]] = {k: set() for k in out}
    for ex in session.exchanges:
        result = ex.result
        if not isinstance(result, dict):
            continue
        if ex.method in ("initialize", "server/discover") and "server" not in out:
            meta = result.get("_meta") or {}
            out["server"] = (
                result.get("serverInfo") or meta.get("io.modelcontextprotocol/serverInfo") or {}
            )
            out["protocolVersion"] = result.get("protocolVersion") or result.get(
                "supportedVersions"
            )
            out["capabilities"] = result.get("capabilities") or {}
            if result.get("instructions"):
                out["instructions"] = result["instructions"]
        key = LIST_KEYS.get(ex.method)
        if key and isinstance(result.get(key), list):
            for item in result[key]:
                name = (
                    str(item.get("name") or item.get("uri") or item.get("uriTemplate"))
                    if isinstance(item, dict)
                    else ""
                )
                if name not in seen[key]:
                    seen[key].add(name)
                    out[key].append(item)
    return out


def _row_data(r: timeline.Row, ev: Event, index: int, links: _Links) -> dict[str, Any]:
    payload = _payload(ev, index)
    ex = links.exchange.get(id(payload)) if ev.kind is Kind.MESSAGE else None
    row: dict[str, Any] = {
        "seq": r.seq, "t": round(r.t_ms, 3), "dir": r.direction, "what": r.what, "id": r.id,
        "summary": r.summary, "session": r.session, "kind": str(ev.kind), "msg": payload,
    }  # fmt: skip
    if r.pair is not None:
        row["pair"] = r.pair
    if r.latency_ms is not None:
        row["latency"] = round(r.latency_ms, 3)
    if ev.http:
        row["http"] = ev.http
    if ev.redacted:
        row["redacted"] = list(ev.redacted)
    if ex is not None:
        row["method"] = ex.method
        own = payload.get("method") if isinstance(payload, dict) else None
        if isinstance(own, str) and own != ex.method:
            row["own"] = own  # a notification or server request sent while `method` ran
        if ex.method in ("tools/call", "prompts/get") or ex.method.startswith("resources/"):
            row["tool"] = ex.name
        row["exchange"] = ex.request.event.seq
        if ex.request.msg is payload:
            row["related"] = [it.event.seq for it in ex.items]
    elif r.what not in ("http", "stderr", "exit", "eof", "end"):
        row["method"] = r.what
    return row


def page_data(cassette: Cassette, session: Session, name: str) -> dict[str, Any]:
    """Everything the session page needs, JSON-ready."""
    rows = timeline.rows(cassette, session)
    by_seq = {ev.seq: ev for ev in cassette.events}
    links = _Links.of(session)
    sessions = timeline.event_sessions(cassette, session)
    ids: list[str] = []
    for ev in cassette.events:
        if sessions[ev.seq] not in ids:
            ids.append(sessions[ev.seq])
    out_rows: list[dict[str, Any]] = []
    batch_index: dict[int, int] = {}
    for r in rows:
        i = batch_index.get(r.seq, 0)
        batch_index[r.seq] = i + 1
        out_rows.append(_row_data(r, by_seq[r.seq], i, links))
    h = cassette.header
    return {
        "page": "session",
        "name": name,
        "header": h.to_json(),
        "target": " ".join(h.target.get("command", [])) or h.target.get("url", ""),
        "versions": timeline.protocol_versions(session),
        "warnings": list(cassette.warnings),
        "sessions": [{"n": n, "id": sid} for n, sid in enumerate(ids, 1)],
        "rows": out_rows,
        "surface": surface(session),
        "stderr": [_stderr(ev) for ev in cassette.events if ev.kind is Kind.STDERR],
    }


def _stderr(ev: Event) -> dict[str, Any]:
    return {
        "seq": ev.seq,
        "t": round(ev.t * 1000, 3),
        "text": ev.text if ev.text is not None else "<binary>",
    }
