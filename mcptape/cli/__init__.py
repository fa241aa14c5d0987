"""mcptape's command line: a click group whose commands load lazily (one module each).

Lazy loading keeps `mcptape replay` from importing what only `diff` or `record --http`
needs. Every error reaches the user as one line on stderr: exit 1 for runtime errors
(`McpTapeError`), 2 for usage errors (bad flags, bad values).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from mcptape._version import __version__
from mcptape.errors import CassetteNotFoundError, ConfigError, McpTapeError

COMMANDS: dict[str, str] = {
    "record": "mcptape.cli.record:record",
    "replay": "mcptape.cli.replay:replay",
    "serve": "mcptape.cli.serve:serve",
    "diff": "mcptape.cli.diff:diff",
    "verify": "mcptape.cli.verify:verify",
    "show": "mcptape.cli.show:show",
    "check": "mcptape.cli.check:check",
    "addon-path": "mcptape.cli.addon_path:addon_path",
    "import": "mcptape.cli.importer:import_",
    "prune": "mcptape.cli.maintain:prune",
    "redact": "mcptape.cli.maintain:redact",
    "fmt": "mcptape.cli.maintain:fmt",
    "wrap": "mcptape.cli.wrap:wrap",
    "unwrap": "mcptape.cli.wrap:unwrap",
}
"""command name -> "module:attribute"; commands whose module is absent are not offered."""


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in sorted(COMMANDS) if self.get_command(ctx, name) is not None]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                return None
            raise
        return getattr(module, attr)  # type: ignore[no-any-return]


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcptape")
def cli() -> None:
    """Record, replay and diff Model Context Protocol (MCP) traffic.

    \b
    mcptape record -o cassettes/s.jsonl -- python server.py   # record a stdio server
    mcptape replay cassettes/s.jsonl                          # serve it back on stdio
    mcptape show cassettes/s.jsonl                            # look at the session
    mcptape diff old.jsonl new.jsonl                          # what changed
    """


def main(argv: list[str] | None = None) -> Any:
    """Entry point: runs the CLI, turning every error into one line on stderr."""
    args = sys.argv[1:] if argv is None else argv
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
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:
        if os.environ.get("MCPTAPE_DEBUG"):
            raise
        _fail(
            f"internal error: {type(exc).__name__}: {exc} (set MCPTAPE_DEBUG=1 for a traceback, and please report it)",
            1,
        )


def _fail(message: str, code: int) -> None:
    message = " ".join(message.split("\n")) if "\n" in message else message
    print(f"mcptape: error: {message}", file=sys.stderr)
    sys.exit(code)
