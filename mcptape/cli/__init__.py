"""mcptape's command line: `main` runs the click group of `mcptape.cli.group`.

Every error reaches the user as one line on stderr, `mcptape: error: ...`: exit 1 for
runtime errors (`McpTapeError`), 2 for usage errors (bad flags, bad values, a missing
cassette). A closed stdout ends a command quietly with exit 0. docs/cli.md describes the
options and the messages.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, NoReturn

import click

from mcptape._perf import for_command
from mcptape.errors import CassetteNotFoundError, ConfigError, McpTapeError

from .messages import Failed

if TYPE_CHECKING:
    from .group import COMMANDS, LazyGroup, cli

__all__ = ["COMMANDS", "LazyGroup", "cli", "main"]


def __getattr__(name: str) -> Any:
    if name in ("COMMANDS", "LazyGroup", "cli"):
        from . import group

        return getattr(group, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> Any:
    """Entry point: runs the CLI, turning every error into one line on stderr."""
    from .group import cli

    args = sys.argv[1:] if argv is None else argv
    for_command(args if argv is None else ())  # the program's own collector, not a caller's
    try:
        rv = _run(cli, args)
    except Failed:  # its error line is the last word
        raise
    except SystemExit:
        _deprecations(args)
        raise
    _deprecations(args)
    return rv


def _deprecations(args: list[str]) -> None:
    """After the command: one line for each old spelling it was given (`dialect`)."""
    from .dialect import deprecation_notes
    from .group import load

    if not args or args[0].startswith("-"):
        return
    try:
        command = load(args[0])
    except ImportError:  # a command that cannot even load has said so already
        return
    for line in deprecation_notes(command, args[1:]):
        print(line, file=sys.stderr)


def _run(cli: click.Group, args: list[str]) -> Any:
    """The group run on `args`, every error turned into one line on stderr and an exit code
    (a closed stdout is `LazyGroup.invoke`'s to end)."""
    try:
        rv = cli.main(args, prog_name="mcptape", standalone_mode=False)
        if isinstance(rv, int):  # a command's ctx.exit(code): click hands the code back
            sys.exit(rv)
        return rv
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.Abort:
        _fail("aborted", 130)
    except click.UsageError as exc:
        where = exc.ctx.command_path if exc.ctx else "mcptape"
        command = where.removeprefix("mcptape").strip()
        _fail(
            f"{command + ': ' if command else ''}{exc.format_message()} (see `{where} --help`)", 2
        )
    except click.ClickException as exc:
        _fail(exc.format_message(), exc.exit_code)
    except (ConfigError, CassetteNotFoundError) as exc:
        _fail(str(exc), 2)
    except McpTapeError as exc:
        _fail(str(exc), 1)
    except KeyboardInterrupt:
        _fail("interrupted", 130)
    except Exception as exc:
        if os.environ.get("MCPTAPE_DEBUG"):
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (set MCPTAPE_DEBUG=1 for a traceback, and please report it)",
            1,
        )


def _fail(message: str, code: int) -> NoReturn:
    message = " ".join(message.split("\n")) if "\n" in message else message
    print(f"mcptape: error: {message}", file=sys.stderr)
    raise Failed(code)
