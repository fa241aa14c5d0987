"""The `mcptape` click group: its commands load lazily (one module each).

Lazy loading keeps `mcptape replay` from importing what only `diff` or `record --http`
needs. `mcptape.cli.main` runs it and turns its errors into one line on stderr.
"""

from __future__ import annotations

import importlib

import click

from mcptape._version import __version__

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
