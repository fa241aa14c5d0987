"""Benchmark plumbing: a raw ndjson stdio client, timing helpers, results."""

from __future__ import annotations

import atexit
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable
DEMO_SERVER = [PY, str(ROOT / "examples" / "demo_server.py")]
TRIVIAL_SERVER = [PY, str(ROOT / "bench" / "trivial_server.py")]


def compile_package(directory: Path) -> int:
    """Compiles a package's modules to bytecode, as installing it does; returns how many failed.

    Every row that starts a process (startup most) would otherwise time Python compiling the
    package from source whenever no bytecode is cached, which an installed package never does:
    with `PYTHONDONTWRITEBYTECODE` set (this machine sets it) and a tree just extracted by
    `--against`, every process compiled all of it, 10 ms of a 60 ms startup.
    """
    import compileall

    return 0 if compileall.compile_dir(str(directory), quiet=1) else 1


def scratch() -> Path:
    """A temporary directory for one suite's cassettes and scripts, removed when the bench exits."""
    tmp = Path(tempfile.mkdtemp(prefix="mcptape-bench-"))
    atexit.register(shutil.rmtree, tmp, True)
    return tmp


def mcptape(*args: str) -> list[str]:
    return [PY, "-m", "mcptape", *args]


SMOKE, QUICK, FULL = 0, 1, 2
"""Benchmark levels: smoke (seconds: proves every suite runs), quick (under a minute), full."""


def pick(level: int, smoke: Any, quick: Any, full: Any) -> Any:
    """The value for this level."""
    return (smoke, quick, full)[level]


@dataclass
class Row:
    """One target: the measured value, its baseline, the ratio and whether it meets the goal."""

    target: str
    value: float
    baseline: float | None
    unit: str
    goal: str
    ok: bool
    ratio: float | None = None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    spread: float | None = None
    """Run-to-run noise: half the range of the per-run ratios (or values) over their median,
    so a row reads "0.52x +- 6%". A change smaller than this is not a change."""


class StdioPeer:
    """A server process spoken to line by line over its pipes (no SDK, minimal client cost)."""

    def __init__(self, cmd: list[str], env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
        )
        assert self.proc.stdin and self.proc.stdout
        self.w = self.proc.stdin
        self.r = self.proc.stdout
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.w.write(orjson.dumps(msg) + b"\n")
        self.w.flush()
        while True:
            line = self.r.readline()
            if not line:
                raise RuntimeError(f"server closed the connection during {method}")
            reply = orjson.loads(line)
            if reply.get("id") == self.next_id and "method" not in reply:
                return reply  # type: ignore[no-any-return]

    def notify(self, method: str) -> None:
        self.w.write(orjson.dumps({"jsonrpc": "2.0", "method": method}) + b"\n")
        self.w.flush()

    def handshake(self) -> None:
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "1"},
            },
        )
        self.notify("notifications/initialized")

    def close(self) -> None:
        self.w.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def round_trips(
    peer: StdioPeer, n: int, method: str = "tools/call", params: dict[str, Any] | None = None
) -> list[float]:
    """Latencies (seconds) of n sequential requests."""
    params = params if params is not None else {"name": "echo", "arguments": {"message": "hi"}}
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        peer.request(method, params)
        lat.append(time.perf_counter() - t0)
    return lat


def rps(latencies: list[float]) -> float:
    return len(latencies) / sum(latencies)


def p99(latencies: list[float]) -> float:
    s = sorted(latencies)
    return s[min(len(s) - 1, int(len(s) * 0.99))]


class Medians(dict[str, float]):
    """Each variant's median, with every run kept (`runs`) for the spread."""

    def __init__(self, runs: dict[str, list[float]]) -> None:
        super().__init__({k: statistics.median(v) for k, v in runs.items()})
        self.runs = runs

    def spread(self, variant: str, baseline: str | None = None) -> float:
        """The noise of `variant` (over `baseline`, run by run, when given); see `Row.spread`."""
        values = self.runs[variant]
        if baseline is not None:
            values = [a / b for a, b in zip(values, self.runs[baseline], strict=True) if b]
        return spread(values)


def spread(values: list[float]) -> float:
    """Half the range of `values` over their median (0 for a single run)."""
    mid = statistics.median(values) if values else 0
    return (max(values) - min(values)) / 2 / mid if len(values) > 1 and mid else 0.0


def interleaved(runs: int, variants: dict[str, Callable[[], float]]) -> Medians:
    """Runs each variant `runs` times, alternating (A B A B ...), and returns the medians.

    Alternating spreads the machine's noise over all variants alike; the runs are kept for
    the spread each row reports.
    """
    values: dict[str, list[float]] = {k: [] for k in variants}
    for _ in range(runs):
        for name, fn in variants.items():
            values[name].append(fn())
    return Medians(values)


def env_without_coverage() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("COVERAGE_PROCESS_START", None)
    return env
