"""`mcptape replay FILE`: serve a cassette as an MCP server on stdio.

The options and their help live here; the body is `replay_run.run_replay`, which `main` also
runs for the plain form without importing this module (nor click).
"""

from __future__ import annotations

from pathlib import Path

import click

from mcptape.wire.ndjson import DEFAULT_MAX_LINE

from .options import fault_options, replay_options
from .replay_run import run_replay


@click.command()
@click.argument("cassette", type=click.Path(dir_okay=False, path_type=Path))
@replay_options(strict_when="When the client disconnects")
@click.option(
    "-q", "--quiet", is_flag=True, help="Only errors on stderr (unmatched requests, strict report)."
)
@click.option(
    "--max-line",
    type=click.IntRange(min=1024),
    default=DEFAULT_MAX_LINE,
    show_default=True,
    help="Longest client line parsed (bytes); a longer one is answered with a -32700 error, never held whole.",
)
@fault_options(
    "delays, errors, garbage, drops, disconnects",
    '{"tool": "add", "nth": 2, "action": "drop"}',
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Do not serve: list the recorded requests each fault rule would hit.",
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="When the client disconnects, append one JSON line to FILE listing the recorded requests it never made (for `mcptape prune --unused-from FILE`).",
)
def replay(
    cassette: Path, allow_repeats: bool, strict: bool, same_era: bool, ignore: tuple[str, ...], speed: float | None, quiet: bool,
    faults_file: Path | None = None, fault_rules: tuple[str, ...] = (), match_on: tuple[str, ...] = (), dry_run: bool = False,
    max_line: int = DEFAULT_MAX_LINE, report: Path | None = None,
) -> None:  # fmt: skip
    """Serve CASSETTE as a deterministic MCP server on stdin/stdout.

    Give this command to your client in place of the real server's. Requests are matched
    by meaning (method and params, without ids, progress tokens, client info, trace
    context); each recording plays once, in recorded order. An unmatched request gets a
    JSON-RPC error (code -32010, or -32011 when already played) naming the nearest
    recorded requests and what differs; the same goes to stderr.

    \b
    Examples:
        mcptape replay cassettes/demo.jsonl
        mcptape replay --strict cassettes/demo.jsonl            # fail on unplayed exchanges
        mcptape replay --ignore /arguments/when cassettes/demo.jsonl
        mcptape replay --allow-repeats --timing recorded cassettes/demo.jsonl
        mcptape replay --fault '{"tool": "add", "action": "error", "code": -32603}' cassettes/demo.jsonl
        mcptape replay --faults faults.json --dry-run cassettes/demo.jsonl
        mcptape replay --report unplayed.jsonl cassettes/demo.jsonl   # then mcptape prune --unused-from
    \b
    With the mcp SDK:
        Client(StdioServerParameters(command="mcptape", args=["replay", "demo.jsonl"]))
    """
    run_replay(
        cassette, allow_repeats, strict, same_era, ignore, speed, quiet, faults_file, fault_rules,
        match_on, dry_run, max_line, report,
    )  # fmt: skip
