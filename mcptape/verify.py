"""Verify: re-drive a cassette's client side against a live server, record it, diff it.

`Driver` is sans-IO: it turns a recorded session into the messages to send next, one
request at a time, with fresh ids, and answers what the server asks (legacy server-to-
client requests, 2026-07-28 `input_required` results) with the client answers the
cassette recorded. `--protocol` re-drives a legacy cassette in 2026-07-28 (or the other
way): the handshake and `_meta` envelope are rewritten, the calls are the same.

Two thin shells feed it: `run_stdio` (spawn the server, speak ndjson) and `run_http`
(POST to a Streamable HTTP endpoint, JSON or SSE answers). Both record the new session
through the same `Recorder` as `mcptape record`, so the new cassette diffs like any other.
"""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio

from mcptape.capture.recorder import Recorder
from mcptape.cassette import Cassette, CassetteWriter, load, new_header
from mcptape.errors import RecordError
from mcptape.diff.normalize import input_entry
from mcptape.model import Header, Source, Transport
from mcptape.pairing import Exchange, Session, pair
from mcptape.redact import RedactConfig, Redactor
from mcptape.versions import (
    KNOWN,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    is_modern,
)
from mcptape.wire.jsonrpc import NOT_JSON, MessageType, classify, decode, encode, id_key, messages_of, request_meta, request_params
from mcptape.wire.ndjson import LineFramer
from mcptape.wire.sse import SseParser

MAX_INPUT_ROUNDS = 8
"""How many `input_required` rounds one call may take before the driver gives up on it."""

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for the server's next message before abandoning the request in flight."""

ERA_METHODS = frozenset({"initialize", "notifications/initialized", "server/discover", "logging/setLevel", "ping"})
"""Client messages that belong to an era's plumbing; rewritten when the era changes."""


@dataclass(slots=True)
class Step:
    """One client message to send, with the recorded exchange whose answers it may need."""

    msg: dict[str, Any]
    source: int | None = None


@dataclass(slots=True)
class Answers:
    """Recorded client answers to server input requests: per recorded exchange, and all together."""

    by_exchange: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    every: list[dict[str, Any]] = field(default_factory=list)

    def add(self, index: int, entry: dict[str, Any]) -> None:
        self.by_exchange.setdefault(index, []).append(entry)
        self.every.append(entry)

    def find(self, index: int | None, method: Any, params: Any) -> Any:
        """The recorded answer: same exchange and params, else same method, else anywhere."""
        want = input_entry(method, params, None)["params"]
        local = self.by_exchange.get(index, []) if index is not None else []
        for pool in (local, self.every):
            for entry in pool:
                if entry["method"] == method and entry["params"] == want and entry["answer"] is not None:
                    return entry["answer"]
            for entry in pool:
                if entry["method"] == method and entry["answer"] is not None:
                    return entry["answer"]
        return None


def session_era(session: Session) -> tuple[str, str | None]:
    """("legacy" | "modern", protocol version) of a recorded session."""
    for ex in session.exchanges:
        ver = request_meta(ex.msg).get(META_PROTOCOL_VERSION)
        if isinstance(ver, str):
            return ("modern" if is_modern(ver) else "legacy"), ver
        if ex.method == "initialize":
            res = ex.result
            ver = res.get("protocolVersion") if isinstance(res, dict) else request_params(ex.msg).get("protocolVersion")
            return "legacy", ver if isinstance(ver, str) else None
    return "legacy", None


def collect_answers(session: Session) -> Answers:
    """Every client answer the cassette recorded, legacy and 2026-07-28 alike."""
    answers = Answers()
    for ex in session.exchanges:
        root = ex.retry_of if ex.retry_of is not None else ex.index
        replies = {id_key(it.msg.get("id")): it.msg for it in ex.items
                   if it.src is Source.CLIENT and it.type in (MessageType.RESULT, MessageType.ERROR)}  # fmt: skip
        for it in ex.items:
            if it.src is Source.SERVER and it.type is MessageType.REQUEST:
                reply = replies.get(id_key(it.msg.get("id")))
                answer = None if reply is None else reply.get("result", {"error": reply.get("error")})
                answers.add(root, input_entry(it.msg.get("method"), it.msg.get("params"), answer))
        responses = request_params(ex.msg).get("inputResponses")
        if isinstance(responses, dict):
            prev = _previous_in_chain(session, ex)
            requests = prev.result.get("inputRequests") if prev is not None and isinstance(prev.result, dict) else {}
            for key, answer in responses.items():
                req = (requests or {}).get(key) or {}
                answers.add(root, input_entry(req.get("method"), req.get("params"), answer))
    return answers


