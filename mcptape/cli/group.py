"""The `mcptape` click group: its commands load lazily (one module each).

Lazy loading keeps `mcptape replay` from importing what only `diff` or `record --http`
needs. `mcptape.cli.main` runs it and turns its errors into one line on stderr.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
from typing import Any

import click

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
    "stub": "mcptape.cli.stub:stub",
    "unwrap": "mcptape.cli.wrap:unwrap",
}
"""command name -> "module:attribute"; commands whose module is absent are not offered."""


def load(name: str) -> click.Command | None:
    """The command named `name`, its module imported now (None: no such command)."""
    target = COMMANDS.get(name)
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


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return [name for name in sorted(COMMANDS) if self.get_command(ctx, name) is not None]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return load(cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        """A mistyped command names the nearest ones ("Did you mean 'show'?")."""
        name = args[0]
        if name in COMMANDS or name.startswith("-"):
            return super().resolve_command(ctx, args)
        import difflib  # (only on this error's path)

        near = difflib.get_close_matches(name, list(COMMANDS), n=3, cutoff=0.6)
        hint = f" Did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
        ctx.fail(f"No such command {name!r}.{hint}")

    def invoke(self, ctx: click.Context) -> Any:
        """A closed stdout (`mcptape show C | head -1`) ends the command quietly, exit 0."""
        try:
            return super().invoke(ctx)
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise
            quiet_stdout()
            ctx.exit(0)


def quiet_stdout() -> None:
    """Points stdout at the null device, so that the final flush at exit fails no more."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real descriptor (a test's captured stdout)
        pass
    finally:
        os.close(devnull)


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from .version import report

    click.echo(report())
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_version,
    help="Show the version, and which extras and outside tools are present, then exit.",
)
def cli() -> None:
    """Record, replay and diff Model Context Protocol (MCP) traffic.

    \b
    mcptape record -o cassettes/s.jsonl -- python server.py   # record a stdio server
    mcptape replay cassettes/s.jsonl                          # serve it back on stdio
    mcptape show cassettes/s.jsonl                            # look at the session
    mcptape diff old.jsonl new.jsonl                          # what changed
    The options: docs/cli.md.
    """
