"""Every shell and Python example of README.md and docs/*.md runs, as a user would run it.

A fenced `sh`/`bash` or `python` block runs unless the line just before its fence says why
it cannot: `<!-- example: not run: REASON -->`. `<!-- example: test file PATH -->` before a
Python block saves it as PATH, and it is run with pytest twice, recording
(`--mcptape-record-mode=once`) then replaying. The blocks of one file run in order in one
sandbox, so a block may use what an earlier one made: a temporary folder holding copies of
examples/ and cassettes/ (with a session of the demo server as cassettes/demo.jsonl, as
`make demo` leaves it), the demo server as `server.py`, a pytest.ini (`testpaths = tests`),
this venv's bin first on PATH and HOME inside it. Shell blocks run under `bash -e -o
pipefail` with stdin closed; Python blocks run as scripts (top-level `await` allowed).
A failure names the file, the line of the block's fence, and what the block printed.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import DEMO_SERVER, ROOT

pytestmark = pytest.mark.e2e

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"sh", "bash", "shell"}
PYTHON = {"python", "py"}
FENCE = re.compile(r"^```([\w+-]*)\s*$")
NOTE = re.compile(r"^<!--\s*example:\s*(.*?)\s*-->\s*$")
RUN_PY = """import ast, asyncio, sys
path = sys.argv[1]
code = compile(open(path).read(), path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__main__", "__file__": path})
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""


@dataclass(frozen=True)
class Block:
    doc: Path
    line: int
    """The line of the opening fence."""
    lang: str
    text: str
    note: str
    """The `<!-- example: ... -->` before it ('' when there is none)."""

    @property
    def where(self) -> str:
        name = self.doc.relative_to(ROOT) if self.doc.is_relative_to(ROOT) else self.doc
        return f"{name}:{self.line} ({self.lang} block)"


def blocks(doc: Path) -> list[Block]:
    """The shell and Python blocks of `doc`, in order."""
    lines = doc.read_text().split("\n")
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        lang = m.group(1).lower()
        if lang in SHELL | PYTHON:
            prev = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            note = n.group(1) if (n := NOTE.match(prev.strip())) else ""
            out.append(
                Block(
                    doc,
                    i + 1,
                    "python" if lang in PYTHON else "sh",
                    "\n".join(lines[i + 1 : end]) + "\n",
                    note,
                )
            )
        i = end + 1
    return out


def sandbox(tmp: Path) -> dict[str, str]:
    shutil.copytree(ROOT / "examples", tmp / "examples")
    shutil.copytree(
        ROOT / "cassettes", tmp / "cassettes", ignore=shutil.ignore_patterns("demo*.jsonl")
    )
    shutil.copy(DEMO_SERVER, tmp / "server.py")
    # what `make demo` leaves in cassettes/: a session of the demo server
    shutil.copy(
        ROOT / "examples" / "cassettes" / "test_with_mcptape" / "test_add_reports_progress.jsonl",
        tmp / "cassettes" / "demo.jsonl",
    )
    (tmp / "pytest.ini").write_text(
        "[pytest]\ntestpaths = tests\nasyncio_default_fixture_loop_scope = function\n"
    )
    (tmp / "home").mkdir()
    (tmp / "_run_example.py").write_text(RUN_PY)
    bin_dir = str(Path(sys.executable).parent)
    return {
        **os.environ,
        "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        "HOME": str(tmp / "home"),
    }


def fail(block: Block, what: str, proc: subprocess.CompletedProcess[str]) -> None:
    out = (proc.stdout + proc.stderr).strip()
    pytest.fail(
        f"{block.where}: {what} (exit {proc.returncode}):\n{block.text}--- output ---\n{out[-4000:]}",
        pytrace=False,
    )


def run_block(block: Block, tmp: Path, env: dict[str, str]) -> None:
    def sh(argv: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, cwd=tmp, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=600, check=False)  # fmt: skip

    if block.note.startswith("test file "):
        target = tmp / block.note.removeprefix("test file ").strip()
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.text)
        for args in (["--mcptape-record-mode=once"], []):
            proc = sh(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(target), *args]
            )
            if proc.returncode != 0:
                fail(
                    block,
                    f"pytest {' '.join(args) or '(replay)'} failed on it, saved as {target.relative_to(tmp)}",
                    proc,
                )
        return
    if block.lang == "sh":
        proc = sh(["bash", "-e", "-o", "pipefail", "-c", block.text])
    else:
        script = tmp / f"_example_{block.doc.stem}_{block.line}.py"
        script.write_text(block.text)
        proc = sh([sys.executable, str(tmp / "_run_example.py"), str(script)])
    if proc.returncode != 0:
        fail(block, "the example failed", proc)


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_the_examples_of_each_doc_run(doc: Path, tmp_path: Path) -> None:
    env = sandbox(tmp_path)
    for block in blocks(doc):
        if block.note.startswith("not run"):
            reason = block.note.removeprefix("not run").lstrip(": ").strip()
            assert reason, f"{block.where}: `<!-- example: not run: REASON -->` needs a reason"
            continue
        if block.note and not block.note.startswith("test file "):
            pytest.fail(
                f"{block.where}: unknown note `{block.note}`; use `not run: REASON` or `test file PATH`",
                pytrace=False,
            )
        if block.lang == "python" and "def test_" in block.text and not block.note:
            pytest.fail(
                f"{block.where}: a block of tests needs `<!-- example: test file PATH -->` before it",
                pytrace=False,
            )
        run_block(block, tmp_path, env)


def test_blocks_are_found_with_their_lines_and_notes(tmp_path: Path) -> None:
    doc = tmp_path / "x.md"
    doc.write_text("# t\n\n<!-- example: not run: it serves forever -->\n```sh\nmcptape serve x\n```\n\n```json\n{}\n```\n"
                   "```python\nprint(1)\n```\n")  # fmt: skip
    found = blocks(doc)
    assert [(b.line, b.lang, b.note) for b in found] == [
        (4, "sh", "not run: it serves forever"),
        (11, "python", ""),
    ]
    assert found[1].text == "print(1)\n"


def test_a_failing_block_names_its_file_line_and_output(tmp_path: Path) -> None:
    env = sandbox(tmp_path)
    doc = tmp_path / "x.md"
    doc.write_text("# t\n\n```sh\necho before\nmcptape show no-such.jsonl\necho never\n```\n")
    (block,) = blocks(doc)
    with pytest.raises(pytest.fail.Exception) as info:
        run_block(block, tmp_path, env)
    message = str(info.value)
    assert f"{doc}:3 (sh block): the example failed (exit 2)" in message
    assert (
        "no such cassette" in message
        and "before" in message
        and "never\n" not in message.split("--- output ---")[1]
    )
