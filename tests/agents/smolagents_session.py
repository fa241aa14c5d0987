"""A smolagents session against one stdio MCP server; run inside .venv-agents/smolagents.

    python smolagents_session.py COMMAND [ARG...]

The server is configured as users configure it, `MCPClient(StdioServerParameters(...))`, one
connection for the `with` block. A `ToolCallingAgent` on a scripted model (no network) calls
both tools in its first step and gives its final answer in the second; then the tools are
called directly, as smolagents tools. It prints a summary that is the same for the same server
answers. (smolagents' MCP client offers tools only, no resources.)
"""

from __future__ import annotations

import sys
from typing import Any

from mcp import StdioServerParameters
from smolagents import MCPClient, Model, ToolCallingAgent
from smolagents.memory import ActionStep
from smolagents.models import (
    ChatMessage,
    ChatMessageToolCall,
    ChatMessageToolCallFunction,
    MessageRole,
)

CALLS = [("add", {"a": 2, "b": 3}), ("greet", {"name": "Ada"})]


def call(i: int, name: str, args: dict[str, Any]) -> ChatMessageToolCall:
    return ChatMessageToolCall(
        id=f"call-{i}",
        type="function",
        function=ChatMessageToolCallFunction(name=name, arguments=args),
    )


class ScriptedModel(Model):
    """Calls every tool of CALLS in its first step, then answers."""

    def __init__(self) -> None:
        super().__init__(model_id="scripted")
        self.steps = 0

    def generate(self, messages: Any, *args: Any, **kw: Any) -> ChatMessage:
        self.steps += 1
        if self.steps == 1:
            calls = [call(i, name, args) for i, (name, args) in enumerate(CALLS)]
        else:
            calls = [call(len(CALLS), "final_answer", {"answer": "done"})]
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=calls)


def main(command: list[str]) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    with MCPClient(params, structured_output=False) as tools:
        for tool in sorted(tools, key=lambda t: t.name):
            print(f"tool {tool.name}: {tool.description} {sorted(tool.inputs)}")
        agent = ToolCallingAgent(tools=tools, model=ScriptedModel(), verbosity_level=0)
        print("agent output:", agent.run("Add 2 and 3, then greet Ada."))
        for step in agent.memory.steps:
            if isinstance(step, ActionStep):
                print(f"step {step.step_number}: {step.observations!r}")
        by_name = {t.name: t for t in tools}
        print("add(40, 2):", by_name["add"](a=40, b=2))
        print("greet(Grace):", by_name["greet"](name="Grace"))


if __name__ == "__main__":
    main(sys.argv[1:])
