"""Property: a golden cassette with one field of the wrong type anywhere (a string `serverInfo`,
a bool `tools`, a string HTTP status, bad base64, a list where an object goes...) never makes a
reading command crash. Every command (check, show, diff, replay, serve, redact, fmt, prune,
verify) either works or fails with one line that names the file and the real line."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mcptape.cassette import load
from mcptape.errors import McpTapeError
from mcptape.replay.engine import ReplayConfig
from mcptape.replay.http.app import HttpReplayApp
from mcptape.replay.server_stdio import StdioReplayServer

from .helpers import GOLDEN, run_cli

LINES = {p: p.read_bytes().splitlines() for p in GOLDEN}
WRONG = [
    "abc",
    "",
    0,
    -1,
    10**30,
    1.5,
    True,
    False,
    None,
    [],
    ["x"],
    [1, 2],
    {},
    {"a": 1},
    "=?base64?!!?=",
]


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place inside a JSON value (keys and indices), the value itself excluded."""
    out: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out.append((*prefix, k))
            out.extend(paths(v, (*prefix, k)))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out.append((*prefix, i))
            out.extend(paths(v, (*prefix, i)))
    return out


def put(value: Any, path: tuple[Any, ...], new: Any) -> None:
    for step in path[:-1]:
        value = value[step]
    value[path[-1]] = new


@st.composite
def mutated(draw: Any) -> tuple[Path, int, bytes]:
    """(golden cassette, line number, that line with one value replaced by one of another type)."""
    golden = draw(st.sampled_from(sorted(LINES)))
    lines = LINES[golden]
    lineno = draw(st.integers(1, len(lines)))
    obj = orjson.loads(lines[lineno - 1])
    where = draw(st.sampled_from(paths(obj)))
    current = obj
    for step in where:
        current = current[step]
    new = draw(
        st.sampled_from(
            [
                w
                for w in WRONG
                if type(w) is not type(current) or (isinstance(w, str) and w != current)
            ]
        )
    )
    put(obj, where, new)
    return (
        golden,
        lineno,
        json.dumps(obj).encode(),
    )  # json: 10**30 is valid JSON, beyond orjson's 64 bits


def _one_line_error(err: str, path: Path) -> None:
    assert "internal error" not in err and "Traceback" not in err, err
    errors = [ln for ln in err.splitlines() if ln.startswith("mcptape: error:")]
    assert len(errors) <= 1, err
    for line in errors:
        if "malformed" in line or "not a cassette" in line:
            assert re.search(re.escape(str(path)) + r":\d+: ", line), line


@pytest.mark.e2e
@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=mutated())
@example(  # `redact` once crashed on it ("'int' object is not iterable"): found every run
    case=(
        GOLDEN[0],
        1,
        json.dumps({**orjson.loads(LINES[GOLDEN[0]][0]), "redaction": {"keys": -1}}).encode(),
    )
)
def test_every_reading_command_survives_a_wrong_type_anywhere(
    case: tuple[Path, int, bytes], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    golden, lineno, line = case
    lines = list(LINES[golden])
    lines[lineno - 1] = line
    path = tmp_path / "mutated.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    out = tmp_path / "out.jsonl"
    for args in (
        ["check", str(path)], ["show", str(path)], ["diff", str(golden), str(path)], ["diff", str(path), str(golden)],
        ["replay", "--dry-run", "--fault", '{"action": "drop"}', str(path)],
        ["redact", str(path), "-o", str(out)], ["fmt", "--check", str(path)],
        ["prune", str(path), "--keep", "tools/list", "-o", str(out)],
        ["verify", str(path), "--", "/no/such/server"],
    ):  # fmt: skip
        code, _, err = run_cli(capsys, *args)
        assert code in (0, 1, 2), (args, code, err)
        _one_line_error(err, path)
    try:
        cassette = load(path)
    except McpTapeError as exc:
        _one_line_error(f"mcptape: error: {exc}", path)
        return
    HttpReplayApp(cassette, ReplayConfig(), on_note=None)  # what `serve` builds before it listens
    client_lines = [
        orjson.dumps(e.msg) + b"\n"
        for e in cassette.events
        if e.kind == "message" and str(e.src) == "client"
    ]
    rin, win = os.pipe()
    rout, wout = os.pipe()
    data = b"".join(client_lines)[
        :60000
    ]  # within the pipe's buffer: written before the replay reads
    os.write(win, data)
    os.close(win)
    try:
        StdioReplayServer(cassette, ReplayConfig(), quiet=True, stdin_fd=rin, stdout_fd=wout).run()
    finally:
        os.close(wout)
        os.close(rin)
        with os.fdopen(rout, "rb") as f:
            f.read()
