"""The recorder: turns what a capture shell saw into cassette events, redacts, appends.

Transport-agnostic and synchronous: the stdio shell and the mitmproxy addon call it with
bytes and metadata; it parses, redacts and writes one event per call. Thread-safe.

Order: every event gets its place (`seq`) and time when the shell *sees* it, through
`reserve()`, which is cheap; the slower work (parsing, redacting, writing) can then happen
after the shell has passed the bytes on, and `commit` writes events strictly in `seq`
order. A shell that reserves a line's place when it reads it, and records it before it
forwards it, keeps the cassette in wire order and holds everything the peer received.

The recorder is also the sink every capture path ends through (`finish`): the recording
moves into place only when it is one (see `CassetteWriter`). A write failure (disk full,
EIO) does not reach the shells: the recorder stops writing, keeps giving places up so no
shell waits, and `finish` reports it once, with the path.
"""

from __future__ import annotations

import base64
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcptape.cassette import CassetteWriter, LineWriter, new_header
from mcptape.cassette.codec import event_line, message_line
from mcptape.cassette.model import Event, Header, Kind, Source, Transport, payload_event
from mcptape.errors import CassetteError, RecordError
from mcptape.redaction.redact import RedactConfig, Redactor
from mcptape.wire.jsonrpc import NOT_JSON, decode
from mcptape.wire.ndjson import Oversize

if TYPE_CHECKING:
    from .sessions import SessionPolicy


def recording_header(transport: Transport, target: dict[str, Any], config: RedactConfig) -> Header:
    """The header of a recording that starts now. Secrets in its target (tokens on the command
    line, secret query parameters, credentials in a URL) are redacted by `config`, which the
    header describes."""
    return new_header(transport, Redactor(config).target(target), config.describe())


Ticket = tuple[int, float]
"""A reserved place in the cassette: (seq, seconds since the start)."""


