"""A recorded session -> the declarations of a mock that answers the same (`mcptape stub`).
Sans-IO: a cassette in, a mock file's tree out (`mcptape.mocks.file`).

Tools come with the schemas the recorded `tools/list` gave; each recorded `tools/call` becomes
an answer for its arguments (the same arguments answered more than once: a sequence), with
the progress, log messages and server requests recorded before it. Resources and prompts
answer what their first recorded read or get answered. Results lose the 2026-07-28 envelope
(the mock is served to either era by the bridge, which adds it back).
"""

from __future__ import annotations

from typing import Any

from mcptape.cassette import Cassette
from mcptape.eras import is_input_required, strip_envelope
from mcptape.model import Source
from mcptape.pairing import Exchange, paired
from mcptape.versions import META_SERVER_INFO
from mcptape.wire.jsonrpc import MessageType, request_params

from .file import MARKER


def stub(cassette: Cassette) -> dict[str, Any]:
    """The mock file tree of `cassette`'s recorded session."""
    exchanges = [ex for ex in paired(cassette).exchanges if ex.response is not None and not ex.is_notification]  # fmt: skip
    server = _server(exchanges)
    listed: dict[str, dict[str, Any]] = {}
    calls: dict[str, dict[str, list[Exchange]]] = {}
    resources: dict[str, dict[str, Any]] = {}
    prompts: dict[str, dict[str, Any]] = {}
    for ex in exchanges:
        result = _result(ex)
        params = request_params(ex.msg)
        if ex.method == "tools/list" and isinstance(result, dict):
            for tool in result.get("tools") or []:
                listed.setdefault(str(tool.get("name")), tool)
        elif ex.method == "tools/call" and not is_input_required(ex.result):
            name = str(params.get("name"))
            key = repr(sorted((params.get("arguments") or {}).items()))
            calls.setdefault(name, {}).setdefault(key, []).append(ex)
        elif ex.method == "resources/list" and isinstance(result, dict):
            for res in result.get("resources") or []:
                resources.setdefault(str(res.get("uri")), _resource(res))
        elif ex.method == "resources/read" and isinstance(result, dict):
            uri = str(params.get("uri"))
            entry = resources.setdefault(uri, {"uri": uri})
            entry.setdefault("result", result)
        elif ex.method == "prompts/list" and isinstance(result, dict):
            for p in result.get("prompts") or []:
                prompts.setdefault(str(p.get("name")), {k: v for k, v in p.items() if k in ("name", "description", "arguments")})  # fmt: skip
        elif ex.method == "prompts/get" and isinstance(result, dict):
            name = str(params.get("name"))
            prompts.setdefault(name, {"name": name}).setdefault("result", result)
    tools = [_tool(name, listed.get(name), calls.get(name, {})) for name in {**listed, **calls}]
    return {
        MARKER: 1,
        "server": server,
        "tools": tools,
        "resources": [r for r in resources.values() if "result" in r],
        "prompts": [p for p in prompts.values() if "result" in p],
    }


def _result(ex: Exchange) -> Any:
    result = ex.result
    return strip_envelope(result)[0] if isinstance(result, dict) else result


def _server(exchanges: list[Exchange]) -> dict[str, Any]:
    """The recorded server's name and instructions (from its handshake or discover result)."""
    for ex in exchanges:
        result = ex.result if isinstance(ex.result, dict) else {}
        if ex.method == "initialize":
            info = result.get("serverInfo") or {}
        elif ex.method == "server/discover":
            info = (result.get("_meta") or {}).get(META_SERVER_INFO) or {}
        else:
            continue
        out: dict[str, Any] = {"name": str(info.get("name", "mcptape-mock"))}
        if result.get("instructions"):
            out["instructions"] = result["instructions"]
        return out
    return {"name": "mcptape-mock"}


def _resource(listed: dict[str, Any]) -> dict[str, Any]:
    out = {"uri": listed.get("uri"), "name": listed.get("name")}
    if listed.get("mimeType"):
        out["mime_type"] = listed["mimeType"]
    if listed.get("description"):
        out["description"] = listed["description"]
    return out


def _tool(name: str, listed: dict[str, Any] | None, calls: dict[str, list[Exchange]]) -> dict[str, Any]:  # fmt: skip
    entry: dict[str, Any] = {"name": name}
    listed = listed or {}
    for key, to in (("title", "title"), ("description", "description"), ("inputSchema", "input_schema"), ("outputSchema", "output_schema")):  # fmt: skip
        if listed.get(key) is not None:
            entry[to] = listed[key]
    entry.setdefault("input_schema", {"type": "object"})
    entry["answers"] = [_answer(group) for group in calls.values()]
    return entry


def _answer(group: list[Exchange]) -> dict[str, Any]:
    """One answer for the calls of one tool with the same arguments."""
    first = group[0]
    out: dict[str, Any] = {"args": request_params(first.msg).get("arguments") or {}}
    values = [_value(ex) for ex in group]
    if len(values) == 1:
        out.update(values[0])
    else:
        out["sequence"] = [v.get("result", v) for v in values]
    progress, logs, asks = [], [], []
    for item in first.items:
        if item.src is not Source.SERVER:
            continue
        m = item.msg
        p = m.get("params") or {}
        if m.get("method") == "notifications/progress":
            progress.append([x for x in (p.get("progress"), p.get("total"), p.get("message")) if x is not None])  # fmt: skip
        elif m.get("method") == "notifications/message":
            logs.append([p.get("level", "info"), p.get("data")])
        elif item.type is MessageType.REQUEST:
            asks.append([m.get("method"), p])
    for key, value in (("progress", progress), ("logs", logs), ("asks", asks)):
        if value:
            out[key] = value
    return out


def _value(ex: Exchange) -> dict[str, Any]:
    if ex.error is not None:
        return {"rpc_error": ex.error}
    return {"result": _result(ex)}
