"""The Python API a vcrpy user expects: `tape.url`, HTTP recording, `strict` everywhere,
matchers by name, redaction rules, play counts."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, MCPError

import mcptape
from mcptape.cassette import load
from mcptape.errors import ConfigError
from mcptape.redaction.redact import REDACTED
from tests.conftest import demo_server_cmd, free_port
from tests.e2e.test_record_http import start  # noqa: F401 - the fixture

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cassette of the demo server: add(20, 22), then echo("hi"); recorded once per module."""
    path = tmp_path_factory.mktemp("recorded") / "add.jsonl"

    async def session(client: Any) -> None:
        await client.call_tool("add", {"a": 20, "b": 22})
        await client.call_tool("echo", {"message": "hi"})

    with mcptape.use_cassette(path, "once", server=demo_server_cmd()) as tape:
        tape.run(session)
    return path


@pytest.fixture
def add_cassette(recorded: Path, tmp_path: Path) -> Path:
    target = tmp_path / "add.jsonl"
    shutil.copy(recorded, target)
    return target


async def test_tape_url_serves_the_cassette_over_http_and_stops_with_the_tape(
    add_cassette: Path,
) -> None:
    with mcptape.use_cassette(add_cassette) as tape:
        url = tape.url
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        assert tape.url == url, "started once"
        async with Client(url) as client:
            assert (await client.call_tool("add", {"a": 20, "b": 22})).content[0].text == "42"
        server = tape._background.proc
    assert server.poll() is not None, "the HTTP replay stops with the tape"


async def test_strict_reaches_tape_url(add_cassette: Path) -> None:
    with (
        pytest.raises(mcptape.UnplayedExchangesError, match="never played"),
        mcptape.use_cassette(add_cassette, strict=True) as tape,
    ):
        async with Client(tape.url) as client:
            await client.list_tools()


def test_strict_reaches_tape_command(add_cassette: Path) -> None:
    with mcptape.use_cassette(add_cassette, strict=True) as tape:
        assert "--strict" in tape.command
        proc = subprocess.run(
            tape.command, input="", capture_output=True, check=False, text=True, timeout=120
        )
    assert proc.returncode == 1 and "never played" in proc.stderr


async def test_strict_in_process(add_cassette: Path) -> None:
    with pytest.raises(mcptape.UnplayedExchangesError, match=r"strict=True: .* were never played"):
        async with mcptape.use_cassette(add_cassette, strict=True) as tape:
            await tape.client.list_tools()


async def test_recording_an_http_server_from_use_cassette(tmp_path: Path, start: Any) -> None:  # noqa: F811
    port = free_port()
    upstream = start(demo_server_cmd("http", str(port)), port) + "/mcp"
    cassette = tmp_path / "http.jsonl"
    async with mcptape.use_cassette(cassette, "once", url=upstream) as tape:
        assert tape.recording and tape.url != upstream, "through the recording proxy"
        assert (await tape.client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"
    recorded = load(cassette)
    assert recorded.header.transport.value == "streamable-http"
    assert any(
        e.msg and e.msg.get("method") == "tools/call"
        for e in recorded.events
        if e.kind == "message"
    )
    async with mcptape.use_cassette(cassette, url="http://127.0.0.1:9/none") as tape:
        assert not tape.recording
        assert (await tape.client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"


async def test_named_and_registered_matchers(add_cassette: Path) -> None:
    # the recorded call is add(20, 22); matching on the tool name only answers any add
    async with mcptape.use_cassette(add_cassette, match_on=["method", "name"]) as tape:
        assert (await tape.client.call_tool("add", {"a": 1, "b": 1})).content[0].text == "42"

    seen: list[tuple[str, str]] = []

    def same_a(recorded: mcptape.Subject, incoming: mcptape.Subject) -> bool:
        seen.append((recorded.method, incoming.method))
        return recorded.params.get("arguments", {}).get("a") == incoming.params.get(
            "arguments", {}
        ).get("a")

    mcptape.register_matcher("same_a", same_a)
    async with mcptape.use_cassette(add_cassette, match_on=["method", "name", "same_a"]) as tape:
        with pytest.raises(MCPError, match="same_a refused"):
            await tape.client.call_tool("add", {"a": 21, "b": 22})
        assert (await tape.client.call_tool("add", {"a": 20, "b": 0})).content[0].text == "42"
    assert ("tools/call", "tools/call") in seen
    with pytest.raises(ConfigError, match=r"unknown matcher 'nope'.*same_a"):
        mcptape.use_cassette(add_cassette, match_on=["method", "nope"])
    with pytest.raises(ConfigError, match="built in"):
        mcptape.register_matcher("params", same_a)
    policy = mcptape.match_policy(["method", "name"], ignore=["/arguments/b"])
    assert isinstance(policy, mcptape.MatchPolicy) and not policy.exact


def test_built_in_matchers_reach_tape_command_custom_ones_say_why_not(add_cassette: Path) -> None:
    with mcptape.use_cassette(add_cassette, match_on=["method", "name"]) as tape:
        assert tape.command[-5:] == [
            "--match-on",
            "method",
            "--match-on",
            "name",
            str(add_cassette),
        ]
    custom = mcptape.use_cassette(add_cassette, match_on=["method", lambda a, b: True])
    with (
        custom as tape,
        pytest.raises(ConfigError, match="custom matchers run in this process only"),
    ):
        tape.command  # noqa: B018


async def test_redaction_rules_when_recording(tmp_path: Path) -> None:
    cassette = tmp_path / "r.jsonl"
    async with mcptape.use_cassette(cassette, "once", server=demo_server_cmd(), redact_keys=["city"],
                                    redact_patterns=[r"tenant-\d+"]) as tape:  # fmt: skip
        assert (await tape.client.call_tool("echo", {"message": "for tenant-42"})).content[
            0
        ].text == "for tenant-42"
        assert (await tape.client.call_tool("weather", {"city": "Paris"})).content
    assert "tenant-42" not in cassette.read_text()
    calls = [
        e.msg["params"]
        for e in load(cassette).events
        if e.msg and e.msg.get("method") == "tools/call"
    ]
    assert calls[1]["arguments"]["city"] == REDACTED, "the member stays, its value is redacted"


async def test_play_counts_and_all_played(add_cassette: Path) -> None:
    async with mcptape.use_cassette(add_cassette) as tape:
        total = len(tape.unplayed)
        assert total >= 2 and not tape.all_played
        await tape.client.call_tool("add", {"a": 20, "b": 22})
        played = tape.play_count
        assert played >= 1
        assert [(u[1], u[2]) for u in tape.unplayed] == [("tools/call", "echo")]
        await tape.client.call_tool("echo", {"message": "hi"})
    assert tape.play_count == played + 1
    assert tape.all_played, tape.unplayed


def test_live_uses_the_server_and_leaves_the_cassette_alone(tmp_path: Path) -> None:
    cassette = tmp_path / "never.jsonl"
    with mcptape.use_cassette(cassette, live=True, server=demo_server_cmd()) as tape:

        async def call(client: Any) -> Any:
            return await client.call_tool("add", {"a": 2, "b": 2})

        assert tape.run(call).content[0].text == "4"
        assert tape.command == demo_server_cmd()
    assert not cassette.exists()
