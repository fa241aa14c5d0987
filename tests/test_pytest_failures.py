"""A failing test that replays a cassette fails in a few lines: what was asked, the nearest
recording, the fix; what the test raised comes out as itself, not in nested exception groups."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import ROOT

pytest_plugins = ["pytester"]
GOLDEN = ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl"

TESTS = """
import pytest

pytestmark = [pytest.mark.anyio, pytest.mark.mcptape(cassette=CASSETTE, client={"log_level": "info", "elicitation_callback": lambda ctx, params: None})]


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def test_unrecorded(mcptape):
    await mcptape.client.call_tool("add", {"a": 1, "b": 99})


async def test_wrong_answer(mcptape):
    result = await mcptape.client.call_tool("add", {"a": 1, "b": 2})
    assert result.content[0].text == "4"


async def test_a_caught_no_match_is_the_tests_business(mcptape):
    with pytest.raises(Exception, match="no recorded answer"):
        await mcptape.client.call_tool("add", {"a": 1, "b": 99})
"""


def failure(out: str, test: str) -> list[str]:
    """The lines of `test`'s failure report, from its `___ name ___` rule to the next section."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip("_ ") == test)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(("___", "===")))
    return lines[start:end]


def test_a_request_with_no_recording_fails_in_a_few_lines_with_the_fix(
    pytester: pytest.Pytester,
) -> None:
    shutil.copy(GOLDEN, pytester.path / "golden.jsonl")
    pytester.makepyfile(
        test_replay=TESTS.replace("CASSETTE", repr(str(pytester.path / "golden.jsonl")))
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "anyio", "--tb=short", timeout=180
    )
    result.assert_outcomes(passed=1, failed=2)
    lines = failure(result.stdout.str(), "test_unrecorded")
    assert len(lines) <= 15, "\n".join(lines)
    text = "\n".join(lines)
    assert lines[1] == (
        "test_replay.py:12: no recorded answer for tools/call 'add': arguments/b is 99 "
        "(recorded 2), compared with the nearest recorded request (line 6)"
    )
    assert 'asked:    tools/call {"name": "add", "arguments": {"a": 1, "b": 99}' in text
    assert 'nearest:  line 6: tools/call {"name": "add", "arguments": {"a": 1, "b": 2}' in text
    assert (
        'fix:      if /arguments/b does not matter, add ignore=["/arguments/b"] to '
        "@pytest.mark.mcptape; else record this request"
    ) in text
    assert "ExceptionGroup" not in text and "Traceback" not in text

    # a plain assertion of an async test: pytest's own report, no exception groups around it
    lines = failure(result.stdout.str(), "test_wrong_answer")
    assert lines[1:3] == [
        "test_replay.py:17: in test_wrong_answer",
        '    assert result.content[0].text == "4"',
    ]
    assert "E   AssertionError: assert '3' == '4'" in lines
    assert not any("ExceptionGroup" in line or "TaskGroup" in line for line in lines)
