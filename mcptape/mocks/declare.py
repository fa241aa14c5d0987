"""What a mock declares: tools, resources, prompts and their answers. Plain values, no I/O.

A tool has one or more `Case`s: an answer for some arguments (`args`, compared whole) or for
any (`args=None`); a call gets the answer declared for its arguments, else the first for any. An answer is a value,
a function of the arguments, a sequence of answers (one per call, in order), a `ToolError`
(a result with `isError`), an `RpcError` (a JSON-RPC error), or, over a recording, `recorded(...)`
(the recorded answer, later or faulty: an overlay rule, `mcptape.mocks.overlaid`); before it the mock can send
progress steps, log messages and requests of its own (`asks`: elicitation, sampling, roots).
Input schemas are given, or inferred from a function's signature (`schema_of`).
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MARKER = "mcptape_mock"
"""The top-level key of a mock file's tree (what makes a JSON file a mock: `mcptape.mocks.file`)."""

NOTHING: Any = object()
"""No answer given (the decorator form: the function is the answer)."""


class ToolError(Exception):
    """A tool's failure: the result the client gets has `isError: true` and this text. A value
    to declare as an answer, or an exception an answering function raises."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.text = text


class RpcError(Exception):
    """A JSON-RPC error answer (`code`, `message`, `data`). Declared, or raised by a function."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            out["data"] = self.data
        return out


@dataclass(frozen=True, slots=True)
class Recorded:
    """The recorded answer (an overlay's), `delay` seconds later and/or delivered with `fault`
    (a fault rule's action, with its keys and selectors in `keys`): `mcptape.recorded(...)`."""

    delay: float | tuple[float, float] = 0.0
    fault: str | None = None
    keys: dict[str, Any] = field(default_factory=dict)


def recorded(
    delay: float | tuple[float, float] = 0.0, fault: str | None = None, **keys: Any
) -> Recorded:
    """The recorded answer, `delay` seconds later, or with `fault` (`"drop"`, `"disconnect"`,
    `"error"` with `code=`, ...; keys and selectors such as `nth=2` as in a fault rule):
    `mock.tool("add", mcptape.recorded(delay=2))` over a recording."""
    return Recorded(delay, fault, keys)


@dataclass(frozen=True, slots=True)
class Sequence_:
    """Answers given one per call, in order; the call after the last is an error."""

    answers: tuple[Any, ...]


def answers(*each: Any) -> Sequence_:
    """A sequence of answers, one per call: `mock.tool("roll", mcptape.mock.answers(4, 6))`."""
    return Sequence_(tuple(each))


@dataclass(slots=True)
class Case:
    """One declared answer of a tool, resource or prompt, and what comes before it."""

    answer: Any
    args: dict[str, Any] | None = None
    """The arguments it answers (compared whole); None: any."""
    delay: float = 0.0
    progress: tuple[tuple[float, float | None, str | None], ...] = ()
    logs: tuple[tuple[str, Any], ...] = ()
    """Log messages (level, data) sent before the answer."""
    asks: tuple[tuple[str, dict[str, Any]], ...] = ()
    """Requests the server sends the client before the answer (method, params)."""
    calls: int = 0
    """How many calls this case answered."""
    source: str = ""
    """Where it was declared (a file and line), for reports."""


@dataclass(slots=True)
class Tool:
    """A declared tool: what `tools/list` says of it, and its answers."""

    name: str
    description: str | None = None
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    output_schema: dict[str, Any] | None = None
    title: str | None = None
    cases: list[Case] = field(default_factory=list)

    def listing(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "inputSchema": self.input_schema}
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        return out


@dataclass(slots=True)
class Resource:
    """A declared resource: a fixed URI, or a template (`{name}` parts) read by any URI it fits."""

    uri: str
    answer: Any
    """Text, bytes (a blob), or a function of the template's parts giving either."""
    name: str
    mime_type: str | None = None
    description: str | None = None
    calls: int = 0

    @property
    def templated(self) -> bool:
        return "{" in self.uri

    def listing(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "uriTemplate" if self.templated else "uri": self.uri,
            "name": self.name,
        }
        if self.mime_type is not None:
            out["mimeType"] = self.mime_type
        if self.description is not None:
            out["description"] = self.description
        return out


@dataclass(slots=True)
class Prompt:
    """A declared prompt: its arguments and the messages it gives (text, messages, or a function)."""

    name: str
    answer: Any
    description: str | None = None
    arguments: list[dict[str, Any]] = field(default_factory=list)
    calls: int = 0

    def listing(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        if self.description is not None:
            out["description"] = self.description
        if self.arguments:
            out["arguments"] = self.arguments
        return out


# -- schemas from signatures ---------------------------------------------------------------------

_JSON_TYPES: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    dict: {"type": "object"},
    list: {"type": "array"},
    type(None): {"type": "null"},
}


def json_type(annotation: Any) -> dict[str, Any]:
    """The JSON Schema of a Python annotation, as far as the plain types go ({} for any)."""
    if annotation in _JSON_TYPES:
        return dict(_JSON_TYPES[annotation])
    origin = typing.get_origin(annotation)
    if origin in (list, tuple, set, frozenset, Sequence):
        args = typing.get_args(annotation)
        out: dict[str, Any] = {"type": "array"}
        if args and args[0] is not Ellipsis:
            out["items"] = json_type(args[0])
        return out
    if origin is dict:
        return {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(annotation))}
    if origin in (typing.Union, types.UnionType):
        return {"anyOf": [json_type(a) for a in typing.get_args(annotation)]}
    return {}


def schema_of(fn: Callable[..., Any]) -> dict[str, Any]:
    """The input schema of a tool answered by `fn`: one property per parameter (its annotation's
    JSON type), required when it has no default."""
    try:
        hints = typing.get_type_hints(fn)
    except (NameError, TypeError):
        hints = {}
    props: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        props[name] = json_type(hints.get(name, param.annotation))
        if param.default is param.empty:
            required.append(name)
        elif param.default is None or isinstance(param.default, (str, int, float, bool)):
            props[name]["default"] = param.default
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


def output_schema_of(fn: Callable[..., Any]) -> dict[str, Any] | None:
    """The output schema of a tool answered by `fn`, from its return annotation, as the `mcp`
    SDK's servers make it: an object type as it is, any other type as the `result` member of an
    object (the answer is then wrapped so); None when the function says nothing of its return."""
    try:
        ret = typing.get_type_hints(fn).get("return", inspect.Signature.empty)
    except (NameError, TypeError):
        return None
    if ret in (inspect.Signature.empty, None, type(None), Any):
        return None
    schema = json_type(ret)
    if not schema:
        return None
    if schema.get("type") == "object":
        return schema
    return {"type": "object", "properties": {"result": schema}, "required": ["result"]}


def doc_of(fn: Callable[..., Any]) -> str | None:
    """A function's docstring, cleaned, as a tool's description (None: it has none)."""
    doc = inspect.getdoc(fn)
    return doc or None


def declared_at(depth: int = 1) -> str:
    """`file:line` of the caller `depth` frames up (where a declaration was written)."""
    frame = inspect.currentframe()
    for _ in range(depth + 1):
        if frame is None:
            return ""
        frame = frame.f_back
    return f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""
