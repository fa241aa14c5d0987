"""Rendering a `DiffReport`: text tables for a terminal, markdown for a pull request, JSON.

No computing here. Every format starts with the same summary line. The same change in
several tools (`group`) is one entry of the tables, naming the tools, and one member of
the JSON's `groups`; the JSON's `differences` keep every row. Text lines are at most
`columns.WIDTH` wide. The JSON shape is documented in docs/diff.md and versioned by its
`format` member.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from .columns import WIDTH, table, wrap
from .group import Group, group
from .types import MISSING, Change, Difference, DiffReport, Section

JSON_FORMAT = "mcptape.diff/1"
"""The `format` member of the JSON report; bumped on any incompatible change."""

JSON_STRING_LIMIT = 2000
"""Strings longer than this are cut in the JSON report."""

SURFACE = (Section.SERVER, Section.TOOLS, Section.PROMPTS, Section.RESOURCES, Section.TEMPLATES)


def summary(report: DiffReport) -> str:
    """The first line: "equivalent", or counts by kind; envelope differences in brackets."""
    counts = report.counts()
    env = len(report.envelope)
    env_note = f"{env} envelope difference{'s' if env != 1 else ''}"
    if report.differences:
        parts = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
        return f"behaviour differs: {parts}" + (f" (+{env_note})" if env else "")
    if report.equivalent:
        return "equivalent" + (f" ({env_note}, not behaviour)" if env else "")
    return f"envelope differs: {env_note} (--strict-envelope)"


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return repr(value)


def shorten(value: Any, width: int = 48) -> str:
    """A value as compact JSON text, cut in the middle when longer than `width`."""
    if value is MISSING:
        return "-"
    text = _json_text(value)
    if len(text) <= width:
        return text
    keep = max(8, width - 14)
    return f"{text[: keep * 2 // 3]}…{text[-(keep // 3) :]} ({len(text)} chars)"


def shorten_pair(a: Any, b: Any, width: int = 48) -> tuple[str, str]:
    """Both values shortened; two long strings are shown from just before where they first differ."""
    if isinstance(a, str) and isinstance(b, str) and max(len(a), len(b)) + 2 > width:
        common = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            common += 1
        start = max(0, common - 10)
        if start > 0:
            return _cut("…" + a[start:], width, len(a)), _cut("…" + b[start:], width, len(b))
    return shorten(a, width), shorten(b, width)


def _cut(text: str, width: int, total: int) -> str:
    body = _json_text(text)
    if len(body) <= width:
        return body
    return f'{body[: width - 12]}…" ({total} chars)'


def _single(diffs: Sequence[Difference]) -> list[Group]:
    """Rows shown one by one (envelope, noise, masked)."""
    return [Group((i,), d, d.path, ()) for i, d in enumerate(diffs)]


def _rows(
    entries: Sequence[Group],
    width: int,
    *,
    with_kind: bool = True,
    count: bool = False,
    notes: list[str] | None = None,
) -> list[list[Any]]:
    """Table rows; a shared change names its items inline, or by a numbered note (`notes`)."""
    rows = []
    for g in entries:
        d = g.first
        va, vb = shorten_pair(_gist(d, d.a), _gist(d, d.b), width)
        row: list[Any] = [d.kind] if with_kind else []
        where = (
            f"{d.exchange} (+{d.count - 1} more)" if d.count > 1 and not d.cassettes else g.where
        )
        if len(g.rows) > 1 and notes is None:
            where += ": " + ", ".join(g.items)
        elif len(g.rows) > 1 and notes is not None:
            notes.append(", ".join(g.items))
            where += f" [{len(notes)}]"
        if d.cassettes:
            where += f" [{_cassettes(d.cassettes)}]"
        row += [where, g.path or "/", va, vb, d.message]
        if count:
            row.append(d.count)
        rows.append(row)
    return rows


def _gist(d: Difference, value: Any) -> Any:
    """A whole tool/prompt/resource added or removed is shown by its description (the JSON keeps all)."""
    whole = d.change in (Change.ADDED, Change.REMOVED)
    if d.section in SURFACE and whole and isinstance(value, dict):
        return value.get("description", value.get("title", value.get("name", value)))
    return value


def _set_apart(report: DiffReport) -> list[tuple[str, list[Difference]]]:
    """Rows listed but not counted: learned noise and masked volatile values."""
    out = []
    if report.noise:
        out.append(
            (
                f"Noise ({len(report.noise)}, differs between runs of one release; not counted)",
                report.noise,
            )
        )
    if report.masked:
        out.append(
            (
                f"Masked ({len(report.masked)}, volatile values on both sides; --no-mask counts them)",
                report.masked,
            )
        )
    return out


def _sections(report: DiffReport) -> list[tuple[str, list[Group]]]:
    """The differences as entries (the same change in several tools is one), surface first."""
    entries = group(report.differences)
    surface = [g for g in entries if g.first.section in SURFACE]
    exchanges = [g for g in entries if g.first.section not in SURFACE]
    return [("Server surface", surface), ("Exchanges", exchanges)]


def _entries_note(n_rows: int, n_entries: int) -> str:
    return f" ({n_rows} differences in {n_entries} entries)" if n_rows != n_entries else ""


WEIGHTS = {"what": 1.6, "path": 1.2, "A": 0.6, "B": 0.6}
"""A text table's share of the room by column when it must wrap: the message most, the
values least (the JSON and HTML reports hold them whole); other columns 1."""


def _table(rows: list[list[Any]], head: list[str]) -> str:
    return table(rows, head, weights=[WEIGHTS.get(h, 1.0) for h in head])


def render_text(report: DiffReport, width: int = 28) -> str:
    """Plain tables for a terminal, no line wider than `columns.WIDTH`."""
    lines = [*wrap(summary(report), WIDTH, "  "), *wrap(f"A: {_side(report.a)}", WIDTH, "   "),
             *wrap(f"B: {_side(report.b)}", WIDTH, "   ")]  # fmt: skip
    head = ["kind", "where", "path", "A", "B", "what"]
    for title, entries in _sections(report):
        if entries:
            n, notes = sum(len(g.rows) for g in entries), list[str]()
            table_rows = _rows(entries, width, notes=notes)
            lines += ["", f"{title}{_entries_note(n, len(entries))}:", _table(table_rows, head)]
            for i, items in enumerate(notes, 1):
                lines += wrap(f"[{i}] {items}", WIDTH, " " * (len(str(i)) + 3), anywhere=False)
    for title, rows in _set_apart(report):
        lines += [
            "",
            *wrap(f"{title}:", WIDTH),
            _table(_rows(_single(rows), width, with_kind=False), head[1:]),
        ]
    if report.envelope:
        note = (
            "counted (--strict-envelope)"
            if report.options.strict_envelope
            else "not behaviour; --strict-envelope counts them"
        )
        lines += ["", f"Envelope ({note}):",
                  _table(_rows(_single(report.envelope), width, with_kind=False, count=True),
                        ["where", "path", "A", "B", "what", "count"])]  # fmt: skip
    return "\n".join(lines) + "\n"


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_code(text: Any) -> str:
    """A code span that holds any value: fenced by more backticks than its longest run of them."""
    body = _md_cell(text)
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = (
        " " if body[:1] == "`" or body[-1:] == "`" or (body[:1] == " " and body[-1:] == " ") else ""
    )
    return f"{fence}{pad}{body}{pad}{fence}"


def render_markdown(report: DiffReport, width: int = 60) -> str:
    """Markdown for a pull-request comment: summary, tables, envelope folded away."""
    lines = [
        f"**mcptape diff: {summary(report)}**",
        "",
        f"- A: {_md_code(_side(report.a))}",
        f"- B: {_md_code(_side(report.b))}",
    ]
    head = ["kind", "where", "path", "A", "B", "what"]
    for title, entries in _sections(report):
        if entries:
            rows = [
                [_md_cell(c) if i not in (2, 3, 4) else _md_code(c) for i, c in enumerate(r)]
                for r in _rows(entries, width)
            ]
            n = sum(len(g.rows) for g in entries)
            lines += ["", f"### {title}{_entries_note(n, len(entries))}", "",
                      tabulate(rows, headers=head, tablefmt="github", disable_numparse=True)]  # fmt: skip
    for title, apart in _set_apart(report):
        rows = [[_md_cell(c) if i not in (1, 2, 3) else f"`{_md_cell(c)}`" for i, c in enumerate(r)]
                for r in _rows(_single(apart), width, with_kind=False)]  # fmt: skip
        lines += [
            "",
            f"<details><summary>{title}</summary>",
            "",
            tabulate(rows, headers=head[1:], tablefmt="github"),
            "",
            "</details>",
        ]
    if report.envelope:
        rows = [[_md_cell(c) if i not in (1, 2, 3) else _md_code(c) for i, c in enumerate(r)]
                for r in _rows(_single(report.envelope), width, with_kind=False, count=True)]  # fmt: skip
        lines += ["", f"<details><summary>Envelope differences ({len(report.envelope)}, not behaviour)</summary>", "",
                  tabulate(rows, headers=["where", "path", "A", "B", "what", "count"], tablefmt="github"), "", "</details>"]  # fmt: skip
    return (
        "\n".join(lines) + "\n\n"
    )  # a blank line ends the table or the HTML block: what a script appends renders


def _cassettes(names: tuple[str, ...]) -> str:
    """Where a finding of a many-cassette verify occurs: the cassettes' names, shortened past three."""
    short = [n.rsplit("/", 1)[-1] for n in names]
    return ", ".join(short) if len(short) <= 3 else f"{', '.join(short[:3])} +{len(short) - 3} more"


