"""`make demo`: mcptape's main jobs on the bundled example server.

1. Records a session between the official `mcp` SDK client (examples/demo_client.py) and
   the example server (examples/demo_server.py) through `mcptape record`, into
   cassettes/demo.jsonl, and shows its timeline.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
CASSETTE = ROOT / "cassettes" / "demo.jsonl"


def step(title: str, cmd: list[str]) -> None:
    print(f"\n=== {title}\n$ {' '.join(_short(c) for c in cmd)}", flush=True)
    subprocess.run(cmd, check=True, cwd=ROOT)


def _short(arg: str) -> str:
    return "python" if arg == PY else arg.replace(str(ROOT) + "/", "")


def main() -> None:
    mcptape = [PY, "-m", "mcptape"]
    server = [PY, "examples/demo_server.py"]
    client = [PY, "examples/demo_client.py"]
    step("1. record a session (SDK client -> mcptape record -> SDK server)",
         [*client, "--", *mcptape, "record", "-o", str(CASSETTE), "--", *server])  # fmt: skip
    step("2. show its timeline", [*mcptape, "show", str(CASSETTE)])


if __name__ == "__main__":
    main()
