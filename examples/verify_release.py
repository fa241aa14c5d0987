"""Check a new release of a server against last release's recorded session: `mcptape verify`.

    python examples/verify_release.py

`mcptape verify CASSETTE -- SERVER...` re-sends the cassette's requests to the live server
(fresh ids; the server's questions answered with the recorded answers), records the new
session and diffs it against the cassette. Exit 0: same behaviour; 1: it changed.
Here: the golden cassette of the example server, verified against release 1 (equivalent)
and release 2 (`--v2`: a tool removed, a new required argument, a changed result...).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl"
SERVER = [sys.executable, str(ROOT / "examples" / "demo_server.py")]


def verify(*extra: str) -> int:
    cmd = [sys.executable, "-m", "mcptape", "verify", str(CASSETTE), "--", *SERVER, *extra]
    print(
        "$ mcptape verify",
        CASSETTE.relative_to(ROOT),
        "-- python examples/demo_server.py",
        *extra,
        flush=True,
    )
    return subprocess.run(cmd).returncode


def main() -> None:
    same = verify()
    print(f"-> exit {same}\n", flush=True)
    changed = verify("--v2")
    print(f"-> exit {changed}")
    if (same, changed) != (0, 1):
        sys.exit("unexpected exit codes")


if __name__ == "__main__":
    main()
