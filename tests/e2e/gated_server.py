"""A test MCP server (official SDK, Streamable HTTP) whose one tool waits for the test's signal.

`gated` reports progress, then waits until someone POSTs to `/release` (directly, not through
the proxy), then returns. A test releases it only after its client has seen the progress
notification, so a proxy that buffers the SSE response until its end deadlocks the call.

    python tests/e2e/gated_server.py PORT     # http://127.0.0.1:PORT/mcp, release: POST /release
"""

from __future__ import annotations

import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from starlette.requests import Request
from starlette.responses import PlainTextResponse

mcp = MCPServer(name="gated")
_release: list[anyio.Event] = []


def _gate() -> anyio.Event:
    if not _release:
        _release.append(anyio.Event())
    return _release[0]


@mcp.tool(description="Report progress, then wait for POST /release.")
async def gated(ctx: Context) -> str:
    await ctx.report_progress(1, 2, "waiting for release")
    await _gate().wait()
    return "released"


@mcp.custom_route("/release", methods=["POST"])
async def release(_request: Request) -> PlainTextResponse:
    _gate().set()
    return PlainTextResponse("ok")


if __name__ == "__main__":
    mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
