"""End to end over stdio: `mcptape replay` sends each request the recorded logs of the level it
asked for, none to a 2026-07-28 request that asked for none, and says once on stderr when a
client asks for more than the cassette holds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest

from mcptape.cassette import dumps
from tests.conftest import mcptape_cmd
from tests.replay.tape import LEGACY_INIT, call, meta, note, ok, req, tape

pytestmark = pytest.mark.e2e

LEVEL = "io.modelcontextprotocol/logLevel"


def log(level: str) -> dict[str, object]:
    return note("notifications/message", {"level": level, "data": f"at {level}"})


def test_stdio_replay_filters_the_recorded_logs_by_the_clients_level(tmp_path: Path) -> None:
    path = tmp_path / "logged.jsonl"
    recorded = meta(**{LEVEL: "info"})
    path.write_bytes(dumps(tape(("c", call(1, "count", _meta=recorded)), ("s", log("info")),
                                ("s", log("error")), ("s", ok(1, {"content": []})))))  # fmt: skip
    asked = [
        call(2, "count", _meta=meta()),
        call(3, "count", _meta=meta(**{LEVEL: "warning"})),
        call(4, "count", _meta=meta(**{LEVEL: "debug"})),
        call(5, "count", _meta=meta(**{LEVEL: "debug"})),
    ]
    proc = subprocess.run(
        mcptape_cmd("replay", "--allow-repeats", str(path)),
        input=b"".join(orjson.dumps(m) + b"\n" for m in asked),
        capture_output=True,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    got = [orjson.loads(ln) for ln in proc.stdout.splitlines()]
    by_answer: list[list[str]] = [[]]
    for msg in got:
        if "id" in msg:
            by_answer.append([])
        else:
            by_answer[-1].append(msg["params"]["level"])
    assert [m["id"] for m in got if "id" in m] == [2, 3, 4, 5]
    assert by_answer[:4] == [[], ["error"], ["info", "error"], ["info", "error"]]
    assert proc.stderr.decode().count("the cassette holds only logs at level info and above") == 1


def test_stdio_replay_of_a_legacy_client_follows_its_set_level(tmp_path: Path) -> None:
    path = tmp_path / "legacy.jsonl"
    path.write_bytes(dumps(tape(*LEGACY_INIT, ("c", call(2, "count")), ("s", log("debug")),
                                ("s", log("warning")), ("s", ok(2, {"content": []})))))  # fmt: skip
    asked = [LEGACY_INIT[0][1], LEGACY_INIT[2][1], req(5, "logging/setLevel", {"level": "info"}),
             call(6, "count")]  # fmt: skip
    proc = subprocess.run(
        mcptape_cmd("replay", str(path)),
        input=b"".join(orjson.dumps(m) + b"\n" for m in asked),
        capture_output=True,
        timeout=30,
    )
    got = [orjson.loads(ln) for ln in proc.stdout.splitlines()]
    assert [m["params"]["level"] for m in got if m.get("method") == "notifications/message"] == [
        "warning"
    ]
    assert got[-1]["id"] == 6 and "result" in got[-1]
