"""`mcptape import FILE -o CASSETTE`: a mitmproxy flow file or a HAR capture -> a cassette."""

from __future__ import annotations

from pathlib import Path

import click

from .messages import note, shown
from .options import quiet_option, redact_config, redaction_options


@click.command("import")
@click.argument("capture", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "-o",
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="The cassette to write (replaced atomically).",
)
@redaction_options
@quiet_option()
def import_(
    capture: Path,
    output: Path,
    redact_keys: tuple[str, ...],
    redact_patterns: tuple[str, ...],
    no_redact: bool,
    quiet: bool,
) -> None:
    """Convert CAPTURE, a mitmproxy flow file or a HAR file of MCP traffic, into a cassette.

    The format is detected from the content (`mitmdump -w` output, or HAR 1.2 from
    mitmproxy, a browser or another proxy; `.zhar` too). Every flow that carries JSON-RPC
    becomes cassette events with the same `http` metadata as `mcptape record --http`
    (exchanges, sessions, JSON and SSE bodies event by event, legacy HTTP+SSE), so the
    cassette replays and diffs like a recorded one. Secrets are redacted as when
    recording. Other flows (pages, favicons, OAuth metadata) are skipped and counted.

    \b
    Examples:
        mitmdump --mode reverse:http://127.0.0.1:8000 -w flows.mitm    # capture, then:
        mcptape import flows.mitm -o cassettes/server.jsonl
        mcptape import session.har -o cassettes/server.jsonl --redact-key x-tenant
        mitmdump -nr flows.mitm --set hardump=session.har            # or export a HAR
    """
    from mcptape.capture.importer import import_file
    from mcptape.redaction.redact import Redactor

    config = redact_config(no_redact, redact_keys, redact_patterns)
    Redactor(config)  # a bad --redact-pattern is a usage error before anything is read
    stats = import_file(capture, output, config)
    note(f"imported {stats.imported} flows, skipped {stats.skipped} that are not MCP "
         f"({stats.format} -> {shown(output)}, {stats.events} events, {stats.transport})")  # fmt: skip
