"""Verify: re-drive a cassette's client side against a live server, record it, diff it.

The decisions are `mcptape.diff.redrive.Driver`'s (sans-IO): it turns a recorded session
into the messages to send next, one request at a time, with fresh ids, and answers what
the server asks (legacy server-to-client requests, 2026-07-28 `input_required` results)
with the client answers the cassette recorded. `--protocol` re-drives a legacy cassette in
2026-07-28 (or the other way): the handshake and `_meta` envelope are rewritten.

Two thin shells feed it: `run_stdio` (spawn the server, speak ndjson) and `run_http`
(POST to a Streamable HTTP endpoint, JSON or SSE answers). Both record the new session
through the same `Recorder` as `mcptape record`, so the new cassette diffs like any other.
"""

from __future__ import annotations

import subprocess
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio

from mcptape.capture.recorder import Recorder
from mcptape.cassette import Cassette, CassetteWriter, load, new_header
from mcptape.diff.redrive import Answers, Driver, Step, build_steps, collect_answers, session_era
from mcptape.errors import RecordError
from mcptape.model import Header, Source, Transport
from mcptape.pairing import pair
from mcptape.redact import RedactConfig, Redactor
from mcptape.wire.jsonrpc import NOT_JSON, decode, encode, messages_of, request_params
from mcptape.wire.ndjson import LineFramer
from mcptape.wire.sse import SseParser

__all__ = [
    "Answers", "DEFAULT_TIMEOUT", "Driver", "Step", "build_steps", "collect_answers", "redaction_of", "run_http",
    "run_stdio", "session_era", "verify",
]  # fmt: skip

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for the server's next message before abandoning the request in flight."""


