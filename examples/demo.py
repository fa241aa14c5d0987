"""`make demo`: mcptape's three jobs on the bundled example server and the golden cassettes.

1. Record: the official `mcp` SDK client (examples/demo_client.py) talks to the example
   server (examples/demo_server.py) through `mcptape record`, into cassettes/demo.jsonl.
2. Show the session's timeline.
3. Replay: the same client against `mcptape replay cassettes/demo.jsonl`: same answers,
   no server. Then a golden cassette of the reference server-everything, replayed without node.
4. Diff: two golden cassettes of the same SDK server in two protocol eras are equivalent in
   behaviour; a second release of the demo server (`demo_server.py --v2`) is not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
OUT = Path(os.environ.get("MCPTAPE_DEMO_DIR", ROOT / "cassettes"))


def step(title: str, cmd: list[str], ok: tuple[int, ...] = (0,)) -> None:
    print(f"\n=== {title}\n$ {' '.join(_short(c) for c in cmd)}", flush=True)
    code = subprocess.run(cmd, cwd=ROOT).returncode
    if code not in ok:
        sys.exit(f"demo: step failed with exit code {code}")


def _short(arg: str) -> str:
    return "python" if arg == PY else arg.replace(str(ROOT) + "/", "")


def main() -> None:
    mcptape = [PY, "-m", "mcptape"]
    server = [PY, "examples/demo_server.py"]
    client = [PY, "examples/demo_client.py"]
    v1, v2 = str(OUT / "demo.jsonl"), str(OUT / "demo-v2.jsonl")
    golden = "cassettes/python-sdk"
    step("1. record a session (SDK client -> mcptape record -> SDK server)",
         [*client, "--", *mcptape, "record", "-q", "-o", v1, "--", *server])  # fmt: skip
    step("2. show its timeline", [*mcptape, "show", v1])
    step(
        "3a. replay it: the same client, no server behind it",
        [*client, "--", *mcptape, "replay", "-q", v1],
    )
    step("3b. replay a golden cassette of the reference server-everything (no node needed)",
         [PY, "scripts/golden_session.py", "everything", "auto", "--", *mcptape, "replay", "-q",
          "cassettes/everything/2025-11-25/stdio.jsonl"])  # fmt: skip
    step("4a. diff the SDK server in two protocol eras (legacy 2025-11-25 vs 2026-07-28): equivalent",
         [*mcptape, "diff", f"{golden}/2025-11-25/stdio.jsonl", f"{golden}/2026-07-28/stdio.jsonl"])  # fmt: skip
    step("4b. record release 2 of the demo server",
         [*client, "--", *mcptape, "record", "-q", "-o", v2, "--", *server, "--v2"])  # fmt: skip
    step(
        "4c. diff release 1 against release 2 (exit 1: behaviour changed)",
        [*mcptape, "diff", v1, v2],
        ok=(1,),
    )
    print("\ndemo: done. Cassettes are in", _short(str(OUT)))


if __name__ == "__main__":
    main()
