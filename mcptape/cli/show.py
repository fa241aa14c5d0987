"""`mcptape show`: a cassette's session as a timeline."""

from __future__ import annotations

import sys
from dataclasses import asdict
from pathlib import Path

import click
import orjson


@click.command()
@click.argument("cassette", type=click.Path(path_type=Path))
@click.option("-f", "--format", "fmt", type=click.Choice(["table", "json", "mermaid"]), default="table", show_default=True)
def show(cassette: Path, fmt: str) -> None:
    """Show a recorded session: who sent what, when, requests paired with responses.

    \b
    mcptape show cassettes/demo.jsonl
    mcptape show cassettes/demo.jsonl --format mermaid > session.mmd
    mcptape show cassettes/demo.jsonl --format json | jq '.rows[] | select(.what=="tools/call")'
    """
    from tabulate import tabulate

    from mcptape import timeline
    from mcptape.cassette import load
    from mcptape.pairing import pair

    cas = load(cassette)
    for w in cas.warnings:
        print(f"mcptape: warning: {w}", file=sys.stderr)
    session = pair(cas.events)
    rows = timeline.rows(cas, session)
    versions = timeline.protocol_versions(session)
    from mcptape.eras import describe_servable, servable

    serves = servable(versions)
    if fmt == "json":
        doc = {
            "cassette": str(cassette),
            "header": cas.header.to_json(),
            "protocol_versions": versions,
            "serves": serves,
            "warnings": cas.warnings,
            "rows": [asdict(r) for r in rows],
        }
        sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
        return
    if fmt == "mermaid":
        sys.stdout.write(timeline.mermaid(rows))
        return
    h = cas.header
    target = " ".join(h.target.get("command", [])) or h.target.get("url", "")
    click.echo(f"{cassette}: {h.transport} {target}, recorded {h.recorded_at}, protocol {', '.join(versions) or 'unknown'}, {len(cas.events)} events")
    click.echo(f"replays for {describe_servable(serves)}")
    arrows = {"client->server": "→", "server->client": "←", "server stderr": "stderr", "": ""}
    table = [
        [r.seq, f"{r.t_ms:.1f}", arrows.get(r.direction, r.direction), r.what, "" if r.id is None else r.id, r.summary,
         "" if r.pair is None else (f"#{r.pair}" + (f" {r.latency_ms:.1f}ms" if r.latency_ms is not None else ""))]
        for r in rows
    ]  # fmt: skip
    click.echo(tabulate(table, headers=["#", "ms", "", "what", "id", "summary", "pair"], tablefmt="simple"))
