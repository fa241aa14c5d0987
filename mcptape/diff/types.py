"""The values a diff produces: `Difference` rows and the `DiffReport` that holds them.

No computing and no printing here: `engine` fills a report, `report` renders it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class _Missing:
    """The value on a side where the path does not exist (a JSON `null` is a value)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()
"""Marks a side where the path is absent."""


class Change(StrEnum):
    """What happened to the thing at the path, going from A to B."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"
    RELAXED = "relaxed"
    """A schema now accepts more: a constraint dropped or loosened, a type widened, an argument
    made optional (compatible for what the client sends, breaking for what it reads)."""
    TIGHTENED = "tightened"
    """A schema now accepts less: a constraint added or narrowed (breaking for what the client
    sends, compatible for what it reads)."""


class Impact(StrEnum):
    """How much the difference matters to a client."""

    BREAKING = "breaking"
    """An existing client may fail: a tool or argument removed, a new required argument, a type changed."""
    COMPATIBLE = "compatible"
    """Something new an existing client can ignore: a new tool, a new optional argument."""
    COSMETIC = "cosmetic"
    """Text for people and models: descriptions, titles, annotations, icons."""
    BEHAVIOUR = "behaviour"
    """The server answered differently: a result, an error, a notification sequence, an exchange."""
    ENVELOPE = "envelope"
    """Only the protocol envelope differs (versions, caching hints, resultType, reserved _meta)."""


class Section(StrEnum):
    """Where in the session the difference is."""

    SERVER = "server"
    TOOLS = "tools"
    PROMPTS = "prompts"
    RESOURCES = "resources"
    TEMPLATES = "resourceTemplates"
    EXCHANGE = "exchange"
    RESULT = "result"
    ERROR = "error"
    INPUTS = "inputs"
    NOTIFICATIONS = "notifications"
    ENVELOPE = "envelope"


KINDS: tuple[str, ...] = (
    "breaking", "changed", "added", "removed", "relaxed", "tightened", "cosmetic",
)  # fmt: skip
"""The summary's categories, in print order; each behaviour difference is exactly one."""


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference: where (section, exchange, JSON path), what (both values), how bad."""

    section: Section
    change: Change
    impact: Impact
    exchange: str
    """The exchange it is in (`tools/call greet`, `tools/list`), or the surface item (`tool echo`)."""
    path: str
    """RFC 6901 pointer into the canonical form (see docs/diff.md)."""
    a: Any = MISSING
    b: Any = MISSING
    message: str = ""
    count: int = 1
    """Envelope rows: how many exchanges showed this same difference."""
    a_seq: int | None = None
    """Cassette line (event seq) of the exchange's request in A."""
    b_seq: int | None = None
    cassettes: tuple[str, ...] = ()
    """A many-cassette verify: the cassettes this finding occurred in (`combine`)."""

    @property
    def kind(self) -> str:
        """The summary category: breaking and cosmetic by impact, else the change."""
        if self.impact in (Impact.BREAKING, Impact.COSMETIC):
            return str(self.impact)
        return str(self.change)


@dataclass(frozen=True, slots=True)
class Side:
    """One compared cassette, as the report names it."""

    name: str
    era: str
    protocol_version: str | None
    exchanges: int
    calls: int


@dataclass(frozen=True, slots=True)
class DiffOptions:
    """What the comparison treats as a difference."""

    ignore: tuple[str, ...] = ()
    """Ignores as written (`diff.ignores`): JSON pointers (with `*` for any one token) to leave
    out everywhere, or scoped to a method and name (`tools/call now:/result/content/0/text`)."""
    strict_envelope: bool = False
    """Envelope differences count as differences (exit 1)."""
    strict_messages: bool = False
    """Error messages are compared, not only codes."""
    mask_volatile: bool = True
    """Mask values volatile by shape (timestamps, UUIDs, times) where both sides have one (`volatile`)."""


@dataclass(slots=True)
class DiffReport:
    """Everything that differs between cassette A and cassette B."""

    a: Side
    b: Side
    options: DiffOptions
    differences: list[Difference] = field(default_factory=list)
    """Behaviour and surface differences, in report order."""
    envelope: list[Difference] = field(default_factory=list)
    """Envelope-only differences, one row per distinct (path, A, B) with a count."""
    noise: list[Difference] = field(default_factory=list)
    """Rows at places that differ between runs of the same release (`noise`): listed, not counted."""
    masked: list[Difference] = field(default_factory=list)
    """Rows whose two values differ only in a volatile shape (`volatile`); the message names it."""
    cassettes: list[str] = field(default_factory=list)
    """A many-cassette verify: every cassette side A stands for."""

    @property
    def equivalent(self) -> bool:
        return not self.differences and not (self.options.strict_envelope and self.envelope)

    @property
    def exit_code(self) -> int:
        return 0 if self.equivalent else 1

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(KINDS, 0)
        for d in self.differences:
            out[d.kind] += 1
        return out
