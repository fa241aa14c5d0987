"""mcptape: record, replay and diff Model Context Protocol traffic.

The public API. Names load on first use, so `import mcptape` stays cheap for every command.

    async with mcptape.use_cassette("tests/cassettes/demo.jsonl", server=["python", "server.py"]) as tape:
        await tape.client.call_tool("add", {"a": 1, "b": 2})
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Cassette",
    "CassetteError",
    "ConfigError",
    "McpTapeError",
    "NoMatchError",
    "RecordMode",
    "Tape",
    "__version__",
    "load",
    "replay_transport",
    "save",
    "use_cassette",
]

_LAZY: dict[str, str] = {
    "Cassette": "mcptape.cassette",
    "load": "mcptape.cassette",
    "save": "mcptape.cassette",
    "CassetteError": "mcptape.errors",
    "ConfigError": "mcptape.errors",
    "McpTapeError": "mcptape.errors",
    "NoMatchError": "mcptape.errors",
    "RecordMode": "mcptape.api",
    "Tape": "mcptape.api",
    "use_cassette": "mcptape.api",
    "replay_transport": "mcptape.replay.memory",
}

if TYPE_CHECKING:
    from mcptape.api import RecordMode, Tape, use_cassette
    from mcptape.cassette import Cassette, load, save
    from mcptape.errors import CassetteError, ConfigError, McpTapeError, NoMatchError
    from mcptape.replay.memory import replay_transport


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcptape' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
