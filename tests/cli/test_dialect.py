"""Every command's options against docs/cli.md: one name per concept, -q everywhere, and the
old spellings still read (hidden, with a deprecation note)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mcptape.cli.dialect import Command, deprecation_notes
from mcptape.cli.group import COMMANDS, cli, load
from tests.conftest import ROOT, mcptape_cmd

DOC = ROOT / "docs" / "cli.md"
GOLDEN = str(ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{title}\n")
    end = text.find("\n#", start + len(title) + 2)
    return text[start : None if end < 0 else end]


def _table() -> list[tuple[frozenset[str], set[str]]]:
    """The Options table: (the spellings of one option, the commands that take it) per row."""
    rows = []
    for line in _section("## Options").splitlines():
        if not line.startswith("| `-"):
            continue
        spelling, _meaning, commands = _cells(line)
        opts = frozenset(re.findall(r"`(-[^`]+)`", spelling))
        rows.append((opts, set(re.findall(r"`([a-z-]+)`", commands))))
    return rows


def _commands() -> dict[str, click.Command]:
    commands = {name: load(name) for name in COMMANDS}
    return {name: c for name, c in commands.items() if c is not None}


def _visible(command: click.Command) -> list[click.Option]:
    return [p for p in command.params if isinstance(p, click.Option) and not p.hidden]


def test_the_table_is_read() -> None:
    rows = _table()
    assert len(rows) > 20
    assert (
        frozenset({"-o", "--output"}),
        {"import", "prune", "record", "redact", "show", "stub", "verify"},
    ) in rows


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_visible_option_is_in_the_table_under_its_one_name(name: str) -> None:
    command = _commands()[name]
    rows = _table()
    for option in _visible(command):
        spellings = frozenset(option.opts + option.secondary_opts)
        row = next((r for r in rows if r[0] & spellings), None)
        assert row is not None, f"{name} {'/'.join(sorted(spellings))}: not in docs/cli.md's table"
        assert row[0] == spellings, (
            f"{name} spells {sorted(spellings)}; the table names that concept {sorted(row[0])}"
        )
        assert name in row[1], f"{name} takes {sorted(spellings)}: add it to that row's commands"


def test_every_row_of_the_table_is_true_of_the_commands_it_names() -> None:
    commands = _commands()
    for spellings, names in _table():
        for name in names:
            opts = {o for p in _visible(commands[name]) for o in p.opts + p.secondary_opts}
            assert spellings <= opts, f"docs/cli.md says {name} takes {sorted(spellings)}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_takes_quiet(name: str) -> None:
    quiet = [p for p in _visible(_commands()[name]) if "--quiet" in p.opts]
    assert quiet and quiet[0].opts == ["-q", "--quiet"] and quiet[0].is_flag


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_commands_section_lists_its_options(name: str) -> None:
    text = DOC.read_text(encoding="utf-8")
    section = next(
        s
        for s in text.split("\n### ")[1:]
        if s.startswith(f"`mcptape {name} ") or s.startswith(f"`mcptape {name}`")
    )
    for option in _visible(_commands()[name]):
        assert f"`{max(option.opts, key=len)}`" in section, (
            f"{name}: {option.opts} not in its section"
        )


OLD = [
    ("redact", ["--key", "x-tenant", GOLDEN], ["--redact-key", "x-tenant", GOLDEN]),
    ("redact", ["--pattern=acme_[0-9]+", GOLDEN], ["--redact-pattern=acme_[0-9]+", GOLDEN]),
    ("show", [GOLDEN, "--format", "table"], [GOLDEN, "--format", "text"]),
    ("show", [GOLDEN, "-f", "table"], [GOLDEN, "-f", "text"]),
    ("replay", ["--faults", "f.toml", "c.jsonl"], ["--fault-file", "f.toml", "c.jsonl"]),
    ("serve", ["--faults", "f.toml", "c.jsonl"], ["--fault-file", "f.toml", "c.jsonl"]),
    ("replay", ["--dry-run", "c.jsonl"], ["--list-fault-hits", "c.jsonl"]),
    ("wrap", ["--cassettes", "rec", "mcp.json"], ["--output-dir", "rec", "mcp.json"]),
]
"""(command, an old spelling, today's): each pair parses to the same parameters."""

NOTES = {
    "--key": "mcptape redact: --key is deprecated; use --redact-key",
    "--pattern=acme_[0-9]+": "mcptape redact: --pattern is deprecated; use --redact-pattern",
    "table": "table is deprecated; use",
    "--faults": "--faults is deprecated; use --fault-file",
    "--dry-run": "mcptape replay: --dry-run is deprecated; use --list-fault-hits",
    "--cassettes": "mcptape wrap: --cassettes is deprecated; use --output-dir",
}


def test_every_old_spelling_is_tested() -> None:
    declared = set()
    for name, command in _commands().items():
        if isinstance(command, Command):
            declared |= {(name, old) for old in [*command.aliases, *command.superseded]}
            declared |= {(name, v) for m in command.value_aliases.values() for v in m}
    tested = {(name, a.split("=")[0]) for name, old, _ in OLD for a in old if a.startswith("-")}
    tested |= {("show", "table"), ("record", "--listen")}
    assert declared <= tested, declared - tested


@pytest.mark.parametrize(
    ("name", "old", "new"), OLD, ids=lambda v: v if isinstance(v, str) else " ".join(v)
)
def test_an_old_spelling_parses_as_today_and_says_so(
    name: str, old: list[str], new: list[str]
) -> None:
    command = _commands()[name]
    with command.make_context(name, list(old)) as was, command.make_context(name, list(new)) as now:
        assert was.params == now.params
    notes = deprecation_notes(command, old)
    assert len(notes) == 1 and notes[0].startswith(f"mcptape {name}: ")
    expected = next(v for k, v in NOTES.items() if k in old)
    assert expected in notes[0]
    if "table" in old:  # the option as the user spelled it
        flag = old[old.index("table") - 1]
        assert notes[0].endswith(f"{flag} table is deprecated; use {flag} text")
    assert deprecation_notes(command, [*old, "-q"]) == [], "-q leaves the note out"
    assert deprecation_notes(command, new) == []
    assert (
        old[0].split("=")[0] not in CliRunner().invoke(cli, [name, "--help"]).output
        or old[0] == GOLDEN
    )


def test_listen_still_sets_the_proxy_address_and_says_so() -> None:
    record = _commands()["record"]
    with record.make_context("record", ["--http", "--listen", "127.0.0.1:8765"]) as ctx:
        assert ctx.params["listen"] == "127.0.0.1:8765"
    assert deprecation_notes(record, ["--listen", "1.2.3.4:5", "--", "x", "--listen"]) == [
        "mcptape record: --listen is deprecated; use --host and --port"
    ], "once, and never for the server's own arguments after --"
    assert "--listen" not in CliRunner().invoke(cli, ["record", "--help"]).output


def test_a_value_that_looks_like_an_old_option_is_left_alone() -> None:
    redact = _commands()["redact"]
    with redact.make_context("redact", ["--redact-pattern", "--key", GOLDEN]) as ctx:
        assert ctx.params["patterns"] == ("--key",)
    assert deprecation_notes(redact, ["--redact-pattern", "--key", GOLDEN]) == []


def test_the_note_comes_after_the_commands_output(tmp_path: Path) -> None:
    proc = subprocess.run(
        mcptape_cmd("show", GOLDEN, "--format", "table"), capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "protocol 2025-11-25" in proc.stdout.splitlines()[0]
    assert proc.stderr == "mcptape show: --format table is deprecated; use --format text\n"


def test_an_error_stays_the_one_and_last_line(tmp_path: Path) -> None:
    proc = subprocess.run(
        mcptape_cmd("redact", GOLDEN, "--pattern", "([unclosed", "-o", str(tmp_path / "o.jsonl")),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 2
    assert (
        proc.stderr.startswith("mcptape: error: bad --redact-pattern")
        and proc.stderr.count("\n") == 1
    )


def test_verify_reads_an_old_o_folder_as_output_dir() -> None:
    from mcptape.cli.verify import _outputs, verify

    with click.Context(verify, info_name="verify"):
        assert _outputs(None, Path("new"), 2) == (Path("new"), None)
        assert _outputs(None, Path("new.jsonl"), 1) == (None, Path("new.jsonl"))
        assert _outputs(Path("d"), None, 3) == (Path("d"), None)
