"""A mitmproxy addon that records MCP traffic over HTTP into an mcptape cassette.

Loaded by `mcptape record --http` (reverse proxy, in process) or by hand with
`mitmdump -s $(mcptape addon-path) --set mcptape_cassette=out.jsonl ...`. It owns the
hooks and options only: bodies and SSE chunks go to `mcptape.wire.sse` and the
`Recorder`, which parses, redacts and appends one event per call.

What it writes (docs/http-capture.md is the reference): every event carries an `http`
dict with at least `exchange` (one number per HTTP request/response) and `phase`
("request", "response", "sse", "end", "disconnect", "error"). Requests and non-SSE
responses are one event each (the JSON-RPC payload as `msg`, or an HTTP event when the
body is empty). `text/event-stream` responses are streamed: the response head is recorded
when it arrives, each SSE event as it passes through, and the end of the stream (or the
disconnect that cut it) last. Nothing is forwarded before it is recorded.
"""

from __future__ import annotations

import itertools
import logging
import sys
import zlib
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, exceptions, http
from mitmproxy.addonmanager import Loader

try:  # `mitmdump -s` may run from an interpreter where mcptape is not installed
    import mcptape  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcptape.capture.httpmeta import SSE_TYPE, LegacyEndpoints, flow_meta, header_dict  # noqa: E402
from mcptape.capture.recorder import Recorder  # noqa: E402
from mcptape.cassette import CassetteWriter, new_header  # noqa: E402
from mcptape.errors import CassetteError, ConfigError  # noqa: E402
from mcptape.model import Source, Transport  # noqa: E402
from mcptape.redact import RedactConfig, Redactor  # noqa: E402
from mcptape.versions import is_modern  # noqa: E402
from mcptape.wire.sse import SseEvent, SseParser, SseTooLarge  # noqa: E402

logger = logging.getLogger(__name__)

OPTIONS = ("mcptape_cassette", "mcptape_target", "mcptape_redact", "mcptape_redact_keys", "mcptape_redact_patterns")


class _FlowState:
    """What the addon remembers about one HTTP request/response while it is live.

    A plain class, not a dataclass: `mitmdump -s` executes this file outside `sys.modules`,
    where dataclasses cannot resolve string annotations.
    """

    __slots__ = ("answered", "decoder", "exchange", "extra", "legacy", "modern", "parser", "session", "stream")

    def __init__(self, exchange: int) -> None:
        self.exchange = exchange
        self.session: str | None = None
        self.legacy = False
        self.stream: str | None = None
        """"post" or "get" (the request method, lowercased) once the response is an event stream."""
        self.modern = False
        """The request declared a stateless (2026-07-28+) protocol version."""
        self.answered = False
        """A JSON-RPC response (result or error) has passed on this flow's event stream."""
        self.parser: SseParser | None = None
        self.decoder: Any = None
        self.extra: dict[str, Any] = {}

    def base(self) -> dict[str, Any]:
        return flow_meta(self.exchange, self.session, self.legacy, self.stream)


