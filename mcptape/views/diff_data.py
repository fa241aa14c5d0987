"""What the HTML page of a diff shows: the engine's report (its JSON form) and, for each exchange
a difference points at, that exchange in full from both cassettes (an `input_required`
chain with its retries, ending with the final answer the diff compared).

Pure: the report and the two cassettes in, plain dicts out. The page never recomputes the diff.
"""

from __future__ import annotations

from typing import Any

from mcptape.cassette import Cassette
from mcptape.diff.report import report_json
from mcptape.diff.types import DiffReport
from mcptape.pairing import Exchange, pair


def _round(asked: Exchange, retry: Exchange) -> dict[str, Any]:
    """One round of an `input_required` chain: the server's question and the client's retry."""
    doc: dict[str, Any] = {
        "input_required": asked.response.msg if asked.response is not None else None,
        "retry": retry.request.msg,
    }
    if retry.items:
        doc["during"] = [it.msg for it in retry.items]
    return doc


def _exchange_doc(ex: Exchange, retries: list[Exchange]) -> dict[str, Any]:
    """The exchange as the page shows it; an `input_required` chain ends with its final answer.

    `response` is the answer the diff compared: for a chain, the last retry's. The earlier
    answers (`input_required`) and the retries that answered them are the `rounds`.
    """
    doc: dict[str, Any] = {"seq": ex.request.event.seq, "request": ex.request.msg}
    if ex.items:
        doc["during"] = [it.msg for it in ex.items]
    links = [ex, *retries]
    if retries:
        doc["rounds"] = [_round(asked, retry) for asked, retry in zip(links, retries, strict=False)]
    final = links[-1]
    if final.response is not None:
        doc["response"] = final.response.msg
        doc["latency"] = round((final.response.event.t - ex.request.event.t) * 1000, 3)
    return doc


def _exchanges(cassette: Cassette | None, seqs: set[int]) -> dict[str, Any]:
    if not seqs or cassette is None:
        return {}
    exchanges = pair(cassette.events).exchanges
    retries: dict[int, list[Exchange]] = {}
    for ex in exchanges:
        if ex.retry_of is not None:
            retries.setdefault(ex.retry_of, []).append(ex)
    return {str(ex.request.event.seq): _exchange_doc(ex, retries.get(ex.index, [])) for ex in exchanges
            if ex.retry_of is None and ex.request.event.seq in seqs}  # fmt: skip


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