def _side(side: Any) -> str:
    """`name (era version, N calls)`; a side of many cassettes names what they share."""
    if side.era == "mixed":  # (verify of a folder with cassettes of both eras)
        what = "both protocol eras"
    else:
        what = f"{side.era} {side.protocol_version or 'unknown version'}"
    return f"{side.name} ({what}, {side.calls} calls)"


def _json_value(value: Any) -> Any:
    if isinstance(value, str) and len(value) > JSON_STRING_LIMIT:
        return f"{value[:JSON_STRING_LIMIT]}… ({len(value)} chars)"
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_value(v) for v in value]
    return value


def _change_json(d: Difference, **where: Any) -> dict[str, Any]:
    """What a difference says, as JSON: its class, `where` it is, its message and both values."""
    out: dict[str, Any] = {
        "section": str(d.section), "kind": d.kind, "change": str(d.change), "impact": str(d.impact),
        **where, "message": d.message,
    }  # fmt: skip
    if d.a is not MISSING:
        out["a"] = _json_value(d.a)
    if d.b is not MISSING:
        out["b"] = _json_value(d.b)
    return out


def difference_json(d: Difference) -> dict[str, Any]:
    """One difference as a JSON object (docs/diff.md)."""
    out = _change_json(d, exchange=d.exchange, path=d.path)
    if d.a_seq is not None:
        out["a_seq"] = d.a_seq
    if d.b_seq is not None:
        out["b_seq"] = d.b_seq
    if d.section is Section.ENVELOPE:
        out["count"] = d.count
    if d.cassettes:
        out["cassettes"] = list(d.cassettes)
    return out


