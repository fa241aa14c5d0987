"""Helpers for end-to-end tests that drive the official `mcp` SDK client."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mcp import Client, MCPError
from mcp.types import ElicitResult


async def accept_name(_ctx: Any, _params: Any) -> ElicitResult:
    """An elicitation callback that always answers with the name Ada."""
    return ElicitResult(action="accept", content={"name": "Ada"})


@dataclass
class Outcome:
    """What an SDK client saw in the standard demo session, comparable across runs."""

    protocol_version: str | None = None
    tools: list[str] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    progress: list[tuple[float, float | None, str | None]] = field(default_factory=list)


def _plain(result: Any) -> Any:
    """A result without the volatile server info in `_meta`."""
    data = result.model_dump(mode="json", exclude_none=True, by_alias=True)
    data.pop("_meta", None)
    return data


async def demo_session(client: Client) -> Outcome:
    """The standard demo session: list, call with progress, errors, elicitation, resource, prompt."""
    out = Outcome(protocol_version=client.protocol_version)
    out.tools = [t.name for t in (await client.list_tools()).tools]

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        out.progress.append((progress, total, message))

    out.results.append(
        _plain(await client.call_tool("add", {"a": 1, "b": 2}, progress_callback=on_progress))
    )
    try:
        await client.call_tool("fail", {})
        out.results.append("no error")
    except MCPError as exc:
        out.results.append({"code": exc.error.code, "message": exc.error.message})
    out.results.append(_plain(await client.call_tool("divide", {"a": 1, "b": 0})))
    out.results.append(_plain(await client.call_tool("greet", {})))
    out.results.append(_plain(await client.read_resource("demo://readme")))
    out.results.append(_plain(await client.get_prompt("review", {"code": "x = 1"})))
    return out
