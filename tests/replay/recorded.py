"""For the replay end-to-end tests: record the demo server through `mcptape record` with the SDK.

Not a test module. Imports the `mcp` SDK, so only the e2e tests use it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, MCPError, StdioServerParameters
from mcp.types import Implementation

from tests.conftest import DEMO_SERVER, mcptape_cmd
from tests.sdk_helpers import Outcome, _plain, accept_name, demo_session

ERAS = {"auto": "2026-07-28", "legacy": "2025-11-25"}
"""SDK connect mode -> the protocol version the demo server settles on."""

OTHER_CLIENT = Implementation(name="some-other-client", version="9.9.9")


@dataclass
class Recording:
    path: Path
    mode: str
    outcome: Outcome
    logs: list[Any]


def stdio(cmd: list[str]) -> StdioServerParameters:
    return StdioServerParameters(command=cmd[0], args=cmd[1:])


def record_demo(path: Path, mode: str) -> Recording:
    """Records the standard demo session (and, in 2026, a listen) into `path`."""
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params.data)

    async def run() -> Outcome:
        cmd = mcptape_cmd("record", "-q", "-o", str(path), "--", sys.executable, str(DEMO_SERVER))
        with anyio.fail_after(60):
            async with Client(
                stdio(cmd),
                mode=mode,
                elicitation_callback=accept_name,
                log_level="info",
                logging_callback=on_log,
            ) as c:
                out = await demo_session(c)
                if mode == "auto":
                    async with c.listen(tools_list_changed=True):
                        pass
                return out

    outcome = anyio.run(run)
    return Recording(path, mode, outcome, logs)


async def unmatched_call(client: Client) -> dict[str, Any]:
    """A call the recording never made: returns the JSON-RPC error the replay answers."""
    try:
        await client.call_tool("weather", {"city": "Paris"})
    except MCPError as exc:
        return {"code": exc.error.code, "message": exc.error.message, "data": exc.error.data}
    raise AssertionError("the replay answered a request that was never recorded")


async def reordered_session(client: Client) -> dict[str, Any]:
    """The demo session's operations in another order, results keyed by operation."""
    out: dict[str, Any] = {}
    out["tools"] = [
        t.name for t in (await client.list_tools()).tools
    ]  # the SDK lists tools before a first call anyway
    out["prompt"] = _plain(await client.get_prompt("review", {"code": "x = 1"}))
    out["resource"] = _plain(await client.read_resource("demo://readme"))
    out["greet"] = _plain(await client.call_tool("greet", {}))
    out["divide"] = _plain(await client.call_tool("divide", {"a": 1, "b": 0}))
    out["add"] = _plain(await client.call_tool("add", {"a": 1, "b": 2}))
    return out


def by_operation(outcome: Outcome) -> dict[str, Any]:
    """The demo session's outcome keyed like `reordered_session`."""
    r = outcome.results
    return {
        "prompt": r[5],
        "resource": r[4],
        "greet": r[3],
        "divide": r[2],
        "add": r[0],
        "tools": outcome.tools,
    }
