"""A small MCP server that asks for the client's roots as server-filesystem does, on the `mcp` SDK.

Right after the client's `notifications/initialized` (while no client request is in flight) it
sends `roots/list`; the `roots` tool answers with the roots the client gave. Legacy protocol only
(2026-07-28 has no server-to-client requests outside a request).
"""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import NotificationParams

warnings.simplefilter("ignore", MCPDeprecationWarning)

mcp = MCPServer(name="roots", version="1.0.0")
seen: list[str] = []


async def on_initialized(ctx: object, _params: NotificationParams) -> None:
    answer = await ctx.session.list_roots()  # type: ignore[attr-defined]
    seen[:] = [str(r.uri) for r in answer.roots]


mcp._lowlevel_server.add_notification_handler(
    "notifications/initialized", NotificationParams, on_initialized
)


@mcp.tool(description="The roots the client gave when asked after initialized.")
def roots() -> str:
    return ",".join(seen) or "(none)"


if __name__ == "__main__":
    mcp.run()
