"""Options shared by several commands: one name and one help per concept (docs/cli.md)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from mcptape.cassette import Cassette
    from mcptape.redaction.redact import RedactConfig
    from mcptape.replay.engine import ReplayConfig

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def quiet_option(what: str = "") -> Decorator:
    """-q/--quiet: notes, warnings and progress are left out; errors never are."""
    return click.option(
        "-q", "--quiet", is_flag=True,
        help="No notes, warnings or progress on stderr; errors only" + (f" ({what})." if what else "."),
    )  # fmt: skip


REDACT_KEY_HELP = (
    "Also redact values of members, headers and query parameters named NAME (repeatable)."
)
REDACT_PATTERN_HELP = "Also replace substrings matching REGEX in every string (repeatable)."


def redaction_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--redact-key, --redact-pattern, --no-redact."""
    f = click.option("--no-redact", is_flag=True, help="Write secrets in clear (not recommended).")(
        f
    )
    f = click.option(
        "--redact-pattern", "redact_patterns", multiple=True, metavar="REGEX", help=REDACT_PATTERN_HELP,
    )(f)  # fmt: skip
    f = click.option(
        "--redact-key", "redact_keys", multiple=True, metavar="NAME", help=REDACT_KEY_HELP,
    )(f)  # fmt: skip
    return f


def redact_config(
    no_redact: bool, keys: tuple[str, ...], patterns: tuple[str, ...]
) -> RedactConfig:
    from mcptape.redaction.redact import RedactConfig  # (not on the replay path's imports)

    base = RedactConfig(enabled=not no_redact)
    return base.with_extra(keys, patterns)


def parse_timing(value: str) -> float | None:
    """`none` -> None (instant), `recorded` -> 1.0, a number -> that speed factor."""
    text = value.strip().lower()
    if text in ("none", "instant", "0"):
        return None
    if text == "recorded":
        return 1.0
    try:
        speed = float(text)
    except ValueError:
        raise click.BadParameter(
            f"{value!r}: use none, recorded, or a speed factor such as 2 or 0.5"
        ) from None
    if not speed > 0 or speed == float("inf"):
        raise click.BadParameter(f"{value!r}: the speed factor must be a positive number")
    return speed


def _stack(options: list[Decorator]) -> Decorator:
    """The options in the order given (the first one listed first in --help)."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        for option in reversed(options):
            f = option(f)
        return f

    return wrap


IGNORE = "A part of the traffic that does not matter, as a JSON pointer: left out when comparing."
"""The one concept of --ignore, first in its help on every command (docs/cli.md)."""


def replay_options(strict_when: str) -> Decorator:
    """How a replay shell (`replay`, `serve`) matches and plays: --allow-repeats, --strict,
    --same-era, --ignore, --match-on, --timing. `strict_when`: when the strict report comes."""
    return _stack([
        click.option("--allow-repeats", is_flag=True,
                     help="Answer a request again with its last recording once its recordings are used up."),
        click.option("--strict", is_flag=True,
                     help=f"{strict_when}, list recorded requests it never made and exit 1 if any. Also plays only "
                          "recordings made by a client that declared the same capabilities and log level."),
        click.option("--same-era", is_flag=True,
                     help="Refuse clients of the other protocol era (a legacy initialize on a 2026-07-28 cassette "
                          "gets -32022), instead of translating."),
        click.option("--ignore", "ignore", multiple=True, metavar="POINTER",
                     help=f"{IGNORE} Here POINTER is into the request's params and leaves that member out of "
                          "matching, e.g. /arguments/when (repeatable)."),
        click.option("--match-on", "match_on", multiple=True, metavar="MATCHER",
                     help="Match requests on these built-in matchers only (repeatable): method, params, name, "
                          "arguments, uri, cursor. Default: method and params."),
        click.option("--timing", "speed", default="none", show_default=True, metavar="none|recorded|FACTOR",
                     callback=lambda _c, _p, v: parse_timing(v),
                     help="Answer at once, with the recorded delays, or FACTOR times faster than recorded."),
    ])  # fmt: skip


FAULT_ALIASES = {"--faults": "--fault-file"}
"""The old spelling of --fault-file (one letter away from --fault)."""


def fault_options(actions: str, example: str) -> Decorator:
    """--fault-file FILE and --fault RULE_JSON; `actions` lists what rules can do on this transport."""
    return _stack([
        click.option("--fault-file", "faults_file", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
                     help=f"A file of fault rules to inject (JSON, or TOML with [[faults]]): {actions}. See docs/faults.md."),
        click.option("--fault", "fault_rules", multiple=True, metavar="RULE_JSON",
                     help=f"One fault rule inline, e.g. '{example}' (repeatable; applied after --fault-file)."),
    ])  # fmt: skip


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


def journal_option(f: Callable[..., Any]) -> Callable[..., Any]:
    """--journal FILE: the requests received and their answers, as JSON lines (docs/cli.md)."""
    return click.option(
        "--journal", "journal", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
        help="Write each request received, with its answer and time, to FILE as a JSON line (and, for a mock "
             "file, the declarations not used yet): a journal for a test to assert on. See docs/cli.md.",
    )(f)  # fmt: skip


@contextlib.contextmanager
def journaled(
    config: ReplayConfig, cassette: Cassette, path: Path | None
) -> Iterator[ReplayConfig]:
    """`config` writing the journal to `path` while the block serves (none when `path` is None)."""
    if path is None:
        yield config
        return
    from dataclasses import replace

    from mcptape.mocks.journal_file import JournalFile
    from mcptape.replay.outputs import stacked

    journal = JournalFile.open(path, cassette.answerer)
    try:
        yield replace(config, answerer=stacked(journal, config.answerer))
    finally:
        journal.close()


def open_cassettes(paths: tuple[Path, ...], *, cached: bool = True) -> Cassette:
    """The cassette `replay` and `serve` play: one file as it is (through the index cache when
    `cached`), else every file and folder given read as the sessions of one."""
    if len(paths) == 1 and not paths[0].is_dir():
        if not cached:
            from mcptape.cassette import load

            return load(paths[0])
        from mcptape.replay.cache import open_for_replay

        return open_for_replay(paths[0])
    from mcptape.cassette.sessions import load_many

    return load_many(list(paths))
