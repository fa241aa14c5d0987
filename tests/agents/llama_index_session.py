"""A llama-index-tools-mcp session against one stdio MCP server; run inside .venv-agents/llama-index.

    python llama_index_session.py tools COMMAND [ARG...]   # one launch: the tools, listed
    python llama_index_session.py calls COMMAND [ARG...]   # a launch per operation

The server is configured as users configure it, `BasicMCPClient(command, args=[...])`, whose
every operation opens a session of its own (so starts the server anew). `tools` loads the
tools as LlamaIndex tools; `calls` then calls each (as an agent would) and reads the resource.
It prints a summary that is the same for the same server answers.
"""

from __future__ import annotations

import asyncio
import sys

from llama_index.tools.mcp import BasicMCPClient, McpToolSpec


async def main(mode: str, command: list[str]) -> None:
    client = BasicMCPClient(command[0], args=command[1:])
    tools = await McpToolSpec(client=client).to_tool_list_async()
    for tool in sorted(tools, key=lambda t: t.metadata.name):
        print(f"tool {tool.metadata.name}: {tool.metadata.description}")
    if mode == "calls":
        by_name = {t.metadata.name: t for t in tools}
        for name, args in [("add", {"a": 2, "b": 3}), ("greet", {"name": "Ada"})]:
            output = await by_name[name].acall(**args)
            print(f"call {name}({args}):", [c.text for c in output.raw_output.content])
        read = await client.read_resource("agents://motto")
        print("motto:", [c.text for c in read.contents])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
