"""`mcptape stub`: the declarations of a recorded session, as a mock file to edit."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .dialect import Command
from .messages import warning
from .options import quiet_option


@click.command(cls=Command)
@click.argument("cassette", type=click.Path(path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Write to FILE (.json: JSON, else TOML) instead of standard output (TOML).")  # fmt: skip
@quiet_option("the mock file is the output: it stays")
def stub(cassette: Path, output: Path | None, quiet: bool) -> None:
    """Write a mock file declaring what a recorded session answered: tools with their schemas,
    each recorded answer by its arguments, resources and prompts. Edit it, then serve it like
    a cassette (mcptape replay FILE, mcptape serve FILE, use_cassette(FILE)).

    \b
    mcptape stub cassettes/demo.jsonl -o mocks/demo.toml
    mcptape replay mocks/demo.toml
    """
    from mcptape.cassette import load
    from mcptape.mocks.file import dumps_toml
    from mcptape.mocks.stub import stub as stub_of

    cas = load(cassette)
    if not quiet:
        for w in cas.warnings:
            warning(w)
    tree = stub_of(cas)
    if output is not None and output.suffix == ".json":
        import json

        text = json.dumps(tree, indent=2, ensure_ascii=False) + "\n"
    else:
        text = dumps_toml(tree)
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"{output}: cannot write: {exc.strerror}") from None
