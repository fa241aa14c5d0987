"""`Background` (behind `tape.url`) finds where its child listens in the line the child prints:
`mcptape serve: serving ...` and `mcptape record: proxying ...`, and the bare `mcptape:` form an
older mcptape printed."""

from __future__ import annotations

import sys

import pytest

from mcptape.proc.background import Background

URL = "http://127.0.0.1:8123/mcp"


@pytest.mark.parametrize(
    "line",
    [
        f"mcptape serve: serving cassettes/my demo.jsonl at {URL} (streamable-http; Ctrl-C to stop)",
        f"mcptape record: proxying {URL} -> http://127.0.0.1:8000/mcp",
        f"mcptape: serving cassettes/demo.jsonl at {URL} (streamable-http; Ctrl-C to stop)",
        f"mcptape: proxying {URL} -> http://127.0.0.1:8000/mcp",
    ],
)
def test_the_url_is_read_from_the_line_the_child_prints(line: str) -> None:
    child = [sys.executable, "-c", f"import sys; print({line!r}, file=sys.stderr)"]
    running = Background(child, what="the child")
    assert running.url == URL
    running.stop()
