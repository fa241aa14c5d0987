"""An mcp-use session against one stdio MCP server; run inside .venv-agents/mcp-use.

    python mcp_use_session.py COMMAND [ARG...]

The server is configured as users configure it, the `mcpServers` shape given to
`MCPClient.from_dict`. One session lists the tools, calls both and reads the resource. It
prints a summary that is the same for the same server answers.
"""

from __future__ import annotations

import asyncio
import os
import sys


async def main(command: list[str]) -> None:
    # mcp-use sends anonymous usage events unless told not to: no network in a test
    os.environ["MCP_USE_ANONYMIZED_TELEMETRY"] = "false"
    from mcp_use import MCPClient

    client = MCPClient.from_dict(
        {"mcpServers": {"calc": {"command": command[0], "args": command[1:]}}}
    )
    session = await client.create_session("calc")
    try:
        for tool in sorted(await session.list_tools(), key=lambda t: t.name):
            print(f"tool {tool.name}: {tool.description} {sorted(tool.inputSchema['properties'])}")
        for name, args in [("add", {"a": 2, "b": 3}), ("greet", {"name": "Ada"})]:
            result = await session.call_tool(name, args)
            print(f"call {name}({args}):", [c.text for c in result.content], result.isError)
        for resource in await session.list_resources():
            read = await session.read_resource(resource.uri)
            print(f"resource {resource.uri}:", [c.text for c in read.contents])
    finally:
        await client.close_all_sessions()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
