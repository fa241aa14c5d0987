"""Diff: compare two cassettes by meaning, across server versions and protocol versions.

    normalize (per protocol era -> canonical calls) -> align (by matching key)
        -> engine (DeepDiff per pair -> DiffReport) -> report (text, markdown, JSON)

`report` shows the same change in several tools as one entry (`group`) and fits text
tables within 100 columns (`columns`).

All pure; the CLI and `mcptape.verify` (whose own sans-IO core is `verify.plan`) do the I/O.
"""

from __future__ import annotations

from .engine import diff_canonical, diff_cassettes
from .types import Change, Difference, DiffOptions, DiffReport, Impact, Section

__all__ = [
    "Change",
    "DiffOptions",
    "DiffReport",
    "Difference",
    "Impact",
    "Section",
    "diff_canonical",
    "diff_cassettes",
]
