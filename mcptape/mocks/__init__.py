"""Declared MCP servers (`mcptape.mock()`): declarations, their answers through the replay
engine, the journal of calls, the file form and the stub writer. See docs/mocks.md.

`declare` (values), `server` (declarations -> the engine's answers), `overlaid` (declarations
-> overlay rules), `journal` (calls to assert on), `file` (TOML/JSON <-> declarations), `stub`
(a cassette -> declarations) are sans-IO; `mock` is the Python API, `threaded` serves a mock
over HTTP from a thread, and `stdio_socket` over a Unix socket that `relay`, the process of
`mock.command`, reaches.
"""

from .declare import RpcError, ToolError, answers, recorded

__all__ = ["RpcError", "ToolError", "answers", "recorded"]
