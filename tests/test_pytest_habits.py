"""The plugin as users run pytest: anyio, pytest-asyncio (strict and auto) and sync tests, each
recording then replaying, from the rootdir and from a subfolder, under `-n 2`; the options a
pytest-recording user types; errors printed once, in the marker's terms.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from mcptape.cassette import load
from mcptape.redaction.redact import REDACTED
from tests.conftest import DEMO_SERVER

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.e2e

HEADER = 'import pytest\n\npytestmark = pytest.mark.mcptape(server=["python", "server.py"])\n\n'

STYLES = {
    # name: (ini lines, test file body)
    "anyio": (
        "",
        """
@pytest.mark.anyio
async def test_add(mcptape):
    result = await mcptape.client.call_tool("add", {"a": 1, "b": 2})
    assert result.content[0].text == "3"


@pytest.mark.anyio
async def test_echo(mcptape):
    assert (await mcptape.client.call_tool("echo", {"message": "hi"})).content[0].text == "hi"
""",
    ),
    "asyncio-strict": (
        "asyncio_mode = strict",
        """
@pytest.mark.asyncio
async def test_add(mcptape):
    result = await mcptape.client.call_tool("add", {"a": 1, "b": 2})
    assert result.content[0].text == "3"


@pytest.mark.asyncio
async def test_echo(mcptape):
    assert (await mcptape.client.call_tool("echo", {"message": "hi"})).content[0].text == "hi"
""",
    ),
    "asyncio-auto": (
        "asyncio_mode = auto",
        """
async def test_add(mcptape):
    result = await mcptape.client.call_tool("add", {"a": 1, "b": 2})
    assert result.content[0].text == "3"


async def test_echo(mcptape):
    assert (await mcptape.client.call_tool("echo", {"message": "hi"})).content[0].text == "hi"
""",
    ),
    "sync": (
        "",
        """
def test_add(mcptape):
    async def call(client):
        return await client.call_tool("add", {"a": 1, "b": 2})

    assert mcptape.run(call).content[0].text == "3"


def test_echo(mcptape):
    async def call(client):
        return await client.call_tool("echo", {"message": "hi"})

    assert mcptape.run(call).content[0].text == "hi"
""",
    ),
}


def project(
    pytester: pytest.Pytester, ini: str = "", body: str = "", name: str = "test_calc"
) -> Path:
    """A fresh project: pytest.ini at the root, server.py beside it, tests/<name>.py."""
    pytester.path.joinpath("pytest.ini").write_text(
        f"[pytest]\naddopts = -p no:cacheprovider\nasyncio_default_fixture_loop_scope = function\n{ini}\n"
    )
    shutil.copy(DEMO_SERVER, pytester.path / "server.py")
    # anyio runs a marked test on every backend it can import; trio (which selenium, for the browser
    # tests, brings in) would double each test. One backend, as anyio's docs show.
    pytester.path.joinpath("conftest.py").write_text(
        'import pytest\n\n\n@pytest.fixture\ndef anyio_backend():\n    return "asyncio"\n'
    )
    tests = pytester.path / "tests"
    tests.mkdir(exist_ok=True)
    tests.joinpath(f"{name}.py").write_text(HEADER + body)
    return tests


def run(pytester: pytest.Pytester, *args: str, cwd: Path | None = None) -> pytest.RunResult:
    """pytest in a subprocess, from `cwd` (default: the rootdir)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(cwd or pytester.path)
        for name in ("CI", "BUILD_NUMBER"):  # under CI pytest repeats whole messages in its summary
            mp.delenv(name, raising=False)
        return pytester.runpytest_subprocess(*args, timeout=240)


@pytest.mark.parametrize("style", list(STYLES))
def test_each_test_style_records_from_a_subfolder_then_replays_from_the_rootdir(
    pytester: pytest.Pytester, style: str
) -> None:
    ini, body = STYLES[style]
    tests = project(pytester, ini, body)
    # `cd tests && pytest`, with relative "python" and "server.py", under -n 2
    recorded = run(pytester, "-n", "2", "--mcptape-record-mode=once", cwd=tests)
    recorded.assert_outcomes(passed=2)
    folder = tests / "cassettes" / "test_calc"
    assert sorted(p.name for p in folder.iterdir()) == ["test_add.jsonl", "test_echo.jsonl"], (
        "named <test>.jsonl"
    )
    header = load(folder / "test_add.jsonl").header
    assert str(pytester.path / "server.py") in header.target["command"], (
        "server.py found in the rootdir"
    )
    # Replay with the server gone: nothing reaches a real server.
    (pytester.path / "server.py").unlink()
    replayed = run(pytester, "-n", "2")
    replayed.assert_outcomes(passed=2)
    assert "Attempted to exit cancel scope" not in replayed.stdout.str() + replayed.stderr.str()


def test_a_missing_cassette_is_one_error_naming_the_option(pytester: pytest.Pytester) -> None:
    project(pytester, "", STYLES["anyio"][1])
    result = run(pytester, "-k", "add")
    result.assert_outcomes(errors=1)
    out = result.stdout.str()
    assert out.count("cassette not found and record mode is 'none'") == 1, out
    assert "During handling of the above exception" not in out
    assert str(pytester.path / "tests" / "cassettes" / "test_calc" / "test_add.jsonl") in out, (
        "an absolute path"
    )


