"""A small MCP server for mcptape's demo and tests, built on the official `mcp` SDK.

It has tools (one reports progress and logs, one fails, one asks the user a question),
a resource and a prompt. Run it over stdio (the default), Streamable HTTP or HTTP+SSE:

    python examples/demo_server.py                  # stdio
    python examples/demo_server.py http 8000        # http://127.0.0.1:8000/mcp
    python examples/demo_server.py sse 8001         # http://127.0.0.1:8001/sse

Pass --v2 (or set DEMO_SERVER_VARIANT=v2) for a second release of the same server (a tool added and
one removed, a new required argument, a reworded description, a changed result and error),
which the diff examples compare against the first.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Annotated

from mcp.server.mcpserver import Context, Elicit, MCPServer, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from pydantic import BaseModel

# The demo logs through the deprecated (but still live) logging feature on purpose.
warnings.simplefilter("ignore", MCPDeprecationWarning)

V2 = os.environ.get("DEMO_SERVER_VARIANT") == "v2" or "--v2" in sys.argv

mcp = MCPServer(
    name="mcptape-demo", version="2.0.0" if V2 else "1.0.0", instructions="A demo server."
)


@mcp.tool(description="Add two integers." if not V2 else "Add two integers and return the sum.")
async def add(a: int, b: int, ctx: Context) -> str:
    """Add two numbers, reporting progress and a log line on the way."""
    await ctx.report_progress(1, 2, "adding")
    await ctx.info(f"adding {a} and {b}")
    await ctx.report_progress(2, 2, "done")
    return str(a + b)


if V2:

    @mcp.tool(description="Echo a message back, in a given tone.")
    def echo(message: str, tone: str) -> str:
        return f"{message} ({tone})"

    @mcp.tool(description="Multiply two integers.")
    def multiply(a: int, b: int) -> int:
        return a * b

else:

    @mcp.tool(description="Echo a message back.")
    def echo(message: str) -> str:
        return message

    @mcp.tool(description="Return the current weather (a canned answer).")
    def weather(city: str) -> str:
        return f"Sunny in {city}"


@mcp.tool(description="Divide a by b; dividing by zero is a tool error (isError).")
def divide(a: float, b: float) -> float:
    if b == 0:
        raise ToolError("cannot divide by zero")
    return a / b


@mcp.tool(description="Always fails with a JSON-RPC error.")
def fail(reason: str = "boom") -> str:
    if V2:
        raise MCPError(code=-32001, message=f"failed: {reason}")
    raise MCPError(code=-32000, message=f"failed: {reason}")


class Name(BaseModel):
    name: str


async def ask_name() -> Elicit[Name]:
    return Elicit("What is your name?", Name)


@mcp.tool(description="Greet the user by the name they give.")
async def greet(name: Annotated[Name, Resolve(ask_name)]) -> str:
    return f"Hello, {name.name}!" if not V2 else f"Hi, {name.name}!"


@mcp.resource("demo://readme", mime_type="text/plain")
def readme() -> str:
    """The demo's readme."""
    return "mcptape demo resource"


@mcp.prompt()
def review(code: str) -> str:
    """Ask for a code review."""
    return f"Please review this code:\n{code}"


def main(argv: list[str]) -> None:
    argv = [a for a in argv if a != "--v2"]
    transport = argv[1] if len(argv) > 1 else "stdio"
    if transport == "stdio":
        mcp.run("stdio")
    elif transport in ("http", "streamable-http"):
        mcp.run("streamable-http", host="127.0.0.1", port=int(argv[2]))
    elif transport == "sse":
        mcp.run("sse", host="127.0.0.1", port=int(argv[2]))
    else:
        sys.exit(f"demo_server: unknown transport {transport!r}; use stdio, http PORT or sse PORT")


if __name__ == "__main__":
    main(sys.argv)
