"""How the commands talk on stderr: one form for every line, paths as the user gave them.

    mcptape CMD: what happened                a note, a summary (-q leaves it out)
    mcptape CMD: warning: what to look at     a warning (-q leaves it out)
    mcptape: error: what went wrong           an error, always (`mcptape.cli.main` prints it)

docs/cli.md states the same rules.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click


class Failed(SystemExit):
    """The command failed and its one error line is printed: the exit, with nothing after it.

    `mcptape.cli.main` prints the deprecation notes after a command's output, but never after
    an error line: an error is one line, and the last one."""


def label(ctx: click.Context | None = None) -> str:
    """`mcptape CMD`, for the command running now (`mcptape` outside any command)."""
    ctx = ctx or click.get_current_context(silent=True)
    if ctx is None or isinstance(ctx.command, click.Group):
        return "mcptape"
    return f"mcptape {ctx.command.name or ctx.info_name}"


def quiet() -> bool:
    """Whether the running command was given -q/--quiet."""
    ctx = click.get_current_context(silent=True)
    return bool(ctx and ctx.params.get("quiet"))


def note(text: str) -> None:
    """A note or summary on stderr, labelled by the command; -q leaves it out."""
    if not quiet():
        _say(f"{label()}: {text}")


def warning(text: str) -> None:
    """A warning on stderr, labelled by the command; -q leaves it out."""
    if not quiet():
        _say(f"{label()}: warning: {text}")


BAR = "mcptape.progress"
"""`ctx.meta` key: set while `progress` draws a bar on stderr."""


def _say(line: str) -> None:
    """One line on stderr; over a progress bar, the bar's line is cleared first (the bar is
    drawn again below at its next step)."""
    ctx = click.get_current_context(silent=True)
    clear = "\r\x1b[2K" if ctx is not None and ctx.meta.get(BAR) else ""
    click.echo(clear + line, err=True)


def shown(path: Path | str, given: Path | str | None = None) -> str:
    """`path` as the user wrote it: relative when they gave a relative path (`given`, or
    `path` itself), absolute when they gave an absolute one."""
    path = Path(path)
    relative = not Path(path if given is None else given).is_absolute()
    if relative and path.is_absolute():
        try:
            return os.path.relpath(path)
        except ValueError:  # another drive (Windows): no relative form
            return str(path)
    return str(path)


@contextmanager
def progress(items: Sequence[Path], what: str) -> Iterator[Callable[[Path], None]]:
    """A progress bar on stderr over `items`, advanced by calling what this yields with the item
    begun (the bar names it). Only on a terminal (stderr a TTY), without -q, and for more than
    one item: anywhere else nothing is drawn."""
    if len(items) < 2 or quiet() or not sys.stderr.isatty():
        yield lambda _item: None
        return
    with click.progressbar(
        items,
        label=f"{label()}: {what}",
        file=sys.stderr,
        item_show_func=lambda item: None if item is None else shown(item),
    ) as bar:
        ctx = click.get_current_context()
        ctx.meta[BAR] = True
        try:
            yield lambda item: bar.update(1, item)
        finally:
            ctx.meta[BAR] = False
