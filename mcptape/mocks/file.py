"""A mock's file form: TOML (read with the standard library's tomllib) or JSON, both the same
tree. `replay`, `serve` and `use_cassette` take such a file where they take a cassette
(`mcptape.replay.cache.open_for_replay` asks `is_mock_file`).

    [server]
    name = "demo"
    cassette = "recorded.jsonl"     # optional: an overlay on this recording (relative to the file)

    [[tools]]
    name = "add"
    description = "Adds two numbers."
    input_schema = { type = "object", properties = { a = { type = "number" } } }

    [[tools.answers]]
    args = { a = 1 }                # optional: these arguments only (else any)
    result = 3                      # or text = "...", error = "a tool error",
                                    # rpc_error = { code = -32603, message = "..." }, sequence = [4, 6]
    delay = 0.5                     # optional, and progress = [[1, 2, "half"]], logs = [["info", "adding"]],
                                    # elicit = { message = "...", requestedSchema = {...} },
                                    # fault = "drop" (a wire fault on the declared answer)

    [[tools.answers]]               # over a recording: the recorded answer, later or faulty
    recorded = true
    delay = 2                       # and/or fault = "disconnect", with a fault rule's keys (nth = 2, ...)

    [[faults]]                      # fault rules, as in a fault file (docs/faults.md)
    tool = "add"
    action = "drop"

    [[resources]]
    uri = "demo://users/{id}"       # `{id}` in the text is the URI's part
    text = "user {id}"

    [[prompts]]
    name = "review"
    arguments = [{ name = "code", required = true }]
    text = "Review this: {code}"    # or messages = [...]

Sans-IO but for `open_mock`, which reads the file (and the recording of an overlay).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mcptape.cassette import Cassette
from mcptape.errors import CassetteError, CassetteNotFoundError, ConfigError
from mcptape.replay.overlay import OverlayRule

from .declare import (
    MARKER,
    Case,
    Prompt,
    Recorded,
    Resource,
    RpcError,
    Sequence_,
    Tool,
    ToolError,
)
from .overlaid import fault_rule, file_rules, recorded_rule
from .server import MockServer, synthesized

ANSWER_KEYS = ("result", "text", "error", "rpc_error", "sequence")


class TextTemplate:
    """A text whose `{name}` holes are filled from the arguments (prompts, resource templates)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __call__(self, **parts: Any) -> str:
        return re.sub(r"\{([^{}]+)\}", lambda m: str(parts.get(m[1], m[0])), self.text)


def is_mock_file(path: Path) -> bool:
    """True for a TOML file, or a JSON file whose first key is `mcptape_mock`."""
    if path.suffix == ".toml":
        return True
    if path.suffix != ".json":
        return False
    try:
        with path.open("rb") as f:
            head = f.read(200).lstrip()
    except OSError:
        return False
    return head.startswith(b"{") and f'"{MARKER}"'.encode() in head


def parse(path: Path) -> dict[str, Any]:
    """The tree of mock file `path` (ConfigError, naming the file, when it is not one)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CassetteNotFoundError(f"{path}: no such mock file") from None
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read the mock file: {exc.strerror}") from None
    try:
        tree = tomllib.loads(data.decode()) if path.suffix == ".toml" else json.loads(data)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a valid mock file: {exc}") from None
    if not isinstance(tree, dict):
        raise ConfigError(
            f"{path}: a mock file is a table (an object) of server, tools, resources, prompts"
        )
    return tree


def open_mock(path: Path, open_cassette: Callable[[Path], Cassette]) -> Cassette:
    """The cassette mock file `path` is served over (its recording, opened with
    `open_cassette`, else its handshake), with its declarations as the cassette's `answerer`."""

    tree = parse(path)
    server = declarations(tree, str(path))
    recorded = tree.get("server", {}).get("cassette")
    if isinstance(recorded, str):
        server.overlay = True
        cassette = open_cassette(path.parent / recorded)
        server.adopt(cassette)
    else:
        cassette = synthesized(server)
    cassette.answerer = server
    return cassette


