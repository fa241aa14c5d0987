"""Agent libraries' own MCP clients, recorded through `mcptape record` and then served by
`mcptape replay` with the real server gone: the library's session prints the same both times.

Each library runs in its own environment, .venv-agents/NAME, built by `scripts/agent-envs`
from the exact versions of tests/agents/locks/NAME.txt with mcptape installed from this
checkout (`make test` builds them first; here each test asks for its environment, which is
quick when it is current). The scripts beside this file run one scripted session each (no
model service: pydantic-ai's TestModel, scripted Agents SDK and smolagents models; the
LangChain and LlamaIndex tools and mcp-use's session called directly) and print what the server
answered; server.py is the server they record.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcptape.cassette import load
from tests.conftest import ROOT

pytestmark = pytest.mark.e2e

HERE = Path(__file__).resolve().parent
ENVS = ROOT / ".venv-agents"


@dataclass(frozen=True)
class Session:
    env: str
    """The environment: .venv-agents/ENV, built from tests/agents/locks/ENV.txt."""
    script: str
    args: tuple[str, ...] = ()
    expect: tuple[str, ...] = ("Hello, Ada!", "record once, replay forever")
    """What a real session prints, so that an empty or failed one cannot pass as equal."""


SESSIONS = {
    "langchain-session": Session("langchain", "langchain_session.py", ("session",)),
    "langchain-default": Session("langchain", "langchain_session.py", ("default",)),
    "pydantic-ai": Session("pydantic-ai", "pydantic_ai_session.py"),
    "openai-agents": Session("openai-agents", "openai_agents_session.py"),
    # smolagents' MCP client offers tools only: no resource to read back
    "smolagents": Session("smolagents", "smolagents_session.py", expect=("Hello, Grace!",)),
    "mcp-use": Session("mcp-use", "mcp_use_session.py"),
    # BasicMCPClient starts the server for each operation: listing the tools is one launch
    "llama-index-tools": Session(
        "llama-index", "llama_index_session.py", ("tools",), expect=("tool greet",)
    ),
    "llama-index-calls": Session("llama-index", "llama_index_session.py", ("calls",)),
}


def environment(name: str) -> Path:
    """.venv-agents/NAME, built by scripts/agent-envs unless it is current."""
    done = subprocess.run(
        [str(ROOT / "scripts" / "agent-envs"), name],
        capture_output=True,
        text=True,
        timeout=900,
    )
    if done.returncode != 0:
        pytest.fail(
            f"scripts/agent-envs {name} failed (exit {done.returncode}); run it by hand to see pip:\n"
            f"{done.stderr[-3000:]}"
        )
    return ENVS / name / "bin"


def run(session: Session, server: list[str]) -> str:
    """The session's script in its environment, with `server` as the MCP server command; its stdout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    bin_ = environment(session.env)
    done = subprocess.run(
        [str(bin_ / "python"), str(HERE / session.script), *session.args, *server],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, (
        f"{session.script} {' '.join(session.args)} in .venv-agents/{session.env} failed "
        f"(exit {done.returncode}):\n{done.stderr[-4000:]}"
    )
    for text in session.expect:
        assert text in done.stdout, f"{session.script} printed no {text!r}:\n{done.stdout}"
    return done.stdout


def record(session: Session, where: Path) -> tuple[Path, str]:
    """Records `session` against a copy of server.py in `where`, then deletes that copy so no
    later run can reach the real server. The cassette and what the session printed."""
    bin_ = environment(session.env)
    server = where / "server.py"
    shutil.copy(HERE / "server.py", server)
    cassette = where / "cassette.jsonl"
    recorder = [str(bin_ / "mcptape"), "record", "-q", "-o", str(cassette), "--"]
    printed = run(session, [*recorder, str(bin_ / "python"), str(server)])
    server.unlink()
    assert load(cassette).events, f"{cassette} recorded nothing"
    return cassette, printed


def replay(session: Session, cassette: Path) -> str:
    """`session` with `mcptape replay CASSETTE` (of the session's environment) as its server."""
    bin_ = environment(session.env)
    return run(session, [str(bin_ / "mcptape"), "replay", str(cassette)])


@pytest.mark.parametrize(
    "name",
    [
        "langchain-session",
        "pydantic-ai",
        "openai-agents",
        "smolagents",
        "mcp-use",
        "llama-index-tools",
    ],
)
def test_a_library_session_replays_as_it_was_recorded(name: str, tmp_path: Path) -> None:
    session = SESSIONS[name]
    cassette, recorded = record(session, tmp_path)
    assert replay(session, cassette) == recorded
    assert replay(session, cassette) == recorded, "a cassette replays the same way twice"


@pytest.mark.xfail(strict=True, reason="multi-session stdio cassettes: not yet")
@pytest.mark.parametrize("name", ["langchain-default", "llama-index-calls"])
def test_a_launch_per_operation_replays_as_it_was_recorded(name: str, tmp_path: Path) -> None:
    # MultiServerMCPClient's default and llama-index's BasicMCPClient start the server anew to
    # list the tools, for each tool call and to read a resource: one -o path then has to hold
    # every launch, not only the last.
    session = SESSIONS[name]
    cassette, recorded = record(session, tmp_path)
    assert replay(session, cassette) == recorded


@pytest.mark.parametrize(
    ("recorder", "replayer"),
    [("langchain-session", "openai-agents"), ("openai-agents", "langchain-session")],
)
def test_a_cassette_recorded_by_one_library_serves_another(
    recorder: str, replayer: str, tmp_path: Path
) -> None:
    # langchain-mcp-adapters speaks through the mcp SDK 1.x, the Agents SDK through 2.x here:
    # both sessions send the same requests, each in its own protocol era.
    own = tmp_path / "own"
    other = tmp_path / "other"
    own.mkdir()
    other.mkdir()
    _, expected = record(SESSIONS[replayer], own)
    cassette, _ = record(SESSIONS[recorder], other)
    assert replay(SESSIONS[replayer], cassette) == expected