def group_json(g: Group) -> dict[str, Any]:
    """One entry of the same change in several items: what they share, and which rows they are."""
    d = g.first
    out = _change_json(d, where=g.where, path=g.path)
    out["items"] = list(g.items)
    out["exchanges"] = [f"{d.exchange.split(' ', 1)[0]} {name}" for name in g.items]
    out["differences"] = list(g.rows)
    return out


def report_json(report: DiffReport) -> dict[str, Any]:
    """The whole report as a JSON-ready dict (docs/diff.md, format `mcptape.diff/1`)."""
    counts = report.counts()
    counts["envelope"] = len(report.envelope)

    def side(s: Any) -> dict[str, Any]:
        return {
            "name": s.name,
            "era": s.era,
            "protocol_version": s.protocol_version,
            "exchanges": s.exchanges,
            "calls": s.calls,
        }

    return {
        "format": JSON_FORMAT,
        "summary": summary(report),
        "equivalent": report.equivalent,
        "exit_code": report.exit_code,
        "counts": counts,
        "a": side(report.a),
        "b": side(report.b),
        "options": {
            "ignore": list(report.options.ignore),
            "strict_envelope": report.options.strict_envelope,
            "strict_messages": report.options.strict_messages,
        },
        "differences": [difference_json(d) for d in report.differences],
        "groups": [group_json(g) for g in group(report.differences) if len(g.rows) > 1],
        "envelope": [difference_json(d) for d in report.envelope],
        "noise": [difference_json(d) for d in report.noise],
        "masked": [difference_json(d) for d in report.masked],
        **({"cassettes": list(report.cassettes)} if report.cassettes else {}),
    }


def render_json(report: DiffReport) -> str:
    """The JSON report, pretty-printed, keys in a fixed order."""
    return json.dumps(report_json(report), ensure_ascii=False, indent=2, default=repr) + "\n"


RENDERERS = {"text": render_text, "markdown": render_markdown, "json": render_json}
"""format name -> renderer."""
