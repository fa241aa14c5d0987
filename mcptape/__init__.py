"""mcptape: record, replay and diff Model Context Protocol traffic.

The public API. Names load on first use, so `import mcptape` stays cheap for every command.

    async with mcptape.use_cassette("tests/cassettes/demo.jsonl", server=["python", "server.py"]) as tape:
        await tape.client.call_tool("add", {"a": 1, "b": 2})
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mcptape._version import __version__

__all__ = [
    "Cassette",
    "CassetteError",
    "ConfigError",
    "MatchPolicy",
    "Matcher",
    "McpTapeError",
    "NoMatchError",
    "RecordMode",
    "ServerStartError",
    "Subject",
    "Tape",
    "UnplayedExchangesError",
    "__version__",
    "load",
    "match_policy",
    "mock",
    "recorded",
    "register_matcher",
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
    "RecordMode": "mcptape.tape",
    "ServerStartError": "mcptape.tape",
    "Tape": "mcptape.tape",
    "MatchPolicy": "mcptape.matching",
    "Matcher": "mcptape.matching",
    "Subject": "mcptape.matching",
    "match_policy": "mcptape.matching",
    "register_matcher": "mcptape.matching",
    "UnplayedExchangesError": "mcptape.replay.memory",
    "use_cassette": "mcptape.api",
    "mock": "mcptape.mocks.mock",
    "recorded": "mcptape.mocks.declare",
    "replay_transport": "mcptape.replay.memory",
}

if TYPE_CHECKING:
    from mcptape.api import use_cassette
    from mcptape.cassette import Cassette, load, save
    from mcptape.errors import CassetteError, ConfigError, McpTapeError, NoMatchError
    from mcptape.matching import Matcher, MatchPolicy, Subject, match_policy, register_matcher
    from mcptape.mocks.declare import recorded
    from mcptape.mocks.mock import mock
    from mcptape.replay.memory import UnplayedExchangesError, replay_transport
    from mcptape.tape import RecordMode, ServerStartError, Tape


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'mcptape' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted(__all__)
