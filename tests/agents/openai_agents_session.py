"""An OpenAI Agents SDK session against one stdio MCP server; run inside .venv-agents/openai-agents.

    python openai_agents_session.py COMMAND [ARG...]

The server is configured as users configure it, `MCPServerStdio(params={"command", "args"})`.
An agent runs on a scripted `Model` (no network, no API key): its first turn calls both tools,
its second answers with what they returned. Then the server object lists the tools and reads
the resource itself: the same requests as langchain_session.py's, so each can replay the other's. It prints a summary that is the same for the same server answers.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, set_tracing_disabled
from agents.mcp import MCPServerStdio
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

CALLS = [("add", {"a": 2, "b": 3}), ("greet", {"name": "Ada"})]


class ScriptedModel(Model):
    """Calls every tool of CALLS on its first turn; on the next, says what they returned."""

    async def get_response(
        self, system_instructions: Any, input: Any, *args: Any, **kw: Any
    ) -> ModelResponse:
        outputs = [
            item
            for item in input
            if isinstance(item, dict) and item.get("type") == "function_call_output"
        ]
        if not outputs:
            output: list[Any] = [
                ResponseFunctionToolCall(
                    type="function_call",
                    id=f"fc-{i}",
                    call_id=f"call-{i}",
                    name=name,
                    arguments=json.dumps(args),
                    status="completed",
                )
                for i, (name, args) in enumerate(CALLS)
            ]
        else:
            text = "; ".join(f"{o['call_id']} -> {o['output']}" for o in outputs)
            output = [
                ResponseOutputMessage(
                    type="message",
                    id="msg-1",
                    role="assistant",
                    status="completed",
                    content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
                )
            ]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kw: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the scripted model does not stream")


async def main(command: list[str]) -> None:
    set_tracing_disabled(True)  # tracing would export to the network
    params = {"command": command[0], "args": command[1:]}
    async with MCPServerStdio(name="calc", params=params, cache_tools_list=True) as server:
        agent = Agent(name="calc-agent", model=ScriptedModel(), mcp_servers=[server])
        result = await Runner.run(agent, "Add 2 and 3, then greet Ada.")
        print("agent output:", result.final_output)
        tools = await server.list_tools()
        for tool in sorted(tools, key=lambda t: t.name):
            print(f"tool {tool.name}: {tool.description} {sorted(tool.input_schema['properties'])}")
        resources = await server.list_resources()
        print("resources:", [str(r.uri) for r in resources.resources])
        read = await server.read_resource("agents://motto")
        print("motto:", [c.text for c in read.contents])


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
