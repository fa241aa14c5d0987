"""ignores: pointers everywhere or scoped to one method and name; the config file beside the cassettes (read by the CLI)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptape.cli.diff import load_config
from mcptape.diff.ignores import parse_ignore
from mcptape.diff.types import Change, Difference, Impact, Section
from mcptape.errors import ConfigError


def row(exchange: str, path: str) -> Difference:
    return Difference(Section.RESULT, Change.CHANGED, Impact.BEHAVIOUR, exchange, path, "a", "b")


@pytest.mark.parametrize(("spec", "exchange", "path", "hit"), [
    ("/result/content/0/text", "tools/call now", "/result/content/0/text", True),
    ("/result/content/0/text", "prompts/get p", "/result/content/0/text", True),
    ("tools/call now:/result/content/0/text", "tools/call now", "/result/content/0/text", True),
    ("tools/call now:/result/content/0/text", "tools/call now #2", "/result/content/0/text", True),
    ("tools/call now:/result/content/0/text", "tools/call greet", "/result/content/0/text", False),
    ("tools/call now:/result", "tools/call now", "/result/content/0/text", True),
    ("tools/call now:/result/content/*/text", "tools/call now", "/result/content/3/text", True),
    ("tools/call:/result/content/0/text", "tools/call greet", "/result/content/0/text", True),
    ("tools/call:/result/content/0/text", "prompts/get greet", "/result/content/0/text", False),
    ("tools/call get_*:/result", "tools/call get_time", "/result/x", True),
    ("resources/read file:///tmp/a.log:/result/contents/0/text", "resources/read file:///tmp/a.log", "/result/contents/0/text", True),
    ("resources/read file:///tmp/a.log:/result/contents/0/text", "resources/read file:///tmp/b.log", "/result/contents/0/text", False),
])  # fmt: skip
def test_an_ignore_covers_its_path_in_its_scope(
    spec: str, exchange: str, path: str, hit: bool
) -> None:
    assert parse_ignore(spec).covers(row(exchange, path)) is hit


@pytest.mark.parametrize("spec", ["", "/", "result/content", "tools/call now", "tools/call now:/"])
def test_a_bad_ignore_says_how_to_write_one(spec: str) -> None:
    with pytest.raises(ConfigError, match="JSON pointer"):
        parse_ignore(spec)


def test_the_config_file_beside_the_cassettes(tmp_path: Path) -> None:
    assert load_config(tmp_path) == []
    (tmp_path / "mcptape-diff.toml").write_text(
        'ignore = ["tools/call now:/result", "/server/instructions"]\n'
    )
    assert [(i.method, i.name, i.pattern) for i in load_config(tmp_path)] == [
        ("tools/call", "now", ("result",)), (None, None, ("server", "instructions"))]  # fmt: skip


@pytest.mark.parametrize(("text", "message"), [
    ('ignore = [\n  "/ok" "/bad"\n]\n', r"mcptape-diff.toml: not valid TOML: .*line 2"),
    ('ignore = "/result"\n', r"mcptape-diff.toml:1: ignore must be a list of strings"),
    ('\nignores = ["/result"]\n', r"mcptape-diff.toml:2: unknown setting 'ignores'; known: ignore"),
    ('ignore = [\n  "/ok",\n  "nope",\n]\n', r"mcptape-diff.toml:3: ignore 'nope': give a JSON pointer"),
])  # fmt: skip
def test_a_bad_config_file_is_one_error_with_its_line(
    tmp_path: Path, text: str, message: str
) -> None:
    (tmp_path / "mcptape-diff.toml").write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path)
