"""A pydantic-ai session against one stdio MCP server; run inside .venv-agents/pydantic-ai.

    python pydantic_ai_session.py COMMAND [ARG...]

The server is configured the way users configure it, an `mcpServers` JSON file read by
`load_mcp_toolsets`. An agent on pydantic-ai's deterministic `TestModel` (no network) calls
every tool; then the toolset lists the tools and reads the resource itself. It prints a
summary that is the same for the same server answers.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from pydantic_ai import Agent
from pydantic_ai.mcp import MCPToolset, load_mcp_toolsets
from pydantic_ai.models.test import TestModel


async def main(command: list[str]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "mcp.json"
        config.write_text(
            json.dumps({"mcpServers": {"calc": {"command": command[0], "args": command[1:]}}})
        )
        toolsets = load_mcp_toolsets(config)
    agent = Agent(TestModel(), toolsets=toolsets)
    async with agent:  # one server launch for the whole session
        result = await agent.run("Use every tool.")
        print("agent output:", result.output)
        for message in result.all_messages():
            for part in message.parts:
                if part.part_kind in ("tool-call", "tool-return"):
                    print(
                        f"  {part.part_kind} {part.tool_name}:",
                        getattr(part, "args", None) or part.content,
                    )
        toolset = toolsets[0].wrapped  # the MCPToolset under the name prefix
        assert isinstance(toolset, MCPToolset)
        tools = await toolset.list_tools()
        print("tools:", sorted(t.name for t in tools))
        print("add(2, 3):", await toolset.direct_call_tool("add", {"a": 2, "b": 3}))
        print("greet(Ada):", await toolset.direct_call_tool("greet", {"name": "Ada"}))
        resources = await toolset.list_resources()
        print("resources:", [str(r.uri) for r in resources])
        print("motto:", await toolset.read_resource("agents://motto"))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
