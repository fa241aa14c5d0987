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
from mcptape.cassette.model import Source
from mcptape.eras import is_input_required, strip_envelope
from mcptape.pairing import Exchange
from mcptape.replay.prepared import paired
from mcptape.versions import META_SERVER_INFO
from mcptape.wire.jsonrpc import MessageType, request_params

from .declare import MARKER


def stub(cassette: Cassette) -> dict[str, Any]:
    """The mock file tree of `cassette`'s recorded session."""
    exchanges = [
        ex
        for ex in paired(cassette).exchanges
        if ex.response is not None and not ex.is_notification
    ]
    filed = _Filed()
    for ex in exchanges:
        result = _result(ex)
        file = _FILERS.get(ex.method)
        if file is not None and (isinstance(result, dict) or ex.error is not None):
            file(filed, ex, result if isinstance(result, dict) else {}, request_params(ex.msg))
    tools = [
        _tool(name, filed.listed.get(name), filed.calls.get(name, {}))
        for name in {**filed.listed, **filed.calls}
    ]
    return {
        MARKER: 1,
        "server": _server(exchanges),
        "tools": tools,
        "resources": [r for r in filed.resources.values() if "result" in r],
        "prompts": [p for p in filed.prompts.values() if "result" in p],
    }


class _Filed:
    """What the recording says of each tool, resource and prompt, filed by name as read."""

    def __init__(self) -> None:
        self.listed: dict[str, dict[str, Any]] = {}
        self.calls: dict[str, dict[str, list[Exchange]]] = {}
        self.resources: dict[str, dict[str, Any]] = {}
        self.prompts: dict[str, dict[str, Any]] = {}

    def tools_list(self, ex: Exchange, result: dict[str, Any], params: dict[str, Any]) -> None:
        for tool in result.get("tools") or []:
            self.listed.setdefault(str(tool.get("name")), tool)

    def tools_call(self, ex: Exchange, result: dict[str, Any], params: dict[str, Any]) -> None:
        if is_input_required(ex.result):
            return  # (its retry, with the same arguments, has the answer)
        key = repr(sorted((params.get("arguments") or {}).items()))
        self.calls.setdefault(str(params.get("name")), {}).setdefault(key, []).append(ex)

    def resources_list(self, ex: Exchange, result: dict[str, Any], params: dict[str, Any]) -> None:
        for res in result.get("resources") or []:
            self.resources.setdefault(str(res.get("uri")), _resource(res))

    def resources_read(self, ex: Exchange, result: dict[str, Any], params: dict[str, Any]) -> None:
        if ex.error is None:
            uri = str(params.get("uri"))
            self.resources.setdefault(uri, {"uri": uri}).setdefault("result", result)

    def prompts_list(self, ex: Exchange, result: dict[str, Any], params: dict[str, Any]) -> None:
        for p in result.get("prompts") or []:
            kept = {k: v for k, v in p.items() if k in ("name", "description", "arguments")}
            self.prompts.setdefault(str(p.get("name")), kept)

    def prompts_get(self, ex: Exchange, result: dict[str, Any], params: dict[str, Any]) -> None:
        if ex.error is None:
            name = str(params.get("name"))
            self.prompts.setdefault(name, {"name": name}).setdefault("result", result)


_FILERS = {
    "tools/list": _Filed.tools_list,
    "tools/call": _Filed.tools_call,
    "resources/list": _Filed.resources_list,
    "resources/read": _Filed.resources_read,
    "prompts/list": _Filed.prompts_list,
    "prompts/get": _Filed.prompts_get,
}
"""Recorded method -> what it says of the session's tools, resources and prompts."""


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


def _tool(
    name: str, listed: dict[str, Any] | None, calls: dict[str, list[Exchange]]
) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    listed = listed or {}
    for key, to in (
        ("title", "title"),
        ("description", "description"),
        ("inputSchema", "input_schema"),
        ("outputSchema", "output_schema"),
    ):
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
            progress.append(
                [x for x in (p.get("progress"), p.get("total"), p.get("message")) if x is not None]
            )
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
