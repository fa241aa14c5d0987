"""What the replay engine hands its shells: messages to send (with their recorded origin) and
diagnostics; and the engine's configuration. Plain values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol

import orjson

from mcptape.cassette.model import Event
from mcptape.pairing import Exchange

from .encoded import Template
from .matcher import MatchPolicy
from .report import CLI_HINTS, Hints


@dataclass(frozen=True, slots=True)
class ReplayConfig:
    """How a replay matches and consumes the cassette."""

    match: MatchPolicy = field(default_factory=MatchPolicy)
    allow_repeats: bool = False
    """Replay the last recorded answer again when a key's recordings are used up."""
    hints: Hints = CLI_HINTS
    """How no-match hints name the options: as flags (the CLI) or keyword arguments (Python, the marker)."""
    cross_era: bool = True
    """Serve a client of the other protocol era (False: refuse it, as before)."""
    exact_clients: bool = False
    """Play only recordings made by a client that declared the same (`--strict`); else the nearest, with a note."""
    label: str = "mcptape replay"
    """What the engine's errors and their notes start with: the shell's name (`mcptape serve`)."""
    answerer: Answerer | None = None
    """Declarations consulted before the cassette (`mcptape.mock`): what they answer takes
    precedence over the recording, and they see every request and its outputs (a journal)."""
    overlay: tuple[Any, ...] = ()
    """Overlay rules (`mcptape.replay.overlay.OverlayRule`: fault rules, `--fault-file`), before
    the answerer's own: each session's `Overlay` selects requests by them and decides how
    their answers are delivered."""
    http: bool = False
    """True in `mcptape serve`: overlay rules only HTTP can carry out (`status`, `reset`) apply."""

    def labelled(self, label: str) -> ReplayConfig:
        """This configuration for the shell named `label` (its errors start with it)."""
        return replace(self, label=label)

    def with_faults(self, rules: Sequence[Any]) -> ReplayConfig:
        """This configuration with a shell's fault rules after its own overlay rules (fault
        rules are overlay rules: each engine applies them)."""
        return replace(self, overlay=(*self.overlay, *rules)) if rules else self


@dataclass(slots=True)
class Send:
    """A message for the client, where it comes from in the cassette, and how it is delivered
    (as it is, unless an overlay rule says otherwise: `delay`, `raw`, `fault`).

    Not frozen (a frozen dataclass's `__init__` sets each field through `object.__setattr__`,
    and the engine makes one per message it plays); treat it as a value all the same:
    `dataclasses.replace` for another.
    """

    msg: Any
    """The JSON-RPC message (a list for a batch answer), ids and tokens already rewritten."""
    event: Event | None = None
    """The recorded event replayed (None for answers the engine makes up: errors, ping)."""
    exchange: Exchange | None = None
    request_id: Any = None
    """The client request this belongs to (None: unsolicited, or an answer to bad input)."""
    after: float = 0.0
    """Recorded seconds between the client message that triggered this and this message."""
    final: bool = False
    """True for the response that completes its request."""
    delay: float = 0.0
    """Seconds after the client message that triggered it, on top of `after`: an overlay rule's delay."""
    raw: bytes | None = None
    """Bytes to write instead of `msg` (no newline): a fault's malformed, invalid or truncated answer."""
    fault: str | None = None
    """The fault action that changed it (`truncate` tells the HTTP shell to cut the SSE event and close)."""
    _encoding: tuple[Template, Any, Any] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    """The recorded bytes of `msg` with holes, and the id and token that fill them (`spliced`);
    not copied by `dataclasses.replace`, so a Send made with another `msg` encodes that one."""

    def spliced(self, template: Template, client_id: Any, token: Any) -> Send:
        """This Send, encoded by filling `template` (which must encode `msg`) rather than anew."""
        self._encoding = (template, client_id, token)
        return self

    def later(self, delay: float) -> Send:
        """This Send `delay` seconds later (a fault's delay): the same message, so it keeps its
        encoding, which `dataclasses.replace` would drop."""
        moved = replace(self, delay=delay)
        moved._encoding = self._encoding
        return moved

    def encoded(self) -> bytes:
        """What the client gets (no newline): `raw` when a fault set it, else `msg` as compact
        JSON (`orjson.dumps(msg)`), spliced when the engine could."""
        if self.raw is not None:
            return self.raw
        enc = self._encoding
        return enc[0].fill(enc[1], enc[2]) if enc is not None else orjson.dumps(self.msg)

    def line(self) -> bytes:
        """`encoded()` and a newline, as a stdio client reads it (one copy fewer than adding it)."""
        if self.raw is not None:
            return self.raw + b"\n"
        enc = self._encoding
        if enc is not None:
            return enc[0].fill(enc[1], enc[2]) + b"\n"
        return orjson.dumps(self.msg, option=orjson.OPT_APPEND_NEWLINE)

    @property
    def t(self) -> float | None:
        """The recorded time offset (seconds since the recording started) of the replayed message."""
        return self.event.t if self.event is not None else None

    @property
    def http(self) -> dict[str, Any] | None:
        """The recorded HTTP metadata of this message (status, content type, SSE fields), if any."""
        return self.event.http if self.event is not None else None

    @property
    def response_http(self) -> dict[str, Any] | None:
        """The recorded HTTP metadata of the exchange's response (was it SSE, which status)."""
        resp = self.exchange.response if self.exchange is not None else None
        return resp.event.http if resp is not None else None


