"""Docstrings and comments say what the code does and why, not how fast it ran or how much it held.

A measured figure (a timing, a size, a speedup, a rate) belongs in the benchmark output and the
commit that made it, where it is dated with its machine; in the code it goes stale unnoticed.
Comments are read with `tokenize` and docstrings with `ast`, so string literals in code (a
message, a format) and the code itself are never looked at. A limit the code enforces is
behaviour, not a measurement: the few documented ones are in `ALLOWED`.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "mcptape"

FIGURE = re.compile(
    r"(?<![\w.])\d[\d,]*(?:\.\d+)?k?"  # a number: 3, 0.5, 100,000, 30k
    r"(?:"
    r"\s?(?:(?:requests|req|round trips|calls|lines|MB|KB|GB)/s"  # a rate
    r"|ms|us|µs|ns|milliseconds?|microseconds?|seconds?|minutes?"  # a time
    r"|B|KB|MB|GB|TB|KiB|MiB|GiB)"  # a size
    r"|\ss"  # seconds, spaced only ("202s" is a plural of a status code)
    r"|x|%"  # a ratio, unspaced only ("2 x 3" is a product)
    r"|\stimes\s(?:as|faster|slower|more|less|the)"  # a ratio in words ("3 times" is a count)
    r")(?![\w/])"
)
"""A number followed by a unit of time, size, rate or ratio."""

ALLOWED = {
    "Default bound on one line: 256 MiB": "wire/ndjson.py: DEFAULT_MAX_LINE, a limit a user hits",
}
"""Exact phrases that state a limit the code enforces (the constant's value, in words users
read in an error message or --help), each with where the constant is. Keep this short: a phrase
earns its place only when the figure is the constant's own value, not a measurement of it."""


def _docstrings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of every string that is a statement of its own: docstrings of modules,
    classes and functions, and the attribute docstrings under assignments."""
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        for stmt in body if isinstance(body, list) else ():  # a lambda's body is one expression
            if (
                isinstance(stmt, ast.Expr)
                and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str)
            ):
                yield stmt.lineno, stmt.value.value


def _comments(source: str) -> Iterator[tuple[int, str]]:
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            yield tok.start[0], tok.string


def figures(text: str) -> list[tuple[int, str]]:
    """(line offset within `text`, figure) of every figure outside the allowed phrases."""
    allowed = [
        (m.start(), m.end()) for phrase in ALLOWED for m in re.finditer(re.escape(phrase), text)
    ]
    return [
        (text.count("\n", 0, m.start()), m.group())
        for m in FIGURE.finditer(text)
        if not any(a <= m.start() and m.end() <= b for a, b in allowed)
    ]


def hits(path: Path) -> list[str]:
    """`file:line: figure` for every figure in a docstring or comment of `path`."""
    source = path.read_text(encoding="utf-8")
    where = path.relative_to(ROOT)
    out = []
    for line, text in [*_docstrings(ast.parse(source)), *_comments(source)]:
        out += [f"{where}:{line + off}: {fig!r}" for off, fig in figures(text)]
    return sorted(out)


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("took 0.5 ms a line", ["0.5 ms"]),
        ("30k requests/s against 1.57x", ["30k requests/s", "1.57x"]),
        ("20 to 50 times faster; retried 3 times", ["50 times faster"]),
        ("held 413 MB, in 2.1 us; 3 s to open; 18% less", ["413 MB", "2.1 us", "3 s", "18%"]),
        ("heads, stream ends, 202s; 2 x 3; TS SDK 1.x; sleep(20e-6)", []),
        ("Default bound on one line: 256 MiB, far above any real MCP message.", []),
        ("a 256 MiB line", ["256 MiB"]),  # the phrase, not the number, is allowed
    ],
)
def test_a_figure_is_a_number_with_a_unit(text: str, found: list[str]) -> None:
    assert [fig for _, fig in figures(text)] == found


def test_comments_and_docstrings_are_read_but_not_code(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        '"""Module: fast (0.5 ms)."""\n'
        "LIMIT = 64  # about 3 MB\n"
        'MESSAGE = "took 5 ms"\n'
        "def f() -> None:\n"
        '    """Reads it in 2 s."""\n'
        "    x = 1  # or 3x\n"
    )
    found = []
    for line, text in [*_docstrings(ast.parse(src.read_text())), *_comments(src.read_text())]:
        found += [(line + off, fig) for off, fig in figures(text)]
    assert sorted(found) == [(1, "0.5 ms"), (2, "3 MB"), (5, "2 s"), (6, "3x")]


def test_no_docstring_or_comment_of_the_package_holds_a_figure() -> None:
    found = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in hits(path)]
    assert not found, (
        "docstrings and comments say what and why, not measurements (they belong in the"
        " benchmark output and the commit message); rewrite these:\n" + "\n".join(found)
    )


def test_the_performance_notes_stay_a_reference() -> None:
    lines = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8").count("\n")
    assert lines < 250, (
        f"docs/performance.md has {lines} lines: keep it the benchmark table and how to measure"
        " each row (under 250 lines); the history of measurements is in git"
    )
