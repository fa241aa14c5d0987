"""The comparison: two canonical cassettes -> a `DiffReport`. No printing.

Pure. Aligned calls whose canonical bodies are equal cost one `==`; only unequal ones go
through DeepDiff, so large cassettes with few differences diff fast. Envelope-only
differences are gathered apart and folded into one row per distinct (path, A, B).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from deepdiff import DeepDiff
from deepdiff.helper import notpresent

from mcptape.cassette import Cassette

from .align import Pair, align
from .canonical import Call, freeze
from .ignores import covered, parse_ignores, unscoped_patterns
from .noise import learn, split
from .normalize import Canonical, Options, normalize_events
from .pointer import pointer
from .surface import surface_differences
from .types import MISSING, Change, Difference, DiffOptions, DiffReport, Impact, Section, Side
from .volatile import masked

SURFACE_SECTIONS = frozenset({Section.TOOLS, Section.PROMPTS, Section.RESOURCES, Section.TEMPLATES})
"""Where values are declarations, not answers: never masked as volatile."""

SERVER_COSMETIC = frozenset({"title", "description", "websiteUrl", "icons", "instructions"})
"""Handshake fields that are text for people and models."""

_SECTION_OF = {
    "result": Section.RESULT, "error": Section.ERROR, "inputs": Section.INPUTS,
    "progress": Section.NOTIFICATIONS, "logs": Section.NOTIFICATIONS, "notifications": Section.NOTIFICATIONS,
}  # fmt: skip


def diff_cassettes(a: Cassette, b: Cassette, options: DiffOptions = DiffOptions(),
                   noise: Sequence[tuple[Cassette, Cassette]] = (), noise_source: str = "runs of A") -> DiffReport:  # fmt: skip
    """Compares two loaded cassettes.

    `noise`: pairs of recordings of one release (A and a second recording of A, or two live
    runs); what differs between them is listed as noise in the report, not counted.

    Raises:
        ConfigError: an ignore in `options` is not valid (`diff.ignores`).
    """
    opts = Options(
        strict_messages=options.strict_messages,
        ignore=unscoped_patterns(parse_ignores(options.ignore)),
    )
    report = diff_canonical(
        normalize_events(a.events, opts),
        normalize_events(b.events, opts),
        options,
        a.name,
        b.name,
    )
    places = learn(diff_canonical(normalize_events(x.events, opts), normalize_events(y.events, opts), options)
                   for x, y in noise)  # fmt: skip
    split(report, places, noise_source)
    return report


def diff_canonical(
    a: Canonical,
    b: Canonical,
    options: DiffOptions = DiffOptions(),
    name_a: str = "A",
    name_b: str = "B",
) -> DiffReport:
    """Compares two normalized cassettes."""
    report = DiffReport(_side(name_a, a), _side(name_b, b), options)
    rows: list[Difference] = []
    envelope: list[Difference] = []
    _server(a, b, rows, envelope)
    for d in surface_differences(a.surface, b.surface):
        (envelope if d.impact is Impact.ENVELOPE else rows).append(d)
    for pair in align(a.calls, b.calls):
        _pair(pair, rows, envelope, (a.era, b.era))
    if a.changes != b.changes:
        for path, va, vb, change in deep_rows({"changes": a.changes}, {"changes": b.changes}):
            rows.append(Difference(Section.NOTIFICATIONS, change, Impact.BEHAVIOUR, "(server notifications)", pointer(path), va, vb,
                                   "change notifications differ"))  # fmt: skip
    ignores = parse_ignores(options.ignore)
    rows = [d for d in rows if not covered(ignores, d)]
    if options.mask_volatile:
        rows = _mask(rows, report.masked)
    report.differences = rows
    report.envelope = _fold([d for d in envelope if not covered(ignores, d)])
    return report


def _mask(rows: list[Difference], masked_rows: list[Difference]) -> list[Difference]:
    """Takes out the rows whose two values differ only in a volatile shape (`volatile.masked`)."""
    kept = []
    for d in rows:
        shape = masked(d.a, d.b) if d.section not in SURFACE_SECTIONS else None
        if shape is None:
            kept.append(d)
        else:
            masked_rows.append(replace(d, message=f"{shape} on both sides (masked)"))
    return kept


def _side(name: str, c: Canonical) -> Side:
    return Side(name, c.era, c.protocol_version, c.exchanges, len(c.calls))


def _change(va: Any, vb: Any) -> Change:
    return Change.ADDED if va is MISSING else Change.REMOVED if vb is MISSING else Change.CHANGED


Row = tuple[tuple[Any, ...], Any, Any, Change]


def deep_rows(a: Any, b: Any) -> list[Row]:
    """(path tokens, value in A, value in B, change) for each leaf difference, sorted by path.

    Equal subtrees are skipped with `==`, and dicts and same-length lists are descended
    directly; DeepDiff compares what is left (lists whose length changed), so a large
    result with one changed string costs microseconds, not a full DeepDiff walk.
    """
    out: list[Row] = []
    _narrow(a, b, (), out)
    out.sort(key=lambda r: [str(t) for t in r[0]])
    return out


def _narrow(a: Any, b: Any, path: tuple[Any, ...], out: list[Row]) -> None:
    if a == b and isinstance(a, bool) == isinstance(b, bool):  # 1 == 1.0, but true is not 1
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in a.keys() | b.keys():
            va, vb = a.get(k, MISSING), b.get(k, MISSING)
            if va is MISSING or vb is MISSING:
                out.append(((*path, k), va, vb, _change(va, vb)))
            elif va != vb or type(va) is not type(vb):
                _narrow(va, vb, (*path, k), out)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) == len(b):
            for i, (va, vb) in enumerate(zip(a, b, strict=True)):
                _narrow(va, vb, (*path, i), out)
            return
        tree = DeepDiff(a, b, view="tree", ignore_numeric_type_changes=True)
        for items in tree.values():
            for item in items:
                va = MISSING if item.t1 is notpresent else item.t1
                vb = MISSING if item.t2 is notpresent else item.t2
                out.append(((*path, *item.path(output_format="list")), va, vb, _change(va, vb)))
        return
    out.append((path, a, b, Change.CHANGED))


def _server(a: Canonical, b: Canonical, rows: list[Difference], envelope: list[Difference]) -> None:
    sa, sb = a.handshake.server, b.handshake.server
    cross_era = a.era != b.era
    if sa and sb:
        partial = a.handshake.partial or b.handshake.partial
        for fld in sorted(sa.keys() & sb.keys() if partial else sa.keys() | sb.keys()):
            va, vb = sa.get(fld, MISSING), sb.get(fld, MISSING)
            if va == vb:
                continue
            if fld == "capabilities" and isinstance(va, dict) and isinstance(vb, dict):
                for path, xa, xb, change in deep_rows(va, vb):
                    # across eras, the same server flags listChanged/subscribe differently (subscriptions/listen)
                    to_env = cross_era and len(path) > 1
                    d = Difference(Section.ENVELOPE if to_env else Section.SERVER, change,
                                   Impact.ENVELOPE if to_env else Impact.BEHAVIOUR, "server capabilities",
                                   pointer(("server", "capabilities", *path)), xa, xb, f"capability {change}")  # fmt: skip
                    (envelope if to_env else rows).append(d)
                continue
            impact = Impact.COSMETIC if fld in SERVER_COSMETIC else Impact.BEHAVIOUR
            rows.append(
                Difference(
                    Section.SERVER,
                    _change(va, vb),
                    impact,
                    "server",
                    pointer(("server", fld)),
                    va,
                    vb,
                    f"{fld} {_change(va, vb)}",
                )
            )
    ea, eb = a.handshake.envelope, b.handshake.envelope
    if a.protocol_version != b.protocol_version:
        envelope.append(Difference(Section.ENVELOPE, Change.CHANGED, Impact.ENVELOPE, "session", "/protocol/version",
                                   a.protocol_version, b.protocol_version, "protocol version"))  # fmt: skip
    _envelope_rows(ea, eb, "handshake", envelope)


def _envelope_rows(
    ea: dict[str, Any],
    eb: dict[str, Any],
    label: str,
    out: list[Difference],
    a_seq: int | None = None,
    b_seq: int | None = None,
) -> None:
    for path in sorted(ea.keys() | eb.keys()):
        va, vb = ea.get(path, MISSING), eb.get(path, MISSING)
        if va is None:
            va = MISSING
        if vb is None:
            vb = MISSING
        if va != vb:
            out.append(
                Difference(
                    Section.ENVELOPE,
                    _change(va, vb),
                    Impact.ENVELOPE,
                    label,
                    path,
                    va,
                    vb,
                    "",
                    1,
                    a_seq,
                    b_seq,
                )
            )


def _logs_comparable(la: str | None, lb: str | None, eras: tuple[str, str]) -> bool:
    """Logs are compared unless the client asked for different levels.

    A 2026-07-28 request without `logLevel` gets no logs, while a legacy server logs at its
    own default until `logging/setLevel`: across eras, that pair is not comparable either.
    """
    if la and lb:
        return la == lb
    if eras[0] != eras[1]:
        modern_level = la if eras[0] == "modern" else lb
        return modern_level is not None
    return True


def _pair(
    pair: Pair, rows: list[Difference], envelope: list[Difference], eras: tuple[str, str] = ("", "")
) -> None:
    """The rows of one aligned pair: the whole exchange when one side lacks it, else its
    envelope rows, an outcome that flipped (result <-> error), and each body difference."""
    ca, cb = pair.a, pair.b
    if ca is None or cb is None:
        rows.append(_one_sided(pair))
        return
    label = _label(ca, pair.occurrence)
    _envelope_rows(ca.envelope, cb.envelope, label, envelope, ca.seq, cb.seq)
    ba, bb = ca.body, cb.body
    if not _logs_comparable(ca.log_level, cb.log_level, eras):
        ba, bb = _without(ba, "logs"), _without(bb, "logs")  # asked at different levels
    if ba == bb:
        return
    if ("result" in ba and "error" in bb) or ("error" in ba and "result" in bb):
        rows.append(_flipped(ba, bb, label, ca.seq, cb.seq))
        ba, bb = _without(ba, "result", "error"), _without(bb, "result", "error")
    rows.extend(_body_rows(ba, bb, label, ca.seq, cb.seq))


def _label(call: Call, occurrence: int) -> str:
    return call.label if occurrence == 1 else f"{call.label} #{occurrence}"


def _without(body: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in keys}


def _one_sided(pair: Pair) -> Difference:
    """The row of an exchange only one cassette has, with its outcome."""
    call = pair.a or pair.b
    assert call is not None
    label = _label(call, pair.occurrence)
    outcome = call.body.get("result", call.body.get("error", MISSING))
    if pair.a is not None:
        return Difference(Section.EXCHANGE, Change.REMOVED, Impact.BEHAVIOUR, label, "", outcome, MISSING,
                          "exchange only in A", a_seq=call.seq)  # fmt: skip
    return Difference(Section.EXCHANGE, Change.ADDED, Impact.BEHAVIOUR, label, "", MISSING, outcome,
                      "exchange only in B", b_seq=call.seq)  # fmt: skip


def _flipped(
    ba: dict[str, Any], bb: dict[str, Any], label: str, a_seq: int, b_seq: int
) -> Difference:
    """The row of an outcome that changed side: a result in one body, an error in the other."""
    va, vb = ba.get("result", ba.get("error")), bb.get("result", bb.get("error"))
    msg = "a result became an error" if "result" in ba else "an error became a result"
    return Difference(Section.ERROR, Change.CHANGED, Impact.BEHAVIOUR, label, "/error", va, vb,
                      msg, 1, a_seq, b_seq)  # fmt: skip


def _body_rows(
    ba: dict[str, Any], bb: dict[str, Any], label: str, a_seq: int, b_seq: int
) -> list[Difference]:
    """One row per difference between two bodies, in the section its first path token names."""
    found = deep_rows(ba, bb)
    kept = _merge_twins(found)
    twin = len(kept) < len(found)
    out = []
    for path, va, vb, change in kept:
        section = _SECTION_OF.get(str(path[0]), Section.RESULT) if path else Section.RESULT
        msg = _message(path, change, twin=twin)
        out.append(Difference(section, change, Impact.BEHAVIOUR, label, pointer(path), va, vb,
                              msg, 1, a_seq, b_seq))  # fmt: skip
    return out


def _merge_twins(found: list[Row]) -> list[Row]:
    """Drops structuredContent rows when the text content changed too (the SDKs send both)."""
    content = any(p[:2] == ("result", "content") for p, *_ in found)
    if not content:
        return found
    return [r for r in found if r[0][:2] != ("result", "structuredContent")]


def _message(path: tuple[Any, ...], change: Change, twin: bool = False) -> str:
    if not path:
        return f"outcome {change}"
    head = str(path[0])
    if path[:2] == ("result", "isError"):
        return "isError flipped"
    if path[:2] == ("error", "code"):
        return "error code changed"
    if path[:2] == ("result", "content"):
        return f"content {change}" + (" (structuredContent likewise)" if twin else "")
    if head in ("progress", "logs"):
        return f"{'progress steps' if head == 'progress' else 'log messages'} differ"
    if head == "inputs":
        return "input requests (elicitation, sampling, roots) differ"
    return f"{'/'.join(map(str, path[:2]))} {change}"


def _fold(rows: Iterable[Difference]) -> list[Difference]:
    """One row per distinct (path, A, B), counting the exchanges it appeared in."""
    seen: dict[tuple[str, Any, Any], int] = {}
    out: list[Difference] = []
    for d in rows:
        key = (d.path, _h(d.a), _h(d.b))
        at = seen.get(key)
        if at is None:
            seen[key] = len(out)
            out.append(d)
        else:
            prev = out[at]
            out[at] = Difference(prev.section, prev.change, prev.impact, prev.exchange, prev.path, prev.a, prev.b,
                                 prev.message, prev.count + 1, prev.a_seq, prev.b_seq)  # fmt: skip
    return out


def _h(value: Any) -> Any:
    return "<missing>" if value is MISSING else repr(freeze(value))
