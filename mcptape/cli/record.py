"""`mcptape record`: record a stdio server (or, with --http, an HTTP server through mitmproxy)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from mcptape.errors import ConfigError
from mcptape.extras import require as require_extra

from .dialect import Command
from .messages import label, shown
from .options import quiet_option, redact_config, redaction_options

DEFAULT_TEMPLATE = "cassettes/{server}-{time}.jsonl"


def server_name(command: tuple[str, ...], url: str | None) -> str:
    """What `{server}` stands for: the script's stem, or the URL's host."""
    if url:
        from urllib.parse import urlsplit

        return (urlsplit(url).hostname or "http").replace(".", "-")
    script = (
        next((a for a in command[1:] if not a.startswith("-")), command[0])
        if command
        else "session"
    )
    return Path(script).stem or "session"


def default_cassette(command: tuple[str, ...], url: str | None) -> Path:
    """`cassettes/<server name>-<time>.jsonl`, a new file each time."""
    from mcptape.proc.names import expand

    return expand(DEFAULT_TEMPLATE, server_name(command, url))


def cassette_for(output: str | None, command: tuple[str, ...], url: str | None) -> Path:
    """The cassette of this launch: `-o` with its fields filled in (absolute), or the default."""
    from mcptape.proc.names import expand

    return expand(output or DEFAULT_TEMPLATE, server_name(command, url))


def listen_address(host: str, port: int, listen: str | None) -> tuple[str, int]:
    """(host, port) for the proxy: --host and --port, or the old --listen HOST:PORT, parsed."""
    if listen is None:
        return host, port
    from mcptape.capture.http import parse_listen

    return parse_listen(listen)


@click.command(cls=Command, superseded={"--listen": "--host and --port"},
               context_settings={"ignore_unknown_options": False})  # fmt: skip
@click.option(
    "-o",
    "--output",
    metavar="FILE",
    help="Cassette to write; may hold {server}, {time}, {pid} and {n} so that launches never overwrite each other (default: cassettes/{server}-{time}.jsonl).",
)
@click.option(
    "--http",
    "http_mode",
    is_flag=True,
    help="Record an HTTP server through a mitmproxy reverse proxy.",
)
@click.option(
    "--upstream", metavar="URL", help="With --http: the server's URL (http://127.0.0.1:8000/mcp)."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="With --http: the address clients connect to.",
)
@click.option(
    "--port",
    default=0,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="With --http: the port clients connect to; 0 picks a free one (the proxying line names it).",
)
@click.option(
    "--listen", metavar="HOST:PORT", hidden=True, help="Old spelling of --host and --port."
)
@click.option(
    "--max-line",
    type=click.IntRange(min=1024),
    default=256 * 1024 * 1024,
    show_default=True,
    help="Longest line handled whole (bytes): a longer one passes through untouched and is recorded by its size.",
)
@click.option(
    "--record-mode",
    type=click.Choice(["all", "rewrite", "new_episodes"]),
    default="all",
    show_default=True,
    help="What a launch does with a cassette already at -o FILE. all (or rewrite): the first launch of a run replaces it, later launches of the same run append their sessions; new_episodes: every launch appends its session. A run is the launches that share MCPTAPE_RUN, or, without it, the process that launched mcptape record (docs/recording.md).",
)
@click.option(
    "--run",
    "run_name",
    metavar="ID",
    help="The run this launch belongs to: launches with the same ID are one run (default: $MCPTAPE_RUN, else the process that launched mcptape record).",
)
@quiet_option()
@redaction_options
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def record(
    output: str | None, http_mode: bool, upstream: str | None, host: str, port: int, listen: str | None, max_line: int, record_mode: str, run_name: str | None, quiet: bool,
    no_redact: bool, redact_keys: tuple[str, ...], redact_patterns: tuple[str, ...], command: tuple[str, ...],
) -> None:  # fmt: skip
    """Record an MCP session into a cassette.

    \b
    stdio: run the server as a child; stdin, stdout and stderr pass through unchanged:
        mcptape record -o cassettes/demo.jsonl -- python examples/demo_server.py
    Point your client at that command instead of the server's. The exit code is the server's.

    \b
    HTTP: a reverse proxy in front of a Streamable HTTP or HTTP+SSE server:
        mcptape record --http --upstream http://127.0.0.1:8000/mcp -o cassettes/http.jsonl

    \b
    A client that starts the server for every operation (langchain-mcp-adapters,
    llama-index) launches this command many times with the same -o FILE: each launch
    adds its session to FILE; the first launch of a new run replaces FILE. A run is the
    launches that share MCPTAPE_RUN, else the process that launched them:
        MCPTAPE_RUN=nightly-42 python agent.py
        mcptape record --record-mode new_episodes -o cassettes/demo.jsonl -- python server.py

    \b
    A new cassette per launch (an agent host starting the server again and again):
        mcptape record -o 'cassettes/{server}-{time}-{pid}.jsonl' -- python server.py
        mcptape record -o 'cassettes/{server}-{n}.jsonl' -- python server.py
    """
    config = redact_config(no_redact, redact_keys, redact_patterns)
    if http_mode:
        if command:
            raise click.UsageError(
                "--http takes no command; start the server yourself and pass --upstream URL"
            )
        if not upstream:
            raise click.UsageError("--http needs --upstream URL (the server to record)")
        if record_mode != "all" or run_name:
            raise click.UsageError(
                "--record-mode and --run go with a stdio server: an HTTP cassette holds its sessions already"
            )
        require_extra("mitm", "mitmproxy", "mcptape record --http")
        from mcptape.capture.http import record_http

        out = cassette_for(output, (), upstream)
        address = listen_address(host, port, listen)
        sys.exit(record_http(upstream, address, out, config, quiet=quiet, fresh=output is None))
    if upstream:
        raise click.UsageError("--upstream goes with --http")
    if listen is not None:
        raise click.UsageError("--listen goes with --http (and is now --host and --port)")
    if not command:
        raise click.UsageError(
            "give the server command after --, e.g. mcptape record -- python server.py"
        )
    from mcptape.capture.recorder import Recorder, recording_header
    from mcptape.capture.stdio import StdioCapture
    from mcptape.cassette import CassetteWriter
    from mcptape.cassette.model import Transport
    from mcptape.redaction.redact import Redactor

    try:
        redactor = Redactor(config)
    except ConfigError:
        raise
    out = cassette_for(output, command, None)
    header = recording_header(Transport.STDIO, {"command": list(command)}, config)
    session = None
    if output is not None:
        from dataclasses import replace

        from mcptape.capture.sessions import MODE_NAMES, RUN_ENV, RUN_FIELD, SessionPolicy, run_id

        run = run_id({RUN_ENV: run_name} if run_name else None)
        header = replace(header, extra={**header.extra, RUN_FIELD: run})
        session = SessionPolicy(MODE_NAMES[record_mode], run, header.recorded_at, header.target)
    writer = CassetteWriter(out, header, fresh=output is None)

    says = label()  # (the capture may call `started` from another thread, outside click's context)

    def started(_proc: object) -> None:
        if not quiet:
            print(f"{says}: recording {' '.join(command)} to {shown(writer.path, output)} "
                  f"(in {writer.partial.name} until the session ends)", file=sys.stderr, flush=True)  # fmt: skip

    announced = writer.path
    recorder = Recorder(writer, redactor)
    recorder.session = session
    capture = StdioCapture(list(command), recorder, max_line=max_line, on_start=started)
    code = capture.run()
    if capture.cassette is not None and writer.appended and not quiet:
        print(f"{says}: added the session to {shown(capture.cassette, output)} as its session {writer.appended} "
              "(launches of one run append: docs/recording.md)", file=sys.stderr, flush=True)  # fmt: skip
    if capture.cassette is not None and capture.cassette != announced:
        print(f"{says}: recorded to {shown(capture.cassette, output)}: {shown(announced, output)} was written "
              "by another recorder meanwhile and is kept", file=sys.stderr, flush=True)  # fmt: skip
    if capture.cassette is not None and not quiet:
        from mcptape.capture.summary import summary

        print(f"{says}: {summary(capture.cassette, shown(capture.cassette, output))}",
              file=sys.stderr, flush=True)  # fmt: skip
    sys.exit(code)
