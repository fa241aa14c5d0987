"""The script of the GitHub Action (action.yml): `mcptape verify` as a CI gate.

Runs outside GitHub just as well: it reads its inputs from `MCPTAPE_*` environment variables
(action.yml maps the action's inputs onto them) and writes where GitHub's runner says:
`GITHUB_STEP_SUMMARY` (the markdown report), `GITHUB_OUTPUT` (exit-code, breaking,
differences, summary, report), `RUNNER_TEMP` (the new recordings and the JSON report).
Workflow commands (`::error::`) go to stdout. Exit status: 0 pass, 1 fail (per MCPTAPE_FAIL_ON),
2 verify could not run (the server did not start, ...).

    MCPTAPE_CASSETTES   folders, globs or files, separated by spaces or newlines (default: cassettes)
    MCPTAPE_SERVER      the server command, split like a shell would; or
    MCPTAPE_URL         a Streamable HTTP endpoint
    MCPTAPE_FAIL_ON     breaking (default) | differences | never
    MCPTAPE_NOISE_RUNS  extra re-drives to learn noise from (default 0)
    MCPTAPE_ARGS        more verify options, split like a shell would
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

FAIL_ON = ("breaking", "differences", "never")


def _env(name: str, default: str = "") -> str:
    return os.environ.get(name, "").strip() or default


def _append(path: str, text: str) -> None:
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(text)


def _escape(text: str) -> str:
    """A workflow command's message: %, CR and LF escaped as GitHub expects."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _outputs(path: str, values: dict[str, Any]) -> None:
    lines = []
    for key, value in values.items():
        text = str(value)
        if "\n" in text:
            lines.append(f"{key}<<MCPTAPE_EOF\n{text}\nMCPTAPE_EOF")
        else:
            lines.append(f"{key}={text}")
    _append(path, "\n".join(lines) + "\n")


def main() -> int:
    fail_on = _env("MCPTAPE_FAIL_ON", "breaking")
    if fail_on not in FAIL_ON:
        print(f"::error::mcptape: fail-on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        return 2
    server, url = shlex.split(_env("MCPTAPE_SERVER")), _env("MCPTAPE_URL")
    if bool(server) == bool(url):
        print("::error::mcptape: give the action either `server` (a command) or `url`")
        return 2
    work = Path(tempfile.mkdtemp(prefix="mcptape-verify-", dir=_env("RUNNER_TEMP") or None))
    report_path, markdown_path = work / "report.json", work / "report.md"
    cmd = [sys.executable, "-m", "mcptape", "verify", *_env("MCPTAPE_CASSETTES", "cassettes").split(),
           "--format", "json", "--markdown", str(markdown_path), "-o", str(work / "new")]  # fmt: skip
    noise = _env("MCPTAPE_NOISE_RUNS", "0")
    if noise != "0":
        cmd += ["--noise-runs", noise]
    cmd += shlex.split(_env("MCPTAPE_ARGS"))
    cmd += ["--url", url] if url else ["--", *server]
    print("$ " + shlex.join(cmd[1:]), flush=True)
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=_env("GITHUB_WORKSPACE") or None)
    sys.stderr.write(proc.stderr)
    summary_file, output_file = _env("GITHUB_STEP_SUMMARY"), _env("GITHUB_OUTPUT")
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        why = proc.stderr.strip() or f"mcptape verify exited {proc.returncode}"
        _append(summary_file, f"**mcptape verify could not run**\n\n```\n{why}\n```\n")
        _outputs(output_file, {"exit-code": proc.returncode, "breaking": 0, "differences": 0,
                               "summary": why.splitlines()[0], "report": ""})  # fmt: skip
        print(f"::error title=mcptape verify::{_escape(why)}")
        return 2
    report_path.write_text(proc.stdout, encoding="utf-8")
    report = json.loads(proc.stdout)
    markdown = markdown_path.read_text(encoding="utf-8")
    print(markdown, flush=True)
    _append(summary_file, markdown + "\n")
    breaking = int(report["counts"].get("breaking", 0))
    differences = len(report["differences"])
    _outputs(output_file, {"exit-code": proc.returncode, "breaking": breaking, "differences": differences,
                           "summary": report["summary"], "report": str(report_path)})  # fmt: skip
    for d in report["differences"]:
        level = "error" if d["kind"] == "breaking" else "warning"
        where = ", ".join(d.get("cassettes", [])) or report["a"]["name"]
        print(
            f"::{level} title=mcptape {d['kind']}: {_escape(d['exchange'])}::{_escape(d['path'] + ' ' + d['message'])} ({_escape(where)})"
        )
    failed = (fail_on == "breaking" and breaking > 0) or (
        fail_on == "differences" and proc.returncode == 1
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
