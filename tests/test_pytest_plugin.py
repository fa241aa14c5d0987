"""The pytest plugin, tested with pytester: replay, record modes, failures that teach."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from mcptape.api import cassette_path
from mcptape.cassette import load
from mcptape.errors import ConfigError
from mcptape.pytest_plugin import sanitize
from tests.conftest import DEMO_SERVER, ROOT

pytest_plugins = ["pytester"]
GOLDEN = ROOT / "cassettes" / "python-sdk"

TEST_FILE = f"""
import pytest

SERVER = [{sys.executable!r}, {str(DEMO_SERVER)!r}]
pytestmark = [pytest.mark.anyio, pytest.mark.mcptape(server=SERVER)]


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_add(mcptape):
    result = await mcptape.client.call_tool("add", {{"a": 1, "b": 2}})
    assert result.content[0].text == "3"
    assert mcptape.path.name == "test_add.jsonl"


async def test_echo(mcptape):
    result = await mcptape.client.call_tool("echo", {{"message": ECHO}})
    assert result.content[0].text == ECHO
"""


def write_tests(pytester: pytest.Pytester, echo: str = "hi") -> None:
    pytester.makepyfile(test_tools=TEST_FILE.replace("ECHO", repr(echo)))


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "anyio", *args, timeout=180
    )


def cassettes(pytester: pytest.Pytester) -> Path:
    return pytester.path / "cassettes" / "test_tools"


@pytest.mark.e2e
def test_once_records_missing_cassettes_then_none_replays_them(pytester: pytest.Pytester) -> None:
    write_tests(pytester)
    missing = run(pytester)
    missing.assert_outcomes(errors=2)
    missing.stdout.fnmatch_lines(
        ["*cassette not found and record mode is 'none'*--mcptape-record-mode=once*"]
    )

    run(pytester, "--mcptape-record-mode=once").assert_outcomes(passed=2)
    recorded = load(cassettes(pytester) / "test_add.jsonl")
    assert any(
        e.msg and e.msg.get("method") == "tools/call"
        for e in recorded.events
        if e.kind == "message"
    )

    # Replay: the server command is broken now, so passing proves nothing reached a real server.
    pytester.path.joinpath("test_tools.py").write_text(
        pytester.path.joinpath("test_tools.py")
        .read_text()
        .replace(str(DEMO_SERVER), "/no/such/server.py")
    )
    run(pytester).assert_outcomes(passed=2)
    assert load(cassettes(pytester) / "test_add.jsonl").events == recorded.events, (
        "replay does not touch the cassette"
    )


@pytest.mark.e2e
def test_unmatched_request_fails_with_the_replays_explanation(pytester: pytest.Pytester) -> None:
    write_tests(pytester, echo="hi")
    run(pytester, "--mcptape-record-mode=once").assert_outcomes(passed=2)
    write_tests(pytester, echo="something else")
    result = run(pytester)
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*no recorded answer for tools/call 'echo'*"])


@pytest.mark.e2e
def test_all_re_records(pytester: pytest.Pytester) -> None:
    write_tests(pytester, echo="first")
    run(pytester, "--mcptape-record-mode=once", "-k", "echo").assert_outcomes(passed=1)
    first = load(cassettes(pytester) / "test_echo.jsonl")
    write_tests(pytester, echo="second")
    run(pytester, "--mcptape-record-mode=all", "-k", "echo").assert_outcomes(passed=1)
    second = load(cassettes(pytester) / "test_echo.jsonl")
    assert first.header.recorded_at != second.header.recorded_at or first.events != second.events
    texts = [str(e.msg) for e in second.events if e.kind == "message"]
    assert any("second" in t for t in texts) and not any("first" in t for t in texts)


@pytest.mark.e2e
def test_a_server_that_fails_to_start_never_costs_a_cassette(pytester: pytest.Pytester) -> None:
    """`all` with a server path that does not resolve keeps the old cassette byte for byte and
    says why; `once` with no cassette writes none, so the next run asks to record again
    (no empty cassette replayed into a hang or a misleading "played once")."""
    write_tests(pytester)
    run(pytester, "--mcptape-record-mode=once", "-k", "add").assert_outcomes(passed=1)
    cassette = cassettes(pytester) / "test_add.jsonl"
    good = cassette.read_bytes()
    test_file = pytester.path.joinpath("test_tools.py")
    test_file.write_text(test_file.read_text().replace(str(DEMO_SERVER), "/no/such/server.py"))

    result = run(pytester, "--mcptape-record-mode=all", "-k", "add")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        [f"*the server answered nothing (it exited with code 2), so {cassette} was left as it was*"]
    )
    assert cassette.read_bytes() == good
    assert sorted(p.name for p in cassette.parent.iterdir()) == ["test_add.jsonl"], (
        "no recording left behind"
    )

    result = run(pytester, "--mcptape-record-mode=once", "-k", "echo")
    assert result.ret != 0
    assert sorted(p.name for p in cassette.parent.iterdir()) == ["test_add.jsonl"], (
        "no cassette for a failed recording"
    )
    run(pytester, "-k", "echo").stdout.fnmatch_lines(
        ["*cassette not found and record mode is 'none'*"]
    )
    run(pytester, "--mcptape-record-mode=once", "-k", "add").assert_outcomes(
        passed=1
    )  # replays the kept cassette
    assert cassette.read_bytes() == good


def test_golden_cassette_replays_through_the_marker(pytester: pytest.Pytester) -> None:
    target = pytester.path / "golden.jsonl"
    shutil.copy(GOLDEN / "2026-07-28" / "stdio.jsonl", target)
    pytester.makepyfile(
        test_golden=f"""
