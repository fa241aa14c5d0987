"""End to end: the official `mcp` SDK client records the demo server, then `mcptape diff` compares.

Recorded once per module: release 1 twice in each era, release 2 in each era.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest
from mcp import Client, MCPError, StdioServerParameters

from mcptape.cassette import dumps, load
from tests.conftest import DEMO_SERVER, mcptape_cmd
from tests.diff.text_table import text_rows
from tests.sdk_helpers import accept_name

pytestmark = pytest.mark.e2e

MODES = {"legacy": "legacy", "modern": "auto"}

V1_TO_V2 = {
    ("tools", "cosmetic", "tool add", "/tools/add/description"),
    ("tools", "cosmetic", "tool echo", "/tools/echo/description"),
    ("tools", "breaking", "tool echo", "/tools/echo/inputSchema/properties/tone"),
    ("tools", "added", "tool multiply", "/tools/multiply"),
    ("tools", "breaking", "tool weather", "/tools/weather"),
    ("result", "changed", "tools/call greet", "/result/content/0/text"),
    ("error", "changed", "tools/call fail", "/error/code"),
}
"""What release 2 of the demo server changes, as (section, kind, exchange, path); each exactly once."""


async def demo_calls(client: Client) -> None:
    """A session touching what release 2 changes: lists, progress and logs, an error, elicitation."""

    async def on_progress(_p: float, _t: float | None, _m: str | None) -> None:
        pass

    await client.list_tools()
    await client.call_tool("add", {"a": 1, "b": 2}, progress_callback=on_progress)
    with pytest.raises(MCPError):
        await client.call_tool("fail", {})
    await client.call_tool("divide", {"a": 1, "b": 0})
    await client.call_tool("greet", {})
    await client.read_resource("demo://readme")
    with pytest.raises(MCPError):
        await client.read_resource("demo://nope")
    await client.get_prompt("review", {"code": "x = 1"})
    await client.list_prompts()
    await client.list_resources()


async def record_demo(path: Path, era: str, variant: str) -> Path:
    """Records `demo_calls` against the demo server `variant` ("v1"/"v2") in `era` through `mcptape record`."""
    cmd = mcptape_cmd("record", "-q", "-o", str(path), "--", sys.executable, str(DEMO_SERVER))
    env = {**os.environ, "DEMO_SERVER_VARIANT": variant}
    params = StdioServerParameters(command=cmd[0], args=cmd[1:], env=env)
    async with Client(
        params, mode=MODES[era], elicitation_callback=accept_name, log_level="info"
    ) as client:
        await demo_calls(client)
    return path


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Cassettes by name: legacy-v1, legacy-v1-again, legacy-v2, modern-v1, modern-v1-again, modern-v2."""
    root = tmp_path_factory.mktemp("diff-e2e")
    names = [
        (era, v, suffix)
        for era in MODES
        for v, suffix in (("v1", ""), ("v1", "-again"), ("v2", ""))
    ]

    async def all_of_them() -> dict[str, Path]:
        out = {}
        with anyio.fail_after(120):
            for era, variant, suffix in names:
                name = f"{era}-{variant}{suffix}"
                out[name] = await record_demo(root / f"{name}.jsonl", era, variant)
        return out

    return anyio.run(all_of_them)


def mcptape_diff(*args: Any) -> tuple[int, str, str]:
    proc = subprocess.run(
        mcptape_cmd("diff", *map(str, args)), capture_output=True, text=True, timeout=60
    )
    return proc.returncode, proc.stdout, proc.stderr