class Note(NamedTuple):
    """A diagnostic for the operator (stderr), never for the client."""

    text: str
    level: str = "warning"


Output = Send | Note


class Hangup(NamedTuple):
    """Close the connection (stdout, the memory stream, the HTTP stream) `delay` seconds after
    the trigger: an overlay rule's `disconnect` or `reset`."""

    delay: float = 0.0
    reset: bool = False
    """HTTP: reset the TCP connection instead of ending the stream."""
    request_id: Any = None


class Status(NamedTuple):
    """HTTP: answer the request with this status instead of the answer (an overlay rule's `status`)."""

    status: int
    retry_after: float | None
    body: str | None
    send: Send
    delay: float = 0.0


Step = Send | Hangup | Status | Note
"""What a shell carries out: the engine's outputs, and what an overlay's delivery adds. A
`Send` is delivered after its `delay` (its `raw` bytes, if a wire fault set them)."""


@dataclass(frozen=True, slots=True)
class Answer:
    """An exchange made up for one client request (by `Answerer.answer`), played as if recorded;
    `delay`: seconds before each of its messages (as a fault rule's delay)."""

    exchange: Exchange
    delay: float = 0.0


class Answerer(Protocol):
    """The engine's one hook for declared answers (`ReplayConfig.answerer`, `mcptape.mock`)."""

    @property
    def delays(self) -> bool:
        """True when some answer may come with a delay: the shells then schedule delayed steps
        (as they do for overlay rules)."""
        ...

    @property
    def overlay_rules(self) -> tuple[Any, ...]:
        """The declarations' overlay rules (`OverlayRule`s: a recorded answer made late or
        faulty, declared tools added to the recorded lists), after `ReplayConfig.overlay`'s."""
        ...

    def answer(self, msg: dict[str, Any], version: str | None) -> Answer | list[Output] | None:
        """The answer to client request `msg` (`version`: the session's protocol version, the
        one its handshake settled on or 2026-07-28; None until the client shows its era): an
        exchange to play, outputs as they are, or None for the cassette's answer."""
        ...

    def saw(self, msg: dict[str, Any], outputs: Sequence[Step]) -> None:
        """What the engine sent for client message `msg` (a request, or an answer to a server
        request that moved one on)."""
        ...


class _Stacked:
    """Two answerers: the first's answer, else the second's; both see everything."""

    def __init__(self, first: Answerer, then: Answerer) -> None:
        self.first, self.then = first, then

    @property
    def delays(self) -> bool:
        return self.first.delays or self.then.delays

    @property
    def overlay_rules(self) -> tuple[Any, ...]:
        return (*self.first.overlay_rules, *self.then.overlay_rules)

    def answer(self, msg: dict[str, Any], version: str | None) -> Answer | list[Output] | None:
        answer = self.first.answer(msg, version)
        return answer if answer is not None else self.then.answer(msg, version)

    def saw(self, msg: dict[str, Any], outputs: Sequence[Step]) -> None:
        self.first.saw(msg, outputs)
        self.then.saw(msg, outputs)


def stacked(first: Answerer, then: Answerer | None) -> Answerer:
    """`first`, asked before `then` (a mock file's declarations before a test's journal)."""
    return first if then is None else _Stacked(first, then)
