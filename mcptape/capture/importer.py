"""`mcptape import`: mitmproxy flow files and HAR captures of MCP traffic -> a cassette.

Two readers turn a capture into `CapturedFlow` values (one complete HTTP request and its
response, with the times mitmproxy or the browser noted); a converter replays those flows
through the HTTP-flow state machine (`mcptape.capture.http_flow`) and the `Recorder` the
live mitmproxy addon drives too, so they get the same `http` metadata
(docs/http-capture.md): exchange numbers in order of the requests' arrival, `Mcp-Session-Id`
sessions (minted by the `initialize` response), phases, SSE fields, legacy HTTP+SSE
sessions from `endpoint` events. Redaction applies as when recording. Flows that carry no
JSON-RPC (favicons, OAuth metadata, health checks) are skipped and counted.

What a capture cannot tell: when each event of a buffered event stream passed. mitmproxy
(without streaming) and HAR files keep the whole body and the time it ended, so every SSE
event of a response gets the response's end time. mitmproxy is imported only to read
flow files; HAR files are plain JSON.
"""

from __future__ import annotations

import base64
import io
import os
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import orjson

from mcptape._version import __version__
from mcptape.capture.http_flow import HttpCapture, HttpFlow, Notes
from mcptape.capture.httpmeta import SSE_TYPE, LegacyEndpoints
from mcptape.capture.mcpflow import McpFlows
from mcptape.capture.recorder import Recorder
from mcptape.cassette import CassetteBuffer, LineWriter, write_atomic
from mcptape.cassette.model import Header, Transport
from mcptape.errors import McpTapeError
from mcptape.redaction.redact import RedactConfig, Redactor
from mcptape.wire.sse import SseEvent, SseParser, SseTooLarge

Headers = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class CapturedFlow:
    """One HTTP request and its response as a capture file holds them (bodies decoded)."""

    url: str
    method: str
    path: str
    """Path and query, as sent upstream."""
    request_headers: Headers
    request_body: bytes | None
    """None: the capture did not keep the body."""
    started: float
    """Epoch seconds: the request started."""
    request_end: float
    status: int | None = None
    """None: no response (an error, or the capture stopped first)."""
    response_headers: Headers = ()
    response_body: bytes | None = None
    response_start: float | None = None
    response_end: float | None = None
    """None: the response was not complete."""
    error: str | None = None
    error_at: float | None = None

    def header(self, name: str, response: bool = False) -> str | None:
        for k, v in self.response_headers if response else self.request_headers:
            if k.lower() == name:
                return v
        return None

    @property
    def complete(self) -> bool:
        """The response arrived whole. That is how the flow ended, even when the capture also
        holds an error: mitmproxy can note a client that left while its `response` hooks ran
        (after the server had finished) on the flow it saved, where the live addon saw the
        response end and a HAR export shows no error. Never both hooks: the addon records one."""
        return self.status is not None and self.response_end is not None

    @property
    def is_sse(self) -> bool:
        return self.status is not None and (
            self.header("content-type", True) or ""
        ).lower().startswith(SSE_TYPE)


@dataclass(frozen=True, slots=True)
class ImportStats:
    format: str
    """"mitmproxy" or "har"."""
    imported: int
    skipped: int
    """Flows that carry no MCP traffic (and non-HTTP flows)."""
    events: int
    transport: Transport


# -- readers ---------------------------------------------------------------------------


def read_capture(data: bytes, name: str) -> tuple[str, list[CapturedFlow], int]:
    """Detects the format by content; returns it, the HTTP flows, and how many other flows were skipped."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    if data[:1] == b"\x78":  # a zlib stream: mitmproxy's compressed HAR (.zhar)
        try:
            data = zlib.decompress(data)
        except zlib.error:
            pass
    head = data.lstrip()[:1]
    if head == b"{":
        try:
            har = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise McpTapeError(f"{name}: not a HAR file: {_json_problem(exc)}") from None
        return "har", har_flows(har, name), 0
    if head[:1].isdigit():
        flows, other = _mitm_flows(data, name)
        return "mitmproxy", flows, other
    raise McpTapeError(
        f"{name}: neither a mitmproxy flow file (mitmdump -w) nor a HAR file "
        f"(it starts with {_clip(data.lstrip()[:20].decode('utf-8', 'replace'), 20)!r})"
    )


def _json_problem(exc: orjson.JSONDecodeError) -> str:
    """Where and why a capture's JSON does not parse, in a few words (the file may be huge)."""
    why = _clip(exc.msg, 200)
    if why.startswith("unexpected content after document"):
        why += (
            " (one JSON document per line, as in a JSON Lines file or a cassette, is no HAR file)"
        )
    return f"line {exc.lineno}, column {exc.colno}: {why}"


