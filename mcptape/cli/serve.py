"""`mcptape serve FILE`: serve a cassette as an MCP server over HTTP."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mcptape.cli.replay import parse_timing


@click.command()
@click.argument("cassette", type=click.Path(dir_okay=False, path_type=Path))
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on. Anything but loopback is reachable by others: a warning says so.",
)
@click.option("--allow-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="A Host (and Origin) name clients may use beyond loopback, e.g. myhost.local (repeatable). Needed with --host 0.0.0.0 or ::: anything else is refused (DNS-rebinding protection).")  # fmt: skip
@click.option(
    "--port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port to listen on; 0 picks a free one (the URL line names it).",
)
@click.option(
    "--allow-repeats",
    is_flag=True,
    help="Answer a request again with its last recording once its recordings are used up.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="On shutdown, list recorded requests a session never made and exit 1 if any. Also plays only recordings made by a client that declared the same capabilities and log level.",
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
    "--max-body",
    default=4 * 1024 * 1024,
    show_default=True,
    type=click.IntRange(1),
    metavar="BYTES",
    help="Larger request bodies are answered 413.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="Only errors on stderr (unmatched requests, strict report); the URL line stays.",
)
@click.option(
    "--faults",
    "faults_file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Fault rules (JSON, or TOML with [[faults]]): delays, errors, garbage, drops, disconnects, HTTP statuses, resets. See docs/faults.md.",
)
@click.option(
    "--fault",
    "fault_rules",
    multiple=True,
    metavar="RULE_JSON",
    help='One fault rule inline, e.g. \'{"tool": "add", "action": "status", "status": 429, "retry_after": 2}\' (repeatable).',
)
def serve(
    cassette: Path, host: str, port: int, allow_repeats: bool, strict: bool, same_era: bool, ignore: tuple[str, ...], speed: float | None, max_body: int, quiet: bool,
    faults_file: Path | None = None, fault_rules: tuple[str, ...] = (), match_on: tuple[str, ...] = (),
    allowed_hosts: tuple[str, ...] = (),
) -> None:  # fmt: skip
    """Serve CASSETTE as a deterministic MCP server over HTTP, until Ctrl-C.

    The transport is the recorded one: Streamable HTTP at the recorded path (/mcp by
    default; a stdio cassette is served there too), or the legacy HTTP+SSE transport
    (GET /sse, then POSTs to the announced endpoint). Each client session (each
    initialize, or each HTTP+SSE stream) gets a fresh session id and its own pass
    through the cassette; 2026-07-28 requests are matched one by one. Status codes and
    JSON-vs-SSE answers are replayed as recorded. The URL is printed on stderr:

    \b
        mcptape: serving cassettes/demo.jsonl at http://127.0.0.1:PORT/mcp (...)

    \b
    Examples:
        mcptape serve cassettes/demo-http.jsonl --port 8000
        mcptape serve --strict --timing recorded cassettes/demo-http.jsonl
        mcptape serve cassettes/demo.jsonl          # a stdio cassette, over HTTP
        mcptape serve --fault '{"action": "status", "status": 503, "nth": 2}' cassettes/demo-http.jsonl
        mcptape serve --host 0.0.0.0 --allow-host myhost.local cassettes/demo-http.jsonl   # for other machines
    \b
    With the mcp SDK:
        Client("http://127.0.0.1:8000/mcp")
    """
    from mcptape.cassette import load
    from mcptape.matching import match_policy
    from mcptape.replay.engine import ReplayConfig
    from mcptape.replay.faults import rules_from_options
    from mcptape.replay.http.run import serve_http

    faults = rules_from_options(faults_file, fault_rules)
    config = ReplayConfig(
        match_policy(match_on or None, ignore),
        allow_repeats=allow_repeats,
        cross_era=not same_era,
        exact_clients=strict,
    )
    code = serve_http(load(cassette), config, name=str(cassette), host=host, port=port, strict=strict, speed=speed, quiet=quiet, max_body=max_body,
                      faults=faults, allowed_hosts=allowed_hosts)  # fmt: skip
    sys.exit(code)
