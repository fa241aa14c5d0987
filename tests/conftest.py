"""Shared fixtures: paths to the example server, commands that run mcptape, free ports."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DEMO_SERVER = EXAMPLES / "demo_server.py"


def demo_server_cmd(*args: str) -> list[str]:
    """The example MCP server (official `mcp` SDK) as a command: stdio by default."""
    return [sys.executable, str(DEMO_SERVER), *args]


def mcptape_cmd(*args: str) -> list[str]:
    """mcptape's CLI as a command, run with this interpreter."""
    return [sys.executable, "-m", "mcptape", *args]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