def _clip(text: str, limit: int) -> str:
    """`text` on one line, cut after `limit` characters (a parser may quote a whole body)."""
    one = " ".join(text.split())
    return one if len(one) <= limit else f"{one[:limit]}... ({len(one)} characters)"


def har_flows(har: Any, name: str = "<har>") -> list[CapturedFlow]:
    """The entries of a parsed HAR document (HAR 1.2: browsers, mitmproxy's savehar) as flows."""
    try:
        log = har["log"]
        proxy = (log.get("creator") or {}).get("name") == "mitmproxy"
        return [_har_entry(e, proxy) for e in log["entries"]]
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise McpTapeError(f"{name}: not a valid HAR file ({type(exc).__name__}: {exc})") from None


def _har_entry(e: dict[str, Any], proxy: bool) -> CapturedFlow:
    req, resp = e["request"], e.get("response") or {}
    start = datetime.fromisoformat(e["startedDateTime"].replace("Z", "+00:00")).timestamp()
    req_end, resp_start, resp_end = _har_times(e, start, proxy)
    parts = urlsplit(req["url"])
    post = req.get("postData")
    body = _har_body(post.get("text"), post.get("encoding")) if post else b""
    status = resp.get("status") or None
    content = resp.get("content") or {}
    resp_body = _har_body(content.get("text"), content.get("encoding"))
    if resp_body is None and not content.get("size"):
        resp_body = b""
    error = resp.get("_error") or (None if status else "no response in the HAR entry")
    return CapturedFlow(
        url=req["url"], method=req["method"], path=(parts.path or "/") + (f"?{parts.query}" if parts.query else ""),
        request_headers=_har_headers(req.get("headers")), request_body=body, started=start, request_end=req_end,
        status=status, response_headers=_har_headers(resp.get("headers")) if status else (),
        response_body=resp_body if status else None, response_start=resp_start if status else None,
        response_end=resp_end if status and not resp.get("_error") else None,
        error=error, error_at=resp_end if error else None,
    )  # fmt: skip


def _har_times(e: dict[str, Any], start: float, proxy: bool) -> tuple[float, float, float]:
    """When the entry's request ended, its response started and ended (epoch seconds)."""
    timings = e.get("timings") or {}

    def ms(key: str) -> float:
        v = timings.get(key)
        return v / 1000 if isinstance(v, (int, float)) and v > 0 else 0.0

    if not timings:
        return start, start, start + max(0.0, float(e.get("time") or 0)) / 1000
    # a browser's entry starts before queueing, DNS and connecting; mitmproxy's savehar counts
    # the upstream connect in `wait` already (its `connect` happened after the request arrived)
    before = 0.0 if proxy else ms("blocked") + ms("dns") + ms("connect")
    req_end = start + before + ms("send")
    resp_start = req_end + ms("wait")
    return req_end, resp_start, resp_start + ms("receive")


def _har_headers(items: Any) -> Headers:
    out = []
    for h in items or ():
        name, value = (h["name"], h["value"]) if isinstance(h, dict) else (h[0], h[1])
        if not name.startswith(":"):  # HTTP/2 pseudo-headers are not headers
            out.append((str(name), str(value)))
    return tuple(out)


def _har_body(text: Any, encoding: Any) -> bytes | None:
    if not isinstance(text, str):
        return None
    return (
        base64.b64decode(text)
        if encoding == "base64"
        else text.encode("utf-8", errors="surrogateescape")
    )


