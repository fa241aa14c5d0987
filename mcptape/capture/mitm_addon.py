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

import logging
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mitmproxy import ctx, exceptions, http
from mitmproxy.addonmanager import Loader
from mitmproxy.connection import ConnectionState

try:  # `mitmdump -s` may run from an interpreter where mcptape is not installed
    import mcptape._version  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from mcptape.capture.http_flow import HttpCapture, HttpFlow, Notes, is_event_stream
from mcptape.capture.mcpflow import McpFlows
from mcptape.capture.recorder import Recorder, recording_header
from mcptape.cassette import CassetteWriter
from mcptape.cassette.model import Transport
from mcptape.errors import CassetteError, ConfigError, RecordError
from mcptape.redaction.redact import RedactConfig, Redactor

logger = logging.getLogger(__name__)

OPTIONS = (
    "mcptape_cassette",
    "mcptape_fresh",
    "mcptape_target",
    "mcptape_redact",
    "mcptape_redact_keys",
    "mcptape_redact_patterns",
    "mcptape_endpoints",
)


LIVE = Notes(
    body="body streamed by mitmproxy (stream_large_bodies), not recorded",
    stream="the event stream passes unrecorded",
    open_at_end="recording stopped with this exchange open",
)
"""What the live addon says where it could not see something."""


