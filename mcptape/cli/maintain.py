"""`mcptape prune`, `mcptape redact`, `mcptape fmt`: keep cassettes small, clean and reviewable."""

from __future__ import annotations

from pathlib import Path

import click

from .dialect import Command
from .messages import label, note, progress
from .options import REDACT_KEY_HELP, REDACT_PATTERN_HELP, quiet_option

_CASSETTE = click.Path(exists=True, dir_okay=False, path_type=Path)


@click.command()
@click.argument("cassette", type=_CASSETTE)
@click.option("--unused-from", "run_log", type=click.Path(exists=True, dir_okay=False, path_type=Path), metavar="RUN_LOG",
              help="Drop the exchanges this run never played: the stderr of `mcptape replay --strict`, a test log holding "
                   "its report, or the JSON of `mcptape replay --report FILE`. With several reports for the cassette, "
                   "only exchanges unplayed in all of them go.")  # fmt: skip
@click.option("--keep", "keep", multiple=True, metavar="METHOD|NAME",
              help="Keep only requests whose method, tool or prompt name, or resource URI matches (repeatable; "
                   "wildcards * ? [...]). initialize, server/discover and notifications are always kept.")  # fmt: skip
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write FILE instead of rewriting CASSETTE in place.",
)
@click.option("-n", "--dry-run", is_flag=True, help="Write nothing: list what would be dropped.")
@quiet_option("with --dry-run the list is the output: it stays")
def prune(
    cassette: Path, run_log: Path | None, keep: tuple[str, ...], output: Path | None, dry_run: bool,
    quiet: bool = False,
) -> None:  # fmt: skip
    """Drop recorded exchanges a test suite does not need, with all their events.

    An exchange is a request with its response, the notifications and server requests
    that belong to it and the client's answers (and, over HTTP, the heads and stream events
    of its HTTP exchanges). The result is written atomically; `seq` is renumbered and
    every other line keeps its bytes.

    \b
    Examples:
        mcptape replay --strict cassettes/demo.jsonl 2> run.log   # run the suite with it, then:
        mcptape prune cassettes/demo.jsonl --unused-from run.log
        mcptape replay --report unplayed.jsonl cassettes/demo.jsonl
        mcptape prune cassettes/demo.jsonl --unused-from unplayed.jsonl --dry-run
        mcptape prune cassettes/demo.jsonl --keep tools/list --keep add --keep 'demo://*' -o small.jsonl
    """
    from mcptape.maintenance import commands as maintain
    from mcptape.skeletons import outline

    if (run_log is None) == (not keep):
        raise click.UsageError("give either --unused-from RUN_LOG or --keep (one or more)")
    plan = outline(cassette)
    if run_log is not None:
        reports = maintain.parse_run_log(run_log.read_text(encoding="utf-8", errors="replace"))
        drop = maintain.unused_exchanges(plan, reports)
    else:
        drop = maintain.not_kept(plan, keep)
    named = drop if dry_run else drop[:LISTED]
    what = ", ".join(plan.describe(ex) for ex in named) or "nothing"
    if len(named) < len(drop):
        what += f" and {len(drop) - len(named)} more (--dry-run lists every one)"
    if dry_run:
        click.echo(f"{label()}: would drop {len(drop)} exchange(s) of {cassette}: {what}", err=True)
        return
    events = maintain.prune(plan, drop, output)
    note(
        f"pruned {len(drop)} exchange(s), {events} event(s) from {cassette} -> {output or cassette}: {what}"
    )


LISTED = 20
"""The dropped exchanges `prune` names once done (`--dry-run` names every one)."""


@click.command(cls=Command, aliases={"--key": "--redact-key", "--pattern": "--redact-pattern"})
@click.argument("cassettes", nargs=-1, required=True, type=_CASSETTE)
@click.option(
    "--redact-key",
    "keys",
    multiple=True,
    metavar="NAME",
    help=REDACT_KEY_HELP,
)
@click.option(
    "--redact-pattern",
    "patterns",
    multiple=True,
    metavar="REGEX",
    help=REDACT_PATTERN_HELP,
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write FILE instead of rewriting CASSETTE in place (one CASSETTE only).",
)
@quiet_option()
def redact(
    cassettes: tuple[Path, ...],
    keys: tuple[str, ...],
    patterns: tuple[str, ...],
    output: Path | None,
    quiet: bool = False,
) -> None:
    """Apply redaction rules to existing cassettes, each in place and atomically.

    The default rules, the secret names its header lists and the new rules are applied to every
    message, raw and stderr line, HTTP path, header and SSE field; each changed event's
    `redacted` list and the header's `redaction` rules are updated. Replay treats the
    redacted values as wildcards when matching requests. Run `mcptape check` after.

    \b
    Examples:
        mcptape redact cassettes/demo.jsonl --redact-key x-tenant-id
        mcptape redact cassettes/demo.jsonl --redact-pattern 'acme_[0-9a-f]{32}'
        mcptape redact cassettes/*.jsonl --redact-key x-tenant-id   # many files, like check and fmt
        mcptape redact cassettes/demo.jsonl --redact-key x-tenant-id -o clean.jsonl
    """
    from mcptape.maintenance import commands as maintain
    from mcptape.redaction.redact import RedactConfig, Redactor

    if output is not None and len(cassettes) > 1:
        raise click.UsageError("-o takes one CASSETTE; without -o each file is rewritten in place")
    Redactor(RedactConfig(True, (), patterns))  # a bad pattern: a usage error before any read
    with progress(cassettes, "redacting") as begun:
        for cassette in cassettes:
            begun(cassette)
            differs, events = maintain.redact_file(cassette, keys, patterns, output)
            if not differs:
                note(f"nothing to redact in {cassette}")
                continue
            note(
                f"redacted {events} event(s) of {cassette} -> {output or cassette} (rules in its header updated)"
            )


@click.command()
@click.argument("cassettes", nargs=-1, required=True, type=_CASSETTE)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing; exit 1 if a file is not in canonical form (for CI and pre-commit).",
)
@click.option("--renumber", is_flag=True, help="Also renumber `seq` 1..n.")
@quiet_option()
@click.pass_context
def fmt(
    ctx: click.Context,
    cassettes: tuple[Path, ...],
    check: bool,
    renumber: bool,
    quiet: bool = False,
) -> None:
    """Rewrite cassettes in canonical form, so they diff cleanly in review.

    Canonical: compact JSON, one event per line, `\\n` line ends; header keys, event keys
    and `http` keys in the documented order (docs/cassette-format.md), unknown keys after
    them sorted. Message contents and their key order never change. Files the recorders
    write are already canonical.

    \b
    Examples:
        mcptape fmt cassettes/*.jsonl
        mcptape fmt --check cassettes/*.jsonl        # in CI or a pre-commit hook
        mcptape fmt --renumber cassettes/edited.jsonl
    """
    from mcptape.maintenance import commands as maintain

    changed = 0
    with progress(cassettes, "formatting") as begun:
        for path in cassettes:
            begun(path)
            if not maintain.fmt(path, renumber, write=not check):
                continue
            changed += 1
            note(f"would reformat {path}" if check else f"reformatted {path}")
    verb = "would be reformatted" if check else "reformatted"
    note(f"{changed} file(s) {verb}, {len(cassettes) - changed} already canonical")
    if check and changed:
        ctx.exit(1)
