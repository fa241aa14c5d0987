"""The public surface: `__all__` is complete, sorted, and every name resolves."""

from __future__ import annotations

import subprocess
import sys

import mcptape


def test_all_is_sorted_and_resolves() -> None:
    assert mcptape.__all__ == sorted(mcptape.__all__)
    for name in mcptape.__all__:
        assert getattr(mcptape, name) is not None, name


def test_import_is_cheap() -> None:
    code = "import sys, mcptape; print(sorted(m for m in ('anyio', 'mcp', 'mitmproxy', 'deepdiff', 'pydantic') if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"
