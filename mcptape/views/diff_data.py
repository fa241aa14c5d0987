"""What the HTML page of a diff shows: the engine's report (its JSON form) and, for each exchange
a difference points at, that exchange in full from both cassettes.

Pure: the report and the two cassettes in, plain dicts out. The page never recomputes the diff.
"""

from __future__ import annotations

from typing import Any

from mcptape.cassette import Cassette
from mcptape.diff.report import report_json
from mcptape.diff.types import DiffReport
from mcptape.pairing import Exchange, pair


def _exchange_doc(ex: Exchange) -> dict[str, Any]:
    doc: dict[str, Any] = {"seq": ex.request.event.seq, "request": ex.request.msg}
    if ex.items:
        doc["during"] = [it.msg for it in ex.items]
    if ex.response is not None:
        doc["response"] = ex.response.msg
        doc["latency"] = round((ex.response.event.t - ex.request.event.t) * 1000, 3)
    return doc


def _exchanges(cassette: Cassette | None, seqs: set[int]) -> dict[str, Any]:
    if not seqs or cassette is None:
        return {}
    return {str(ex.request.event.seq): _exchange_doc(ex) for ex in pair(cassette.events).exchanges
            if ex.request.event.seq in seqs}  # fmt: skip


def page_data(
    report: DiffReport, a: Cassette | None, b: Cassette | None, names: tuple[str, str]
) -> dict[str, Any]:
    """The report's JSON (docs/diff.md) plus the exchanges it names, from A and from B."""
    doc = report_json(report)
    rows = [
        d
        for key, value in doc.items()
        if isinstance(value, list)
        for d in value
        if isinstance(d, dict)
    ]
    doc["page"] = "diff"
    doc["files"] = {"a": names[0], "b": names[1]}
    doc["exchanges"] = {
        "a": _exchanges(a, {d["a_seq"] for d in rows if isinstance(d.get("a_seq"), int)}),
        "b": _exchanges(b, {d["b_seq"] for d in rows if isinstance(d.get("b_seq"), int)}),
    }
    return doc
