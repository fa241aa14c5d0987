"""Matching: small named matchers, the policy that combines them, and no-match explanations.

Pure. A matcher compares a recorded request with an incoming one, both reduced to a
`Subject` (method + params without the volatile parts and the ignored paths), and returns
`None` when they match or a short reason when they do not. `MatchPolicy` holds the ignore
paths (JSON pointers into params) and the matchers; the default pair (`method`, `params`)
is exactly the index key, so the index answers it with one dict lookup. The rest of the
module ranks recorded requests by nearness and says field by field what differs, for the
no-match error.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mcptape.keys import parse_pointer, strip_params
from mcptape.pointer import escape
from mcptape.wire.jsonrpc import clip_json

QUOTE_LIMIT = 512
"""Characters of JSON a no-match error quotes of one value (params, a differing field); more is
cut, `... (N bytes)` saying how much there was, so the answer to a huge request stays small."""
MAX_DIFFS = 5
"""Differences listed per recorded request in a no-match error's `data.nearest[].diff`."""


def bounded(value: Any, limit: int = QUOTE_LIMIT) -> Any:
    """`value` when its JSON fits in `limit` characters, else the start of that JSON as a string
    ending `... (N bytes)` (see `clip_json`)."""
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if isinstance(value, str) and len(value) <= limit // 2:
        return value
    text = clip_json(value, limit)
    return value if len(text) <= limit else text


@dataclass(frozen=True, slots=True)
class Subject:
    """A request as matching sees it."""

    method: str
    params: Any
    """Params without the volatile parts and the ignored paths (`{}` when absent)."""
    msg: dict[str, Any]
    """The message as it was on the wire."""


Matcher = Callable[[Subject, Subject], "str | None"]
"""(recorded, incoming) -> None when they match, else a short reason."""


def method(recorded: Subject, incoming: Subject) -> str | None:
    """The JSON-RPC method."""
    return (
        None
        if recorded.method == incoming.method
        else f"method differs ({recorded.method} vs {incoming.method})"
    )


def params(recorded: Subject, incoming: Subject) -> str | None:
    """All significant params (the built-in volatile parts and ignored paths excluded)."""
    if recorded.params == incoming.params:
        return None
    diffs = field_diff(recorded.params, incoming.params)
    return "params differ at " + ", ".join(d.path or "/" for d in diffs[:3])


def _member(name: str) -> Matcher:
    def match(recorded: Subject, incoming: Subject) -> str | None:
        a = recorded.params.get(name) if isinstance(recorded.params, dict) else None
        b = incoming.params.get(name) if isinstance(incoming.params, dict) else None
        return None if a == b else f"{name} differs"

    match.__name__ = name
    match.__doc__ = f"The `{name}` member of params."
    return match


name = _member("name")
arguments = _member("arguments")
uri = _member("uri")
cursor = _member("cursor")

DEFAULT_MATCHERS: tuple[Matcher, ...] = (method, params)


