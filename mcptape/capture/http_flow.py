"""The sans-IO core of HTTP capture: what one HTTP request/response ("flow") records.

Both HTTP capture shells drive it: the live mitmproxy addon (`mcptape.capture.mitm_addon`)
as mitmproxy's hooks fire, and `mcptape import` (`mcptape.capture.importer`) from the flows
of a capture file, in the order the proxy saw them. No sockets, no mitmproxy, no files
here: a shell hands over heads, bodies and stream chunks as plain values, and `HttpFlow`
keeps the flow's state (exchange number, session, legacy HTTP+SSE, event stream, 2026
cancellation) and turns what it is given into `Recorder` calls with the `http` metadata of
docs/http-capture.md. A failure to write raises `CassetteError` to the shell.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mcptape.capture.httpmeta import SSE_TYPE, LegacyEndpoints, flow_meta, header_dict
from mcptape.capture.recorder import Recorder
from mcptape.cassette.model import Source
from mcptape.versions import is_modern
from mcptape.wire.sse import SseEvent, SseParser, SseTooLarge

Headers = Iterable[tuple[str, str]]
"""Header fields as (name, value) pairs, in wire order, repeated names repeated."""

CLIENT_ERRORS = ("Client disconnected.", "stream reset by client")
"""How mitmproxy's HTTP layers word a failure the client caused (its ErrorCode.CLIENT_DISCONNECTED
over HTTP/1, a client's RST_STREAM over HTTP/2 and HTTP/3): the whole message, or its start."""


def client_caused(message: str, client_gone: bool = False) -> bool:
    """Whether a flow's failure came from the client side (a `disconnect`) rather than the server or the network.

    `client_gone`: the shell saw the client's side of the connection closed (mitmproxy's
    client connection can no longer read) when the flow failed. Without that (capture
    files do not keep connection states), mitmproxy's own wording of client-side failures
    decides (`CLIENT_ERRORS`).
    """
    return client_gone or message.startswith(CLIENT_ERRORS)


@dataclass(frozen=True, slots=True)
class Notes:
    """What a shell says when it could not see a body (live: mitmproxy streamed it; import: the file lacks it)."""

    body: str
    """On the event of a request or response whose body was not kept."""
    stream: str
    """On the head of an event stream whose events will not be recorded."""
    open_at_end: str
    """On the `error` event of an exchange still open when the capture ends."""


