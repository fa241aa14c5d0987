"""The maintenance commands on the command line: help with examples, listed by `mcptape --help`."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from mcptape.cli import cli


@pytest.mark.parametrize("command", ["import", "prune", "redact", "fmt"])
def test_each_command_has_help_with_examples(command: str) -> None:
    result = CliRunner().invoke(cli, [command, "--help"])
    assert result.exit_code == 0
    assert "Examples:" in result.output and f"mcptape {command} " in result.output


def test_the_commands_are_listed_and_replay_offers_a_report() -> None:
    listed = CliRunner().invoke(cli, ["--help"]).output
    assert all(name in listed for name in ("import", "prune", "redact", "fmt"))
    assert "--report FILE" in CliRunner().invoke(cli, ["replay", "--help"]).output
