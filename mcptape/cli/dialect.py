"""The command line's one dialect: old spellings are read as today's names, with a note.

A command made with `cls=Command` may name `aliases` (an old option -> today's option),
`value_aliases` (today's option -> {old value: today's value}) and `superseded` (a hidden
option the command still reads itself -> what to use instead). Before click parses the
arguments, each old spelling met before `--` is rewritten. Once the command has run,
`mcptape.cli.main` prints one line for each on stderr (`deprecation_notes`), after whatever
the command printed, so that the lines a script reads first stay where they were (and not
after an error line, which stays the one and last line):
`mcptape redact: --key is deprecated; use --redact-key`. `--help` never lists an old
spelling; docs/cli.md lists them under "Old spellings".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import click


class Command(click.Command):
    """A click command that still reads the old spellings of its options."""

    def __init__(
        self,
        *args: Any,
        aliases: Mapping[str, str] | None = None,
        value_aliases: Mapping[str, Mapping[str, str]] | None = None,
        superseded: Mapping[str, str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.aliases: dict[str, str] = dict(aliases or {})
        """old option -> today's option, e.g. "--key" -> "--redact-key"."""
        self.value_aliases: dict[str, dict[str, str]] = {
            k: dict(v) for k, v in (value_aliases or {}).items()
        }
        """today's option -> {old value: today's value}, e.g. "--format" -> {"table": "text"}."""
        self.superseded: dict[str, str] = dict(superseded or {})
        """a hidden option -> what to use instead, e.g. "--listen" -> "--host and --port"."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        return super().parse_args(ctx, translate(self, args)[0])


def deprecation_notes(command: click.Command | None, args: list[str]) -> list[str]:
    """The lines saying which old spellings `args` used (none under -q/--quiet)."""
    if not isinstance(command, Command) or _quiet(args):
        return []
    return [f"mcptape {command.name}: {note}" for note in translate(command, args)[1]]


def translate(command: Command, args: list[str]) -> tuple[list[str], list[str]]:
    """`args` with each old spelling before `--` replaced, and a deprecation note for each."""
    params = [p for p in command.params if isinstance(p, click.Option)]
    takes_value = {o for p in params if not p.is_flag and not p.count for o in p.opts}
    values = _value_aliases(command, params)
    out: list[str] = []
    notes: list[str] = []
    rest = iter(args)
    for arg in rest:
        if arg == "--":
            out += [arg, *rest]
            break
        name, eq, inline = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        name = _option(command, name, notes)
        if name not in takes_value:
            out.append(name + eq + inline)
            continue
        value = inline if eq else next(rest, None)
        if value is not None and value in values.get(name, {}):
            notes.append(f"{name} {value} is deprecated; use {name} {values[name][value]}")
            value = values[name][value]
        out += [f"{name}={value}"] if eq else [name] if value is None else [name, value]
    return out, notes


def _option(command: Command, name: str, notes: list[str]) -> str:
    """Today's spelling of the option `name`, with a note in `notes` when it was an old one."""
    if name in command.aliases:
        notes.append(f"{name} is deprecated; use {command.aliases[name]}")
        return command.aliases[name]
    if name in command.superseded:
        notes.append(f"{name} is deprecated; use {command.superseded[name]}")
    return name


def _value_aliases(command: Command, params: list[click.Option]) -> dict[str, dict[str, str]]:
    """Each spelling of an option with old values (`-f` and `--format`) -> {old: today's}."""
    values: dict[str, dict[str, str]] = {}
    for p in params:
        for opt, mapping in command.value_aliases.items():
            if opt in p.opts:
                values.update(dict.fromkeys(p.opts, mapping))
    return values


def _quiet(args: list[str]) -> bool:
    """-q or --quiet before `--`: the notes are left out."""
    head = args[: args.index("--")] if "--" in args else args
    return "-q" in head or "--quiet" in head
