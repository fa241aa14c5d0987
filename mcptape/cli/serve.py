"""`mcptape serve FILE`: serve a cassette as an MCP server over HTTP."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mcptape.extras import require as require_extra

from .dialect import Command
from .options import (
    FAULT_ALIASES,
    fault_options,
    journal_option,
    journaled,
    quiet_option,
    replay_config,
    replay_options,
)


@click.command(cls=Command, aliases=FAULT_ALIASES)
@click.argument("cassettes", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address clients connect to. Anything but loopback is reachable by others: a warning says so.",
)
@click.option("--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="A Host (and Origin) name clients may use beyond loopback, e.g. myhost.local (repeatable). Needed with --host 0.0.0.0 or ::: anything else is refused (DNS-rebinding protection).")  # fmt: skip
@click.option(
    "--port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port clients connect to; 0 picks a free one (the URL line names it).",
)
@replay_options(strict_when="On shutdown, for each session")
@click.option(
    "--max-body",
    default=4 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(1),
    metavar="BYTES",
    help="Larger request bodies are answered 413.",
)
@quiet_option(
    "unmatched requests and the strict report are errors: they stay; so does the URL line"
)
@fault_options(
    "delays, errors, garbage, drops, disconnects, HTTP statuses, resets",
    '{"tool": "add", "action": "status", "status": 429, "retry_after": 2}',
)
@journal_option
def serve(
    cassettes: tuple[Path, ...], host: str, port: int, allow_repeats: bool, strict: bool, same_era: bool, ignore: tuple[str, ...], speed: float | None, max_body: int, quiet: bool,
    faults_file: Path | None = None, fault_rules: tuple[str, ...] = (), match_on: tuple[str, ...] = (),
    allowed_hosts: tuple[str, ...] = (), journal: Path | None = None,
) -> None:  # fmt: skip
    """Serve CASSETTES as a deterministic MCP server over HTTP, until Ctrl-C.

    The transport is the recorded one: Streamable HTTP at the recorded path (/mcp by
    default; a stdio cassette is served there too), or the legacy HTTP+SSE transport
    (GET /sse, then POSTs to the announced endpoint). Each client session (each
    initialize, or each HTTP+SSE stream) gets a fresh session id and its own pass
    through the cassette; 2026-07-28 requests are matched one by one. Status codes and
    JSON-vs-SSE answers are replayed as recorded. Several cassettes, or a folder of
    them, are read as the sessions of one. The URL is printed on stderr:

    \b
        mcptape serve: serving cassettes/demo.jsonl at http://127.0.0.1:PORT/mcp (...)

    \b
    Examples:
        mcptape serve cassettes/demo-http.jsonl --port 8000
        mcptape serve --strict --timing recorded cassettes/demo-http.jsonl
        mcptape serve cassettes/demo.jsonl          # a stdio cassette, over HTTP
        mcptape serve --fault '{"action": "status", "status": 503, "nth": 2}' cassettes/demo-http.jsonl
        mcptape serve --host 0.0.0.0 --allow-host myhost.local cassettes/demo-http.jsonl   # for other machines
        mcptape serve --journal calls.jsonl demo-mock.toml      # the requests and answers, to assert on
    \b
    With the mcp SDK:
        Client("http://127.0.0.1:8000/mcp")
    """
    require_extra("http", "uvicorn", "mcptape serve")
    from mcptape.replay.faults import rules_from_options
    from mcptape.replay.http.run import serve_http

    faults = rules_from_options(faults_file, fault_rules)
    config = replay_config(match_on, ignore, allow_repeats, same_era, strict)
    from .options import open_cassettes

    name = " ".join(map(str, cassettes))
    cassette = open_cassettes(cassettes)
    with journaled(config, cassette, journal) as config:
        code = serve_http(cassette, config, name=name, host=host, port=port, strict=strict, speed=speed, quiet=quiet,
                          max_body=max_body, faults=faults, allowed_hosts=allowed_hosts)  # fmt: skip
    sys.exit(code)
