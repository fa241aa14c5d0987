"""Verify's Streamable HTTP shell: one POST per client message, JSON or SSE answers.

Carries `Mcp-Session-Id` (legacy) and `MCP-Protocol-Version`; in 2026-07-28 also
`Mcp-Method` and `Mcp-Name`. Answers to server requests arriving on an SSE stream are
POSTed while that stream is still open, as the server waits for them. A refused
connection stops the run: the `Outcome` says the server was unreachable.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import anyio

from mcptape.capture.recorder import Recorder
from mcptape.cassette.model import Source
from mcptape.errors import RecordError
from mcptape.extras import missing_extra_message
from mcptape.wire.jsonrpc import NOT_JSON, decode, encode, messages_of, request_params
from mcptape.wire.sse import SseParser

from .outcome import Outcome
from .plan import Driver


async def run_http(driver: Driver, url: str, recorder: Recorder, timeout: float) -> Outcome:
    """Drives the Streamable HTTP endpoint `url` to the end of the recorded session."""
    try:
        import httpx  # optional: only `verify --url` needs it
    except ModuleNotFoundError:
        raise RecordError(missing_extra_message("http", "mcptape verify --url")) from None
    state = _HttpState(url)
    outcome = Outcome(target=url)
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout)) as client:
        queue = deque(driver.start())
        while queue:
            msg = queue.popleft()
            try:
                with anyio.fail_after(timeout):
                    await _post(client, state, driver, recorder, msg, queue)
            except httpx.TransportError as exc:
                recorder.http(
                    None, {"exchange": state.exchange, "error": f"{type(exc).__name__}: {exc}"}
                )
                if isinstance(exc, httpx.TimeoutException) and not isinstance(
                    exc, httpx.ConnectTimeout
                ):
                    queue.extend(driver.timeout())
                    continue
                outcome.unreachable = (
                    f"{type(exc).__name__}: {exc}"  # refused, reset: nothing more will answer
                )
                outcome.unanswered = driver.remaining()
                break
            except (TimeoutError, httpx.HTTPError) as exc:
                recorder.http(
                    None, {"exchange": state.exchange, "error": f"{type(exc).__name__}: {exc}"}
                )
                queue.extend(driver.timeout())
                continue
            unanswered = (
                driver.pending is not None
                and "method" in msg
                and driver.pending.get("id") == msg.get("id")
            )
            if unanswered and not queue:
                queue.extend(driver.timeout())  # e.g. an HTTP error whose body names no id
    outcome.abandoned = list(driver.abandoned)
    return outcome


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


async def _post(
    client: Any,
    state: _HttpState,
    driver: Driver,
    recorder: Recorder,
    msg: dict[str, Any],
    queue: deque[dict[str, Any]],
) -> None:
    state.exchange += 1
    meta: dict[str, Any] = {"exchange": state.exchange, "method": "POST", "path": state.url}
    body = encode(msg)
    recorder.payload(Source.CLIENT, body, http=meta)
    async with client.stream(
        "POST", state.url, content=body, headers=_headers(state, driver, msg)
    ) as resp:
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
                    await _http_message(
                        client,
                        state,
                        driver,
                        recorder,
                        ev.data.encode(),
                        {**head, "sse": sse},
                        queue,
                    )
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
                await _post(
                    client, state, driver, recorder, out, queue
                )  # an answer the server is waiting for
