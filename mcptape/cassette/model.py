"""The values that flow through mcptape: cassette header, events, and exchanges.

Dataclasses, frozen but for `Event` (see there), no I/O. An `Event` is one line of a cassette: a message as it was on
the wire (or its raw bytes when it was not JSON), a stderr line, a process exit, an end of
stream, or HTTP metadata. Exchanges (a request with all that belongs to it) are built from
events by `mcptape.pairing`.

What a cassette line may hold is the JSON Schema's to say (`mcptape/schema/cassette-v1.schema.json`,
the source of truth): the enums here (`Kind`, `Source`, `Transport`) and `FORMAT_VERSION` follow
it, and `tests/test_cassette_codec.py` holds them equal to it.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

FORMAT_VERSION = 1
"""The cassette format this mcptape writes (and the newest it reads)."""

HEADER_MARKER = "mcptape_cassette"
"""The header line's first key; its value is the format version."""


class Source(StrEnum):
    """Who sent what an event carries."""

    CLIENT = "client"
    SERVER = "server"


class Kind(StrEnum):
    """What one cassette event is."""

    MESSAGE = "message"
    """A JSON payload: a JSON-RPC message, or a batch array, exactly as parsed from the wire."""
    RAW = "raw"
    """A payload that was not valid JSON, kept verbatim (`text`, or `b64` when not UTF-8)."""
    STDERR = "stderr"
    """A line the server wrote to stderr (stdio)."""
    EXIT = "exit"
    """The server process ended (`info`: code, signal)."""
    EOF = "eof"
    """One side closed its stream (`from` says which)."""
    HTTP = "http"
    """HTTP metadata with no JSON-RPC payload: a request or response head, a stream closed, an error."""
    END = "end"
    """The recorder finished cleanly; a cassette without it was cut short (the recorder was killed)."""


class Transport(StrEnum):
    """How the session was carried."""

    STDIO = "stdio"
    STREAMABLE_HTTP = "streamable-http"
    SSE = "sse"
    """The legacy HTTP+SSE transport of 2024-11-05."""


@dataclass(frozen=True, slots=True)
class Header:
    """The first line of a cassette."""

    transport: Transport
    target: dict[str, Any]
    """`{"command": [...]}` for stdio, `{"url": "..."}` for HTTP."""
    recorded_at: str
    """ISO 8601 UTC time the recording started."""
    mcptape_version: str
    redaction: dict[str, Any] = field(default_factory=dict)
    """The redaction rules applied before writing: `enabled`, `keys`, `patterns`."""
    format: int = FORMAT_VERSION
    extra: dict[str, Any] = field(default_factory=dict)
    """Fields a newer minor writer added; kept so they survive a rewrite."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            HEADER_MARKER: self.format,
            "mcptape_version": self.mcptape_version,
            "transport": str(self.transport),
            "target": self.target,
            "recorded_at": self.recorded_at,
            "redaction": self.redaction,
        }
        out.update(self.extra)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Header:
        known = {
            HEADER_MARKER,
            "mcptape_version",
            "transport",
            "target",
            "recorded_at",
            "redaction",
        }
        return cls(
            format=obj[HEADER_MARKER],
            mcptape_version=str(obj.get("mcptape_version", "")),
            transport=Transport(obj.get("transport", "stdio")),
            target=dict(obj.get("target") or {}),
            recorded_at=str(obj.get("recorded_at", "")),
            redaction=dict(obj.get("redaction") or {}),
            extra={k: v for k, v in obj.items() if k not in known},
        )


@dataclass(slots=True, unsafe_hash=True)
class Event:
    """One cassette line after the header, in wire order.

    A slots dataclass that is not frozen: a cassette has one per line, and a frozen one's
    `__init__` (every field set through `object.__setattr__`) was a third of the load time.
    Nor a named tuple: building one is as cheap, but Python 3.13 reads a named tuple's fields
    through a descriptor call, slower than a slot, and every command reads them again
    and again. Treat it as a value
    all the same: `event._replace(seq=2)` for another.
    """

    seq: int
    """1-based position in the cassette."""
    t: float
    """Seconds since the recording started."""
    kind: Kind
    src: Source | None = None
    msg: Any = None
    """The parsed JSON payload (MESSAGE)."""
    text: str | None = None
    """Text of a RAW payload or STDERR line, when it was valid UTF-8."""
    b64: str | None = None
    """Base64 of a RAW payload or STDERR line that was not valid UTF-8."""
    size: int | None = None
    """Byte size of an oversize payload that was too long to keep (only its head is kept)."""
    http: dict[str, Any] | None = None
    """HTTP metadata: method, path, status, headers, content_type, exchange, stream, sse{id,event,retry}."""
    info: dict[str, Any] | None = None
    """Other metadata: exit code and signal, reasons."""
    redacted: tuple[str, ...] = ()
    """JSON pointers (into `msg`, or `http`) whose values were redacted before writing."""

    def _replace(self, **changes: Any) -> Event:
        """A copy with `changes` (the named tuple's name for it, which callers kept)."""
        return replace(self, **changes)

    @property
    def raw_bytes(self) -> bytes | None:
        """The verbatim bytes of a RAW or STDERR event."""
        if self.b64 is not None:
            return base64.b64decode(self.b64)
        if self.text is not None:
            return self.text.encode()
        return None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"seq": self.seq, "t": round(self.t, 6), "kind": str(self.kind)}
        if self.src is not None:
            out["from"] = str(self.src)
        if self.kind is Kind.MESSAGE:
            out["msg"] = self.msg
        if self.text is not None:
            out["text"] = self.text
        if self.b64 is not None:
            out["b64"] = self.b64
        if self.size is not None:
            out["size"] = self.size
        if self.http is not None:
            out["http"] = self.http
        if self.info is not None:
            out["info"] = self.info
        if self.redacted:
            out["redacted"] = list(self.redacted)
        return out

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Event:
        """An event from its cassette line (raises KeyError/ValueError/TypeError when malformed)."""
        get = obj.get
        src = get("from")
        redacted = get("redacted")
        return cls(
            int(obj["seq"]),
            float(get("t", 0.0)),
            _KINDS[obj["kind"]],
            _SOURCES[src] if src is not None else None,
            get("msg"),
            get("text"),
            get("b64"),
            get("size"),
            get("http"),
            get("info"),
            tuple(redacted) if redacted else (),
        )


_KINDS: dict[str, Kind] = {k.value: k for k in Kind}
_SOURCES: dict[str, Source] = {s.value: s for s in Source}


def payload_event(seq: int, t: float, src: Source, kind: Kind, data: bytes) -> Event:
    """A RAW or STDERR event holding `data` verbatim: text when UTF-8, else base64."""
    try:
        return Event(seq, t, kind, src, text=data.decode("utf-8"))
    except UnicodeDecodeError:
        return Event(seq, t, kind, src, b64=base64.b64encode(data).decode("ascii"))
