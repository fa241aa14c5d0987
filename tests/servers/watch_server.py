"""A small MCP server with a resource that changes, for subscriptions in both eras, on the `mcp` SDK.

`watch://counter` reads the counter; the `bump` tool increments it and says so: to the
`subscriptions/listen` streams that asked about the URI (2026-07-28), and to a legacy client that
sent `resources/subscribe` for it, with `notifications/resources/updated`.
"""

from __future__ import annotations

import warnings

from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning
from mcp.types import EmptyResult, SubscribeRequestParams, UnsubscribeRequestParams

warnings.simplefilter("ignore", MCPDeprecationWarning)

COUNTER = "watch://counter"
mcp = MCPServer(name="watch", version="1.0.0")
state = {"count": 0}
subscribed: set[str] = set()


@mcp.resource(COUNTER, mime_type="text/plain")
def counter() -> str:
    """How many times `bump` was called."""
    return str(state["count"])


async def subscribe(_ctx: object, params: SubscribeRequestParams) -> EmptyResult:
    subscribed.add(str(params.uri))
    return EmptyResult()


async def unsubscribe(_ctx: object, params: UnsubscribeRequestParams) -> EmptyResult:
    subscribed.discard(str(params.uri))
    return EmptyResult()


mcp._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams, subscribe)
mcp._lowlevel_server.add_request_handler(
    "resources/unsubscribe", UnsubscribeRequestParams, unsubscribe
)


@mcp.tool(description="Increment the counter; subscribers hear of it.")
async def bump(ctx: Context) -> str:
    state["count"] += 1
    await ctx.notify_resource_updated(COUNTER)  # 2026-07-28 listen streams
    if COUNTER in subscribed:  # legacy subscribers
        await ctx.request_context.session.send_resource_updated(COUNTER)
    return str(state["count"])


if __name__ == "__main__":
    mcp.run()