def _mitm_flows(data: bytes, name: str) -> tuple[list[CapturedFlow], int]:
    try:
        from mitmproxy import exceptions, http
        from mitmproxy.io import FlowReader
    except ImportError:
        raise McpTapeError(
            f"{name}: reading mitmproxy flow files needs mitmproxy: pip install 'mcptape[mitm]'"
        ) from None
    flows: list[CapturedFlow] = []
    other = 0
    try:
        for f in FlowReader(io.BytesIO(data)).stream():
            if not isinstance(f, http.HTTPFlow):
                other += 1
                continue
            flows.append(_mitm_flow(f))
    except exceptions.FlowReadException as exc:
        where = f"after {len(flows) + other} flow(s)" if flows or other else "at its start"
        raise McpTapeError(
            f"{name}: not a readable mitmproxy flow file ({where}: {_clip(str(exc), 200)})"
        ) from None
    return flows, other


def _mitm_flow(f: Any) -> CapturedFlow:
    req, resp = f.request, f.response
    return CapturedFlow(
        url=req.url, method=req.method, path=req.path, request_headers=tuple(req.headers.items(multi=True)),
        request_body=req.get_content(strict=False), started=req.timestamp_start,
        request_end=req.timestamp_end or req.timestamp_start,
        status=resp.status_code if resp is not None else None,
        response_headers=tuple(resp.headers.items(multi=True)) if resp is not None else (),
        response_body=resp.get_content(strict=False) if resp is not None else None,
        response_start=resp.timestamp_start if resp is not None else None,
        response_end=resp.timestamp_end if resp is not None else None,
        error=f.error.msg if f.error else None, error_at=f.error.timestamp if f.error else None,
    )  # fmt: skip


# -- which flows are MCP ---------------------------------------------------------------------


def sse_events(body: bytes | None) -> list[SseEvent]:
    """A whole event-stream body's events (an unterminated last event is dropped, as a client would)."""
    if not body:
        return []
    try:
        return SseParser().feed(body)
    except SseTooLarge:
        return []


def mcp_flows(flows: Iterable[CapturedFlow]) -> list[CapturedFlow]:
    """The flows that carry MCP (`mcptape.capture.mcpflow`: MCP headers, MCP methods in a body
    or an event, an `endpoint` event, a path that carried MCP), in the order they started."""
    decide = McpFlows()
    out = []
    for f in sorted(flows, key=lambda f: f.started):
        events = [(ev.event, ev.data) for ev in sse_events(f.response_body)] if f.is_sse else []
        request = {k.lower(): v for k, v in f.request_headers}
        response = {k.lower(): v for k, v in f.response_headers}
        if decide.whole_flow(
            f.method,
            f.path,
            request,
            f.request_body,
            response,
            events,
            None if f.is_sse else f.response_body,
        ):
            out.append(f)
    return out


# -- converting ------------------------------------------------------------------------------


IMPORT = Notes(
    body="the capture did not keep this body, not recorded",
    stream="the capture did not keep this stream's body: its events are not recorded",
    open_at_end="the capture ended with this exchange open",
)
"""What `mcptape import` says where the capture file lacks something."""


class _Clock:
    """The recorder's clock, set to each step's capture time before the step is recorded."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


TimedCall = tuple[float, Callable[[], None]]
"""A moment of a captured flow: (capture time, record it)."""


def _steps(st: HttpFlow, f: CapturedFlow, still_open: list[HttpFlow]) -> list[TimedCall]:
    """The flow's moments, in the order the proxy saw them, each driving the flow's state
    machine as the live addon's hooks would have. A flow that never completed goes to `still_open`."""
    t = f.request_end
    out: list[TimedCall] = [(t, lambda: st.request(f.path, f.request_headers, f.request_body))]
    if f.status is not None and f.is_sse:
        head = max(t, f.response_start or t)
        # a stream whose body the capture did not keep (mitmproxy streamed it) records no events
        kept = f.response_body is not None or f.error is not None or f.response_end is None
        out.append(
            (
                head,
                lambda: st.stream_head(f.status or 0, f.response_headers, encoded=False, kept=kept),
            )
        )
        out.append((max(head, f.response_end or f.error_at or head), lambda: _stream_body(st, f)))
    elif f.complete:
        out.append(
            (
                max(t, f.response_end or t),
                lambda: st.response(f.status or 0, f.response_headers, f.response_body),
            )
        )
    if f.complete:
        return out
    if f.error is not None:
        error = f.error
        out.append((max(out[-1][0], f.error_at or 0.0), lambda: st.error(error)))
    else:
        still_open.append(st)
    return out


