"""`mcptape wrap CONFIG` / `mcptape unwrap CONFIG`: record what an agent host sends its servers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from mcptape.errors import ConfigError

from .dialect import Command
from .messages import note
from .options import quiet_option

BACKUP_SUFFIX = ".mcptape-backup"
DEFAULT_TEMPLATE = "{server}-{time}-{pid}.jsonl"


def backup_of(config: Path) -> Path:
    return config.with_name(config.name + BACKUP_SUFFIX)


def mcptape_command() -> list[str]:
    """mcptape as an absolute command: its console script beside this interpreter, else python -m mcptape."""
    script = Path(sys.executable).with_name("mcptape")
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-m", "mcptape"]


def _read(path: Path) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: no such file (give the host's MCP config: see docs/agents.md)"
        ) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start})") from None


@click.command(cls=Command, aliases={"--cassettes": "--output-dir"})
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output-dir", "folder", type=click.Path(file_okay=False, path_type=Path), default=Path("cassettes"),
              show_default=True, metavar="DIR", help="Folder for the cassettes (made absolute in CONFIG).")  # fmt: skip
@click.option("--name", "template", default=DEFAULT_TEMPLATE, show_default=True,
              help="Cassette name per launch: {server}, {time}, {pid}, {n}.")  # fmt: skip
@click.option("--only", multiple=True, metavar="SERVER", help="Wrap only this server (repeatable).")
@click.option("-n", "--dry-run", is_flag=True, help="Write nothing: print the wrapped config.")
@quiet_option()
def wrap(
    config: Path,
    folder: Path,
    template: str,
    only: tuple[str, ...],
    dry_run: bool,
    quiet: bool = False,
) -> None:
    """Wrap the stdio MCP servers of CONFIG in `mcptape record`, so every launch is recorded.

    CONFIG is an agent host's MCP config: Claude Desktop's claude_desktop_config.json,
    Cursor's .cursor/mcp.json, VS Code's .vscode/mcp.json, or a plain mcp.json. Each
    stdio server then starts as `<absolute mcptape> record -o <folder>/<name> -- <absolute
    command> ARGS`, so it works under the short PATH hosts give their servers, and each launch
    writes its own cassette. HTTP servers are left as they are (the output says how to record
    them through the proxy). The original file is kept as CONFIG.mcptape-backup;
    `mcptape unwrap CONFIG` puts it back byte for byte. Restart the host afterwards.

    \b
    Examples:
        mcptape wrap ~/.cursor/mcp.json --output-dir ~/mcp-cassettes
        mcptape wrap .vscode/mcp.json --only weather
        mcptape wrap mcp.json --name '{server}-{n}.jsonl' --dry-run
    """
    from mcptape.cassette import write_atomic
    from mcptape.maintenance.agents import wrap as wrap_text
    from mcptape.proc.commands import absolute_program
    from mcptape.proc.names import fields_of

    fields_of(template)
    if "/" in template:
        raise click.BadParameter(
            "a file name, not a path: the folder is --output-dir", param_hint="--name"
        )
    path = config
    text = _read(path)
    out = wrap_text(text, str(path), mcptape=mcptape_command(), cassettes=str(folder.absolute()), template=template,
                    resolve=absolute_program, only=only)  # fmt: skip
    if dry_run:
        click.echo(out.text, nl=False)
    for line in out.notes:
        note(line)
    if dry_run:
        return
    if not out.changed:
        note(f"{path}: nothing to wrap")
        return
    backup = backup_of(path)
    if not backup.exists():
        write_atomic(backup, text.encode("utf-8"))
        note(f"backup of the original: {backup}")
    else:
        note(f"kept the existing backup {backup} (the original before the first wrap)")
    folder.absolute().mkdir(parents=True, exist_ok=True)
    write_atomic(path, out.text.encode("utf-8"))
    note(f"wrapped {len(out.changed)} server(s) in {path}; restart the host to record "
         f"(undo: mcptape unwrap {path})")  # fmt: skip


@click.command()
@click.argument("config", type=click.Path(dir_okay=False, path_type=Path))
@quiet_option()
def unwrap(config: Path, quiet: bool = False) -> None:
    """Undo `mcptape wrap CONFIG`: the servers start as before.

    When CONFIG changed only by wrap, it is restored byte for byte from CONFIG.mcptape-backup
    (comments and all); when it was edited since, the wrapped servers get their original
    entries back and the other edits stay. The backup is removed once used.

    \b
    Examples:
        mcptape unwrap ~/.cursor/mcp.json
    """
    from mcptape.cassette import write_atomic
    from mcptape.maintenance.agents import unwrap as unwrap_text

    path = config
    text = _read(path)
    backup = backup_of(path)
    original = _read(backup) if backup.exists() else None
    out = unwrap_text(text, str(path), original)
    for line in out.notes:
        note(line)
    if not out.changed:
        note(f"{path}: no wrapped server")
        return
    write_atomic(path, out.text.encode("utf-8"))
    if original is not None:
        backup.unlink()
    note(f"unwrapped {len(out.changed)} server(s) in {path}")
