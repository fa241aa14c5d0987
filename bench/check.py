"""`mcptape check` on cassettes of long strings: time against size (it must be linear, and fast
enough for a pre-commit hook), with parsing the same lines as the baseline (the floor)."""

from __future__ import annotations

import random
import time

import orjson

from mcptape.check import check_bytes

from .common import Row, pick

HEADER = {"mcptape_cassette": 1, "mcptape_version": "0.1.0", "transport": "stdio", "target": {"command": ["srv"]},
          "recorded_at": "2026-12-01T00:00:00.000Z", "redaction": {"enabled": True, "marker": "[REDACTED]"}}  # fmt: skip
PROSE = [
    "lorem",
    "ipsum",
    "dolor",
    "sit",
    "amet",
    "consectetur",
    "adipiscing",
    "elit",
    "sed",
    "do",
    "eiusmod",
    "tempor",
    "incididunt",
    "ut",
    "labore",
    "et",
    "dolore",
    "magna",
    "aliqua",
    "enim",
    "ad",
    "minim",
    "veniam",
    "quis",
    "nostrud",
    "exercitation",
    "ullamco",
    "laboris",
    "nisi",
    "aliquip",
    "ex",
    "ea",
    "commodo",
    "consequat",
    "duis",
    "aute",
    "irure",
    "in",
    "reprehenderit",
    "voluptate",
    "velit",
    "esse",
    "cillum",
    "fugiat",
    "nulla",
    "pariatur",
]
RARE = [
    "token",
    "key=value",
    "auth:",
    "url=https://example.invalid/path?page=2",
    "id:42",
    "QUJDREVGR0hJSktMTU5PUFFSU1RVVg==",
]
"""A log's words: prose, and one in a hundred a word the secret rules look at twice."""


def cassette(megabytes: int, string_mb: int = 1) -> bytes:
    """A cassette of `megabytes` MB whose results each hold one string of `string_mb` MB of log-like text."""
    rng = random.Random(14)
    words = (
        rng.choice(RARE) if rng.random() < 0.01 else rng.choice(PROSE)
        for _ in range(string_mb * 1_000_000 // 5)
    )
    chunk = " ".join(words)[: string_mb * 1_000_000]
    lines = [orjson.dumps(HEADER)]
    for i in range(max(1, megabytes // (2 * string_mb))):
        call = {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": "log", "arguments": {}},
        }
        lines.append(
            orjson.dumps(
                {"seq": 2 * i + 1, "t": i, "kind": "message", "from": "client", "msg": call}
            )
        )
        result = {
            "jsonrpc": "2.0",
            "id": i,
            "result": {"content": [{"type": "text", "text": chunk}]},
        }
        lines.append(
            orjson.dumps(
                {"seq": 2 * i + 2, "t": i, "kind": "message", "from": "server", "msg": result}
            )
        )
        lines.append(
            orjson.dumps(
                {"seq": 2 * i + 3, "t": i, "kind": "stderr", "from": "server", "text": chunk}
            )
        )
    lines.append(orjson.dumps({"seq": 10**9, "t": 0, "kind": "end"}))
    return b"\n".join(lines) + b"\n"


def _time(fn: object, data: bytes) -> float:
    start = time.perf_counter()
    fn(data)  # type: ignore[operator]
    return time.perf_counter() - start


def _parse(data: bytes) -> None:
    for line in data.splitlines():
        orjson.loads(line)


def check_suite(level: int) -> list[Row]:
    size = pick(level, 4, 20, 100)
    rows: list[Row] = []
    per_mb: list[float] = []
    for mb in (size // 2, size):
        data = cassette(mb)
        real_mb = len(data) / 1e6
        seconds = _time(lambda d: check_bytes(d, frozenset({"protocol"})), data)
        baseline = _time(_parse, data)
        per_mb.append(seconds / real_mb)
        rows.append(Row(f"check {real_mb:.0f} MB of long strings", seconds, baseline, "s",
                        "under 1 s per 10 MB", seconds / real_mb < 0.1, seconds / baseline,
                        note=f"{real_mb / seconds:.0f} MB/s; parsing alone is the baseline"))  # fmt: skip
    growth = per_mb[1] / per_mb[0]
    rows.append(Row("check: time per MB, double size / single", growth, None, "x", "linear: under 1.3x", growth < 1.3,
                    note=f"{per_mb[0] * 1000:.0f} then {per_mb[1] * 1000:.0f} ms per MB"))  # fmt: skip
    return rows
