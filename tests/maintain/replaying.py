"""For the maintenance tests: what the official SDK client gets from a cassette, in process.

Not a test module. The calls are taken from a cassette (tools, resources, prompts, lists)
and made again through `mcp.Client` over `mcptape.replay.memory`; results are compared as
plain JSON without the server info the SDK adds.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import Client, MCPError

from mcptape.cassette import load
from mcptape.pairing import pair
from mcptape.replay.memory import replay_transport
from mcptape.versions import META_SERVER_INFO
from tests.sdk_helpers import accept_name

ROOT = Path(__file__).resolve().parents[2]
SLOW = {"everything/2025-11-25/streamable-http.jsonl"}
"""Every in-process SDK session on it takes 10 s (test_golden's too): left out of the parametrized tests."""
GOLDEN = sorted(
    p
    for p in (ROOT / "cassettes").glob("*/*/*.jsonl")
    if str(p.relative_to(ROOT / "cassettes")) not in SLOW
)
OPS = (
    "tools/call",
    "resources/read",
    "prompts/get",
    "tools/list",
    "resources/list",
    "prompts/list",
)

Call = tuple[str, dict[str, Any]]


def calls_of(path: Path, names: Sequence[str] | None = None) -> list[Call]:
    """The cassette's client calls (first tries only), optionally only those about `names`."""
    out = []
    for ex in pair(load(path).events).exchanges:
        if (
            ex.method in OPS
            and ex.retry_of is None
            and (names is None or ex.name in names or ex.method in names)
        ):
            out.append((ex.method, dict(ex.msg.get("params") or {})))
    return out


def plain(value: Any) -> Any:
    data = value.model_dump(mode="json", by_alias=True, exclude_unset=True)
    meta = {k: v for k, v in (data.pop("_meta", None) or {}).items() if k != META_SERVER_INFO}
    if meta:
        data["_meta"] = meta
    return data


async def _redo(client: Client, method: str, p: dict[str, Any]) -> Any:
    if method == "tools/call":
        return await client.call_tool(p["name"], p.get("arguments"))
    if method == "resources/read":
        return await client.read_resource(p["uri"])
    if method == "prompts/get":
        return await client.get_prompt(p["name"], p.get("arguments"))
    lister = {
        "tools/list": client.list_tools,
        "resources/list": client.list_resources,
        "prompts/list": client.list_prompts,
    }[method]
    return await lister(cursor=p.get("cursor"))


async def results(path: Path, calls: Sequence[Call], *, strict: bool = False) -> list[Any]:
    """What the SDK client gets for each call replayed from `path` (errors as code and message)."""
    out: list[Any] = []
    with anyio.fail_after(30):
        transport = replay_transport(path, strict=strict, on_note=None)
        async with Client(
            transport, mode="auto", elicitation_callback=accept_name, log_level="info", cache=None
        ) as client:
            for method, params in calls:
                try:
                    out.append(plain(await _redo(client, method, params)))
                except MCPError as exc:
                    out.append({"error": exc.error.code, "message": exc.error.message})
    return out
