"""`mcptape replay FILE`: serve a cassette as an MCP server on stdio.

Clients and test suites start this command often, once per test at times, so it imports
only what serving needs, and that only once click has read the arguments.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mcptape.wire.ndjson import DEFAULT_MAX_LINE

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


@click.command(cls=Command, aliases={**FAULT_ALIASES, "--dry-run": "--list-fault-hits"})
@click.argument("cassettes", nargs=-1, required=True, type=click.Path(path_type=Path))
@replay_options(strict_when="When the client disconnects")
@quiet_option("unmatched requests and the strict report are errors: they stay")
@click.option(
    "--max-line",
    type=click.IntRange(min=1024),
    default=DEFAULT_MAX_LINE,
    show_default=True,
    help="Longest line handled whole (bytes): a longer client line is answered with a -32700 error, never held whole.",
)
@fault_options(
    "delays, errors, garbage, drops, disconnects",
    '{"tool": "add", "nth": 2, "action": "drop"}',
)
@click.option(
    "--list-fault-hits",
    "list_fault_hits",
    is_flag=True,
    help="Do not serve: list the recorded requests each fault rule would hit, then exit.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="When the client disconnects, append one JSON line to FILE listing the recorded requests it never made (for `mcptape prune --unused-from FILE`).",
)
@journal_option
def replay(
    cassettes: tuple[Path, ...], allow_repeats: bool, strict: bool, same_era: bool, ignore: tuple[str, ...], speed: float | None, quiet: bool,
    faults_file: Path | None = None, fault_rules: tuple[str, ...] = (), match_on: tuple[str, ...] = (), list_fault_hits: bool = False,
    max_line: int = DEFAULT_MAX_LINE, report: Path | None = None, journal: Path | None = None,
) -> None:  # fmt: skip
    """Serve CASSETTES as a deterministic MCP server on stdin/stdout.

    Give this command to your client in place of the real server's. Requests are matched
    by meaning (method and params, without ids, progress tokens, client info, trace
    context); each recording plays once, in recorded order. An unmatched request gets a
    JSON-RPC error (code -32010, or -32011 when already played) naming the nearest
    recorded requests and what differs; the same goes to stderr.

    One launch plays one session. A cassette recorded by a client that starts the
    server for every operation holds a session per launch: the client's first request
    (after the handshake) picks the session that began with it. Several cassettes, or a
    folder of them, are read as the sessions of one.

    \b
    Examples:
        mcptape replay cassettes/demo.jsonl
        mcptape replay --strict cassettes/demo.jsonl            # fail on unplayed exchanges
        mcptape replay --ignore /arguments/when cassettes/demo.jsonl
        mcptape replay --allow-repeats --timing recorded cassettes/demo.jsonl
        mcptape replay --fault '{"tool": "add", "action": "error", "code": -32603}' cassettes/demo.jsonl
        mcptape replay --fault-file faults.json --list-fault-hits cassettes/demo.jsonl
        mcptape replay --report unplayed.jsonl cassettes/demo.jsonl   # then mcptape prune --unused-from
        mcptape replay --journal calls.jsonl demo-mock.toml      # the requests and answers, to assert on
        mcptape replay cassettes/agent/                          # every cassette of a folder
    \b
    With the mcp SDK:
        Client(StdioServerParameters(command="mcptape", args=["replay", "demo.jsonl"]))
    """
    from mcptape.replay.faults import rules_from_options

    from .options import open_cassettes

    faults = rules_from_options(faults_file, fault_rules)
    if list_fault_hits:
        from mcptape.replay.faults import dry_run

        click.echo(dry_run(faults, open_cassettes(cassettes, cached=False)), nl=False)
        return
    from mcptape.replay.server_stdio import serve_stdio

    config = replay_config(match_on, ignore, allow_repeats, same_era, strict)
    cassette = open_cassettes(cassettes)
    with journaled(config, cassette, journal) as config:
        code = serve_stdio(cassette, config, strict=strict, speed=speed, quiet=quiet,
                           faults=faults, max_line=max_line, report=report)  # fmt: skip
    sys.exit(code)
