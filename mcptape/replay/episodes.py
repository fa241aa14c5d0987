"""Record mode `new_episodes`: replay what the cassette has, record what it lacks.

An in-process transport (like `memory.ReplayTransport`) whose requests go to the replay
engine first. A request the cassette has no answer for goes to the real server instead,
which runs under the stdio recorder (`mcptape record`) in a child process, started on first
need and brought to the client's state first (a legacy client's `initialize` is sent
ahead). Everything the server sends back for it (progress, logs, server-to-client requests,
whose answers are routed back to it) reaches the client. When the client disconnects, the
newly recorded exchanges are appended to the cassette (atomically).
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcptape.cassette import Cassette, load, save
from mcptape.cassette.model import Event, Kind
from mcptape.wire.jsonrpc import MessageType, classify, decode, encode, id_key
from mcptape.wire.ndjson import LineFramer

from .engine import ReplayEngine, Send
from .memory import ReplayTransport
from .report import EXHAUSTED, NO_MATCH
from .sdk_compat import SessionMessage, message_of

_HANDSHAKE = ("initialize", "notifications/initialized")


class EpisodesTransport(ReplayTransport):
    """`ReplayTransport` that records what the cassette cannot answer and appends it on exit."""

    def __init__(self, cassette: str | os.PathLike[str], server: list[str], **kwargs: Any) -> None:
        super().__init__(cassette, **kwargs)
        self.path = Path(cassette)
        self.server = server
        self._tmp = Path(tempfile.mkdtemp(prefix="mcptape-episodes-")) / "new.jsonl"
        self._live: Process | None = None
        self._handshake: list[dict[str, Any]] = []
        self._live_requests: set[Any] = set()
        self.recorded = 0
        """How many requests went to the real server."""

    async def _serve(self, engine: ReplayEngine, inbox: MemoryObjectReceiveStream[SessionMessage],
                     outbox: MemoryObjectSendStream[SessionMessage | Exception], tg: anyio.abc.TaskGroup) -> None:  # fmt: skip
        try:
            async for incoming in inbox:
                value = incoming.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
                if isinstance(value, dict) and value.get("method") in _HANDSHAKE:
                    self._handshake.append(value)
                if self._is_live_answer(value):
                    await self._to_live(value)
                    continue
                outputs = engine.receive(value)
                if _unmatched(outputs) and classify(value) is MessageType.REQUEST:
                    await self._forward(value, outbox, tg)
                    continue
                await self._deliver(outputs, outbox, 0.0, engine)  # new episodes: no faults
        finally:
            with anyio.CancelScope(shield=True):
                await self._finish()

    def _is_live_answer(self, value: Any) -> bool:
        return (
            classify(value) in (MessageType.RESULT, MessageType.ERROR)
            and id_key(value.get("id")) in self._live_requests
        )

    async def _forward(
        self,
        request: dict[str, Any],
        outbox: MemoryObjectSendStream[SessionMessage | Exception],
        tg: anyio.abc.TaskGroup,
    ) -> None:
        if self._live is None:
            await self._start_live(outbox, tg)
        self.recorded += 1
        await self._to_live(request)

    async def _start_live(
        self, outbox: MemoryObjectSendStream[SessionMessage | Exception], tg: anyio.abc.TaskGroup
    ) -> None:
        cmd = [
            sys.executable,
            "-m",
            "mcptape",
            "record",
            "-q",
            "-o",
            str(self._tmp),
            "--",
            *self.server,
        ]
        self._live = await anyio.open_process(cmd, stderr=None)
        started = anyio.Event()
        tg.start_soon(self._pump_live, outbox, started)
        for msg in self._handshake:
            await self._to_live(msg)
        await started.wait()

    async def _pump_live(
        self, outbox: MemoryObjectSendStream[SessionMessage | Exception], started: anyio.Event
    ) -> None:
        assert self._live and self._live.stdout
        framer = LineFramer()
        pending_init = {id_key(m["id"]) for m in self._handshake if "id" in m}
        if not pending_init:
            started.set()
        async for chunk in self._live.stdout:
            for line in framer.feed(chunk):
                msg = decode(line) if isinstance(line, bytes) else None
                if not isinstance(msg, dict):
                    continue
                key = id_key(msg.get("id"))
                if key in pending_init and "method" not in msg:
                    pending_init.discard(
                        key
                    )  # the handshake's answer: the client had it from the cassette
                    if not pending_init:
                        started.set()
                    continue
                if classify(msg) is MessageType.REQUEST:
                    self._live_requests.add(key)
                try:
                    await outbox.send(message_of(msg))
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return
        started.set()

    async def _to_live(self, msg: dict[str, Any]) -> None:
        assert self._live and self._live.stdin
        await self._live.stdin.send(encode(msg) + b"\n")

    async def _finish(self) -> None:
        if self._live is None:
            return
        live, self._live = self._live, None
        assert live.stdin
        await live.stdin.aclose()
        with anyio.move_on_after(10) as scope:
            await live.wait()
        if scope.cancelled_caught:
            live.kill()
            await live.wait()
        append_episode(self.path, self._tmp)


def _unmatched(outputs: Sequence[Any]) -> bool:
    for out in outputs:
        if isinstance(out, Send) and isinstance(out.msg, dict):
            err = out.msg.get("error")
            if isinstance(err, dict) and err.get("code") in (NO_MATCH, EXHAUSTED):
                return True
    return False


def append_episode(cassette: Path, new: Path) -> int:
    """Appends the exchanges recorded in `new` (its handshake left out) to `cassette`; returns how many events."""
    base = load(cassette)
    extra = load(new)
    skip_ids: set[Any] = set()
    kept: list[Event] = []
    for ev in extra.events:
        if ev.kind is not Kind.MESSAGE:
            continue  # process events (stderr, exit) belong to the temporary recording
        msg = ev.msg
        if isinstance(msg, dict):
            if msg.get("method") in _HANDSHAKE:
                if "id" in msg:
                    skip_ids.add(id_key(msg["id"]))
                continue
            if "method" not in msg and id_key(msg.get("id")) in skip_ids:
                continue
        kept.append(ev)
    if not kept:
        return 0
    # New exchanges go before the trailing process events (the client's end of input, the
    # server's exit, the end marker): a replay plays nothing recorded after the client left.
    cut = len(base.events)
    while cut > 0 and base.events[cut - 1].kind is not Kind.MESSAGE:
        cut -= 1
    head, tail = base.events[:cut], base.events[cut:]
    t0 = head[-1].t if head else 0.0
    added = [e._replace(t=t0 + (e.t - kept[0].t)) for e in kept]
    shift = added[-1].t - t0
    ordered = [*head, *added, *(e._replace(t=e.t + shift) for e in tail)]
    save(
        Cassette(base.header, [e._replace(seq=i) for i, e in enumerate(ordered, start=1)]), cassette
    )
    return len(kept)
