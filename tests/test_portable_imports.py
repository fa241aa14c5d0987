"""mcptape loads where the POSIX-only modules do not exist (Windows): they are imported only by
the functions that use them. A child interpreter hides them, as Windows would, then imports
every module of the package and runs the commands that need no process: show, diff, check, fmt.

Only mcptape's own imports are held to this: a library that picks its POSIX imports by
`sys.platform` (the mcp SDK's stdio server) still asks for them here, on Linux.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

POSIX_ONLY = ("fcntl", "termios", "tty", "pty", "resource")
CASSETTE = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "stdio.jsonl"
OTHER = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "streamable-http.jsonl"

SCRIPT = """
import sys

HIDDEN = set(sys.argv[1].split(","))


class Windows:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Windows())
for name in HIDDEN:
    sys.modules.pop(name, None)

import importlib
import os
import pkgutil
import traceback

import mcptape

PACKAGE = os.path.dirname(mcptape.__file__)
failed = []
for module in pkgutil.walk_packages(mcptape.__path__, "mcptape."):
    if module.name == "mcptape.__main__":  # runs the CLI: the commands below run it
        continue
    try:
        importlib.import_module(module.name)
    except ModuleNotFoundError as exc:
        importer = [f for f in traceback.extract_tb(exc.__traceback__)
                    if not f.filename.startswith("<") and f.name != "find_spec"][-1]
        if exc.name in HIDDEN and importer.filename.startswith(PACKAGE):
            failed.append(f"{module.name}: {exc} ({importer.filename}:{importer.lineno})")
leaked = sorted(HIDDEN & set(sys.modules))
print("imports:", failed or "ok", leaked or "")

from mcptape.cli import main

cassette, other, copy = sys.argv[2:5]
for args in (["show", cassette], ["diff", cassette, other], ["check", cassette], ["fmt", copy]):
    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = exc.code
    print(args[0], code, flush=True)
"""


def test_every_module_imports_and_the_file_commands_run_without_posix_modules(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "copy.jsonl"
    shutil.copy(CASSETTE, copy)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, ",".join(POSIX_ONLY), str(CASSETTE), str(OTHER), str(copy)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 0, proc.stderr
    assert lines[0] == "imports: ok ", proc.stdout
    results = [line for line in lines[1:] if line.split()[0] in ("show", "diff", "check", "fmt")]
    assert results == ["show 0", "diff 0", "check 0", "fmt 0"], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
