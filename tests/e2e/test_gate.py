"""End to end: `verify` and `diff` as a CI gate against a server whose answers hold the current time.

tests/servers/clock_server.py (the official `mcp` SDK) answers `now` with the epoch in
milliseconds (only two runs tell it is noise), `stamp` with a UUID and an ISO timestamp
(volatile by shape) and `greet` with a greeting its release 2 changes. Cassettes are
recorded through `mcptape record` with the official SDK client.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import Client, StdioServerParameters

from tests.conftest import mcptape_cmd
from tests.diff.text_table import text_rows

pytestmark = pytest.mark.e2e

CLOCK = Path(__file__).resolve().parents[1] / "servers" / "clock_server.py"
SERVER = (sys.executable, str(CLOCK))
NOW = ("tools/call now", "/result/content/0/text")
STAMP = ("tools/call stamp", "/result/content/0/text")
GREET = ("tools/call greet", "/result/content/0/text")


async def record_clock(path: Path, variant: str = "v1") -> Path:
    cmd = mcptape_cmd("record", "-q", "-o", str(path), "--", *SERVER)
    params = StdioServerParameters(
        command=cmd[0], args=cmd[1:], env={**os.environ, "CLOCK_SERVER_VARIANT": variant}
    )
    async with Client(params, mode="auto") as client:
        await client.list_tools()
        await client.call_tool("now", {})
        await client.call_tool("stamp", {})
        await client.call_tool("greet", {"name": "Ada"})
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gate")

    async def all_of_them() -> dict[str, Path]:
        with anyio.fail_after(90):
            return {name: await record_clock(root / f"{name}.jsonl", variant)
                    for name, variant in (("v1", "v1"), ("v1-again", "v1"), ("v2", "v2"))}  # fmt: skip

    return anyio.run(all_of_them)


def mcptape(*args: Any, variant: str = "v1") -> tuple[int, str, str]:
    env = {**os.environ, "CLOCK_SERVER_VARIANT": variant}
    proc = subprocess.run(
        mcptape_cmd(*map(str, args)), capture_output=True, text=True, timeout=120, env=env
    )
    return proc.returncode, proc.stdout, proc.stderr


def rows(report: dict[str, Any], key: str = "differences") -> list[tuple[str, str]]:
    return [(d["exchange"], d["path"]) for d in report[key]]


def test_without_noise_runs_the_clock_is_a_difference_and_the_stamp_is_masked(
    recorded: dict[str, Path],
) -> None:
    code, out, err = mcptape("verify", recorded["v1"], "--format", "json", "--", *SERVER)
    report = orjson.loads(out)
    assert code == 1, err
    assert rows(report) == [NOW]
    assert rows(report, "masked") == [STAMP]
    assert report["masked"][0]["message"] == "timestamp, uuid on both sides (masked)"


def test_noise_runs_learn_the_clock(recorded: dict[str, Path], tmp_path: Path) -> None:
    code, out, err = mcptape(
        "verify",
        recorded["v1"],
        "--noise-runs",
        "2",
        "-o",
        tmp_path,
        "--format",
        "json",
        "--",
        *SERVER,
    )
    report = orjson.loads(out)
    assert code == 0, out + err
    assert report["differences"] == [] and rows(report, "noise") == [NOW]
    assert "differs between 2 live runs" in report["noise"][0]["message"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["v1.jsonl", "v1.run-2.jsonl"]
    code, out, _ = mcptape("verify", recorded["v1"], "--noise-runs", "2", "--", *SERVER)
    assert (
        code == 0
        and out.splitlines()[0] == "equivalent"
        and "Noise (1, differs between runs" in out
    )


def test_a_real_change_beside_the_noise_still_fails(recorded: dict[str, Path]) -> None:
    code, out, err = mcptape(
        "verify",
        recorded["v1"],
        "--noise-runs",
        "2",
        "--format",
        "json",
        "--",
        *SERVER,
        variant="v2",
    )
    report = orjson.loads(out)
    assert code == 1, err
    assert rows(report) == [GREET] and rows(report, "noise") == [NOW]
    assert report["b"]["name"] == " ".join(
        SERVER
    )  # side B is the live command, not a temporary file


def test_diff_learns_noise_from_a_second_recording_of_a(recorded: dict[str, Path]) -> None:
    code, out, _ = mcptape("diff", recorded["v1"], recorded["v2"], "--format", "json")
    assert code == 1 and sorted(rows(orjson.loads(out))) == sorted([GREET, NOW])
    code, out, _ = mcptape(
        "diff", recorded["v1"], recorded["v2"], "--noise", recorded["v1-again"], "--format", "json"
    )
    report = orjson.loads(out)
    assert code == 1 and rows(report) == [GREET] and rows(report, "noise") == [NOW]
    code, out, _ = mcptape(
        "diff", recorded["v1"], recorded["v1-again"], "--noise", recorded["v1-again"]
    )
    assert code == 0 and out.splitlines()[0] == "equivalent"


def test_a_scoped_ignore_hides_one_tool_only(recorded: dict[str, Path], tmp_path: Path) -> None:
    code, out, _ = mcptape(
        "diff",
        recorded["v1"],
        recorded["v2"],
        "--ignore",
        "tools/call now:/result/content/0/text",
        "--format",
        "json",
    )
    assert code == 1 and rows(orjson.loads(out)) == [
        GREET
    ]  # greet's text is at the same path, and still shown
    code, out, _ = mcptape(
        "diff",
        recorded["v1"],
        recorded["v2"],
        "--ignore",
        "tools/call n*:/result",
        "--ignore",
        "tools/call:/result/content/0/text",
    )
    assert code == 0, out
    folder = tmp_path / "cassettes"
    folder.mkdir()
    a = shutil.copy(recorded["v1"], folder / "v1.jsonl")
    (folder / "mcptape-diff.toml").write_text(
        '# the clock tool answers with the time\nignore = ["tools/call now:/result/content/0/text"]\n'
    )
    code, out, _ = mcptape("diff", a, recorded["v1-again"])
    assert code == 0, out
    code, out, err = mcptape("verify", a, "--format", "json", "--", *SERVER, variant="v2")
    assert code == 1 and rows(orjson.loads(out)) == [GREET], err
    (folder / "mcptape-diff.toml").write_text('ignore = [\n  "/result",\n  "tools/call now",\n]\n')
    code, out, err = mcptape("diff", a, recorded["v1-again"])
    assert code == 2 and out == ""
    assert f"{folder / 'mcptape-diff.toml'}:3: ignore 'tools/call now': give a JSON pointer" in err


def test_four_cassettes_against_a_changed_server_give_one_report_each_finding_once(
    recorded: dict[str, Path], tmp_path: Path
) -> None:
    folder = tmp_path / "cassettes"
    for n in range(4):
        (folder / f"s{n}").mkdir(parents=True)
        shutil.copy(recorded["v1"], folder / f"s{n}" / "session.jsonl")
    out_dir = tmp_path / "new"
    code, out, err = mcptape(
        "verify",
        folder,
        "--noise-runs",
        "2",
        "-o",
        out_dir,
        "--format",
        "json",
        "--",
        *SERVER,
        variant="v2",
    )
    report = orjson.loads(out)
    assert code == 1, err
    assert rows(report) == [GREET] and report["summary"].startswith("behaviour differs: 1 changed")
    names = [str(folder / f"s{n}" / "session.jsonl") for n in range(4)]
    assert report["differences"][0]["cassettes"] == names == report["cassettes"]
    assert report["a"]["name"] == "4 cassettes" and report["b"]["name"] == " ".join(SERVER)
    assert len(list(out_dir.glob("*.jsonl"))) == 8  # two live runs of each, names kept apart
    code, text, _ = mcptape("verify", str(folder / "*" / "*.jsonl"), "--", *SERVER, variant="v2")
    wheres = [r["where"] for r in text_rows(text) if "tools/call greet" in r.get("where", "")]
    assert code == 1 and wheres == [
        "tools/call greet [session.jsonl, session.jsonl, session.jsonl +1 more]"
    ]


def test_verify_against_a_missing_command_exits_2(recorded: dict[str, Path]) -> None:
    code, out, err = mcptape("verify", recorded["v1"], "--", "/nonexistent/clock-server")
    assert code == 2 and out == "" and "cannot start '/nonexistent/clock-server'" in err