def test_a_server_that_cannot_start_is_one_error_with_its_stderr(pytester: pytest.Pytester) -> None:
    project(pytester, "asyncio_mode = auto", STYLES["asyncio-auto"][1])
    (pytester.path / "server.py").write_text(
        "import sys\nprint('server: missing API key', file=sys.stderr)\nsys.exit(3)\n"
    )
    result = run(pytester, "--mcptape-record-mode=once", "-k", "add")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert "the real server" in out and "did not start or closed the connection" in out
    assert "server: missing API key" in out
    assert "ExceptionGroup" not in out and "Traceback" not in out


def test_no_match_hints_speak_the_markers_terms(pytester: pytest.Pytester) -> None:
    project(pytester, "", STYLES["anyio"][1])
    run(pytester, "--mcptape-record-mode=once").assert_outcomes(passed=2)
    test_file = pytester.path / "tests" / "test_calc.py"
    test_file.write_text(test_file.read_text().replace('{"a": 1, "b": 2}', '{"a": 1, "b": 5}'))
    result = run(pytester, "-k", "add")
    result.assert_outcomes(failed=1)
    out = result.stdout.str()
    assert 'add ignore=["/arguments/b"] to @pytest.mark.mcptape' in out
    assert "arguments/b is 5 (recorded 2)" in out
    assert "--ignore" not in out


def test_rewrite_disable_and_ini_options(pytester: pytest.Pytester) -> None:
    body = STYLES["anyio"][1]
    project(pytester, "mcptape_record_mode = once\nmcptape_cassette_dir = recorded", body)
    run(pytester, "-k", "add").assert_outcomes(
        passed=1
    )  # the ini mode records the missing cassette
    cassette = pytester.path / "recorded" / "test_calc" / "test_add.jsonl"
    first = cassette.read_bytes()
    run(pytester, "-k", "add", "--mcptape-record-mode=rewrite").assert_outcomes(passed=1)
    assert cassette.read_bytes() != first, "rewrite records anew"
    second = cassette.read_bytes()
    # recording off: the live server answers, the cassette is neither read nor written
    run(pytester, "-k", "echo", "--mcptape-disable", "--mcptape-record-mode=none").assert_outcomes(
        passed=1
    )
    assert not (cassette.parent / "test_echo.jsonl").exists()
    assert cassette.read_bytes() == second
    # ... and with the server gone it fails: it really talked to the server
    (pytester.path / "server.py").unlink()
    run(pytester, "-k", "add", "--mcptape-disable").assert_outcomes(failed=1)
    run(pytester, "-k", "add").assert_outcomes(passed=1)


def test_a_cassette_shared_by_two_modules_by_relative_name(pytester: pytest.Pytester) -> None:
    tests = project(pytester, "", STYLES["anyio"][1])
    run(pytester, "--mcptape-record-mode=once", "-k", "add").assert_outcomes(passed=1)
    tests.joinpath("test_other.py").write_text(
        HEADER
        + """
@pytest.mark.anyio
@pytest.mark.mcptape(cassette="../test_calc/test_add")
async def test_same(mcptape):
    assert mcptape.path.name == "test_add.jsonl"
    assert (await mcptape.client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"
"""
    )
    (pytester.path / "server.py").unlink()
    run(pytester, "-k", "same").assert_outcomes(passed=1)


def test_matchers_and_redaction_from_the_marker_and_the_config_fixture(
    pytester: pytest.Pytester,
) -> None:
    tests = project(
        pytester,
        "",
        """
@pytest.mark.anyio
@pytest.mark.mcptape(match_on=["method", "name", "somewhere"])
async def test_weather(mcptape):
    assert (await mcptape.client.call_tool("weather", {"city": CITY})).content
""",
    )
    tests.joinpath("conftest.py").write_text("""
import pytest
import mcptape

mcptape.register_matcher("somewhere", lambda recorded, incoming: incoming.msg.get("params", {}).get("arguments", {}).get("city") != "nowhere")


@pytest.fixture
def mcptape_config():
    return {"redact_keys": ["city"]}
""")
    test_file = tests / "test_calc.py"
    body = test_file.read_text()
    test_file.write_text(body.replace("CITY", '"Paris"'))
    run(pytester, "--mcptape-record-mode=once").assert_outcomes(passed=1)
    cassette = tests / "cassettes" / "test_calc" / "test_weather.jsonl"
    calls = [e.msg for e in load(cassette).events if e.msg and e.msg.get("method") == "tools/call"]
    assert calls[0]["params"]["arguments"]["city"] == REDACTED, (
        "the config fixture's redaction rule"
    )
    (pytester.path / "server.py").unlink()
    test_file.write_text(body.replace("CITY", '"Rome"'))
    run(pytester).assert_outcomes(passed=1)  # the marker's match_on: the city is not compared
    # (a redacted value is a wildcard in matching, so the matcher reads the message as sent: .msg)
    test_file.write_text(body.replace("CITY", '"nowhere"'))
    result = run(pytester)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*somewhere refused*"])
