"""Moved to `mcptape.replay.cache` (the index cache is the replay's own); this name stays for
the imports that use it."""

from __future__ import annotations

from mcptape.replay.cache import open_for_replay

__all__ = ["open_for_replay"]
