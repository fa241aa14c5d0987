"""Two recordings of the same release of a real server diff equivalent, in every format.

The recordings are in cassettes/runs/ (scripts/record-runs): server-everything, two
releases, and the official SDK's server in both protocol eras, each recorded twice with
the official SDK client. The tools/list_changed race of server-everything is built in both
orders from a real recording: the notification before the client's `logging/setLevel`, or
between that request and its answer.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.conftest import mcptape_cmd

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
RUNS = ROOT / "cassettes" / "runs"
RELEASES = sorted(p.parent for p in RUNS.glob("*/*/run-1.jsonl"))
ERAS = {"everything": ("legacy", "2025-11-25"), "python-sdk/2025-11-25": ("legacy", "2025-11-25"),
        "python-sdk/2026-07-28": ("modern", "2026-07-28")}  # fmt: skip
FORMATS = ("text", "markdown", "json")


def diff(*args: Any) -> tuple[int, str, str]:
    proc = subprocess.run(
        mcptape_cmd("diff", *map(str, args)), capture_output=True, text=True, timeout=60
    )
    return proc.returncode, proc.stdout, proc.stderr


def test_there_are_two_releases_of_server_everything_and_both_sdk_eras() -> None:
    names = [str(p.relative_to(RUNS)) for p in RELEASES]
    assert len([n for n in names if n.startswith("everything/")]) == 2
    assert {"python-sdk/2025-11-25", "python-sdk/2026-07-28"} <= set(names)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("release", RELEASES, ids=lambda p: str(p.relative_to(RUNS)))
def test_two_runs_of_one_release_are_equivalent(release: Path, fmt: str) -> None:
    code, out, err = diff(release / "run-1.jsonl", release / "run-2.jsonl", "--format", fmt)
    assert code == 0, out + err
    era, version = next(v for k, v in ERAS.items() if str(release.relative_to(RUNS)).startswith(k))
    if fmt == "json":
        report = orjson.loads(out)
        assert report["equivalent"] and report["differences"] == []
        assert (report["a"]["era"], report["a"]["protocol_version"]) == (
            era,
            version,
        )  # what was negotiated
    else:
        assert "equivalent" in out.splitlines()[0]
        assert f"({era} {version}," in out


def _events(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = [orjson.loads(x) for x in path.read_bytes().splitlines()]
    return lines[0], lines[1:]


def _write(path: Path, header: dict[str, Any], events: list[dict[str, Any]]) -> Path:
    renumbered = [{**e, "seq": i} for i, e in enumerate(events, 1)]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in [header, *renumbered]))
    return path


def _race(recording: Path, out: Path, before: bool) -> Path:
    """The recording with a `logging/setLevel` after the handshake and every tools/list_changed
    moved next to it: before its request (`before`), or between the request and its answer."""
    header, events = _events(recording)
    changed = [
        e
        for e in events
        if (e.get("msg") or {}).get("method") == "notifications/tools/list_changed"
    ]
    assert changed, "server-everything sends tools/list_changed: the recording should hold some"
    rest = [e for e in events if e not in changed]
    at = (
        next(
            i
            for i, e in enumerate(rest)
            if (e.get("msg") or {}).get("method") == "notifications/initialized"
        )
        + 1
    )
    t = rest[at - 1]["t"]
    ask = {"t": t, "kind": "message", "from": "client",
           "msg": {"jsonrpc": "2.0", "id": 900, "method": "logging/setLevel", "params": {"level": "info"}}}  # fmt: skip
    answer = {
        "t": t,
        "kind": "message",
        "from": "server",
        "msg": {"jsonrpc": "2.0", "id": 900, "result": {}},
    }
    notes = [{**e, "t": t} for e in changed[: 1 if before else 2]]
    block = [*notes, ask, answer] if before else [ask, *notes, answer]
    return _write(out, header, rest[:at] + block + rest[at:])


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_list_changed_race_of_server_everything_is_not_a_difference(
    tmp_path: Path, fmt: str
) -> None:
    recording = RUNS / "everything" / "2026.8.31" / "run-1.jsonl"
    early = _race(recording, tmp_path / "early.jsonl", before=True)
    late = _race(recording, tmp_path / "late.jsonl", before=False)
    for a, b in ((early, late), (late, early), (recording, late)):
        code, out, err = diff(a, b, "--format", fmt)
        assert code == 0, out + err
        assert (
            ("equivalent" in out.splitlines()[0])
            if fmt != "json"
            else orjson.loads(out)["differences"] == []
        )


def test_a_list_changed_signal_lost_is_still_a_difference(tmp_path: Path) -> None:
    recording = RUNS / "everything" / "2026.8.31" / "run-1.jsonl"
    header, events = _events(recording)
    silent = [
        e
        for e in events
        if (e.get("msg") or {}).get("method") != "notifications/tools/list_changed"
    ]
    code, out, _ = diff(
        recording, _write(tmp_path / "silent.jsonl", header, silent), "--format", "json"
    )
    report = orjson.loads(out)
    assert code == 1
    assert [(d["exchange"], d["change"]) for d in report["differences"]] == [
        ("(server notifications)", "removed")
    ]
