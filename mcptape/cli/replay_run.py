"""`mcptape replay` without click: the command's body, and its plain form read from argv.

`mcptape replay [--strict] [--allow-repeats] [--same-era] [-q] FILE` is what a client's
configuration or a test suite runs, often once per test, so its startup counts: that form is
read here without importing click (click and what only it imports: 20-30 ms of CPU). Any other
form (an option with a value, `--help`, `--`, an unknown option, a second argument, a path
that click would refuse) goes to click, which owns every message, default and error; a test
checks that both read the plain forms alike.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcptape.wire.ndjson import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from mcptape.replay.engine import ReplayConfig

PLAIN_FLAGS: dict[str, str] = {
    "--allow-repeats": "allow_repeats",
    "--strict": "strict",
    "--same-era": "same_era",
    "-q": "quiet",
    "--quiet": "quiet",
}
"""The flags of the plain form -> the parameter each sets (all off unless given)."""


def plain_replay(args: list[str]) -> dict[str, Any] | None:
    """The parameters of `replay` (as click would pass them) when `args` is its plain form."""
    if not args or args[0] != "replay" or os.environ.get("_MCPTAPE_COMPLETE"):
        return None
    params: dict[str, Any] = dict.fromkeys(("allow_repeats", "strict", "same_era", "quiet"), False)
    cassette: str | None = None
    for arg in args[1:]:
        if arg.startswith("-"):
            if arg not in PLAIN_FLAGS:
                return None
            params[PLAIN_FLAGS[arg]] = True
        elif cassette is None:
            cassette = arg
        else:
            return None
    if not cassette or not _plain_file(cassette):
        return None
    params.update(
        cassette=Path(cassette), ignore=(), speed=None, faults_file=None, fault_rules=(),
        match_on=(), dry_run=False, max_line=DEFAULT_MAX_LINE, report=None,
    )  # fmt: skip
    return params


def _plain_file(path: str) -> bool:
    """What click's `Path(dir_okay=False)` lets through untouched: absent, or a readable non-directory."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return True
    return not stat.S_ISDIR(mode) and os.access(path, os.R_OK)


def run_replay(
    cassette: Path, allow_repeats: bool, strict: bool, same_era: bool, ignore: tuple[str, ...], speed: float | None, quiet: bool,
    faults_file: Path | None = None, fault_rules: tuple[str, ...] = (), match_on: tuple[str, ...] = (), dry_run: bool = False,
    max_line: int = DEFAULT_MAX_LINE, report: Path | None = None,
) -> None:  # fmt: skip
    """The `replay` command's body (see `mcptape.cli.replay` for what each parameter means)."""
    from mcptape.cassette import load
    from mcptape.replay.faults import rules_from_options
    from mcptape.replay.server_stdio import serve_stdio
    from mcptape.sidecar import open_for_replay

    faults = rules_from_options(faults_file, fault_rules)
    if dry_run:
        import click

        from mcptape.replay.faults import dry_run as list_hits

        click.echo(list_hits(faults, load(cassette)), nl=False)
        return
    config = replay_config(match_on, ignore, allow_repeats, same_era, strict)
    sys.exit(
        serve_stdio(
            open_for_replay(cassette),
            config,
            strict=strict,
            speed=speed,
            quiet=quiet,
            faults=faults,
            max_line=max_line,
            report=report,
        )
    )


def replay_config(
    match_on: tuple[str, ...],
    ignore: tuple[str, ...],
    allow_repeats: bool,
    same_era: bool,
    strict: bool,
) -> ReplayConfig:
    """The engine's configuration from `replay_options` (`replay` and `serve`)."""
    from mcptape.matching import match_policy
    from mcptape.replay.engine import ReplayConfig

    return ReplayConfig(
        match_policy(match_on or None, ignore),
        allow_repeats=allow_repeats,
        cross_era=not same_era,
        exact_clients=strict,
    )
