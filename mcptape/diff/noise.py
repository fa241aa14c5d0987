"""Noise learned from runs of the same release, the way Twitter's Diffy learns it.

Pure. Two recordings of one release differ only where the server is not deterministic
(the clock, random ids, the environment). `learn` collects those places, as (exchange,
path) pairs, from the diffs between such runs; `split` then takes every row of the real
diff (A vs B) that lies at or under such a place out of the counted differences and lists
it apart as noise.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from .pointer import matches, tokens
from .types import Difference, DiffReport

Place = tuple[str, tuple[str, ...]]
"""(exchange label, path tokens): where two runs of one release disagree."""


def learn(reports: Iterable[DiffReport]) -> set[Place]:
    """The places that differ between runs of the same release (behaviour rows and envelope rows)."""
    out: set[Place] = set()
    for report in reports:
        for d in (*report.differences, *report.envelope):
            out.add((d.exchange, tuple(str(t) for t in tokens(d.path))))
    return out


def is_noise(places: set[Place], d: Difference) -> bool:
    path = [str(t) for t in tokens(d.path)]
    return any(ex == d.exchange and matches(p, path) for ex, p in places)


def split(report: DiffReport, places: set[Place], source: str) -> None:
    """Moves the rows of `report` at a learned place to `report.noise` (they no longer count)."""
    if not places:
        return
    kept: list[Difference] = []
    envelope: list[Difference] = []
    for d in report.differences:
        if is_noise(places, d):
            report.noise.append(
                replace(d, message=f"{d.message} (noise: differs between {source})")
            )
        else:
            kept.append(d)
    for d in report.envelope:
        (report.noise if is_noise(places, d) else envelope).append(d)
    report.differences, report.envelope = kept, envelope