class McpTape:
    """Records the MCP flows through the proxy as cassette events; other flows pass untouched."""

    def __init__(self) -> None:
        self._recorder: Recorder | None = None
        self._writer: CassetteWriter | None = None
        self._redact = RedactConfig()
        self._flows: dict[str, HttpFlow] = {}
        """The flows in progress, by mitmproxy's flow id."""
        self._capture = HttpCapture(self._rec, LIVE)
        self._mcp = McpFlows()
        """Which flows are MCP: the others pass through untouched and unrecorded, counted."""
        self.failed: CassetteError | RecordError | None = None
        self.log_failure = True
        """Log why the recording failed (off when the host reports `failed` itself)."""
        self.path: Path | None = None
        """The cassette being recorded (where it is once mitmproxy stopped)."""
        self.stopped = False
        """mitmproxy is shutting down: the cassette has its end; later hooks record nothing."""

    def load(self, loader: Loader) -> None:
        loader.add_option(
            "mcptape_cassette", str, "",
            "mcptape: the cassette (JSON Lines) to write. Default: cassettes/http-<time>.jsonl (numbered "
            "when taken). The recording goes to <cassette>.partial and replaces the cassette when "
            "mitmproxy stops, complete (ends with an `end` event), if the server answered anything.",
        )  # fmt: skip
        loader.add_option(
            "mcptape_fresh", bool, False,
            "mcptape: when the cassette exists, record to the next free numbered name (<stem>-2.jsonl, ...) "
            "instead of replacing it.",
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
        loader.add_option(
            "mcptape_endpoints", Sequence[str], [],
            "mcptape: the paths of the MCP endpoints (e.g. /mcp): only flows to them are recorded. Default: flows "
            "that look like MCP (MCP headers or methods, /sse and /mcp event streams); others pass unrecorded.",
        )  # fmt: skip

    def configure(self, updated: set[str]) -> None:
        if not updated.intersection(OPTIONS):
            return
        opts = ctx.options
        config = RedactConfig(enabled=opts.mcptape_redact).with_extra(
            opts.mcptape_redact_keys, opts.mcptape_redact_patterns
        )
        try:
            Redactor(config)
        except ConfigError as exc:
            raise exceptions.OptionsError(str(exc)) from None
        self._redact = config
        if "mcptape_endpoints" in updated:
            self._mcp = McpFlows(opts.mcptape_endpoints)
        if self._recorder is not None and self._recorder.redactor.config != config:
            self._recorder.redactor = Redactor(config)
        if (
            "mcptape_cassette" in updated
            and self._writer is not None
            and str(self._writer.path) != opts.mcptape_cassette
        ):
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
                    st.left_open()
        except CassetteError as exc:
            self._fail(exc)
        finally:
            self._close()
            self.stopped = True
            if self._mcp.skipped:
                logger.warning(
                    f"mcptape: {self._mcp.skipped} flow(s) that are not MCP passed through unrecorded"
                )

    @property
    def skipped(self) -> int:
        """How many flows were not MCP (passed through untouched, not recorded)."""
        return self._mcp.skipped

    def _rec(self) -> Recorder:
        if self._recorder is None:
            path = ctx.options.mcptape_cassette or _default_path()
            target = _target(ctx.options.mcptape_target, ctx.options.mode)
            transport = (
                Transport.SSE
                if urlsplit(target.get("url", "")).path.endswith("/sse")
                else Transport.STREAMABLE_HTTP
            )
            header = recording_header(transport, target, self._redact)
            fresh = ctx.options.mcptape_fresh or not ctx.options.mcptape_cassette
            self._writer = CassetteWriter(path, header, fresh=fresh)
            self._recorder = Recorder(self._writer, Redactor(self._redact))
            self.path = self._writer.path
            logger.info(f"mcptape: recording to {self.path}")
        return self._recorder

    def _close(self) -> None:
        """Ends the recording through the recorder's sink: the cassette moves into place only
        when it holds a session (see `Recorder.finish`); a failure is kept in `failed`."""
        rec = self._recorder
        self._recorder = self._writer = None
        if rec is None:
            return
        if self.failed is not None:
            rec.abandon()
            return
        try:
            self.path = rec.finish({"open_exchanges": len(self._flows)} if self._flows else None,
                                   why="no request reached it through the proxy")  # fmt: skip
        except RecordError as exc:
            self.failed = exc
            if self.log_failure:
                logger.error(f"mcptape: {exc}")

    def _fail(self, exc: CassetteError, flow: http.HTTPFlow | None = None) -> None:
        """The cassette cannot be written: stop the traffic rather than let it pass unrecorded."""
        if self.failed is None:
            self.failed = exc
            logger.error(f"mcptape: {exc}; stopping the proxy")
            ctx.master.shutdown()
        if flow is not None and flow.killable:
            flow.kill()

    # -- hooks: each hands what mitmproxy saw to the flow's state machine

    def requestheaders(self, flow: http.HTTPFlow) -> None:
        """Nothing yet: whether a flow is MCP is decided on the whole request (`request`)."""

    def request(self, flow: http.HTTPFlow) -> None:
        """A whole request: recorded when it is MCP (`mcptape.capture.mcpflow`); any other flow
        is left alone from here on (no hook of this addon touches it)."""
        if self.stopped:
            return
        req = flow.request
        body = req.get_content(strict=False)
        headers = {k.lower(): v for k, v in req.headers.items()}
        legacy = self._capture.legacy.session_of(req.path) is not None
        if not self._mcp.request(req.method, req.path, headers, body, legacy):
            return
        st = self._flows[flow.id] = self._capture.flow(req.method)
        self._record(flow, lambda: st.request(req.path, req.headers.items(multi=True), body))

    def responseheaders(self, flow: http.HTTPFlow) -> None:
        st = self._flows.get(flow.id)
        if self.stopped or st is None:
            resp = flow.response
            if (
                resp is not None
                and resp.stream is False
                and is_event_stream(resp.headers.items(multi=True))
            ):
                resp.stream = (
                    True  # another protocol's event stream: passed on as it comes, not buffered
                )
            return
        resp = flow.response
        assert resp is not None
        headers = tuple(resp.headers.items(multi=True))
        if not is_event_stream(headers):
            return
        if self._record(flow, lambda: st.stream_head(resp.status_code, headers)):
            resp.stream = self._tee(st, resp.stream)

    def response(self, flow: http.HTTPFlow) -> None:
        st = self._flows.pop(flow.id, None)
        if self.stopped or st is None:
            return
        resp = flow.response
        assert resp is not None
        if st.stream is not None:
            self._record(flow, st.stream_end)
        else:
            self._record(
                flow,
                lambda: st.response(
                    resp.status_code, resp.headers.items(multi=True), resp.get_content(strict=False)
                ),
            )

    def error(self, flow: http.HTTPFlow) -> None:
        st = self._flows.pop(flow.id, None)
        if self.stopped or st is None:
            return
        message = flow.error.msg if flow.error else "unknown error"
        client_gone = (
            not flow.client_conn.state & ConnectionState.CAN_READ
        )  # the client closed its side
        self._record(flow, lambda: st.error(message, client_gone))

    # -- helpers

    def _record(self, flow: http.HTTPFlow, action: Callable[[], None]) -> bool:
        """Runs one recording step; a cassette that cannot be written stops the proxy and kills the flow."""
        try:
            action()
        except CassetteError as exc:
            self._fail(exc, flow)
            return False
        return True

    def _tee(self, st: HttpFlow, previous: Any) -> Callable[[bytes], Any]:
        """The response's stream callable: records each SSE event a chunk completes, then forwards the chunk."""

        def tee(chunk: bytes) -> Any:
            out = (
                previous(chunk) if callable(previous) else chunk
            )  # another addon may stream it too
            pieces = [out] if isinstance(out, bytes) else list(out)
            if st.parser is not None and not self.stopped:
                try:
                    for piece in pieces:
                        st.feed(piece)
                except CassetteError as exc:
                    self._fail(exc)
                    raise
            return out if isinstance(out, bytes) else pieces

        return tee


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
