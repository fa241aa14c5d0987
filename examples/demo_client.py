"""A small MCP client on the official `mcp` SDK: runs one session against a stdio server command.

    python examples/demo_client.py -- python examples/demo_server.py
    python examples/demo_client.py --legacy -- mcptape record -o s.jsonl -- python examples/demo_server.py
    python examples/demo_client.py -- mcptape replay s.jsonl

It lists the tools, calls one with progress, one that fails, one that asks for the user's
name (answered "Ada"), reads a resource and gets a prompt, printing what it sees.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ElicitResult


async def answer(_ctx: Any, params: Any) -> ElicitResult:
    print(f"  server asks: {params.message!r} -> Ada")
    return ElicitResult(action="accept", content={"name": "Ada"})


def text(result: Any) -> str:
    parts = (
        getattr(result, "content", None)
        or getattr(result, "contents", None)
        or getattr(result, "messages", [])
    )
    out = []
    for p in parts:
        p = getattr(p, "content", p)
        out.append(getattr(p, "text", type(p).__name__))
    flag = " (isError)" if getattr(result, "is_error", False) else ""
    return " | ".join(out) + flag


async def session(command: list[str], mode: str) -> None:
    params = StdioServerParameters(command=command[0], args=command[1:])
    async with Client(params, mode=mode, elicitation_callback=answer, log_level="info") as client:  # type: ignore[arg-type]
        print(f"connected, protocol {client.protocol_version}")
        tools = await client.list_tools()
        print("tools:", ", ".join(t.name for t in tools.tools))

        async def progress(p: float, total: float | None, message: str | None) -> None:
            print(f"  progress {p}/{total} {message or ''}")

        print(
            "add(1, 2) =",
            text(await client.call_tool("add", {"a": 1, "b": 2}, progress_callback=progress)),
        )
        try:
            await client.call_tool("fail", {})
        except MCPError as exc:
            print(f"fail() -> error {exc.error.code}: {exc.error.message}")
        print("divide(1, 0) =", text(await client.call_tool("divide", {"a": 1, "b": 0})))
        print("greet() =", text(await client.call_tool("greet", {})))
        print("demo://readme =", text(await client.read_resource("demo://readme")))
        print("review prompt =", text(await client.get_prompt("review", {"code": "x = 1"})))


def main(argv: list[str]) -> None:
    mode = "legacy" if "--legacy" in argv else "auto"
    if "--" not in argv:
        sys.exit("usage: demo_client.py [--legacy] -- SERVER COMMAND...")
    command = argv[argv.index("--") + 1 :]
    anyio.run(session, command, mode)


if __name__ == "__main__":
    main(sys.argv[1:])
