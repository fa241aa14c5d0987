"""Align: pair the logical calls of A with those of B by matching key.

Pure. The n-th occurrence of a key in A pairs with the n-th occurrence of the same key in
B, so repeating the same call gives stable pairs whatever else was interleaved. Pairs come
in A's order; calls only in B follow, in B's order. Linear in the number of calls.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass

from .normalize import Call


@dataclass(frozen=True, slots=True)
class Pair:
    """Two corresponding calls; one side is None when the call is only in the other cassette."""

    a: Call | None
    b: Call | None
    occurrence: int
    """1-based: which occurrence of this key on the side(s) present."""


def align(a: Sequence[Call], b: Sequence[Call]) -> list[Pair]:
    """Pairs calls by key, n-th with n-th."""
    queues: dict[bytes, deque[Call]] = defaultdict(deque)
    for call in b:
        queues[call.key].append(call)
    seen: dict[bytes, int] = defaultdict(int)
    used: set[int] = set()
    out: list[Pair] = []
    for call in a:
        seen[call.key] += 1
        queue = queues.get(call.key)
        other = queue.popleft() if queue else None
        if other is not None:
            used.add(id(other))
        out.append(Pair(call, other, seen[call.key]))
    seen_b: dict[bytes, int] = defaultdict(int)
    for call in b:
        seen_b[call.key] += 1
        if id(call) not in used:
            out.append(Pair(None, call, seen_b[call.key]))
    return out
