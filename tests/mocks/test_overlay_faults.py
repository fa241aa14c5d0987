"""A fault rule that changes an answer (`error`, `tool_error`) and the overlay declaring the
same answer give a client the same session, in process, for both client eras
(docs/mocks.md, "Fault rules are overlay rules")."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from mcp import Client, MCPError

import mcptape
from mcptape.mocks import RpcError, ToolError
from mcptape.replay.memory import replay_transport
from tests.conftest import ROOT
from tests.replay.recorded import ERAS
from tests.sdk_helpers import accept_name

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]

CASSETTES = {
    era: ROOT / "cassettes" / "python-sdk" / era / "stdio.jsonl"
    for era in ("2025-11-25", "2026-07-28")
}
"""The demo server's standard session as recorded in each era."""
CASES = {
    "error": ({"tool": "divide", "action": "error", "code": -32042, "message": "m"}, RpcError(-32042, "m")),
    "tool_error": ({"tool": "divide", "action": "tool_error", "text": "t"}, ToolError("t")),
}  # fmt: skip
"""A fault rule, and the answer an overlay declares for the same tool."""


async def session(client: Client) -> list[Any]:
    """What a client sees of a session: the tool list, then each call's result or error."""
    seen: list[Any] = [[t.name for t in (await client.list_tools()).tools]]
    progress: list[Any] = []

    async def on_progress(progress_: float, total: float | None, message: str | None) -> None:
        progress.append((progress_, total, message))

    calls = [("add", {"a": 1, "b": 2}), ("divide", {"a": 1, "b": 0}), ("greet", {})]
    for name, args in calls:
        try:
            result = await client.call_tool(name, args, progress_callback=on_progress)
            data = result.model_dump(mode="json", exclude_none=True, by_alias=True)
            data.get("_meta", {}).pop("serverInfo", None)
            seen.append(data)
        except MCPError as exc:
            seen.append((exc.error.code, exc.error.message, exc.error.data))
    seen.append(progress)
    return seen


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("recorded", sorted(CASSETTES))
@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_a_fault_rule_and_its_overlay_declaration_answer_alike(
    case: str, recorded: str, mode: str
) -> None:
    rule, answer = CASES[case]
    options: dict[str, Any] = {"mode": mode, "elicitation_callback": accept_name}
    with anyio.fail_after(30):
        transport = replay_transport(CASSETTES[recorded], faults=[rule], on_note=None)
        async with Client(transport, **options) as c:
            faulted = await session(c)
        with mcptape.mock(cassette=CASSETTES[recorded]) as mock:
            mock.tool("divide", answer)
            async with mock.connect(**options) as c:
                overlaid = await session(c)
        async with Client(replay_transport(CASSETTES[recorded], on_note=None), **options) as c:
            plain = await session(c)
    assert faulted == overlaid
    assert faulted[2] != plain[2]  # the rule did change divide's answer
    assert [x for i, x in enumerate(faulted) if i != 2] == [
        x for i, x in enumerate(plain) if i != 2
    ]
