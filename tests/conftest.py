"""Shared fixtures: paths to the example server, commands that run mcptape, free ports."""

from __future__ import annotations

import atexit
import os
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
DEMO_SERVER = EXAMPLES / "demo_server.py"

# replays of big cassettes cache their index files (`mcptape.replay.cache`): here, not in ~/.cache
# (the mcptape processes the tests start, and pytest-xdist's workers, inherit it)
if "MCPTAPE_CACHE_DIR" not in os.environ:
    os.environ["MCPTAPE_CACHE_DIR"] = tempfile.mkdtemp(prefix="mcptape-cache-")
    atexit.register(shutil.rmtree, os.environ["MCPTAPE_CACHE_DIR"], ignore_errors=True)


# Property tests draw the same examples on every run, so that a crash one of them can find is
# found every time (in CI and on a fresh clone alike); HYPOTHESIS_PROFILE=explore draws new ones.
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


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
