"""`mcptape check FILE...`: validate cassettes and scan them for secrets (a pre-commit hook)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import click

from mcptape.check import CHECKS

from .messages import note, progress
from .options import quiet_option


@click.command()
@click.argument(
    "cassettes",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
)
@click.option(
    "--skip", multiple=True, type=click.Choice(CHECKS), help="Leave a check out (repeatable)."
)
@quiet_option("the findings are the output: they stay")
@click.option("--detect-secrets", "detect_secrets", is_flag=True,
              help="Also scan with detect-secrets (pip install 'mcptape[secrets]'); each finding says which backend made it.")  # fmt: skip
def check(
    cassettes: tuple[Path, ...], skip: tuple[str, ...], quiet: bool, detect_secrets: bool = False
) -> None:
    """Check cassettes: format, request/response pairing, messages against the MCP schema
    of their protocol version, and secrets that escaped redaction.

    Prints `FILE:LINE: what` for each problem (on stdout; warnings go to stderr) and exits
    1 if there is any, 0 if all cassettes are clean.

    \b
    Examples:
        mcptape check cassettes/*.jsonl
        mcptape check --skip protocol tests/cassettes/test_api/*.jsonl
        mcptape check --detect-secrets cassettes/*.jsonl   # a second opinion
    \b
    As a pre-commit hook (.pre-commit-config.yaml):
        - repo: https://github.com/<owner>/mcptape
          rev: <tag>
          hooks: [{id: mcptape-check}]
    """
    if detect_secrets:
        from mcptape.check.detect_secrets import DetectSecrets, DetectSecretsMissing

        try:
            DetectSecrets()
        except DetectSecretsMissing as exc:
            raise click.UsageError(str(exc)) from None

    with progress(cassettes, "checking") as begun:
        bad, total = _check_each(cassettes, frozenset(skip), detect_secrets, quiet, begun)
    verdict = (
        f"{total} problem(s) in {bad} of {len(cassettes)} cassette(s)"
        if bad
        else f"{len(cassettes)} cassette(s) clean"
    )
    note(verdict)
    sys.exit(1 if bad else 0)


def _check_each(
    cassettes: tuple[Path, ...],
    skip: frozenset[str],
    detect_secrets: bool,
    quiet: bool,
    begun: Callable[[Path], None],
) -> tuple[int, int]:
    """Checks each cassette, printing its findings; (cassettes with findings, findings)."""
    from mcptape.check import check_file

    bad = total = 0
    for path in cassettes:
        begun(path)
        try:
            report = check_file(path, skip, detect_secrets)
        except OSError as exc:
            click.echo(f"{path}: cannot read: {exc.strerror}")
            bad += 1
            continue
        for finding in report.findings:
            click.echo(finding.render(str(path)))
        if not quiet:
            for warning in report.warnings:
                print(f"{warning.render(str(path))}: warning", file=sys.stderr)
        total += len(report.findings)
        bad += bool(report.findings)
    return bad, total
