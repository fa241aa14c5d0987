"""`mcptape verify`: re-drive cassettes against a live server and diff; exit 0 / 1 / 2 like diff."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import NoReturn

import click

from mcptape.cassette import Cassette, load
from mcptape.diff.types import DiffOptions
from mcptape.errors import McpTapeError
from mcptape.extras import require as require_extra
from mcptape.verify.gate import Problem, cassette_paths, gate
from mcptape.versions import KNOWN

from .dialect import Command
from .diff import (
    EXIT_ERROR,
    check_ignore,
    diff_options,
    emit,
    exit_2_on_crash,
    fail,
    ignores_for,
    warn,
    write_markdown,
)
from .messages import Failed, label, note, progress


class _ServerAfterDashes(Command):
    """Everything after the first `--` is the server command; before it, cassettes and options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            ctx.meta["mcptape.server"] = args[at + 1 :]
            args = args[:at]
        return super().parse_args(ctx, args)


@click.command(cls=_ServerAfterDashes)
@click.argument("cassettes", nargs=-1, required=True)
@click.option(
    "--url", metavar="URL", help="A Streamable HTTP server to verify instead of a stdio command."
)
@click.option(
    "--output-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help="Keep the new sessions in DIR, one per cassette (default: a temporary folder).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="With one cassette: write its new session to FILE (a .jsonl cassette).",
)
@click.option(
    "--noise-runs",
    type=click.IntRange(min=0),
    default=0,
    metavar="N",
    help="Re-drive each cassette N (>= 2) times: what differs between the live runs is listed as noise, not counted.",
)
@click.option(
    "--protocol",
    metavar="VERSION",
    help=f"Re-drive in this protocol version instead of the cassette's ({', '.join(KNOWN)}).",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0.1),
    default=30.0,
    show_default=True,
    help="Seconds to wait for each answer.",
)
@diff_options
@click.pass_context
def verify(ctx: click.Context, cassettes: tuple[str, ...], url: str | None, output_dir: Path | None, output: Path | None,
           noise_runs: int, protocol: str | None, timeout: float, markdown: Path | None, fmt: str, ignore: tuple[str, ...],
           no_mask: bool, strict_envelope: bool, strict_messages: bool, quiet: bool = False) -> None:  # fmt: skip
    """Re-drive cassettes' client side against a live server and diff each with its new session.

    Sends the recorded requests in order with fresh ids, answers the server's questions
    (elicitation, sampling, roots; input_required) with the recorded answers, records the
    new session, and compares it with the cassette. Many cassettes (files, folders, globs)
    give one report, each finding listed once with the cassettes it occurs in. Exit status:
    0 equivalent, 1 differs, 2 error (also: the server did not start, ended before
    answering, refused the connection or left requests unanswered).

    \b
    mcptape verify cassettes/demo.jsonl -- python server.py
    mcptape verify cassettes/ --output-dir new/ --format markdown -- node dist/index.js stdio
    mcptape verify 'cassettes/**/*.jsonl' --noise-runs 2 -- python server.py
    mcptape verify cassettes/demo.jsonl --url http://127.0.0.1:8000/mcp -o new.jsonl
    mcptape verify cassettes/legacy.jsonl --protocol 2026-07-28 -- python server.py
    """
    command: list[str] = ctx.meta.get("mcptape.server", [])
    if bool(command) == bool(url):
        fail(
            "give the server either as a command after -- or with --url, not both"
            if url
            else "give the server command after --, or --url URL"
        )
    if url:
        require_extra("http", "httpx", "mcptape verify --url")
    check_ignore(ignore)
    if protocol is not None and protocol not in KNOWN:
        fail(f"unknown protocol version {protocol!r}; known: {', '.join(KNOWN)}")
    if noise_runs == 1:
        fail(
            "--noise-runs 1 learns nothing: give 2 or more (each cassette is re-driven that many times)"
        )
    with exit_2_on_crash():
        try:
            paths = cassette_paths(list(cassettes))
            output_dir, output = _outputs(output_dir, output, len(paths))
            loaded: dict[Path, Cassette] = {p: load(p) for p in paths}
            warn(*loaded.values())
            options = {p: DiffOptions(ignores_for(p.parent, ignore), strict_envelope, strict_messages, mask_volatile=not no_mask)
                       for p in paths}  # fmt: skip
            with (
                tempfile.TemporaryDirectory(prefix="mcptape-verify-") as tmp,
                progress(paths, "re-driving") as begun,
            ):
                folder = output_dir or Path(tmp)
                result = gate(paths, folder, command=command or None, url=url, protocol=protocol, timeout=timeout,
                              noise_runs=noise_runs, options_for=options.__getitem__, loaded=loaded, on_cassette=begun)  # fmt: skip
                if output is not None:
                    _keep(folder, output, paths[0])
        except McpTapeError as exc:
            fail(str(exc))
    if result.problems:
        fail_with_problems(result.problems)
    assert result.report is not None
    write_markdown(result.report, markdown)
    pair = result.pair or (None, None)
    emit(result.report, fmt, *pair)


def _outputs(
    output_dir: Path | None, output: Path | None, cassettes: int
) -> tuple[Path | None, Path | None]:
    """(--output-dir, -o): `-o` once named the folder too; that use still works, with a note."""
    if output is None or (output.suffix == ".jsonl" and cassettes == 1):
        return output_dir, output
    if output_dir is not None:
        fail(
            f"-o {output}: give one cassette and a .jsonl file (the folder is --output-dir {output_dir})"
        )
    note("-o for a folder is deprecated; use --output-dir")
    return output, None


def _keep(folder: Path, output: Path, cassette: Path) -> None:
    """One cassette and `-o NEW.jsonl`: the first live run is NEW.jsonl, further runs beside it."""
    output.parent.mkdir(parents=True, exist_ok=True)
    for new in sorted(folder.glob(f"{cassette.stem}*.jsonl")):
        suffix = new.name[len(cassette.stem) :]
        new.replace(output if suffix == ".jsonl" else output.with_name(output.stem + suffix))


def fail_with_problems(problems: list[Problem]) -> NoReturn:
    """Exit 2: these runs say nothing about behaviour; the server's last stderr lines say why."""
    for p in problems:
        where = f"{p.cassette}: " if len(problems) > 1 else ""
        click.echo(f"mcptape: error: {where}{p.message}", err=True)
        if p.stderr:  # part of the error: -q keeps it
            click.echo(f"{label()}: the server's last stderr lines:", err=True)
            for line in p.stderr:
                click.echo(f"  | {line}", err=True)
    raise Failed(EXIT_ERROR)
