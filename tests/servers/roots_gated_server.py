"""A small MCP server that lists its `files` tool only to clients declaring `roots`, on the `mcp` SDK.

Its `tools/list` answer depends on what the client declared, so two recordings of the same
request differ: a replay must serve each client the one that fits. Runs on stdio, or on
Streamable HTTP with `http PORT`; answers in either protocol era.
"""

from __future__ import annotations

import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ClientCapabilities, ListToolsResult, RootsCapability

mcp = MCPServer(name="roots-gated", version="1.0.0")


@mcp.tool(description="Files under the client's roots (listed only to clients with roots).")
def files() -> str:
    return "(files)"


@mcp.tool(description="Echo a message back.")
def echo(message: str) -> str:
    return message


_listed = mcp._lowlevel_server.get_request_handler("tools/list")
assert _listed is not None


async def list_tools(ctx: Any, params: Any) -> ListToolsResult:
    result: ListToolsResult = await _listed.handler(ctx, params)
    if ctx.session.check_client_capability(ClientCapabilities(roots=RootsCapability())):
        return result
    return result.model_copy(update={"tools": [t for t in result.tools if t.name != "files"]})


mcp._lowlevel_server.add_request_handler("tools/list", _listed.params_type, list_tools)


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        mcp.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        mcp.run()