class McpTape:
    """Records every HTTP flow through the proxy as MCP cassette events."""

    def __init__(self) -> None:
        self._recorder: Recorder | None = None
        self._writer: CassetteWriter | None = None
        self._redact = RedactConfig()
        self._flows: dict[str, _FlowState] = {}
        self._legacy = LegacyEndpoints()
        """Legacy HTTP+SSE: the POST endpoints announced so far and their sessions."""
        self._numbers = itertools.count(1)
        self.failed: CassetteError | None = None
        self.stopped = False
        """mitmproxy is shutting down: the cassette has its end; later hooks record nothing."""

    def load(self, loader: Loader) -> None:
        loader.add_option(
            "mcptape_cassette", str, "",
            "mcptape: the cassette (JSON Lines) to write. Default: cassettes/http-<time>.jsonl. "
            "The file is replaced; it is complete (ends with an `end` event) when mitmproxy stops.",
        )  # fmt: skip
        loader.add_option(
            "mcptape_target", str, "",
            "mcptape: the server URL written in the cassette header (default: the reverse-proxy target).",
        )  # fmt: skip
        loader.add_option(
            "mcptape_redact", bool, True,
            "mcptape: redact secrets before writing (Authorization, Cookie, Set-Cookie, Proxy-Authorization, "
            "API-key headers, token query parameters, secret-named JSON members, token shapes in any string).",
        )  # fmt: skip
        loader.add_option(
            "mcptape_redact_keys", Sequence[str], [],
            "mcptape: also redact headers, query parameters and JSON members with these names.",
        )  # fmt: skip
        loader.add_option(
            "mcptape_redact_patterns", Sequence[str], [],
            "mcptape: also replace substrings matching these regular expressions in every string.",
        )  # fmt: skip

    def configure(self, updated: set[str]) -> None:
        if not updated.intersection(OPTIONS):
            return
        opts = ctx.options
        config = RedactConfig(enabled=opts.mcptape_redact).with_extra(opts.mcptape_redact_keys, opts.mcptape_redact_patterns)
        try:
            Redactor(config)
        except ConfigError as exc:
            raise exceptions.OptionsError(str(exc)) from None
        self._redact = config
        if self._recorder is not None and self._recorder.redactor.config != config:
            self._recorder.redactor = Redactor(config)
        if "mcptape_cassette" in updated and self._writer is not None and str(self._writer.path) != opts.mcptape_cassette:
            self._close()

    # -- cassette lifecycle

    def running(self) -> None:
        self._rec()

    def done(self) -> None:
        """Ends the cassette. Exchanges still open get an `error` event first: mitmproxy closes
        their connections only after its addons are done, too late for the cassette."""
        if self.stopped:
            return
        try:
            if self._recorder is not None and self.failed is None:
                for st in self._flows.values():
                    self._recorder.http(None, st.base() | {"phase": "error"}, {"error": "recording stopped with this exchange open"})
        except CassetteError as exc:
            self._fail(exc)
        finally:
            self._close()
            self.stopped = True

    def _rec(self) -> Recorder:
        if self._recorder is None:
            path = ctx.options.mcptape_cassette or _default_path()
            target = _target(ctx.options.mcptape_target, ctx.options.mode)
            transport = Transport.SSE if urlsplit(target.get("url", "")).path.endswith("/sse") else Transport.STREAMABLE_HTTP
            self._writer = CassetteWriter(path, new_header(transport, target, self._redact.describe()))
            self._recorder = Recorder(self._writer, Redactor(self._redact))
            logger.info(f"mcptape: recording to {path}")
        return self._recorder

    def _close(self) -> None:
        if self._recorder is not None and self._writer is not None:
            try:
                if self.failed is None:
                    self._recorder.end({"open_exchanges": len(self._flows)} if self._flows else None)
            finally:
                self._writer.close()
        self._recorder = self._writer = None

    def _fail(self, exc: CassetteError, flow: http.HTTPFlow | None = None) -> None:
        """The cassette cannot be written: stop the traffic rather than let it pass unrecorded."""
        if self.failed is None:
            self.failed = exc
            logger.error(f"mcptape: {exc}; stopping the proxy")
            ctx.master.shutdown()
        if flow is not None and flow.killable:
            flow.kill()

    # -- hooks

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        if not self.stopped:
            self._flows[flow.id] = _FlowState(next(self._numbers))

    def request(self, flow: http.HTTPFlow) -> None:
        if self.stopped:
            return
        st = self._state(flow)
        req = flow.request
        st.session = req.headers.get("mcp-session-id") or self._legacy.session_of(req.path)
        st.legacy = st.session is not None and st.session in self._legacy.sessions
        st.modern = is_modern(req.headers.get("mcp-protocol-version"))
        meta = st.base() | {"phase": "request", "method": req.method}
        meta |= self._head(req.path, req.headers)
        self._body(flow, Source.CLIENT, req.get_content(strict=False), meta)

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        if self.stopped:
            return
        st = self._state(flow)
        resp = flow.response
        assert resp is not None
        st.session = resp.headers.get("mcp-session-id") or st.session
        if not resp.headers.get("content-type", "").lower().startswith(SSE_TYPE):
            return
        st.stream = flow.request.method.lower()
        st.parser = SseParser()
        encoding = resp.headers.get("content-encoding", "").lower().strip()
        if encoding in ("gzip", "deflate", "x-gzip"):
            st.decoder = zlib.decompressobj(wbits=47)
        elif encoding not in ("", "identity"):
            st.parser = None
            st.extra["note"] = f"content-encoding {encoding!r}: events passed through unrecorded"
        meta = st.base() | {"phase": "response", "status": resp.status_code} | self._head(None, resp.headers)
        try:
            self._rec().http(Source.SERVER, meta, dict(st.extra) or None)
        except CassetteError as exc:
            self._fail(exc, flow)
            return
        resp.stream = self._tee(flow, st, resp.stream)

    def response(self, flow: http.HTTPFlow) -> None:
        if self.stopped:
            return
        st = self._flows.pop(flow.id, None) or self._state(flow)
        resp = flow.response
        assert resp is not None
        if st.stream is not None:
            self._emit(flow, Source.SERVER, st.base() | {"phase": "end"})
            return
        meta = st.base() | {"phase": "response", "status": resp.status_code} | self._head(None, resp.headers)
        self._body(flow, Source.SERVER, resp.get_content(strict=False), meta)

    def error(self, flow: http.HTTPFlow) -> None:
        if self.stopped:
            return
        st = self._flows.pop(flow.id, None) or self._state(flow)
        message = flow.error.msg if flow.error else "unknown error"
        by_client = "client" in message.lower()
        meta = st.base() | {"phase": "disconnect" if by_client else "error"}
        if st.stream is None:  # no response event was recorded for this flow: say which request failed
            meta["method"] = flow.request.method
        info: dict[str, Any] = {"error": message}
        if by_client and st.stream == "post" and st.modern and not st.answered:
            info["cancel"] = True  # 2026-07-28: closing a request's SSE response before its answer cancels it
        self._emit(flow, Source.CLIENT if by_client else Source.SERVER, meta, info)

    # -- helpers

    def _state(self, flow: http.HTTPFlow) -> _FlowState:
        st = self._flows.get(flow.id)
        if st is None:
            st = self._flows[flow.id] = _FlowState(next(self._numbers))
        return st

    def _head(self, path: str | None, headers: http.Headers) -> dict[str, Any]:
        red = self._rec().redactor
        out: dict[str, Any] = {}
        if path is not None:
            out["path"] = red.url(path)[0]
        out["headers"] = red.headers(header_dict(headers.items(multi=True)))[0]
        ctype = headers.get("content-type")
        if ctype is not None:
            out["content_type"] = ctype
        return out

    def _body(self, flow: http.HTTPFlow, src: Source, body: bytes | None, meta: dict[str, Any]) -> None:
        try:
            if body:
                self._rec().payload(src, body, http=meta)
            else:
                note = {"note": "body streamed by mitmproxy (stream_large_bodies), not recorded"} if body is None else None
                self._rec().http(src, meta, note)
        except CassetteError as exc:
            self._fail(exc, flow)

    def _emit(self, flow: http.HTTPFlow, src: Source, meta: dict[str, Any], info: dict[str, Any] | None = None) -> None:
        try:
            self._rec().http(src, meta, info)
        except CassetteError as exc:
            self._fail(exc, flow)

    def _tee(self, flow: http.HTTPFlow, st: _FlowState, previous: Any) -> Callable[[bytes], Any]:
        """The response's stream callable: records each SSE event a chunk completes, then forwards the chunk."""

        def tee(chunk: bytes) -> Any:
            out = previous(chunk) if callable(previous) else chunk  # another addon may stream it too
            pieces = [out] if isinstance(out, bytes) else list(out)
            if st.parser is not None and not self.stopped:
                for piece in pieces:
                    if piece:
                        self._feed(flow, st, piece)
            return out if isinstance(out, bytes) else pieces

        return tee

    def _feed(self, flow: http.HTTPFlow, st: _FlowState, chunk: bytes) -> None:
        assert st.parser is not None
        try:
            data = st.decoder.decompress(chunk) if st.decoder is not None else chunk
            events = st.parser.feed(data)
        except (SseTooLarge, zlib.error) as exc:
            st.parser = None
            self._emit(flow, Source.SERVER, st.base() | {"phase": "error"}, {"error": f"{exc}; the rest of the stream passes unrecorded"})
            return
        try:
            for ev in events:
                self._sse(st, ev)
        except CassetteError as exc:
            self._fail(exc)
            raise

    def _sse(self, st: _FlowState, ev: SseEvent) -> None:
        rec = self._rec()
        if ev.comment is not None:
            rec.http(Source.SERVER, st.base() | {"phase": "sse", "sse": {"comment": rec.redactor.text(ev.comment)}})
            return
        sse: dict[str, Any] = {k: v for k, v in (("id", ev.id), ("event", ev.event), ("retry", ev.retry)) if v is not None}
        if ev.event == "endpoint":  # legacy HTTP+SSE: where to POST; its query names the session
            st.legacy = True
            st.session = self._legacy.register(ev.data)
            rec.http(Source.SERVER, st.base() | {"phase": "sse", "sse": sse | {"data": rec.redactor.url(ev.data)[0]}})
        elif ev.data == "":
            rec.http(Source.SERVER, st.base() | {"phase": "sse", "sse": sse})  # a priming or retry-only event
        else:
            msg = rec.payload(Source.SERVER, ev.data.encode("utf-8"), http=st.base() | {"phase": "sse", "sse": sse})
            if isinstance(msg, dict) and ("result" in msg or "error" in msg):
                st.answered = True



def _target(option: str, modes: Sequence[str]) -> dict[str, Any]:
    if option:
        return {"url": option}
    for mode in modes:
        if mode.startswith("reverse:"):
            return {"url": mode.removeprefix("reverse:").split("@", 1)[0]}
    return {"proxy": list(modes)}


def _default_path() -> str:
    return str(Path("cassettes") / f"http-{datetime.now().strftime('%Y%m%d-%H%M%S')}.jsonl")


addons = [McpTape()]
