"""`mcptape diff`: compare two cassettes by meaning; exit 0 equivalent, 1 differs, 2 error."""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import click

from mcptape.cassette import Cassette, load
from mcptape.diff.engine import diff_cassettes
from mcptape.diff.report import RENDERERS
from mcptape.diff.types import DiffOptions, DiffReport
from mcptape.errors import McpTapeError

FORMATS = sorted([*RENDERERS, "html"])
"""The report's renderers, and the HTML page (drawn by mcptape.views from the same report)."""

EXIT_ERROR = 2
"""Like diff(1): 0 equivalent, 1 different, 2 trouble."""


def diff_options(func):  # type: ignore[no-untyped-def]
    """The comparison and output options `diff` and `verify` share."""
    for decorator in reversed([
        click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                     help="text: tables for a terminal; markdown: a pull-request comment; json: for machines (docs/diff.md); "
                          "html: a self-contained page."),
        click.option("--ignore", "ignore", multiple=True, metavar="PATH",
                     help="Leave out a JSON pointer everywhere, e.g. /result/content/0/text or /tools/*/description "
                          "(* matches one token; repeatable). /params/... paths also leave the matching key."),
        click.option("--strict-envelope", is_flag=True, help="Count envelope-only differences (versions, caching hints, resultType) as differences."),
        click.option("--strict-messages", is_flag=True, help="Compare error messages too, not only error codes."),
    ]):  # fmt: skip
        func = decorator(func)
    return func


def fail(message: str) -> NoReturn:
    """One line on stderr, exit 2 (diff's error code)."""
    click.echo(f"mcptape: error: {' '.join(message.splitlines())}", err=True)
    sys.exit(EXIT_ERROR)


def check_ignore(patterns: tuple[str, ...]) -> None:
    """Every --ignore must be a JSON pointer below the root (the root would ignore everything)."""
    for p in patterns:
        if not p.startswith("/") or p == "/":
            fail(f"--ignore {p!r}: give a JSON pointer such as /result/content/0/text (see docs/diff.md)")


@contextmanager
def exit_2_on_crash() -> Iterator[None]:
    """diff's contract is exit 2 on any error, a bug included (MCPTAPE_DEBUG=1 shows the traceback)."""
    try:
        yield
    except Exception as exc:  # the command's top level: nothing above it may turn this into exit 1
        if os.environ.get("MCPTAPE_DEBUG"):
            raise
        fail(f"internal error: {type(exc).__name__}: {exc} (set MCPTAPE_DEBUG=1 for a traceback, and please report it)")


def warn(*cassettes: Cassette) -> None:
    """What the reader noticed (a cut-short recording) goes to stderr; the diff still runs."""
    for cas in cassettes:
        for warning in cas.warnings:
            click.echo(f"mcptape: warning: {warning}", err=True)


def emit(report: DiffReport, fmt: str, a: Cassette, b: Cassette, names: tuple[str, str]) -> NoReturn:
    """Prints the report (the HTML page shows the exchanges of `a` and `b` it names) and exits with its code."""
    if fmt == "html":
        from mcptape.views import diff_data, page

        data = diff_data.page_data(report, a, b, names)
        text = page.render(f"mcptape diff: {Path(names[0]).name} vs {Path(names[1]).name}", data, "diff.js")
    else:
        text = RENDERERS[fmt](report)
    sys.stdout.write(text)
    sys.stdout.flush()
    sys.exit(report.exit_code)


@click.command()
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@diff_options
def diff(a: Path, b: Path, fmt: str, ignore: tuple[str, ...], strict_envelope: bool, strict_messages: bool) -> None:
    """Compare two cassettes by meaning: what changed in the server's behaviour.

    Ids, timings, progress tokens, session ids and the protocol era are normalized away;
    envelope-only differences (versions, caching hints, resultType) are listed apart.
    Exit status: 0 equivalent, 1 behaviour differs, 2 error.

    \b
    mcptape diff cassettes/v1.jsonl cassettes/v2.jsonl
    mcptape diff old.jsonl new.jsonl --format markdown > comment.md
    mcptape diff old.jsonl new.jsonl --format json | jq .counts
    mcptape diff old.jsonl new.jsonl --format html > diff.html
    mcptape diff a.jsonl b.jsonl --ignore /result/content/0/text --strict-envelope
    """
    check_ignore(ignore)
    gc.disable()  # a short-lived process building many small objects: the collector only costs time here
    try:
        old, new = load(a), load(b)
    except McpTapeError as exc:
        fail(str(exc))
    warn(old, new)
    with exit_2_on_crash():
        report = diff_cassettes(old, new, DiffOptions(ignore, strict_envelope, strict_messages))
        emit(report, fmt, old, new, (str(a), str(b)))
