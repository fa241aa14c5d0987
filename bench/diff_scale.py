"""How long `mcptape diff` takes on two cassettes of 10,000 exchanges with a few hundred differences.

    python bench/diff_scale.py [EXCHANGES] [EVERY]

Builds two synthetic legacy stdio cassettes (a handshake, tools/list, then EXCHANGES
tools/call exchanges, each with two progress notifications and a log line), where B
differs from A in every EVERY-th result text and every (EVERY*3)-th error code, and uses
other ids and progress tokens throughout. Times reading both files, the diff, and each
renderer, and prints the numbers. The target is under 2 s for load + diff.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from mcptape.cassette import load
from mcptape.diff.engine import diff_cassettes
from mcptape.diff.report import render_json, render_markdown, render_text

HEADER = {"mcptape_cassette": 1, "mcptape_version": "0.1.0", "transport": "stdio", "target": {"command": ["bench"]},
          "recorded_at": "2026-01-01T00:00:00Z", "redaction": {}}  # fmt: skip


def build(n: int, every: int, variant: bool) -> bytes:
    """One cassette: B (`variant`) has other ids and tokens and the planted differences."""
    lines: list[bytes] = [orjson.dumps(HEADER)]
    seq = 0

    def emit(who: str, msg: Any) -> None:
        nonlocal seq
        seq += 1
        lines.append(
            orjson.dumps({"seq": seq, "t": seq / 1000, "kind": "message", "from": who, "msg": msg})
        )

    off = 100_000 if variant else 0
    emit(
        "client",
        {
            "jsonrpc": "2.0",
            "id": off,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "b", "version": "1"},
            },
        },
    )
    emit(
        "server",
        {
            "jsonrpc": "2.0",
            "id": off,
            "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "bench", "version": "1"},
            },
        },
    )
    emit("client", {"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = [{"name": f"tool{i}", "description": f"Tool number {i}", "inputSchema": {"type": "object", "properties": {
        "x": {"type": "integer"}, "note": {"type": "string"}}, "required": ["x"]}} for i in range(50)]  # fmt: skip
    emit("client", {"jsonrpc": "2.0", "id": off + 1, "method": "tools/list"})
    emit("server", {"jsonrpc": "2.0", "id": off + 1, "result": {"tools": tools}})
    for i in range(n):
        rid, token = off + 2 + i, f"tok-{variant}-{i}"
        emit(
            "client",
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {
                    "name": f"tool{i % 50}",
                    "arguments": {"x": i, "note": "lorem ipsum " * 4},
                    "_meta": {"progressToken": token},
                },
            },
        )
        emit(
            "server",
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 1, "total": 2},
            },
        )
        emit(
            "server",
            {
                "jsonrpc": "2.0",
                "method": "notifications/message",
                "params": {"level": "info", "data": f"working on {i}"},
            },
        )
        emit(
            "server",
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": token, "progress": 2, "total": 2},
            },
        )
        if i % (every * 3) == 1:
            emit(
                "server",
                {
                    "jsonrpc": "2.0",
                    "id": rid,
                    "error": {"code": -32001 if variant else -32000, "message": "no"},
                },
            )
            continue
        text = f"result {i}" + (" (changed)" if variant and i % every == 0 else "")
        emit("server", {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": False,
                                                                 "structuredContent": {"value": text}}})  # fmt: skip
    seq += 1
    lines.append(orjson.dumps({"seq": seq, "t": seq / 1000, "kind": "end"}))
    return b"\n".join(lines) + b"\n"


def run_once(pa: Path, pb: Path) -> tuple[dict[str, float], Any]:
    t0 = time.perf_counter()
    a, b = load(pa), load(pb)
    t1 = time.perf_counter()
    report = diff_cassettes(a, b)
    t2 = time.perf_counter()
    times = {"load": t1 - t0, "diff": t2 - t1, "load+diff": t2 - t0}
    for name, render in (
        ("text", render_text),
        ("markdown", render_markdown),
        ("json", render_json),
    ):
        r0 = time.perf_counter()
        render(report)
        times[f"render {name}"] = time.perf_counter() - r0
    return times, report


def main(n: int = 10_000, every: int = 40, rounds: int = 3) -> dict[str, float]:
    """Best of `rounds` (the machine may be shared); prints every round's load + diff."""
    gc.disable()  # as `mcptape diff` does: a short-lived process with many small objects
    with tempfile.TemporaryDirectory() as tmp:
        pa, pb = Path(tmp) / "a.jsonl", Path(tmp) / "b.jsonl"
        pa.write_bytes(build(n, every, False))
        pb.write_bytes(build(n, every, True))
        size = pa.stat().st_size + pb.stat().st_size
        runs = []
        for _ in range(rounds):
            times, report = run_once(pa, pb)
            runs.append(times)
            gc.collect()
    best = min(runs, key=lambda t: t["load+diff"])
    print(f"{n} exchanges per cassette ({size / 1e6:.1f} MB in all), {len(report.differences)} differences "
          f"({report.counts()}), {len(report.envelope)} envelope rows")  # fmt: skip
    print(
        f"  rounds (load+diff): {', '.join(f'{t["load+diff"] * 1000:.0f} ms' for t in runs)}; best:"
    )
    for k, v in best.items():
        print(f"  {k:16} {v * 1000:8.1f} ms")
    verdict = "OK" if best["load+diff"] < 2.0 else "SLOW"
    print(f"  {verdict}: load + diff {'<' if verdict == 'OK' else '>='} 2 s")
    return best


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
