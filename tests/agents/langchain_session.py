"""A langchain-mcp-adapters session against one stdio MCP server; run inside .venv-agents/langchain.

    python langchain_session.py session COMMAND [ARG...]   # one launch: client.session("calc")
    python langchain_session.py default COMMAND [ARG...]   # the default: a launch per operation

The server is configured as users configure `MultiServerMCPClient` (a `connections` dict).
The session loads the tools as LangChain tools, invokes each through LangChain (as an agent
would, with a tool call) and reads the resource as LangChain blobs. It prints a summary that is
the same for the same server answers.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.resources import load_mcp_resources
from langchain_mcp_adapters.tools import load_mcp_tools

CALLS = [("add", {"a": 2, "b": 3}), ("greet", {"name": "Ada"})]


def show(tools: list[Any], results: list[Any], blobs: list[Any]) -> None:
    for tool in sorted(tools, key=lambda t: t.name):
        print(f"tool {tool.name}: {tool.description} {sorted(tool.args)}")
    for (name, args), message in zip(CALLS, results, strict=True):
        # content blocks carry a random id: the text is what the server said
        texts = [block["text"] for block in message.content if block.get("type") == "text"]
        print(f"call {name}({args}): {texts} status={message.status}")
    for blob in blobs:
        print(f"resource {blob.metadata['uri']} ({blob.mimetype}): {blob.as_string()!r}")


async def call_each(tools: list[Any]) -> list[Any]:
    by_name = {t.name: t for t in tools}
    return [
        await by_name[name].ainvoke(
            {"type": "tool_call", "id": f"call-{i}", "name": name, "args": args}
        )
        for i, (name, args) in enumerate(CALLS)
    ]


async def main(mode: str, command: list[str]) -> None:
    client = MultiServerMCPClient(
        {"calc": {"command": command[0], "args": command[1:], "transport": "stdio"}}
    )
    if mode == "session":
        async with client.session("calc") as session:
            tools = await load_mcp_tools(session)
            results = await call_each(tools)
            blobs = await load_mcp_resources(session)
    else:
        tools = await client.get_tools()
        results = await call_each(tools)
        blobs = await client.get_resources("calc")
    show(tools, results, blobs)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2:]))
