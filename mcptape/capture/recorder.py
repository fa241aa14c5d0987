"""The recorder: turns what a capture shell saw into cassette events, redacts, appends.

Transport-agnostic and synchronous: the stdio shell and the mitmproxy addon call it with
bytes and metadata; it parses, redacts and writes one event per call, in call order.
Thread-safe (the stdio shell pumps each pipe in its own thread). A write failure raises
`CassetteError` to the caller, which must stop the session: nothing passes unrecorded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from mcptape.cassette import CassetteWriter
from mcptape.model import Event, Kind, Source, payload_event
from mcptape.redact import Redactor
from mcptape.wire.jsonrpc import NOT_JSON, decode
from mcptape.wire.ndjson import Oversize


class Recorder:
    """Appends events to a cassette as a session happens."""

    def __init__(self, writer: CassetteWriter, redactor: Redactor, clock: Callable[[], float] = time.monotonic) -> None:
        self.writer = writer
        self.redactor = redactor
        self._clock = clock
        self._t0 = clock()
        self._seq = 0
        self._lock = threading.Lock()
        self.count = 0
        """How many events were written."""

    def _emit(self, build: Callable[[int, float], Event]) -> Event:
        with self._lock:
            self._seq += 1
            event = build(self._seq, self._clock() - self._t0)
            self.writer.write(event)
            self.count += 1
            return event

    def payload(self, src: Source, data: bytes | Oversize, http: dict[str, Any] | None = None) -> Event:
        """One wire payload (a stdio line, an HTTP body, an SSE event's data): JSON or raw."""
        if isinstance(data, Oversize):
            head = data.head.decode("utf-8", errors="replace")
            return self._emit(
                lambda seq, t: Event(
                    seq, t, Kind.RAW, src, text=self.redactor.text(head), size=data.size, http=http,
                    info={"oversize": True, "note": "longer than the recorder's line limit: only the head is kept"},
                )
            )  # fmt: skip
        value = decode(data)
        if value is NOT_JSON:
            def raw(seq: int, t: float) -> Event:
                ev = payload_event(seq, t, src, Kind.RAW, data)
                if ev.text is not None:
                    red = self.redactor.text(ev.text)
                    if red != ev.text:
                        return Event(seq, t, Kind.RAW, src, text=red, http=http, redacted=("",))
                return Event(seq, t, Kind.RAW, src, text=ev.text, b64=ev.b64, http=http)

            return self._emit(raw)
        msg, paths = self.redactor.message(value)
        return self._emit(lambda seq, t: Event(seq, t, Kind.MESSAGE, src, msg=msg, http=http, redacted=tuple(paths)))

    def stderr(self, data: bytes) -> Event:
        """One line the server wrote to stderr."""

        def build(seq: int, t: float) -> Event:
            ev = payload_event(seq, t, Source.SERVER, Kind.STDERR, data)
            if ev.text is not None:
                red = self.redactor.text(ev.text)
                return Event(seq, t, Kind.STDERR, Source.SERVER, text=red, redacted=("",) if red != ev.text else ())
            return ev

        return self._emit(build)

    def eof(self, src: Source, info: dict[str, Any] | None = None) -> Event:
        """`src` closed its stream."""
        return self._emit(lambda seq, t: Event(seq, t, Kind.EOF, src, info=info))

    def exit(self, code: int | None, signal: str | None = None) -> Event:
        """The server process ended."""
        info: dict[str, Any] = {"code": code}
        if signal:
            info["signal"] = signal
        return self._emit(lambda seq, t: Event(seq, t, Kind.EXIT, Source.SERVER, info=info))

    def http(self, src: Source | None, http: dict[str, Any], info: dict[str, Any] | None = None) -> Event:
        """HTTP metadata without a JSON-RPC payload (heads, stream ends, errors)."""
        return self._emit(lambda seq, t: Event(seq, t, Kind.HTTP, src, http=http, info=info))

    def end(self, info: dict[str, Any] | None = None) -> Event:
        """The recording finished cleanly."""
        return self._emit(lambda seq, t: Event(seq, t, Kind.END, None, info=info))