@dataclass(slots=True)
class HttpFlow:
    """One HTTP request and its response, as the capture sees them, in order:
    `request`, then `response` (a whole non-SSE response) or `stream_head`, `feed`... and
    `stream_end`; or `error` at any point after the request."""

    capture: HttpCapture
    exchange: int
    method: str
    """The request's HTTP method."""
    session: str | None = None
    legacy: bool = False
    stream: str | None = None
    """"post" or "get" (the request method, lowercased) once the response is an event stream."""
    modern: bool = False
    """The request declared a stateless (2026-07-28+) protocol version."""
    answered: bool = False
    """A JSON-RPC response (result or error) has passed on this flow's event stream."""
    parser: SseParser | None = field(default=None, repr=False)
    """Set while the event stream's events are being recorded."""
    decoder: Any = field(default=None, repr=False)

    def base(self) -> dict[str, Any]:
        """The `http` keys every event of this flow carries."""
        return flow_meta(self.exchange, self.session, self.legacy, self.stream)

    @property
    def rec(self) -> Recorder:
        return self.capture.recorder()

    # -- the request

    def request(self, path: str, headers: Headers, body: bytes | None) -> None:
        """The whole request has arrived (`body` None: the shell did not keep it)."""
        fields = header_dict(headers)
        legacy = self.capture.legacy
        self.session = _get(fields, "mcp-session-id") or legacy.session_of(path)
        self.legacy = self.session is not None and self.session in legacy.sessions
        self.modern = is_modern(_get(fields, "mcp-protocol-version"))
        meta = self.base() | {"phase": "request", "method": self.method} | self._head(path, fields)
        self._body(Source.CLIENT, body, meta)

    # -- a whole response

    def response(self, status: int, headers: Headers, body: bytes | None) -> None:
        """A non-SSE response has arrived whole (`body` None: the shell did not keep it)."""
        fields = header_dict(headers)
        self.session = _get(fields, "mcp-session-id") or self.session
        meta = self.base() | {"phase": "response", "status": status} | self._head(None, fields)
        self._body(Source.SERVER, body, meta)

    # -- an event stream

    def stream_head(
        self, status: int, headers: Headers, *, encoded: bool = True, kept: bool = True
    ) -> None:
        """An event-stream response's head has arrived; its events follow through `feed`.

        `encoded`: the chunks come as on the wire, compressed per `Content-Encoding` (gzip
        and deflate are decompressed; any other encoding passes unrecorded). False: the
        shell decoded them already. `kept`: False when the shell will not see the events.
        """
        fields = header_dict(headers)
        self.session = _get(fields, "mcp-session-id") or self.session
        self.stream = self.method.lower()
        self.parser = SseParser() if kept else None
        note = None if kept else self.capture.notes.stream
        encoding = (_get(fields, "content-encoding") or "").lower().strip() if encoded else ""
        if encoding in ("gzip", "deflate", "x-gzip"):
            self.decoder = zlib.decompressobj(wbits=47)
        elif encoding not in ("", "identity"):
            self.parser = None
            note = f"content-encoding {encoding!r}: events passed through unrecorded"
        meta = self.base() | {"phase": "response", "status": status} | self._head(None, fields)
        self.rec.http(Source.SERVER, meta, {"note": note} if note else None)

    def feed(self, chunk: bytes) -> None:
        """Bytes of the event stream: records each event they complete. A stream that cannot
        be parsed (an event over the parser's bound, broken compression) is recorded as an
        `error` event once; its later chunks are ignored."""
        if self.parser is None or not chunk:
            return
        try:
            data = self.decoder.decompress(chunk) if self.decoder is not None else chunk
            events = self.parser.feed(data)
        except (SseTooLarge, zlib.error) as exc:
            self.parser = None
            info = {"error": f"{exc}; the rest of the stream passes unrecorded"}
            self.rec.http(Source.SERVER, self.base() | {"phase": "error"}, info)
            return
        for ev in events:
            self._sse(ev)

    def stream_end(self) -> None:
        """The server ended the event stream."""
        self.rec.http(Source.SERVER, self.base() | {"phase": "end"})

    # -- failures

    def error(self, message: str, client_gone: bool = False) -> None:
        """The flow failed: the client went away (a `disconnect`), or the server or the network failed."""
        by_client = client_caused(message, client_gone)
        meta = self.base() | {"phase": "disconnect" if by_client else "error"}
        if (
            self.stream is None
        ):  # no response event was recorded for this flow: say which request failed
            meta["method"] = self.method
        info: dict[str, Any] = {"error": message}
        if by_client and self.stream == "post" and self.modern and not self.answered:
            info["cancel"] = (
                True  # 2026-07-28: closing a request's SSE response before its answer cancels it
            )
        self.rec.http(Source.CLIENT if by_client else Source.SERVER, meta, info)

    def left_open(self) -> None:
        """The capture ends while this flow is still open."""
        self.rec.http(
            None, self.base() | {"phase": "error"}, {"error": self.capture.notes.open_at_end}
        )

    # -- helpers

    def _head(self, path: str | None, fields: dict[str, str]) -> dict[str, Any]:
        red = self.rec.redactor
        out: dict[str, Any] = {}
        if path is not None:
            out["path"] = red.url(path)[0]
        out["headers"] = red.headers(fields)[0]
        ctype = _get(fields, "content-type")
        if ctype is not None:
            out["content_type"] = ctype
        return out

    def _body(self, src: Source, body: bytes | None, meta: dict[str, Any]) -> None:
        if body:
            self.rec.payload(src, body, http=meta)
        else:
            self.rec.http(src, meta, {"note": self.capture.notes.body} if body is None else None)

    def _sse(self, ev: SseEvent) -> None:
        rec = self.rec
        if ev.comment is not None:
            rec.http(
                Source.SERVER,
                self.base() | {"phase": "sse", "sse": {"comment": rec.redactor.text(ev.comment)}},
            )
            return
        sse: dict[str, Any] = {
            k: v
            for k, v in (("id", ev.id), ("event", ev.event), ("retry", ev.retry))
            if v is not None
        }
        if ev.event == "endpoint":  # legacy HTTP+SSE: where to POST; its query names the session
            self.legacy = True
            self.session = self.capture.legacy.register(ev.data)
            rec.http(
                Source.SERVER,
                self.base() | {"phase": "sse", "sse": sse | {"data": rec.redactor.url(ev.data)[0]}},
            )
        elif ev.data == "":
            rec.http(
                Source.SERVER, self.base() | {"phase": "sse", "sse": sse}
            )  # a priming or retry-only event
        else:
            msg = rec.payload(
                Source.SERVER,
                ev.data.encode("utf-8"),
                http=self.base() | {"phase": "sse", "sse": sse},
            )
            if isinstance(msg, dict) and ("result" in msg or "error" in msg):
                self.answered = True


class HttpCapture:
    """What the flows of one capture share: exchange numbers, legacy HTTP+SSE endpoints, the recorder."""

    def __init__(
        self, recorder: Callable[[], Recorder], notes: Notes, legacy: LegacyEndpoints | None = None
    ) -> None:
        self.recorder = recorder
        """The recorder to write to (a callable: the live addon opens its cassette on first use)."""
        self.notes = notes
        self.legacy = legacy or LegacyEndpoints()
        """Legacy HTTP+SSE: the POST endpoints announced so far and their sessions."""
        self._numbers = itertools.count(1)

    def flow(self, method: str) -> HttpFlow:
        """A new flow for a request with this HTTP method, numbered in the order the capture saw the requests."""
        return HttpFlow(self, next(self._numbers), method)


def is_event_stream(headers: Headers) -> bool:
    """The response headers declare an event stream."""
    return (_get(header_dict(headers), "content-type") or "").lower().startswith(SSE_TYPE)


def _get(fields: dict[str, str], name: str) -> str | None:
    """A header (lowercase `name`) of `header_dict` output, any spelling; repeated fields come joined."""
    value = fields.get(name)
    if value is None:
        for k, v in fields.items():
            if k.lower() == name:
                return v
    return value
