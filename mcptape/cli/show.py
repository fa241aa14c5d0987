"""`mcptape show`: a cassette's session as a timeline."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import click
import orjson

if TYPE_CHECKING:
    from collections.abc import Iterable

    from mcptape.cassette import Cassette
    from mcptape.cassette.model import Event
    from mcptape.pairing import Session
    from mcptape.skeletons import Outline
    from mcptape.views.timeline import Row

from .dialect import Command
from .messages import warning
from .options import quiet_option

FORMATS = ["text", "json", "mermaid", "html"]


@click.command(cls=Command, value_aliases={"--format": {"table": "text"}})
@click.argument("cassette", type=click.Path(path_type=Path))
@click.option(
    "-f",
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text: a table for a terminal; json: for machines; mermaid: a sequence diagram; html: a self-contained page.",
)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write to FILE instead of standard output.")  # fmt: skip
@quiet_option()
def show(cassette: Path, fmt: str, output: Path | None, quiet: bool) -> None:
    """Show a recorded session: who sent what, when, requests paired with responses.

    \b
    mcptape show cassettes/demo.jsonl
    mcptape show cassettes/demo.jsonl --format html -o session.html
    mcptape show cassettes/demo.jsonl --format mermaid > session.mmd
    mcptape show cassettes/demo.jsonl --format json | jq '.rows[] | select(.what=="tools/call")'
    """
    from mcptape.cassette import load
    from mcptape.pairing import pair

    if fmt == "json":  # one row per event: written as the cassette is read again
        _json(cassette, output)
        return
    cas = load(cassette)
    for w in cas.warnings:
        warning(w)
    session = pair(cas.events)
    text = _render(fmt, cassette, cas, session)
    if output is None:
        sys.stdout.buffer.write(text.encode())
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write: {exc.strerror}") from None


def _render(fmt: str, path: Path, cas: Cassette, session: Session) -> str:
    from mcptape.views import timeline

    if fmt == "html":
        from mcptape.views import page, session_data

        return page.render(
            f"mcptape: {path.name}", session_data.page_data(cas, session, str(path)), "session.js"
        )
    rows = timeline.rows(cas, session)
    versions = timeline.protocol_versions(session)
    from mcptape.eras import servable

    serves = servable(versions)
    if fmt == "json":
        from mcptape.cassette.sessions import sessions

        doc = {
            "cassette": str(path),
            "header": cas.header.to_json(),
            "protocol_versions": versions,
            "serves": serves,
            "warnings": cas.warnings,
            "sessions": [s.to_json() for s in sessions(cas)],
            "rows": [asdict(r) for r in rows],
        }
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2).decode() + "\n"
    if fmt == "mermaid":
        from mcptape.views import mermaid

        return mermaid.diagram(rows)
    return _table(path, cas, rows, versions)


def _json(path: Path, output: Path | None) -> None:
    """`--format json`, streamed: the exchanges are paired as the cassette is read
    (`mcptape.skeletons.outline`), then the rows are drawn and written one by one as it is read
    again (the same document as `orjson.dumps(..., OPT_INDENT_2)` of the whole, without the
    whole in memory)."""
    from mcptape.cassette import stream
    from mcptape.cassette.sessions import session_infos
    from mcptape.eras import servable
    from mcptape.skeletons import outline
    from mcptape.views import timeline

    plan = outline(path, tolerate_truncated=True)
    for w in plan.warnings:
        warning(w)
    versions = timeline.first_uses(plan.versions)
    head = {
        "cassette": str(path),
        "header": plan.header.to_json(),
        "protocol_versions": versions,
        "serves": servable(versions),
        "warnings": plan.warnings,
        "sessions": [
            s.to_json()
            for s in session_infos(
                plan.header, (el.event for el in stream(path, tolerate_truncated=True).events)
            )
        ],
    }
    events = (el.event for el in stream(path, tolerate_truncated=True).events)
    if output is None:  # a closed stdout is the group's to end quietly
        _rows(sys.stdout.buffer, head, plan, events)
        return
    try:
        with open(output, "wb") as out:
            _rows(out, head, plan, events)
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write: {exc.strerror}") from None


def _rows(out: BinaryIO, head: dict[str, Any], plan: Outline, events: Iterable[Event]) -> None:
    """The JSON document: `head`, then the rows one by one."""
    from mcptape.views import timeline

    out.write(orjson.dumps(head, option=orjson.OPT_INDENT_2)[:-2] + b',\n  "rows": [')
    sep = b"\n"
    for row in timeline.outline_rows(plan, events):
        text = orjson.dumps(asdict(row), option=orjson.OPT_INDENT_2)
        out.write(sep + b"    " + text.replace(b"\n", b"\n    "))
        sep = b",\n"
    out.write(b"]\n}\n" if sep == b"\n" else b"\n  ]\n}\n")


def _table(path: Path, cas: Cassette, rows: list[Row], versions: list[str]) -> str:
    from tabulate import tabulate

    h = cas.header
    target = " ".join(h.target.get("command", [])) or h.target.get("url", "")
    head = f"{path}: {h.transport} {target}, recorded {h.recorded_at}, protocol {', '.join(versions) or 'unknown'}, {len(cas.events)} events"
    from mcptape.eras import describe_servable, servable

    head += f"\nreplays for {describe_servable(servable(versions))}"
    head += _session_lines(cas)
    arrows = {"client->server": "→", "server->client": "←", "server stderr": "stderr", "": ""}
    table = [
        [r.seq, f"{r.t_ms:.1f}", arrows.get(r.direction, r.direction), r.what, "" if r.id is None else r.id, r.summary,
         "" if r.pair is None else (f"#{r.pair}" + (f" {r.latency_ms:.1f}ms" if r.latency_ms is not None else ""))]
        for r in rows
    ]  # fmt: skip
    return str(
        head
        + "\n"
        + tabulate(
            table, headers=["#", "ms", "", "what", "id", "summary", "pair"], tablefmt="simple"
        )
        + "\n"
    )


def _session_lines(cas: Cassette) -> str:
    """A line per session, when the cassette holds more than one (nothing otherwise)."""
    from mcptape.cassette.sessions import sessions

    found = sessions(cas)
    if len(found) < 2:
        return ""
    lines = [f"\n{len(found)} sessions:"]
    for s in found:
        asked = ", ".join(s.requests) or "no requests"
        cut = "" if s.ended else " (cut short)"
        lines.append(
            f"\n  session {s.n}: events {s.first_seq}-{s.last_seq}, recorded {s.recorded_at}{cut}: {asked}"
        )
    return "".join(lines)
