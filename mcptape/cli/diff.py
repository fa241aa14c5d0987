"""`mcptape diff`: compare two cassettes by meaning; exit 0 equivalent, 1 differs, 2 error."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import click

from mcptape.cassette import Cassette, load
from mcptape.diff.engine import diff_cassettes
from mcptape.diff.ignores import CONFIG_NAME, Ignore, parse_config, parse_ignore
from mcptape.diff.report import RENDERERS
from mcptape.diff.types import DiffOptions, DiffReport
from mcptape.errors import ConfigError, McpTapeError

from .dialect import Command
from .messages import Failed, warning
from .options import IGNORE, quiet_option

FORMATS = sorted([*RENDERERS, "html"])
"""The report's renderers, and the HTML page (drawn by mcptape.views from the same report)."""

EXIT_ERROR = 2
"""Like diff(1): 0 equivalent, 1 different, 2 trouble."""


def diff_options(func):  # type: ignore[no-untyped-def]
    """The comparison and output options `diff` and `verify` share."""
    for decorator in reversed([
        click.option("--markdown", "markdown", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                     help="Also write the markdown report to FILE (e.g. $GITHUB_STEP_SUMMARY), whatever --format prints."),
        click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
                     help="text: tables for a terminal; markdown: a pull-request comment; json: for machines (docs/diff.md); "
                          "html: a self-contained page."),
        click.option("--ignore", "ignore", multiple=True, metavar="[SCOPE:]POINTER",
                     help=f"{IGNORE} Here POINTER is into the message, e.g. /result/content/0/text or /tools/*/description "
                          "(* matches one token; repeatable), everywhere or in one method and name: "
                          "'tools/call now:/result/content/0/text'. Unscoped /params/... pointers also leave the matching "
                          "key. Also read from mcptape-diff.toml beside the cassettes (docs/diff.md)."),
        click.option("--no-mask", "no_mask", is_flag=True,
                     help="Do not mask timestamps, UUIDs and times that differ where both sides have one."),
        click.option("--strict-envelope", is_flag=True, help="Count envelope-only differences (versions, caching hints, resultType) as differences."),
        click.option("--strict-messages", is_flag=True, help="Compare error messages too, not only error codes."),
        quiet_option("the report is the output: it stays"),
    ]):  # fmt: skip
        func = decorator(func)
    return func


def fail(message: str) -> NoReturn:
    """One line on stderr, exit 2 (diff's error code)."""
    click.echo(f"mcptape: error: {' '.join(message.splitlines())}", err=True)
    raise Failed(EXIT_ERROR)


def check_ignore(patterns: tuple[str, ...]) -> None:
    """Every --ignore must be a JSON pointer below the root, optionally scoped (`diff.ignores`)."""
    for p in patterns:
        try:
            parse_ignore(p)
        except ConfigError as exc:
            fail(f"--{exc}")


def load_config(folder: Path) -> list[Ignore]:
    """The ignores of `folder/mcptape-diff.toml` ([] when there is none).

    Raises:
        ConfigError: it cannot be read, is not valid TOML, or holds a bad ignore (with its line).
    """
    path = folder / CONFIG_NAME
    try:
        raw = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    return parse_config(raw, str(path))


def ignores_for(folder: Path, cli: tuple[str, ...]) -> tuple[str, ...]:
    """The --ignore options plus the ignores of the mcptape-diff.toml in `folder` (exit 2 when it is bad)."""
    try:
        return cli + tuple(i.text for i in load_config(folder))
    except ConfigError as exc:
        fail(str(exc))


def write_markdown(report: DiffReport, path: Path | None) -> None:
    """--markdown FILE: the markdown report as well, whatever --format prints."""
    if path is None:
        return
    try:
        path.write_text(RENDERERS["markdown"](report), encoding="utf-8")
    except OSError as exc:
        fail(f"--markdown {path}: cannot write: {exc.strerror or exc}")


@contextmanager
def exit_2_on_crash() -> Iterator[None]:
    """diff's contract is exit 2 on any error, a bug included (MCPTAPE_DEBUG=1 shows the traceback)."""
    try:
        yield
    except Exception as exc:  # the command's top level: nothing above it may turn this into exit 1
        if os.environ.get("MCPTAPE_DEBUG"):
            raise
        fail(
            f"internal error: {type(exc).__name__}: {exc} (set MCPTAPE_DEBUG=1 for a traceback, and please report it)"
        )


def warn(*cassettes: Cassette) -> None:
    """What the reader noticed (a cut-short recording) goes to stderr; the diff still runs."""
    for cas in cassettes:
        for text in cas.warnings:
            warning(text)


def emit(
    report: DiffReport,
    fmt: str,
    a: Cassette | None = None,
    b: Cassette | None = None,
    names: tuple[str, str] | None = None,
) -> NoReturn:
    """Prints the report (the HTML page shows the exchanges of `a` and `b` it names) and exits with its code."""
    if fmt == "html":
        from mcptape.views import diff_data, page

        names = names or (report.a.name, report.b.name)

        data = diff_data.page_data(report, a, b, names)
        text = page.render(
            f"mcptape diff: {Path(names[0]).name} vs {Path(names[1]).name}", data, "diff.js"
        )
    else:
        text = RENDERERS[fmt](report)
    sys.stdout.write(text)
    sys.stdout.flush()
    sys.exit(report.exit_code)


@click.command(cls=Command)
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option(
    "--noise",
    "noise",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="A2",
    help="Another recording of A's release: what differs between A and A2 is listed as noise, not counted (repeatable).",
)
@diff_options
def diff(a: Path, b: Path, noise: tuple[Path, ...], markdown: Path | None, fmt: str, ignore: tuple[str, ...],
         no_mask: bool, strict_envelope: bool, strict_messages: bool, quiet: bool = False) -> None:  # fmt: skip
    """Compare two cassettes by meaning: what changed in the server's behaviour.

    Ids, timings, progress tokens, session ids and the protocol era are normalized away;
    envelope-only differences (versions, caching hints, resultType) are listed apart.
    Exit status: 0 equivalent, 1 behaviour differs, 2 error.

    \b
    mcptape diff cassettes/v1.jsonl cassettes/v2.jsonl
    mcptape diff old.jsonl new.jsonl --format markdown > comment.md
    mcptape diff old.jsonl new.jsonl --format json | jq .counts
    mcptape diff a.jsonl b.jsonl --ignore 'tools/call now:/result/content/0/text' --strict-envelope
    mcptape diff v1.jsonl v2.jsonl --noise v1-again.jsonl   # learn what differs between two runs of v1
    mcptape diff old.jsonl new.jsonl --format html > diff.html
    """
    check_ignore(ignore)
    ignore = ignores_for(a.parent, ignore)
    try:
        old, new = load(a), load(b)
        again = [load(p) for p in noise]
    except McpTapeError as exc:
        fail(str(exc))
    warn(old, new, *again)
    with exit_2_on_crash():
        options = DiffOptions(ignore, strict_envelope, strict_messages, mask_volatile=not no_mask)
        report = diff_cassettes(
            old, new, options, [(old, x) for x in again], f"{old.name} and --noise"
        )
    write_markdown(report, markdown)
    emit(report, fmt, old, new, (str(a), str(b)))
