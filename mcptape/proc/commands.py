"""Server commands as the user meant them, wherever the process runs from.

`resolve_command` is what the pytest plugin and `use_cassette` do with `server=[...]`:
`python` (or `python3`) is the running interpreter, so a venv that is not activated still
runs the server with the test's packages; a relative path (`server.py`, `./bin/server`,
`src/server.js`) is looked up in each base folder in turn (the test file's folder, then the
rootdir) and made absolute where it exists; anything else is left as it is. `absolute_program`
is what `mcptape wrap` does with a host's `"command"`: an absolute path found on PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

PYTHONS = frozenset({"python", "python3", f"python3.{sys.version_info.minor}"})


def _looks_like_path(arg: str) -> bool:
    if not arg or arg.startswith("-") or "://" in arg or "=" in arg:
        return False
    return (
        "/" in arg
        or os.sep in arg
        or Path(arg).suffix in {".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".jar"}
    )


def _find(arg: str, bases: Sequence[Path]) -> str | None:
    if Path(arg).is_absolute():
        return None
    for base in bases:
        candidate = base / arg
        if candidate.exists():
            return str(candidate.resolve())
    return None


def resolve_command(
    command: Sequence[str], bases: Sequence[str | os.PathLike[str]] = ()
) -> list[str]:
    """`command` with `python` as the running interpreter and relative paths found under `bases`."""
    folders = [Path(b) for b in bases]
    out: list[str] = []
    for i, arg in enumerate(command):
        if i == 0 and arg in PYTHONS:
            out.append(sys.executable)
        elif (i == 0 and ("/" in arg or os.sep in arg)) or (i > 0 and _looks_like_path(arg)):
            out.append(_find(arg, folders) or arg)
        else:
            out.append(arg)
    return out


def absolute_program(program: str, path: str | None = None) -> str | None:
    """`program` as an absolute path: itself when absolute, else found on `path` (default PATH)."""
    if os.path.isabs(program):
        return program
    if "/" in program:
        return str(Path(program).resolve())
    return shutil.which(program, path=path)
