"""Agent libraries' own MCP clients against a declared mock (`mcptape.mock()`) in place of the
server: the mock declared in a few lines serves the library's session as the real server
does, and its journal holds what the library called.

The mock is declared in this test process and reached by its stdio command (`mock.command`),
which the library launches as it would launch any server; the answers are this module's
functions, and the library's session prints the same as against tests/agents/server.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import mcptape
from mcptape.mocks.mock import Mock
from tests.agents.test_agents import HERE, SESSIONS, environment, run

pytestmark = pytest.mark.e2e


def declare(mock: Mock) -> None:
    """What tests/agents/server.py serves, declared."""

    @mock.tool(description="Add two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @mock.tool(description="Greet someone by name.")
    def greet(name: str) -> str:
        return f"Hello, {name}!"

    mock.resource("agents://motto", "record once, replay forever", name="motto")


@pytest.mark.parametrize(
    "name", ["pydantic-ai", "openai-agents", "langchain-session", "smolagents"]
)
def test_a_library_session_against_a_declared_mock(name: str, tmp_path: Path) -> None:
    session = SESSIONS[name]
    real = run(session, [str(environment(session.env) / "python"), str(HERE / "server.py")])
    with mcptape.mock("agents-test") as mock:
        declare(mock)
        mocked = run(session, mock.command)
        assert mock.call_count("greet") >= 1, [c.method for c in mock.calls]
    assert mocked == real
