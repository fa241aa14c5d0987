"""Shared bits of the reliability tests: cassettes built by hand, mcptape's CLI in process, RSS."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cli import main
from tests.conftest import ROOT, mcptape_cmd

GOLDEN = sorted(
    p
    for p in [
        *(ROOT / "cassettes").rglob("*.jsonl"),
        *(ROOT / "examples" / "cassettes").rglob("*.jsonl"),
    ]
    if not p.name.startswith(
        "demo"
    )  # cassettes/demo*.jsonl are what `make demo` writes, not committed
)
"""Every cassette the project ships: recorded from real servers, so they must check clean."""

HEADER = {
    "mcptape_cassette": 1, "mcptape_version": "0.1.0", "transport": "stdio",
    "target": {"command": ["server"]}, "recorded_at": "2026-12-01T00:00:00.000Z",
    "redaction": {"enabled": True, "marker": "[REDACTED]", "keys": [], "patterns": []},
}  # fmt: skip


def event_lines(*events: dict[str, Any]) -> list[bytes]:
    """Event dicts (without seq/t) numbered as a recorder would."""
    return [orjson.dumps({"seq": i, "t": i / 1000, **e}) for i, e in enumerate(events, start=1)]


def write_cassette(
    path: Path, *events: dict[str, Any], header: dict[str, Any] | None = None, end: bool = True
) -> Path:
    """A cassette file: the header, the events, and the end marker unless `end` is False."""
    events_ = [*events, {"kind": "end"}] if end else list(events)
    lines = [orjson.dumps(header or HEADER), *event_lines(*events_)]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def client(msg: Any, **extra: Any) -> dict[str, Any]:
    return {"kind": "message", "from": "client", "msg": msg, **extra}


def server(msg: Any, **extra: Any) -> dict[str, Any]:
    return {"kind": "message", "from": "server", "msg": msg, **extra}


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """`mcptape ARGS` in this process: (exit code, stdout, stderr)."""
    code = 0
    try:
        main(list(args))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


def rss_kib(pid: int) -> int:
    """Resident memory of a process (VmRSS), in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for pid {pid}")


def slow_enabled() -> bool:
    return os.environ.get("MCPTAPE_SLOW") == "1"


SLOW_REASON = "a long soak/load variant: set MCPTAPE_SLOW=1 to run it (CI runs the quick variant)"


def lines_of(path: Path) -> Iterable[Any]:
    """A cassette's lines parsed one by one, without loading it whole."""
    with path.open("rb") as f:
        for line in f:
            yield orjson.loads(line)


def start_recorder(upstream_url: str, cassette: Path) -> tuple[subprocess.Popen[str], str]:
    """`mcptape record --http` in front of `upstream_url`; returns it and the URL clients use."""
    cmd = mcptape_cmd(
        "record",
        "--http",
        "--upstream",
        upstream_url,
        "--listen",
        "127.0.0.1:0",
        "-o",
        str(cassette),
    )
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:  # ends when the recorder does: bounded by the recorder, not a sleep
        m = re.match(r"^mcptape record: proxying (\S+) -> ", line.strip())
        if m:
            return proc, m.group(1)
    raise AssertionError(f"the recorder exited ({proc.wait()}) without announcing its URL")
