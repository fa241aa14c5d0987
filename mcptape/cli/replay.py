"""`mcptape replay FILE`: serve a cassette as an MCP server on stdio."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mcptape.wire.ndjson import DEFAULT_MAX_LINE


def parse_timing(value: str) -> float | None:
    """`none` -> None (instant), `recorded` -> 1.0, a number -> that speed factor."""
    text = value.strip().lower()
    if text in ("none", "instant", "0"):
        return None
    if text == "recorded":
        return 1.0
    try:
        speed = float(text)
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: use none, recorded, or a speed factor such as 2 or 0.5"
        ) from None
    if not speed > 0 or speed == float("inf"):
        raise click.BadParameter(f"{value!r}: the speed factor must be a positive number")
    return speed


@click.command()
@click.argument("cassette", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--allow-repeats",
    is_flag=True,
    help="Answer a request again with its last recording once its recordings are used up.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="When the client disconnects, list recorded requests it never made and exit 1 if any. Also plays only recordings made by a client that declared the same capabilities and log level.",
)
@click.option(
    "--same-era",
    is_flag=True,
    help="Refuse clients of the other protocol era (a legacy initialize on a 2026-07-28 cassette gets -32022), instead of translating.",
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="POINTER",
    help="Leave this JSON pointer into params out of matching, e.g. /arguments/when (repeatable).",
)
@click.option(
    "--match-on",
    "match_on",
    multiple=True,
    metavar="MATCHER",
    help="Match requests on these built-in matchers only (repeatable): method, params, name, arguments, uri, cursor. Default: method and params.",
)
@click.option(
    "--timing",
    "speed",
    default="none",
    show_default=True,
    metavar="none|recorded|FACTOR",
    callback=lambda _c, _p, v: parse_timing(v),
    help="Answer at once, with the recorded delays, or FACTOR times faster than recorded.",
)
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
@click.option(
    "--faults",
    "faults_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Fault rules (JSON, or TOML with [[faults]]) to inject: delays, errors, garbage, drops, disconnects. See docs/faults.md.",
)
@click.option(
    "--fault",
    "fault_rules",
    multiple=True,
    metavar="RULE_JSON",
    help='One fault rule inline, e.g. \'{"tool": "add", "nth": 2, "action": "drop"}\' (repeatable; after --faults).',
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
    from mcptape.cassette import load
    from mcptape.matching import match_policy
    from mcptape.replay.engine import ReplayConfig
    from mcptape.replay.faults import rules_from_options
    from mcptape.replay.server_stdio import serve_stdio

    faults = rules_from_options(faults_file, fault_rules)
    if dry_run:
        from mcptape.replay.faults import dry_run as list_hits

        click.echo(list_hits(faults, load(cassette)), nl=False)
        return
    config = ReplayConfig(
        match_policy(match_on or None, ignore),
        allow_repeats=allow_repeats,
        cross_era=not same_era,
        exact_clients=strict,
    )
    sys.exit(
        serve_stdio(
            load(cassette),
            config,
            strict=strict,
            speed=speed,
            quiet=quiet,
            faults=faults,
            max_line=max_line,
            report=report,
        )
    )