def _previous_in_chain(session: Session, ex: Exchange) -> Exchange | None:
    for prev in reversed(session.exchanges[: ex.index]):
        if prev.method == ex.method and prev.name == ex.name and isinstance(prev.result, dict) \
                and prev.result.get("resultType") == "input_required":  # fmt: skip
            return prev
    return None


def build_steps(session: Session, protocol: str | None = None) -> tuple[list[Step], str, str | None]:
    """The client messages to re-send, in order, rewritten for `protocol` when given."""
    era, version = session_era(session)
    target = protocol or version
    target_era = "modern" if is_modern(target) else "legacy"
    firsts = [ex for ex in session.exchanges if ex.retry_of is None]
    caps, info, level = _client_identity(firsts)
    if level is None and era == "legacy":
        level = _observed_log_level(session)
    steps: list[Step] = []
    if target_era == "modern" and era == "legacy":
        meta_base = {META_PROTOCOL_VERSION: target, META_CLIENT_CAPABILITIES: caps or {}}
        if info is not None:
            meta_base[META_CLIENT_INFO] = info
        steps.append(Step({"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": {"_meta": dict(meta_base)}}))
    if target_era == "legacy" and era == "modern":
        init = {"protocolVersion": target or KNOWN[3], "capabilities": caps or {}, "clientInfo": info or {"name": "mcptape-verify", "version": "0"}}
        steps.append(Step({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        steps.append(Step({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    state = _Rewrite(target, caps, info, level)
    for ex in firsts:
        msg = copy.deepcopy(ex.msg)
        method = ex.method
        if method in ("notifications/cancelled", "subscriptions/listen"):
            continue  # a cancel names a recorded id; a listen stream never answers, so it would stall the driver
        if era == target_era:
            if method == "initialize" and protocol:
                msg.setdefault("params", {})["protocolVersion"] = protocol
            steps.append(Step(msg, ex.index))
        elif method == "logging/setLevel":
            lvl = request_params(msg).get("level")
            state.level = lvl if isinstance(lvl, str) else state.level
        elif method not in ERA_METHODS and not ex.is_notification:
            steps.extend(Step(m, ex.index) for m in (state.to_modern(msg) if target_era == "modern" else state.to_legacy(msg)))
    return steps, target_era, target


@dataclass(slots=True)
class _Rewrite:
    """Moves one request across eras: the handshake's identity into `_meta`, or `_meta` back out."""

    target: str | None
    caps: Any
    info: Any
    level: str | None
    sent_level: str | None = None

    def to_modern(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        params = msg.setdefault("params", {})
        if not isinstance(params, dict):
            return [msg]
        meta = params.setdefault("_meta", {})
        meta.update({META_PROTOCOL_VERSION: self.target, META_CLIENT_CAPABILITIES: self.caps or {}})
        if self.info is not None:
            meta[META_CLIENT_INFO] = self.info
        if self.level is not None:
            meta[META_LOG_LEVEL] = self.level
        return [msg]

    def to_legacy(self, msg: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        params = msg.setdefault("params", {})
        if not isinstance(params, dict):
            return [msg]
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        want = meta.get(META_LOG_LEVEL)
        if isinstance(want, str) and want != self.sent_level:
            out.append({"jsonrpc": "2.0", "id": 0, "method": "logging/setLevel", "params": {"level": want}})
            self.sent_level = want
        kept = {k: v for k, v in meta.items() if not k.startswith("io.modelcontextprotocol/")}
        if kept:
            params["_meta"] = kept
        else:
            params.pop("_meta", None)
        return [*out, msg]


LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
"""MCP log levels, most verbose first."""


def _observed_log_level(session: Session) -> str | None:
    """The most verbose level among recorded log messages: what a legacy server sent unasked."""
    seen = {it.msg.get("params", {}).get("level") for ex in session.exchanges for it in ex.items
            if it.src is Source.SERVER and it.msg.get("method") == "notifications/message"}  # fmt: skip
    return next((lvl for lvl in LOG_LEVELS if lvl in seen), None)


def _client_identity(exchanges: list[Exchange]) -> tuple[Any, Any, str | None]:
    """Client capabilities, client info and log level, from the handshake or the first modern request."""
    caps = info = level = None
    for ex in exchanges:
        params = request_params(ex.msg)
        meta = request_meta(ex.msg)
        if ex.method == "initialize":
            caps, info = params.get("capabilities"), params.get("clientInfo")
        elif META_PROTOCOL_VERSION in meta and caps is None:
            caps, info = meta.get(META_CLIENT_CAPABILITIES), meta.get(META_CLIENT_INFO)
            lvl = meta.get(META_LOG_LEVEL)
            level = lvl if isinstance(lvl, str) else None
        if caps is not None:
            break
    return caps, info, level


class Driver:
    """Sans-IO: what to send next, given what the server said. One request in flight at a time."""

    def __init__(self, steps: list[Step], answers: Answers, era: str, protocol: str | None) -> None:
        self.steps = deque(steps)
        self.answers = answers
        self.era = era
        self.protocol = protocol
        """The version to announce in HTTP headers (legacy: as negotiated)."""
        self._next_id = 1
        self.pending: dict[str, Any] | None = None
        self._pending_source: int | None = None
        self._rounds = 0
        self.abandoned: list[str] = []
        """Requests that got no answer in time (method names), for the report."""

    @property
    def done(self) -> bool:
        return self.pending is None and not self.steps

    def _fresh(self, msg: dict[str, Any]) -> dict[str, Any]:
        msg = dict(msg)
        msg["id"] = self._next_id
        self._next_id += 1
        return msg

    def start(self) -> list[dict[str, Any]]:
        """The first messages to send."""
        return self._advance()

    def _advance(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        self.pending = None
        while self.steps:
            step = self.steps.popleft()
            if "id" not in step.msg:
                out.append(step.msg)
                continue
            msg = self._fresh(step.msg)
            self.pending, self._pending_source, self._rounds = msg, step.source, 0
            out.append(msg)
            break
        return out

    def on_message(self, msg: Any) -> list[dict[str, Any]]:
        """A message from the server; returns what to send in reply (answers, then the next request)."""
        typ = classify(msg)
        if typ is MessageType.REQUEST:
            return [self._answer(msg)]
        if typ not in (MessageType.RESULT, MessageType.ERROR) or self.pending is None:
            return []
        if id_key(msg.get("id")) != id_key(self.pending.get("id")):
            return []
        result = msg.get("result")
        if self.pending.get("method") == "initialize" and isinstance(result, dict):
            ver = result.get("protocolVersion")
            self.protocol = ver if isinstance(ver, str) else self.protocol
        if isinstance(result, dict) and result.get("resultType") == "input_required" and self._rounds < MAX_INPUT_ROUNDS:
            retry = self._retry(result)
            if retry is not None:
                self._rounds += 1
                self.pending = self._fresh(retry)
                return [self.pending]
        return self._advance()

    def timeout(self) -> list[dict[str, Any]]:
        """Nothing came in time: give up on the request in flight and go on."""
        if self.pending is not None:
            self.abandoned.append(str(self.pending.get("method")))
        return self._advance()

    def _answer(self, req: dict[str, Any]) -> dict[str, Any]:
        method = req.get("method")
        if method == "ping":
            return {"jsonrpc": "2.0", "id": req.get("id"), "result": {}}
        answer = self.answers.find(self._pending_source, method, req.get("params"))
        if answer is None:
            err = {"code": -32601, "message": f"mcptape verify: the cassette has no recorded answer to {method}"}
            return {"jsonrpc": "2.0", "id": req.get("id"), "error": err}
        if isinstance(answer, dict) and set(answer) == {"error"}:
            return {"jsonrpc": "2.0", "id": req.get("id"), "error": answer["error"]}
        return {"jsonrpc": "2.0", "id": req.get("id"), "result": answer}

    def _retry(self, result: dict[str, Any]) -> dict[str, Any] | None:
        assert self.pending is not None
        responses = {}
        for key, req in (result.get("inputRequests") or {}).items():
            answer = self.answers.find(self._pending_source, req.get("method"), req.get("params")) if isinstance(req, dict) else None
            if answer is None:
                return None
            responses[key] = answer
        params = dict(request_params(self.pending))
        params["inputResponses"] = responses
        if "requestState" in result:
            params["requestState"] = result["requestState"]
        else:
            params.pop("requestState", None)
        return {k: v for k, v in self.pending.items() if k != "params"} | {"params": params}


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
