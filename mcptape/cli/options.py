"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from mcptape.redact import RedactConfig


def redaction_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--redact-key, --redact-pattern, --no-redact."""
    f = click.option("--no-redact", is_flag=True, help="Write secrets in clear (not recommended).")(
        f
    )
    f = click.option(
        "--redact-pattern", "redact_patterns", multiple=True, metavar="REGEX",
        help="Also replace substrings matching REGEX in every string (repeatable).",
    )(f)  # fmt: skip
    f = click.option(
        "--redact-key", "redact_keys", multiple=True, metavar="NAME",
        help="Also redact values of members, headers and query parameters named NAME (repeatable).",
    )(f)  # fmt: skip
    return f


def redact_config(
    no_redact: bool, keys: tuple[str, ...], patterns: tuple[str, ...]
) -> RedactConfig:
    base = RedactConfig(enabled=not no_redact)
    return base.with_extra(keys, patterns)