def changes(report: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    return [(d["section"], d["kind"], d["exchange"], d["path"]) for d in report["differences"]]


@pytest.mark.parametrize("era", list(MODES))
def test_the_same_session_recorded_twice_is_equivalent(recorded: dict[str, Path], era: str) -> None:
    code, out, err = mcptape_diff(recorded[f"{era}-v1"], recorded[f"{era}-v1-again"])
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == "equivalent"


def test_renumbered_ids_and_tokens_are_still_equivalent(
    recorded: dict[str, Path], tmp_path: Path
) -> None:
    cas = load(recorded["modern-v1"])
    shifted = tmp_path / "shifted.jsonl"
    text = dumps(cas).decode()
    for i in range(30, 0, -1):  # ids and progress tokens are small integers in SDK sessions
        text = text.replace(f'"id":{i},', f'"id":"x{i}",').replace(
            f'"progressToken":{i}', f'"progressToken":"p{i}"'
        )
    shifted.write_text(text)
    code, out, _ = mcptape_diff(recorded["modern-v1"], shifted, "--strict-envelope")
    assert code == 0, out


def test_legacy_and_2026_recordings_are_equivalent_in_behaviour(recorded: dict[str, Path]) -> None:
    code, out, _ = mcptape_diff(recorded["legacy-v1"], recorded["modern-v1"], "--format", "json")
    report = orjson.loads(out)
    assert code == 0 and report["equivalent"] and report["differences"] == []
    envelope = {d["path"] for d in report["envelope"]}
    assert {
        "/protocol/version",
        "/server/protocolVersion",
        "/result/resultType",
        "/result/ttlMs",
        "/result/cacheScope",
    } <= envelope
    assert report["counts"]["envelope"] == len(report["envelope"]) > 0
    code, out, _ = mcptape_diff(recorded["legacy-v1"], recorded["modern-v1"], "--strict-envelope")
    assert code == 1 and out.startswith("envelope differs")


@pytest.mark.parametrize(
    ("a", "b"), [("legacy-v1", "legacy-v2"), ("modern-v1", "modern-v2"), ("legacy-v1", "modern-v2")]
)
def test_a_second_release_lists_each_change_once_with_its_class(
    recorded: dict[str, Path], a: str, b: str
) -> None:
    code, out, _ = mcptape_diff(recorded[a], recorded[b], "--format", "json")
    assert code == 1
    report = orjson.loads(out)
    found = changes(report)
    assert sorted(found) == sorted(V1_TO_V2), found
    assert report["counts"] == {
        "breaking": 2,
        "changed": 2,
        "added": 1,
        "removed": 0,
        "relaxed": 0,
        "tightened": 0,
        "cosmetic": 2,
        "envelope": len(report["envelope"]),
    }
    assert report["summary"].startswith(
        "behaviour differs: 2 breaking, 2 changed, 1 added, 2 cosmetic"
    )
    by_path = {d["path"]: d for d in report["differences"]}
    assert (by_path["/error/code"]["a"], by_path["/error/code"]["b"]) == (-32000, -32001)
    assert (by_path["/result/content/0/text"]["a"], by_path["/result/content/0/text"]["b"]) == (
        "Hello, Ada!",
        "Hi, Ada!",
    )
    assert (
        by_path["/tools/echo/inputSchema/properties/tone"]["message"]
        == "new required argument 'tone'"
    )
    assert by_path["/tools/weather"]["change"] == "removed" and "b" not in by_path["/tools/weather"]
    assert by_path["/tools/multiply"]["impact"] == "compatible"
    assert {d["path"] for d in report["envelope"]} >= {"/server/version"}


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_a_second_release_in_the_human_formats(recorded: dict[str, Path], fmt: str) -> None:
    code, out, _ = mcptape_diff(recorded["legacy-v1"], recorded["legacy-v2"], "--format", fmt)
    assert code == 1
    assert "behaviour differs: 2 breaking, 2 changed, 1 added, 2 cosmetic" in out.splitlines()[0]
    if fmt == "text":  # cells wrap to keep lines within 100 columns: read the rows back whole
        assert max(len(ln) for ln in out.splitlines()) <= 100
        out = "\n".join(" ".join(f" {c} " for c in r.values()) for r in text_rows(out))
    for _section, kind, exchange, path in V1_TO_V2:
        line = next((ln for ln in out.splitlines() if path in ln and exchange in ln), None)
        assert line is not None, (path, out)
        assert kind in line
        assert sum(1 for ln in out.splitlines() if f" {path} " in ln or f"`{path}`" in ln) == 1
    assert "Hello, Ada!" in out and "Hi, Ada!" in out and "-32000" in out and "-32001" in out


def test_a_broken_cassette_exits_2(recorded: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    code, out, err = mcptape_diff(recorded["legacy-v1"], bad)
    assert (
        code == 2 and out == "" and err.startswith("mcptape: error:") and len(err.splitlines()) == 1
    )