@dataclass(frozen=True, slots=True)
class MatchPolicy:
    """How an incoming request is matched to recorded ones.

    `ignore` are JSON pointers into params (`/arguments/when`; a leading `/params` is
    allowed) left out of matching. `matchers` must all pass; while `params` is among them,
    lookup is one hash of the key, and further matchers only filter that key's queue.
    Without `params`, candidates are all recorded requests of the method, in order.
    """

    ignore: tuple[str, ...] = ()
    matchers: tuple[Matcher, ...] = DEFAULT_MATCHERS
    paths: tuple[tuple[str, ...], ...] = field(init=False, default=())
    exact: bool = field(init=False, default=True)
    """True when the key (method + significant params) decides the candidates."""
    extra: tuple[Matcher, ...] = field(init=False, default=())
    """The matchers the index key does not already decide (computed once: they are asked per request)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "paths", tuple(parse_pointer(p) for p in self.ignore))
        exact = params in self.matchers
        decided = (method, params) if exact else (method,)
        object.__setattr__(self, "exact", exact)
        object.__setattr__(self, "extra", tuple(m for m in self.matchers if m not in decided))

    def subject(self, msg: dict[str, Any], extra_ignore: Iterable[tuple[str, ...]] = ()) -> Subject:
        stripped = strip_params(msg.get("params"), (*self.paths, *extra_ignore), msg.get("method"))
        return Subject(str(msg.get("method", "")), stripped if stripped is not None else {}, msg)

    def failures(self, recorded: Subject, incoming: Subject) -> list[str]:
        """The reasons of every matcher that fails (empty: a match)."""
        return [r for m in self.matchers if (r := m(recorded, incoming)) is not None]


class FieldDiff(NamedTuple):
    """One difference: where (a JSON pointer into params) and both values (`ABSENT` when absent)."""

    path: str
    recorded: Any
    incoming: Any

    def to_json(self) -> dict[str, Any]:
        """Both values quoted within `QUOTE_LIMIT` (see `bounded`)."""
        return {
            "path": self.path,
            "recorded": bounded(self.recorded),
            "incoming": bounded(self.incoming),
        }


ABSENT = "<missing>"
"""Stands for an absent member in a `FieldDiff` (the string clients see in a no-match error's data)."""


def field_diff(a: Any, b: Any, path: str = "") -> list[FieldDiff]:
    """Leaf-level differences between two JSON values, in key order."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: list[FieldDiff] = []
        for k in sorted(set(a) | set(b)):
            sub = f"{path}/{escape(k)}"
            if k not in a:
                out.append(FieldDiff(sub, ABSENT, b[k]))
            elif k not in b:
                out.append(FieldDiff(sub, a[k], ABSENT))
            else:
                out.extend(field_diff(a[k], b[k], sub))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in field_diff(x, y, f"{path}/{i}")
        ]
    if a == b and type(a) is type(b):
        return []
    return [FieldDiff(path, a, b)]


class Near(NamedTuple):
    """A recorded request close to an incoming one, and what differs."""

    seq: int
    """The cassette line (event seq) of the recorded request."""
    subject: Subject
    diffs: tuple[FieldDiff, ...]
    failed: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        """Params quoted within `QUOTE_LIMIT`, the first `MAX_DIFFS` differences."""
        return {
            "seq": self.seq,
            "method": self.subject.method,
            "params": bounded(self.subject.params),
            "diff": [d.to_json() for d in self.diffs[:MAX_DIFFS]],
            "failed": list(self.failed),
        }


def nearest(
    candidates: Sequence[tuple[int, Subject]],
    incoming: Subject,
    policy: MatchPolicy,
    limit: int = 3,
) -> list[Near]:
    """The recorded requests nearest to `incoming`: same method first, then fewest differing fields."""
    ranked: list[tuple[tuple[int, int, int], Near]] = []
    for order, (seq, rec) in enumerate(candidates):
        diffs = tuple(field_diff(rec.params, incoming.params))
        if rec.method != incoming.method:
            diffs = (FieldDiff("method", rec.method, incoming.method), *diffs)
        same_name = _name_of(rec) == _name_of(incoming)
        rank = (0 if rec.method == incoming.method else 1, 0 if same_name else 1, len(diffs))
        ranked.append(
            (
                (*rank[:2], rank[2] * 10_000 + order),
                Near(seq, rec, diffs, tuple(policy.failures(rec, incoming))),
            )
        )
    ranked.sort(key=lambda r: r[0])
    return [n for _, n in ranked[:limit]]


def _name_of(s: Subject) -> Any:
    return s.params.get("name", s.params.get("uri")) if isinstance(s.params, dict) else None


def describe(s: Subject) -> str:
    """`tools/call 'add'`: the method and, when there is one, the tool/prompt name or URI."""
    what = _name_of(s)
    if not isinstance(what, str):
        return s.method
    if len(what) > 100:  # a name is quoted whole only when it is one a person could read
        return f"{s.method} {what[:100]!r}... ({len(what.encode())} bytes)"
    return f"{s.method} {what!r}"


def _short(value: Any, limit: int = 60) -> str:
    """A value as JSON (what the user wrote in their request), cut after `limit` characters."""
    text = json.dumps(value, ensure_ascii=False, default=str) if value != ABSENT else "absent"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text.encode())} bytes)"


def explain_diffs(diffs: Sequence[FieldDiff], limit: int = 3) -> str:
    """`arguments/a is 5 (recorded 1)`, joined; the first few differences only."""
    parts = []
    for d in diffs[:limit]:
        where = d.path.lstrip("/") or "params"
        if d.incoming == ABSENT:
            parts.append(f"{where} is absent (recorded {_short(d.recorded)})")
        elif d.recorded == ABSENT:
            parts.append(f"{where} was not recorded (got {_short(d.incoming)})")
        else:
            parts.append(f"{where} is {_short(d.incoming)} (recorded {_short(d.recorded)})")
    more = len(diffs) - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")