def declarations(tree: dict[str, Any], where: str = "<mock>") -> MockServer:
    """The declarations of a mock file's tree."""
    info = tree.get("server") if isinstance(tree.get("server"), dict) else {}
    assert isinstance(info, dict)
    server = MockServer(str(info.get("name", "mcptape-mock")))
    server.instructions = info.get("instructions")
    for n, t in enumerate(_tables(tree, "tools", where)):
        _tool(server, t, f"{where}: tools[{n}]")
    for n, r in enumerate(_tables(tree, "resources", where)):
        uri = _required(r, "uri", f"{where}: resources[{n}]")
        value: Any = r.get("result")
        if "text" in r:
            value = TextTemplate(str(r["text"])) if "{" in uri else str(r["text"])
        elif "blob" in r:
            value = {
                "contents": [
                    {
                        "uri": uri,
                        "blob": r["blob"],
                        **({"mimeType": r["mime_type"]} if r.get("mime_type") else {}),
                    }
                ]
            }
        server.resources[uri] = Resource(
            uri,
            value,
            str(r.get("name") or uri.rsplit("/", 1)[-1]),
            r.get("mime_type", "text/plain"),
            r.get("description"),
        )
    server.rules.extend(file_rules(tree, where))
    for n, p in enumerate(_tables(tree, "prompts", where)):
        name = _required(p, "name", f"{where}: prompts[{n}]")
        answer: Any = p.get("result")
        if "text" in p:
            answer = TextTemplate(str(p["text"]))
        elif "messages" in p:
            answer = {"messages": p["messages"]}
        server.prompts[name] = Prompt(
            name, answer, p.get("description"), list(p.get("arguments") or [])
        )
    return server


def _tool(server: MockServer, t: dict[str, Any], at: str) -> None:
    """One `[[tools]]` table into `server`: its answers, and the overlay rules of those that
    are `recorded = true` or carry a `fault`."""
    name = _required(t, "name", at)
    tool = server.tools.get(name) or Tool(
        name,
        t.get("description"),
        t.get("input_schema") or {"type": "object"},
        t.get("output_schema"),
        t.get("title"),
    )
    for k, a in enumerate(t.get("answers") or []):
        where = f"{at}.answers[{k}]"
        if isinstance(a, dict) and a.get("recorded") is True:
            server.rules.append(_recorded(a, name, where))
            continue
        server.tools[name] = tool
        tool.cases.append(_case(a, where))
        if isinstance(a, dict) and a.get("fault") is not None:
            delay = float(a.get("delay", 0.0))
            server.rules.append(
                fault_rule(a["fault"], "tools/call", name, a.get("args"), delay, where)
            )
    if not t.get("answers"):
        server.tools[name] = tool


def _tables(tree: dict[str, Any], key: str, where: str) -> list[dict[str, Any]]:
    value = tree.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{where}: {key} must be a list of tables ([[{key}]] in TOML)")
    return value


