"""`mcptape verify`: re-drive a cassette against a live server and diff; exit 0 / 1 / 2 like diff."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import NoReturn

import click

from mcptape.cassette import load
from mcptape.diff.engine import diff_cassettes
from mcptape.diff.types import DiffOptions
from mcptape.errors import McpTapeError
from mcptape.verify import verify as run_verify
from mcptape.versions import KNOWN

from .diff import EXIT_ERROR, check_ignore, diff_options, emit, exit_2_on_crash, fail, warn


@click.command()
@click.argument("file", type=click.Path(path_type=Path))
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.option("--url", metavar="URL", help="A Streamable HTTP server to verify instead of a stdio command.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Keep the new recording here (default: a temporary file).")
@click.option("--protocol", metavar="VERSION", help=f"Re-drive in this protocol version instead of the cassette's ({', '.join(KNOWN)}).")
@click.option("--timeout", type=click.FloatRange(min=0.1), default=30.0, show_default=True, help="Seconds to wait for each answer.")
@diff_options
def verify(file: Path, command: tuple[str, ...], url: str | None, output: Path | None, protocol: str | None, timeout: float,
           fmt: str, ignore: tuple[str, ...], strict_envelope: bool, strict_messages: bool) -> None:  # fmt: skip
    """Re-drive a cassette's client side against a live server and diff the two sessions.

    Sends the recorded requests in order with fresh ids, answers the server's questions
    (elicitation, sampling, roots; input_required) with the recorded answers, records the
    new session, and compares it with the cassette. Exit status: 0 equivalent, 1 differs, 2 error.

    \b
    mcptape verify cassettes/demo.jsonl -- python server.py
    mcptape verify cassettes/demo.jsonl --url http://127.0.0.1:8000/mcp -o new.jsonl
    mcptape verify cassettes/legacy.jsonl --protocol 2026-07-28 -- python server.py
    """
    if bool(command) == bool(url):
        fail("give the server either as a command after -- or with --url, not both" if url else "give the server command after --, or --url URL")
    check_ignore(ignore)
    if protocol is not None and protocol not in KNOWN:
        fail(f"unknown protocol version {protocol!r}; known: {', '.join(KNOWN)}")
    with exit_2_on_crash():
        try:
            old = load(file)
            warn(old)
            with tempfile.TemporaryDirectory(prefix="mcptape-verify-") as tmp:
                out = output or Path(tmp) / "verify.jsonl"
                new, outcome = run_verify(old, out, command=list(command) or None, url=url, protocol=protocol, timeout=timeout)
                report = diff_cassettes(old, new, DiffOptions(ignore, strict_envelope, strict_messages))
                target = url or " ".join(command)
        except McpTapeError as exc:
            fail(str(exc))
    problem = outcome.problem()
    if problem is not None:
        fail_with_stderr(problem, outcome.stderr)
    with exit_2_on_crash():
        emit(report, fmt, old, new, (str(file), f"{output or 'the live server'} ({target})"))


def fail_with_stderr(problem: str, stderr: list[str]) -> NoReturn:
    """Exit 2: the run says nothing about behaviour; the server's last stderr lines say why."""
    click.echo(f"mcptape: error: {problem}", err=True)
    if stderr:
        click.echo("mcptape: the server's last stderr lines:", err=True)
        for line in stderr:
            click.echo(f"  | {line}", err=True)
    sys.exit(EXIT_ERROR)

