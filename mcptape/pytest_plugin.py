"""mcptape's pytest plugin (entry point `pytest11`): replay cassettes as MCP servers in tests."""

from __future__ import annotations