def _required(table: dict[str, Any], key: str, at: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{at}: needs a {key} (a string)")
    return value


def _recorded(a: dict[str, Any], name: str, at: str) -> OverlayRule:
    """`recorded = true` (with `delay`, `fault` and the fault's keys): the recorded answer."""
    keys = {k: v for k, v in a.items() if k not in ("recorded", "args", "delay", "fault")}
    answer = Recorded(_seconds(a.get("delay", 0.0), at), a.get("fault"), keys)
    return recorded_rule(answer, "tools/call", name, a.get("args"), at)


def _seconds(value: Any, at: str) -> float | tuple[float, float]:
    if isinstance(value, list) and len(value) == 2:
        return (float(value[0]), float(value[1]))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    raise ConfigError(f"{at}: delay={value!r}: seconds, or [low, high]")


def _case(a: Any, at: str) -> Case:
    if not isinstance(a, dict):
        raise ConfigError(f"{at}: an answer is a table with one of {', '.join(ANSWER_KEYS)}")
    given = [k for k in ANSWER_KEYS if k in a]
    if len(given) != 1:
        raise ConfigError(
            f"{at}: give exactly one of {', '.join(ANSWER_KEYS)} (found {', '.join(given) or 'none'})"
        )
    asks = [tuple(x) for x in a.get("asks") or []]
    if a.get("elicit") is not None:
        asks.append(("elicitation/create", a["elicit"]))
    return Case(
        answer_value(given[0], a[given[0]]),
        args=a.get("args"),
        delay=float(a.get("delay", 0.0)),
        progress=tuple(
            (float(p[0]), p[1] if len(p) > 1 else None, p[2] if len(p) > 2 else None)
            for p in a.get("progress") or []
        ),
        logs=tuple((str(x[0]), x[1]) for x in a.get("logs") or []),
        asks=tuple((str(m), dict(p)) for m, p in asks),
        source=at,
    )


def answer_value(key: str, value: Any) -> Any:
    """An answer as the server plays it, from its file form."""
    if key == "text":
        return str(value)
    if key == "error":
        return ToolError(str(value))
    if key == "rpc_error":
        return RpcError(int(value["code"]), str(value.get("message", "")), value.get("data"))
    if key == "sequence":
        return Sequence_(tuple(_one(v) for v in value))
    return value


def _one(value: Any) -> Any:
    """One answer of a sequence: `{error = ...}`, `{rpc_error = ...}`, `{text = ...}` or a value."""
    if (
        isinstance(value, dict)
        and len(value) == 1
        and next(iter(value)) in ("error", "rpc_error", "text")
    ):
        key = next(iter(value))
        return answer_value(key, value[key])
    return value


# -- declarations into the file form -------------------------------------------------------------


def answer_entry(value: Any, where: str) -> dict[str, Any]:
    """The file form of an answer (ConfigError for a function: only data goes into a file)."""
    if isinstance(value, ToolError):
        return {"error": value.text}
    if isinstance(value, RpcError):
        return {"rpc_error": value.to_json()}
    if isinstance(value, TextTemplate | str):
        return {"text": value.text if isinstance(value, TextTemplate) else value}
    if isinstance(value, Sequence_):
        return {"sequence": [_single(v, where) for v in value.answers]}
    if callable(value):
        raise ConfigError(
            f"{where}: a function answer stays in this process; use mock.client or mock.url, or declare a value for mock.command"
        )
    return {"result": value}


def _single(value: Any, where: str) -> Any:
    entry = answer_entry(value, where)
    return entry.get("result", entry)


def tree_of(server: MockServer, cassette: Path | None = None) -> dict[str, Any]:
    """The file form of `server`'s declarations."""
    info: dict[str, Any] = {"name": server.name}
    if server.instructions:
        info["instructions"] = server.instructions
    if cassette is not None:
        info["cassette"] = str(cassette.resolve())
    tools = []
    for tool in server.tools.values():
        entry: dict[str, Any] = {
            k: v for k, v in tool.listing().items() if k not in ("inputSchema", "outputSchema")
        }
        entry["input_schema"] = tool.input_schema
        if tool.output_schema is not None:
            entry["output_schema"] = tool.output_schema
        entry["answers"] = [_case_entry(c, f"tool {tool.name}") for c in tool.cases]
        tools.append(entry)
    resources = [
        {
            "uri": r.uri,
            "name": r.name,
            **({"mime_type": r.mime_type} if r.mime_type else {}),
            **({"description": r.description} if r.description else {}),
            **answer_entry(r.answer, f"resource {r.uri}"),
        }
        for r in server.resources.values()
    ]
    prompts = [
        {**p.listing(), **answer_entry(p.answer, f"prompt {p.name}")}
        for p in server.prompts.values()
    ]
    tree = {MARKER: 1, "server": info, "tools": tools, "resources": resources, "prompts": prompts}
    if server.rules:  # the overlay's rules, as a fault file writes them
        tree["faults"] = [rule.to_json() for rule in server.rules]
    return tree


def _case_entry(case: Case, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if case.args is not None:
        out["args"] = case.args
    out.update(answer_entry(case.answer, where))
    if case.delay:
        out["delay"] = case.delay
    if case.progress:
        out["progress"] = [[p for p in step if p is not None] for step in case.progress]
    if case.logs:
        out["logs"] = [list(x) for x in case.logs]
    if case.asks:
        out["asks"] = [list(x) for x in case.asks]
    return out


def dumps_mock(server: MockServer, cassette: Path | None = None) -> str:
    """`server`'s declarations as a JSON mock file."""
    return json.dumps(tree_of(server, cassette), indent=2, ensure_ascii=False) + "\n"


def dumps_toml(tree: dict[str, Any]) -> str:
    """A mock file's tree as TOML (tables for server, tools, resources, prompts and answers;
    everything deeper inline). JSON null has no TOML form: its keys are left out."""
    lines = [f"{MARKER} = 1", "", "[server]"]
    lines += [
        f"{_key(k)} = {_value(v)}" for k, v in tree.get("server", {}).items() if v is not None
    ]
    for section in ("tools", "resources", "prompts", "faults"):
        for table in tree.get(section) or []:
            lines += ["", f"[[{section}]]"]
            lines += [
                f"{_key(k)} = {_value(v)}"
                for k, v in table.items()
                if k != "answers" and v is not None
            ]
            for answer in table.get("answers") or []:
                lines += ["", f"[[{section}.answers]]"]
                lines += [f"{_key(k)} = {_value(v)}" for k, v in answer.items() if v is not None]
    return "\n".join(lines) + "\n"


def _key(k: str) -> str:
    return k if re.fullmatch(r"[A-Za-z0-9_-]+", k) else json.dumps(k, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return (
            ("nan" if math.isnan(v) else ("inf" if v > 0 else "-inf"))
            if not math.isfinite(v)
            else repr(v)
        )
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v if x is not None) + "]"
    if isinstance(v, dict):
        inner = ", ".join(f"{_key(str(k))} = {_value(x)}" for k, x in v.items() if x is not None)
        return "{ " + inner + " }" if inner else "{}"
    raise ConfigError(f"a {type(v).__name__} has no TOML form; write the mock as JSON")