def _stream_body(st: HttpFlow, f: CapturedFlow) -> None:
    """A buffered event stream: its events all at once, then its end (if it ended)."""
    st.feed(f.response_body or b"")
    if f.complete:
        st.stream_end()


def _target(flows: list[CapturedFlow], legacy: LegacyEndpoints) -> dict[str, Any]:
    if legacy.sessions:
        first = next(
            f
            for f in flows
            if f.is_sse and any(ev.event == "endpoint" for ev in sse_events(f.response_body))
        )
    else:
        first = next((f for f in flows if f.method == "POST"), flows[0])
    parts = urlsplit(first.url)
    return {"url": urlunsplit(parts._replace(query="", fragment=""))}


def convert(
    flows: Iterable[CapturedFlow], writer_for: Callable[[Header], LineWriter], config: RedactConfig
) -> tuple[int, int, Transport]:
    """Records the MCP flows among `flows` into the writer `writer_for(header)` returns.

    Returns (flows imported, flows skipped as not MCP, transport).

    Raises:
        McpTapeError: no flow carries MCP traffic.
    """
    every = list(flows)
    mcp = mcp_flows(every)
    if not mcp:
        raise McpTapeError(
            f"no MCP traffic among the {len(every)} flow(s) of the capture (no JSON-RPC bodies or events)"
        )
    legacy = LegacyEndpoints()
    for f in (
        mcp
    ):  # a buffered stream's events all carry its end time: know the legacy sessions up front
        for ev in sse_events(f.response_body) if f.is_sse else ():
            if ev.event == "endpoint":
                legacy.register(ev.data)
    transport = Transport.SSE if legacy.sessions else Transport.STREAMABLE_HTTP
    t0 = mcp[0].started
    header = Header(
        transport=transport, target=Redactor(config).target(_target(mcp, legacy)), mcptape_version=__version__,
        redaction=config.describe(),
        recorded_at=datetime.fromtimestamp(t0, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
    )  # fmt: skip
    clock = _Clock(t0)
    rec = Recorder(writer_for(header), Redactor(config), clock=clock)
    capture = HttpCapture(lambda: rec, IMPORT, legacy)
    steps: list[TimedCall] = []
    still_open: list[HttpFlow] = []
    for f in mcp:
        steps.extend(_steps(capture.flow(f.method), f, still_open))
    for t, record in sorted(steps, key=lambda s: s[0]):
        clock.now = max(clock.now, t)
        record()
    for st in still_open:
        st.left_open()
    rec.end({"open_exchanges": len(still_open)} if still_open else None)
    return len(mcp), len(every) - len(mcp), transport


def import_file(
    src: str | os.PathLike[str], dest: str | os.PathLike[str], config: RedactConfig | None = None
) -> ImportStats:
    """Converts a mitmproxy flow file or a HAR file into the cassette `dest`, written atomically.

    Raises:
        McpTapeError: the file cannot be read, is neither format, or holds no MCP traffic.
        CassetteError: the cassette cannot be written.
    """
    source, out = Path(src), Path(dest)
    try:
        data = source.read_bytes()
    except OSError as exc:
        raise McpTapeError(f"{source}: cannot read: {exc.strerror}") from None
    fmt, flows, other = read_capture(data, str(source))
    buffers: list[CassetteBuffer] = []

    def writer_for(header: Header) -> CassetteBuffer:
        buffers.append(CassetteBuffer(header))
        return buffers[0]

    if not flows:
        held = f"only {other} flow(s) that are not HTTP" if other else "no flows"
        raise McpTapeError(f"{source}: the {fmt} capture holds {held}, so no MCP traffic to import")
    try:
        imported, skipped, transport = convert(flows, writer_for, config or RedactConfig())
    except McpTapeError as exc:
        raise McpTapeError(f"{source}: {exc}") from None
    if not buffers:
        raise McpTapeError(f"{source}: nothing to import")
    write_atomic(out, buffers[0].data())
    events = buffers[0].lines - 1
    return ImportStats(fmt, imported, skipped + other, events, transport)
