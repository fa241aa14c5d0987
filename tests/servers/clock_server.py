"""A small MCP server whose answers hold the current time, built on the official `mcp` SDK.

`now` answers with the clock in milliseconds since the epoch (a bare number: no shape tells
it is a time, only two runs do), `stamp` with an ISO 8601 timestamp and a random UUID (volatile
by shape), `greet` with a fixed greeting. CLOCK_SERVER_VARIANT=v2 changes the greeting: a real
change beside the noise.
"""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime

from mcp.server.mcpserver import MCPServer

V2 = os.environ.get("CLOCK_SERVER_VARIANT") == "v2"

mcp = MCPServer(name="clock", version="2.0.0" if V2 else "1.0.0")


@mcp.tool(description="The current time, in milliseconds since the epoch.")
def now() -> str:
    return str(time.time_ns() // 1_000_000)


@mcp.tool(description="A timestamped, uniquely identified receipt.")
def stamp() -> str:
    return f"receipt {uuid.uuid4()} issued at {datetime.now(UTC).isoformat()}"


@mcp.tool(description="A greeting.")
def greet(name: str) -> str:
    return f"{'Hi' if V2 else 'Hello'}, {name}!"


if __name__ == "__main__":
    mcp.run()