import pytest

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def elicit(ctx, params):
    return None  # never called on replay; declaring it gives the recorded client capabilities

@pytest.mark.anyio
@pytest.mark.mcptape(cassette={str(target)!r}, client={{"log_level": "info", "elicitation_callback": elicit}})
async def test_golden(mcptape):
    assert not mcptape.recording
    tools = await mcptape.client.list_tools()
    assert "add" in [t.name for t in tools.tools]
    assert mcptape.command[-1] == {str(target)!r}
"""
    )
    run(pytester).assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("test_x", "test_x"),
        ("test_x[a/b]", "test_x-a-b"),
        ("test_x[../../etc/passwd]", "test_x-..-..-etc-passwd"),
        ("..", "test"),
        ("TestC.test_y[1-2]", "TestC.test_y-1-2"),
    ],
)
def test_test_names_become_safe_file_names(name: str, safe: str) -> None:
    assert sanitize(name) == safe
    assert "/" not in sanitize(name)


def test_cassette_names_cannot_escape_their_directory(tmp_path: Path) -> None:
    assert cassette_path(tmp_path, "a/b") == (tmp_path / "a" / "b.jsonl").resolve()
    with pytest.raises(ConfigError, match="escapes the cassette directory"):
        cassette_path(tmp_path, "../../evil")
    with pytest.raises(ConfigError, match="escapes"):
        cassette_path(tmp_path, "/etc/passwd")


@pytest.mark.e2e
def test_new_episodes_replays_what_matches_and_appends_the_rest(pytester: pytest.Pytester) -> None:
    write_tests(pytester, echo="hi")
    run(pytester, "--mcptape-record-mode=once", "-k", "echo").assert_outcomes(passed=1)
    before = load(cassettes(pytester) / "test_echo.jsonl")
    pytester.makepyfile(
        test_tools=TEST_FILE.replace("ECHO", repr("hi")).replace(
            """    result = await mcptape.client.call_tool("echo", {"message": 'hi'})
    assert result.content[0].text == 'hi'
""",
            """    result = await mcptape.client.call_tool("echo", {"message": 'hi'})
    assert result.content[0].text == 'hi'
    result = await mcptape.client.call_tool("echo", {"message": 'new episode'})
    assert result.content[0].text == 'new episode'
""",
        )
    )
    run(pytester, "--mcptape-record-mode=new_episodes", "-k", "echo").assert_outcomes(passed=1)
    after = load(cassettes(pytester) / "test_echo.jsonl")
    assert after.warnings == []
    old = [e.msg for e in before.events if e.kind == "message"]
    new = [e.msg for e in after.events if e.kind == "message"]
    assert new[: len(old)] == old, "the old exchanges stay as they were"
    tail_kinds = [
        e.kind
        for e in before.events
        if e.seq > max(x.seq for x in before.events if x.kind == "message")
    ]
    assert [e.kind for e in after.events[-len(tail_kinds) :]] == tail_kinds, (
        "the process events stay last"
    )
    assert [e.seq for e in after.events] == list(range(1, len(after.events) + 1))
    texts = [str(m) for m in new[len(old) :]]
    assert any("new episode" in t for t in texts)
    assert not any("initialize" in t or "server/discover" in t for t in texts), (
        "the handshake is not appended"
    )
    # and now the new exchange replays with no server at all
    pytester.path.joinpath("test_tools.py").write_text(
        pytester.path.joinpath("test_tools.py")
        .read_text()
        .replace(str(DEMO_SERVER), "/no/such/server.py")
    )
    run(pytester, "-k", "echo").assert_outcomes(passed=1)


@pytest.mark.e2e
def test_replay_works_under_xdist(pytester: pytest.Pytester) -> None:
    examples = ROOT / "examples"
    shutil.copy(examples / "test_with_mcptape.py", pytester.path / "test_with_mcptape.py")
    shutil.copy(examples / "demo_server.py", pytester.path / "demo_server.py")
    shutil.copytree(examples / "cassettes", pytester.path / "cassettes")
    result = run(pytester, "-n", "2")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(["*2 workers*"])
