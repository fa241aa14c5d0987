"""The in-process replay transport: the engine behind anyio memory streams, for the `mcp` SDK.

`ReplayTransport` is an `mcp.client.Transport` (an async context manager yielding a read
stream of `SessionMessage | Exception` and a write stream of `SessionMessage`), so the SDK
`Client` (2.x) takes it directly and a test needs no subprocess:

    async with Client(replay_transport("tests/cassettes/demo.jsonl"), mode="auto") as client:
        result = await client.call_tool("add", {"a": 1, "b": 2})

With the SDK's 1.x line, its streams go to a `ClientSession`:

    async with replay_transport("tests/cassettes/demo.jsonl") as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()

The cassette is read and indexed once per transport; every entry (every client using it)
is a new client session from the top of the cassette. What differs between the SDK's lines
is in `sdk_compat`, the only module of `mcptape.replay` that imports the SDK.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from types import TracebackType
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcptape.cassette import Cassette
from mcptape.errors import McpTapeError
from mcptape.replay.cache import open_for_replay

from .engine import Note, ReplayConfig, ReplayEngine, Send
from .faults import FaultRule, Hangup, Step, parse_rules
from .index import ReplayIndex
from .matcher import DEFAULT_MATCHERS, Matcher, MatchPolicy
from .report import CLI_HINTS, Hints, UnplayedReport
from .sdk_compat import SessionMessage, message_of, parsed_line

NoteHandler = Callable[[Note], None]
Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]
]
"""What entering a `ReplayTransport` yields: the client's read and write streams. The SDK's public
seam is the `mcp.client.Transport` protocol (an async context manager yielding a read stream of
`SessionMessage | Exception` and a write stream of `SessionMessage`); anyio memory streams are
such streams (tests/e2e/test_replay_memory.py checks it against the installed SDK)."""


class UnplayedExchangesError(McpTapeError):
    """Strict replay: the client disconnected while recorded exchanges were never played."""


def _to_stderr(note: Note) -> None:
    print(
        f"mcptape replay: {note.level}: {note.text}"
        if not note.text.startswith("mcptape")
        else note.text,
        file=sys.stderr,
    )


class ReplayTransport:
    """A cassette served in process; see the module docstring."""

    def __init__(
        self,
        cassette: Cassette | str | os.PathLike[str],
        config: ReplayConfig | None = None,
        *,
        strict: bool = False,
        timing: float | None = None,
        on_note: NoteHandler | None = _to_stderr,
        faults: Any = (),
    ) -> None:
        self.faults: tuple[FaultRule, ...] = parse_rules(faults)
        """Fault rules (`mcptape.replay.faults`): overlay rules each session applies afresh."""
        self.cassette = cassette if isinstance(cassette, Cassette) else open_for_replay(cassette)
        self.config = (config or ReplayConfig()).with_faults(self.faults)
        self.index = ReplayIndex(self.cassette, self.config.match)
        self.strict = strict
        self.timing = timing
        """None: instant; else a speed factor on the recorded delays (1.0: as recorded, 2.0: twice as fast)."""
        self.on_note = on_note
        self.engine: ReplayEngine | None = None
        """The engine of the current (or last) session."""
        self._cm: AbstractAsyncContextManager[Streams] | None = None

    @asynccontextmanager
    async def _connect(self) -> AsyncIterator[Streams]:
        engine = self.engine = ReplayEngine(self.index, self.config)
        to_client, client_reads = anyio.create_memory_object_stream[SessionMessage | Exception](
            math.inf
        )
        client_writes, from_client = anyio.create_memory_object_stream[SessionMessage](math.inf)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._serve, engine, from_client, to_client, tg)
            try:
                yield client_reads, client_writes
            finally:
                tg.cancel_scope.cancel()
                for stream in (client_writes, from_client, to_client, client_reads):
                    stream.close()
        if self.strict and engine.unplayed():
            raise UnplayedExchangesError(
                UnplayedReport.of(self.cassette, engine.unplayed()).text(self.config.hints)
            )

    async def _serve(
        self,
        engine: ReplayEngine,
        inbox: MemoryObjectReceiveStream[SessionMessage],
        outbox: MemoryObjectSendStream[SessionMessage | Exception],
        tg: anyio.abc.TaskGroup,
    ) -> None:
        for note in engine.overlay.notes if engine.overlay is not None else ():
            self._note(note)
        async for incoming in inbox:
            value = incoming.message.model_dump(by_alias=True, mode="json", exclude_unset=True)
            steps = engine.receive(value)
            if any(isinstance(s, Hangup) for s in steps):  # (an overlay rule's)
                await self._deliver(steps, outbox, anyio.current_time(), engine)
                return  # the connection is gone: nothing more is read or answered
            # a step given a delay (by an overlay rule, or a declared answer's) is scheduled
            if self.timing is None and not any(isinstance(s, Send) and s.delay for s in steps):
                await self._deliver(steps, outbox, 0.0, engine)
            else:
                tg.start_soon(self._deliver, steps, outbox, anyio.current_time(), engine)

    def _note(self, note: Note) -> None:
        if self.on_note is not None:
            self.on_note(note)

    async def _deliver(
        self,
        steps: Sequence[Step],
        outbox: MemoryObjectSendStream[SessionMessage | Exception],
        start: float,
        engine: ReplayEngine,
    ) -> None:
        """Carries out one message's steps: what the SDK's stdio client would hand its session for
        each; a delayed step of a request the client cancelled meanwhile is not sent."""
        for step in steps:
            if isinstance(step, Note):
                self._note(step)
                continue
            if not isinstance(step, (Send, Hangup)):
                continue  # Status is HTTP-only: an overlay outside HTTP never makes one
            recorded = (
                step.after / self.timing
                if isinstance(step, Send) and self.timing is not None
                else 0.0
            )
            wait = recorded + step.delay
            delay = start + wait - anyio.current_time() if wait > 0 else 0.0  # (start is past)
            if delay > 0:
                await anyio.sleep(delay)
            if isinstance(step, Hangup):
                outbox.close()  # the client's read stream ends: its pending requests fail as closed
                return
            if delay > 0 and engine.cancelled(step.request_id):
                continue
            items: list[SessionMessage | Exception] = (
                [parsed_line(step.raw)]
                if step.raw is not None
                else [message_of(m) for m in _messages(step)]
            )
            for item in items:
                try:
                    await outbox.send(item)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def __aenter__(self) -> Streams:
        self._cm = self._connect()
        return await self._cm.__aenter__()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        cm, self._cm = self._cm, None
        if cm is not None:
            return await cm.__aexit__(exc_type, exc, tb)
        return None


def _messages(out: Send) -> list[Any]:
    return out.msg if isinstance(out.msg, list) else [out.msg]


def replay_transport(
    cassette: Cassette | str | os.PathLike[str],
    *,
    allow_repeats: bool = False,
    ignore: tuple[str, ...] | list[str] = (),
    matchers: tuple[Matcher, ...] = DEFAULT_MATCHERS,
    strict: bool = False,
    timing: float | None = None,
    on_note: NoteHandler | None = _to_stderr,
    faults: Any = (),
    hints: Hints = CLI_HINTS,
    same_era: bool = False,
) -> ReplayTransport:
    """A transport for `mcp.Client` (or 1.x `ClientSession`'s streams) that answers from `cassette`.

    Args:
        allow_repeats: replay a request's last recording again once its recordings are used up.
        ignore: JSON pointers into params left out of matching (`/arguments/when`).
        matchers: the matchers that must all pass (`mcptape.replay.matcher`); the default is
            method + significant params.
        strict: on exit, raise `UnplayedExchangesError` if recorded requests never played; and
            play only recordings made by a client that declared the same capabilities and log level.
        timing: None for instant answers, else a speed factor on the recorded delays
            (1.0: as recorded; 2.0: twice as fast).
        on_note: where diagnostics go (default: stderr); None to drop them.
        faults: fault rules (dicts or `FaultRule`s; see `mcptape.replay.faults` and
            docs/faults.md): delay, fail, corrupt, drop or disconnect chosen answers.
        hints: how no-match hints name the options (`mcptape.replay.report`).
        same_era: refuse a client of the other protocol era instead of translating (see `mcptape.eras`).

    Raises:
        ConfigError: a fault rule is wrong.
    """
    config = ReplayConfig(
        MatchPolicy(tuple(ignore), tuple(matchers)),
        allow_repeats,
        hints,
        cross_era=not same_era,
        exact_clients=strict,
    )
    return ReplayTransport(
        cassette, config, strict=strict, timing=timing, on_note=on_note, faults=faults
    )
