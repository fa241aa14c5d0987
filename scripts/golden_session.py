"""Drives one MCP session with the official `mcp` SDK client, for recording golden cassettes.

    python scripts/golden_session.py everything auto -- node .../server-everything/dist/index.js stdio
    python scripts/golden_session.py demo legacy --url http://127.0.0.1:8000/mcp

Profiles: `everything` (the reference server @modelcontextprotocol/server-everything) and
`demo` (examples/demo_server.py, the official Python SDK's MCPServer). Each session touches
tools (one with progress), resources, prompts, and calls that fail.
"""

from __future__ import annotations

import sys
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import ElicitResult


async def answer(_ctx: Any, _params: Any) -> ElicitResult:
    return ElicitResult(action="accept", content={"name": "Ada"})


async def attempt(what: str, call: Any) -> None:
    try:
        result = await call
        print(f"{what}: ok{' (isError)' if getattr(result, 'is_error', False) else ''}")
    except MCPError as exc:
        print(f"{what}: error {exc.error.code} {exc.error.message}")


async def everything(c: Client) -> None:
    async def progress(p: float, total: float | None, message: str | None) -> None:
        print(f"  progress {p}/{total}")

    await attempt("tools/list", c.list_tools())
    await attempt("echo", c.call_tool("echo", {"message": "hello from mcptape"}))
    await attempt("get-sum", c.call_tool("get-sum", {"a": 2, "b": 40}))
    await attempt(
        "get-structured-content", c.call_tool("get-structured-content", {"location": "New York"})
    )
    await attempt(
        "long-running",
        c.call_tool(
            "trigger-long-running-operation",
            {"duration": 0.2, "steps": 2},
            progress_callback=progress,
        ),
    )
    await attempt("unknown tool", c.call_tool("no-such-tool", {}))
    await attempt("resources/list", c.list_resources())
    await attempt(
        "resources/read", c.read_resource("demo://resource/static/document/architecture.md")
    )
    await attempt(
        "missing resource", c.read_resource("demo://resource/static/document/no-such-doc.md")
    )
    await attempt("prompts/list", c.list_prompts())
    await attempt("simple-prompt", c.get_prompt("simple-prompt", {}))
    await attempt("args-prompt", c.get_prompt("args-prompt", {"city": "Paris", "state": "France"}))


async def demo(c: Client) -> None:
    async def progress(p: float, total: float | None, message: str | None) -> None:
        print(f"  progress {p}/{total} {message}")

    await attempt("tools/list", c.list_tools())
    await attempt("add", c.call_tool("add", {"a": 1, "b": 2}, progress_callback=progress))
    await attempt("echo", c.call_tool("echo", {"message": "hello"}))
    await attempt("fail", c.call_tool("fail", {}))
    await attempt("divide by zero", c.call_tool("divide", {"a": 1, "b": 0}))
    await attempt("greet", c.call_tool("greet", {}))
    await attempt("resources/list", c.list_resources())
    await attempt("resources/read", c.read_resource("demo://readme"))
    await attempt("missing resource", c.read_resource("demo://nope"))
    await attempt("prompts/list", c.list_prompts())
    await attempt("review", c.get_prompt("review", {"code": "print(1)"}))


PROFILES = {"everything": everything, "demo": demo}


async def run(profile: str, mode: str, target: Any) -> None:
    async with Client(
        target, mode=mode, elicitation_callback=answer, log_level="info", cache=None
    ) as c:
        print(f"{profile}: protocol {c.protocol_version}")
        await PROFILES[profile](c)


def main(argv: list[str]) -> None:
    profile, mode, rest = argv[0], argv[1], argv[2:]
    if rest[:1] == ["--url"]:
        target: Any = rest[1]
    else:
        cmd = rest[rest.index("--") + 1 :]
        target = StdioServerParameters(command=cmd[0], args=cmd[1:])
    anyio.run(run, profile, mode, target)


if __name__ == "__main__":
    main(sys.argv[1:])