class Recorder:
    """Appends events to a cassette as a session happens."""

    def __init__(
        self, writer: LineWriter, redactor: Redactor, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.writer = writer
        self.redactor = redactor
        self._clock = clock
        self._t0 = clock()
        self._seq = 0
        self._lock = threading.Lock()
        self._written = 0
        self._cond = threading.Condition()
        self.count = 0
        """How many events were written."""
        self.answers = 0
        """How many payloads (JSON or not), HTTP responses and SSE events the server sent."""
        self.failure: CassetteError | None = None
        """The first write that failed; nothing is written after it."""
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL)
        self.session: SessionPolicy | None = None
        """How `finish` treats a cassette already there (append this session to its run's
        cassette: `mcptape.capture.sessions`); None: the recording replaces it."""

    def reserve(self) -> Ticket:
        """Takes the next place in the cassette, stamped with the time now."""
        with self._lock:
            self._seq += 1
            return self._seq, self._clock() - self._t0

    def release(self, ticket: Ticket) -> None:
        """Gives a reserved place up without writing anything there."""
        self._commit(ticket[0], None)

    def _commit(self, seq: int, line: bytes | None) -> None:
        """Writes `line` as event `seq` once every earlier event is written (None: give the place up)."""
        with self._cond:
            while self._written != seq - 1:
                self._cond.wait()
            try:
                if line is not None and self.failure is None:
                    self.writer.write_line(line)
                    self.count += 1
            except CassetteError as exc:
                self.failure = exc
            finally:
                self._written = seq
                self._cond.notify_all()

    def _emit(self, build: Callable[[int, float], Event], ticket: Ticket | None = None) -> Event:
        seq, t = ticket or self.reserve()
        line = None
        try:
            event = build(seq, t)
            line = event_line(event)
        finally:
            self._commit(seq, line)
        return event

    def payload(
        self,
        src: Source,
        data: bytes | Oversize,
        http: dict[str, Any] | None = None,
        ticket: Ticket | None = None,
    ) -> Any:
        """One wire payload (a stdio line, an HTTP body, an SSE event's data): JSON or raw.

        Returns the parsed JSON value as written (redacted), or None when the payload was not JSON.

        The hot path: a JSON payload with nothing to redact is written by splicing its own
        bytes into the event line (it was just validated by parsing: `codec.message_line`),
        so the message is stored exactly as it was on the wire and is not serialized again.
        """
        ticket = ticket or self.reserve()
        http = self._sse_fields(http)
        if src is Source.SERVER:
            self.answers += 1
        if isinstance(data, Oversize):
            text = data.head.decode("utf-8", errors="replace")
            info = {
                "oversize": True,
                "note": "longer than the recorder's line limit: only the head is kept",
            }
            self._emit(
                lambda seq, t: Event(
                    seq,
                    t,
                    Kind.RAW,
                    src,
                    text=self.redactor.text(text),
                    size=data.size,
                    http=http,
                    info=info,
                ),
                ticket,
            )
            return None
        value = decode(data)
        if value is NOT_JSON:
            self._emit(lambda seq, t: self._raw(seq, t, src, data, http), ticket)
            return None
        msg, paths = self.redactor.message(value, raw=data)
        if paths:
            self._emit(
                lambda seq, t: Event(
                    seq, t, Kind.MESSAGE, src, msg=msg, http=http, redacted=tuple(paths)
                ),
                ticket,
            )
            return msg
        seq, t = ticket
        line: bytes | None = None
        try:
            line = message_line(seq, t, src, data, value, http)
        finally:
            self._commit(seq, line)
        return msg

    def _raw(
        self, seq: int, t: float, src: Source, data: bytes, http: dict[str, Any] | None
    ) -> Event:
        ev = payload_event(seq, t, src, Kind.RAW, data)
        if ev.text is not None:
            red = (
                self.redactor.line((src, "raw"), ev.text)
                if http is None
                else self.redactor.text(ev.text)
            )
            if red != ev.text:
                return Event(seq, t, Kind.RAW, src, text=red, http=http, redacted=("",))
        if ev.b64 is not None and (red_b64 := self._binary(data)) is not None:
            return Event(seq, t, Kind.RAW, src, b64=red_b64, http=http, redacted=("",))
        return Event(seq, t, Kind.RAW, src, text=ev.text, b64=ev.b64, http=http)

    def _binary(self, data: bytes) -> str | None:
        """A payload that is not UTF-8, with the secrets in it replaced, as base64 (None: none).
        Latin-1 maps each byte to one character, so every other byte is kept as it was."""
        text = data.decode("latin-1")
        red = self.redactor.text(text)
        return (
            base64.b64encode(red.encode("latin-1", "replace")).decode("ascii")
            if red != text
            else None
        )

    def stderr(self, data: bytes, ticket: Ticket | None = None) -> Event:
        """One line the server wrote to stderr."""

        self._stderr.append(data.decode("utf-8", errors="replace").rstrip())

        def build(seq: int, t: float) -> Event:
            ev = payload_event(seq, t, Source.SERVER, Kind.STDERR, data)
            if ev.text is not None:
                red = self.redactor.line((Source.SERVER, "stderr"), ev.text)
                return Event(
                    seq,
                    t,
                    Kind.STDERR,
                    Source.SERVER,
                    text=red,
                    redacted=("",) if red != ev.text else (),
                )
            red_b64 = self._binary(data)
            return (
                ev
                if red_b64 is None
                else Event(seq, t, Kind.STDERR, Source.SERVER, b64=red_b64, redacted=("",))
            )

        return self._emit(build, ticket)

    def eof(self, src: Source, info: dict[str, Any] | None = None) -> Event:
        """`src` closed its stream."""
        return self._emit(lambda seq, t: Event(seq, t, Kind.EOF, src, info=info))

    def exit(self, code: int | None, signal: str | None = None) -> Event:
        """The server process ended."""
        info: dict[str, Any] = {"code": code}
        if signal:
            info["signal"] = signal
        return self._emit(lambda seq, t: Event(seq, t, Kind.EXIT, Source.SERVER, info=info))

    def http(
        self, src: Source | None, http: dict[str, Any], info: dict[str, Any] | None = None
    ) -> Event:
        """HTTP metadata without a JSON-RPC payload (heads, stream ends, errors)."""
        if src is Source.SERVER and http.get("phase") in ("response", "sse"):
            self.answers += 1  # a response head or an event from the server (not a proxy's error)
        meta = self._sse_fields(http)
        if info and self.redactor.config.enabled:
            # (an error's text comes from the proxy or the capture file: a URL or a body quoted in it)
            info = self.redactor.message(info)[0]
        return self._emit(lambda seq, t: Event(seq, t, Kind.HTTP, src, http=meta, info=info))

    def _sse_fields(self, http: dict[str, Any] | None) -> dict[str, Any] | None:
        """The metadata with the table applied to its SSE fields (`id`, `event`, `data`,
        `comment`): every capture path (the addon, the importer) records them through here."""
        if (
            http is None
            or not isinstance(sse := http.get("sse"), dict)
            or not self.redactor.config.enabled
        ):
            return http
        fields = {k: self.redactor.text(v) if isinstance(v, str) else v for k, v in sse.items()}
        return http if fields == sse else {**http, "sse": fields}

    def end(self, info: dict[str, Any] | None = None) -> Event:
        """The recording finished cleanly."""
        return self._emit(lambda seq, t: Event(seq, t, Kind.END, None, info=info))

    def finish(
        self, end: dict[str, Any] | None = None, *, why: str = "", require_answer: bool = True
    ) -> Path:
        """Ends the recording: writes the `end` event and moves the cassette into place.

        Returns where the cassette is (see `CassetteWriter.commit`).

        Raises:
            RecordError: a write failed (the recording is left at its `.partial` name, the
                cassette untouched), or the server answered nothing (the recording is
                deleted, an existing cassette kept as it was; `require_answer=False`, for
                a conversion of a capture, takes it as it is); `why` (e.g. "the server
                exited with code 2") and the server's last stderr lines say more.
        """
        writer = self.writer
        assert isinstance(writer, CassetteWriter), "finish() ends a recording to a file"
        if self.failure is None:
            self.end(end)
        if self.failure is not None:
            kept = writer.keep()
            raise RecordError(f"{self.failure}; the session went on unrecorded from there; "
                              f"what was recorded is in {kept}, {writer.path} was not changed")  # fmt: skip
        if self.answers == 0 and require_answer:
            writer.discard()
            left = "was left as it was" if writer.path.exists() else "was not written"
            detail = f" ({why})" if why else ""
            tail = " | ".join(line for line in self._stderr if line)
            stderr = f"; its stderr: {tail[-2000:]}" if tail else ""
            raise RecordError(
                f"the server answered nothing{detail}, so {writer.path} {left}{stderr}"
            )
        try:
            if self.session is not None:
                from .sessions import commit

                return commit(writer, self.session)
            return writer.commit()
        except CassetteError as exc:
            raise RecordError(str(exc)) from None

    def abandon(self) -> Path:
        """Stops recording without a cassette (an interrupted import, an error): the
        recording stays at its `.partial` name, which is returned; the cassette is untouched."""
        assert isinstance(self.writer, CassetteWriter), "abandon() ends a recording to a file"
        return self.writer.keep()


STDERR_TAIL = 10
"""How many of the server's last stderr lines an error about a failed recording shows."""