async def run_stdio(driver: Driver, command: list[str], recorder: Recorder, timeout: float = DEFAULT_TIMEOUT,
                    env: dict[str, str] | None = None) -> None:  # fmt: skip
    """Spawns `command`, drives it over ndjson, records both directions, waits for it to exit."""
    proc = await anyio.open_process(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdin and proc.stdout and proc.stderr
    framer = LineFramer()

    async def send(msgs: list[dict[str, Any]]) -> None:
        for m in msgs:
            data = encode(m)
            recorder.payload(Source.CLIENT, data)
            await proc.stdin.send(data + b"\n")  # type: ignore[union-attr]

    stderr_done = anyio.Event()

    async def pump_stderr() -> None:
        err = LineFramer()
        try:
            async for chunk in proc.stderr:  # type: ignore[union-attr]
                for line in err.feed(chunk):
                    recorder.stderr(line if isinstance(line, bytes) else line.head)
        finally:
            stderr_done.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(pump_stderr)
        try:
            await send(driver.start())
            while not driver.done:
                chunk = b""
                with anyio.move_on_after(timeout):
                    chunk = await proc.stdout.receive()
                if not chunk:
                    await send(driver.timeout())
                    continue
                for line in framer.feed(chunk):
                    await _deliver(line, recorder, driver, send)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
        with anyio.CancelScope(shield=True):
            await _drain(proc, recorder, framer, timeout)
            with anyio.move_on_after(5):
                await stderr_done.wait()
        tg.cancel_scope.cancel()
    with anyio.CancelScope(shield=True):
        with anyio.move_on_after(5):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    recorder.exit(proc.returncode)
    recorder.end({"abandoned": driver.abandoned} if driver.abandoned else None)


async def _deliver(line: Any, recorder: Recorder, driver: Driver, send: Callable[[list[dict[str, Any]]], Any]) -> None:
    recorder.payload(Source.SERVER, line)
    value = decode(line) if isinstance(line, bytes) else NOT_JSON
    if value is NOT_JSON:
        return
    for m in messages_of(value):
        await send(driver.on_message(m))


async def _drain(proc: Any, recorder: Recorder, framer: LineFramer, timeout: float) -> None:
    """Closes the server's stdin and records what it still says until it closes stdout."""
    await proc.stdin.aclose()
    recorder.eof(Source.CLIENT)
    with anyio.move_on_after(timeout):
        async for chunk in proc.stdout:
            for line in framer.feed(chunk):
                recorder.payload(Source.SERVER, line)
    recorder.eof(Source.SERVER)


async def run_http(driver: Driver, url: str, recorder: Recorder, timeout: float = DEFAULT_TIMEOUT) -> None:
    """Drives a Streamable HTTP endpoint: one POST per client message, JSON or SSE answers.

    Carries `Mcp-Session-Id` (legacy) and `MCP-Protocol-Version`; in 2026-07-28 also
    `Mcp-Method` and `Mcp-Name`. Answers to server requests arriving on an SSE stream are
    POSTed while that stream is still open, as the server waits for them.
    """
    try:
        import httpx  # optional: only `verify --url` needs it
    except ModuleNotFoundError:
        raise RecordError("mcptape verify --url needs httpx: pip install httpx") from None
    state = _HttpState(url)
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as client:
        queue = deque(driver.start())
        while queue:
            msg = queue.popleft()
            try:
                with anyio.fail_after(timeout):
                    await _post(client, state, driver, recorder, msg, queue)
            except (TimeoutError, httpx.HTTPError) as exc:
                recorder.http(None, {"exchange": state.exchange, "error": f"{type(exc).__name__}: {exc}"})
                queue.extend(driver.timeout())
                continue
            unanswered = driver.pending is not None and "method" in msg and driver.pending.get("id") == msg.get("id")
            if unanswered and not queue:
                queue.extend(driver.timeout())  # e.g. an HTTP error whose body names no id
    recorder.end({"abandoned": driver.abandoned} if driver.abandoned else None)


@dataclass(slots=True)
class _HttpState:
    url: str
    session: str | None = None
    exchange: int = 0


def _headers(state: _HttpState, driver: Driver, msg: dict[str, Any]) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if state.session:
        headers["Mcp-Session-Id"] = state.session
    method = msg.get("method")
    if driver.protocol and method != "initialize":
        headers["MCP-Protocol-Version"] = driver.protocol
    if driver.era == "modern" and isinstance(method, str):
        headers["Mcp-Method"] = method
        params = request_params(msg)
        name = params.get("uri") if method == "resources/read" else params.get("name")
        if method in ("tools/call", "prompts/get", "resources/read") and isinstance(name, str):
            headers["Mcp-Name"] = name
    return headers


async def _post(client: Any, state: _HttpState, driver: Driver, recorder: Recorder, msg: dict[str, Any], queue: deque[dict[str, Any]]) -> None:
    state.exchange += 1
    meta: dict[str, Any] = {"exchange": state.exchange, "method": "POST", "path": state.url}
    body = encode(msg)
    recorder.payload(Source.CLIENT, body, http=meta)
    async with client.stream("POST", state.url, content=body, headers=_headers(state, driver, msg)) as resp:
        sid = resp.headers.get("mcp-session-id")
        if sid and driver.era == "legacy":
            state.session = sid
        ctype = resp.headers.get("content-type", "")
        head = {**meta, "status": resp.status_code, "content_type": ctype.split(";")[0] or None}
        if "text/event-stream" in ctype:
            parser = SseParser()
            async for chunk in resp.aiter_bytes():
                for ev in parser.feed(chunk):
                    if ev.comment is not None or not ev.data:
                        continue
                    sse = {k: v for k, v in (("id", ev.id), ("event", ev.event)) if v is not None}
                    await _http_message(client, state, driver, recorder, ev.data.encode(), {**head, "sse": sse}, queue)
            return
        data = await resp.aread()
        if data.strip():
            await _http_message(client, state, driver, recorder, data, head, queue)
        elif resp.status_code >= 400:
            recorder.http(Source.SERVER, head)


async def _http_message(client: Any, state: _HttpState, driver: Driver, recorder: Recorder, data: bytes, head: dict[str, Any],
                        queue: deque[dict[str, Any]]) -> None:  # fmt: skip
    recorder.payload(Source.SERVER, data, http=head)
    value = decode(data)
    if value is NOT_JSON:
        if head.get("status", 200) >= 400:
            queue.extend(driver.timeout())
        return
    for m in messages_of(value):
        for out in driver.on_message(m):
            if "method" in out:
                queue.append(out)  # the next request: after this stream ends
            else:
                await _post(client, state, driver, recorder, out, queue)  # an answer the server is waiting for


def redaction_of(header: Header) -> RedactConfig:
    """The redaction rules the cassette was recorded with, to record the new session alike."""
    red = header.redaction or {}
    base = RedactConfig(enabled=bool(red.get("enabled", True)))
    if "keys" in red and "patterns" in red:
        base = RedactConfig(enabled=base.enabled, keys=tuple(red["keys"]), patterns=tuple(red["patterns"]))
    return base


def verify(cassette: Cassette, out: Path, *, command: list[str] | None = None, url: str | None = None,
           protocol: str | None = None, timeout: float = DEFAULT_TIMEOUT, env: dict[str, str] | None = None) -> Cassette:  # fmt: skip
    """Re-drives `cassette` against a live server (`command` over stdio, or `url`), records it to `out`.

    Returns the new cassette, ready to diff against the old one.

    Raises:
        RecordError: the server could not be started or reached.
        CassetteError: the new cassette cannot be written.
    """
    session = pair(cassette.events)
    steps, era, version = build_steps(session, protocol)
    driver = Driver(steps, collect_answers(session), era, version)
    config = redaction_of(cassette.header)
    target: dict[str, Any] = {"command": list(command)} if command else {"url": url}
    transport = Transport.STDIO if command else Transport.STREAMABLE_HTTP
    writer = CassetteWriter(out, new_header(transport, target, config.describe()))
    recorder = Recorder(writer, Redactor(config))
    try:
        if command:
            anyio.run(_guarded_stdio, driver, command, recorder, timeout, env)
        else:
            assert url is not None
            anyio.run(run_http, driver, url, recorder, timeout)
    finally:
        writer.close()
    return load(out)


async def _guarded_stdio(driver: Driver, command: list[str], recorder: Recorder, timeout: float, env: dict[str, str] | None) -> None:
    try:
        await run_stdio(driver, command, recorder, timeout, env)
    except OSError as exc:
        raise RecordError(f"cannot start {command[0]!r}: {exc.strerror or exc}") from None
