"""The MCP server the agent-library tests record: two tools with arguments and one resource.

It runs over stdio on whichever `mcp` SDK the environment has: `MCPServer` on 2.x,
`FastMCP` (its name before 2.x) on 1.x, so every library's environment can start it.
"""

from __future__ import annotations

try:
    from mcp.server.mcpserver import MCPServer as Server
except ImportError:  # the 1.x SDK (langchain-mcp-adapters needs mcp<2)
    from mcp.server.fastmcp import FastMCP as Server

mcp = Server(name="agents-test")


@mcp.tool(description="Add two integers.")
def add(a: int, b: int) -> int:
    return a + b


@mcp.tool(description="Greet someone by name.")
def greet(name: str) -> str:
    return f"Hello, {name}!"


@mcp.resource("agents://motto", mime_type="text/plain")
def motto() -> str:
    """A fixed sentence to read back."""
    return "record once, replay forever"


if __name__ == "__main__":
    mcp.run("stdio")
