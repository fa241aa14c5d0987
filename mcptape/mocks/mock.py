"""`mcptape.mock()`: an MCP server declared in a few lines, served like a cassette.

    with mcptape.mock() as mock:
        add = mock.tool("add", lambda a, b: a + b)

        @mock.tool()
        def greet(name: str) -> str:
            "Says hello."
            return f"Hello, {name}"

        async with mock.connect() as client:
            await client.call_tool("add", {"a": 1, "b": 2})
        assert add.call_count == 1

The mock hands out what a cassette's `Tape` does: `.client` (inside `async with`),
`.connect()`, `.transport()` (in process), `.url` (HTTP, a server thread of this process) and
`.command` (stdio: a relay process to a socket served by threads of this process). Every
answer, function answers included, runs in this process and goes through the replay engine
(`mcptape.mocks.server`), so both protocol eras are served and the journal sees every call.
Over a recorded cassette (`mock(cassette=...)`) the declarations take precedence and the
recording answers the rest (an overlay); a declared
`mcptape.recorded(delay=2)` is the recorded answer, later, and `mock.fault(...)` adds a fault
rule (the rules fault files hold are overlay rules too).
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from mcptape.errors import ConfigError
from mcptape.extras import require
from mcptape.replay.outputs import ReplayConfig

from .declare import (
    NOTHING,
    Case,
    Prompt,
    Recorded,
    Resource,
    Tool,
    declared_at,
    doc_of,
    output_schema_of,
    schema_of,
)
from .journal import Call
from .overlaid import fault_rule, recorded_rule
from .server import MockServer, synthesized


class ToolHandle:
    """A declared tool, to assert on: its calls, `call_count`, `assert_called_with(...)`.
    Calls the function it was declared with, when it was declared as a decorator."""

    def __init__(self, mock: Mock, tool: Tool, fn: Callable[..., Any] | None = None) -> None:
        self._mock = mock
        self.tool = tool
        self._fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self._fn is None:
            raise TypeError(f"tool {self.tool.name} was not declared with a function")
        return self._fn(*args, **kwargs)

    @property
    def name(self) -> str:
        return self.tool.name

    @property
    def calls(self) -> list[Call]:
        return self._mock.server.journal.of("tools/call", self.tool.name)

    @property
    def call_count(self) -> int:
        return len(self.calls)

    @property
    def called(self) -> bool:
        return bool(self.calls)

    def assert_called_with(self, **arguments: Any) -> None:
        """The last call of this tool had these arguments (AssertionError otherwise)."""
        calls = self.calls
        if not calls:
            raise AssertionError(f"tool {self.name} was never called")
        if calls[-1].arguments != arguments:
            raise AssertionError(
                f"tool {self.name} was last called with {calls[-1].arguments}, not {arguments}"
            )

    def assert_called_once_with(self, **arguments: Any) -> None:
        if self.call_count != 1:
            raise AssertionError(f"tool {self.name} was called {self.call_count} times, not once")
        self.assert_called_with(**arguments)

    def assert_any_call(self, **arguments: Any) -> None:
        if not any(c.arguments == arguments for c in self.calls):
            seen = [c.arguments for c in self.calls]
            raise AssertionError(
                f"tool {self.name} was never called with {arguments}; calls: {seen}"
            )


class Mock:
    """Declarations and the ways to reach them; see the module docstring."""

    def __init__(
        self,
        name: str = "mcptape-mock",
        *,
        cassette: str | Path | None = None,
        assert_all_called: bool = False,
        instructions: str | None = None,
        config: ReplayConfig | None = None,
    ) -> None:
        self.server = MockServer(name, overlay=cassette is not None)
        self.server.instructions = instructions
        self.cassette_path = Path(cassette) if cassette is not None else None
        self.assert_all_called_on_exit = assert_all_called
        self.config = config or ReplayConfig()
        self._client: Any = None
        self._exit: contextlib.AsyncExitStack | None = None
        self._threads: list[Any] = []
        self._stdio: Any = None

    # -- declaring ------------------------------------------------------------------------------

    def tool(
        self,
        name: str | Callable[..., Any] | None = None,
        answer: Any = NOTHING,
        *,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
        title: str | None = None,
        args: dict[str, Any] | None = None,
        delay: float = 0.0,
        progress: Sequence[Any] = (),
        logs: Sequence[tuple[str, Any]] = (),
        asks: Sequence[tuple[str, dict[str, Any]]] = (),
        elicit: dict[str, Any] | None = None,
        fault: str | dict[str, Any] | None = None,
    ) -> Any:
        """Declares tool `name` answering `answer` (for `args`, else any arguments); without an
        answer, a decorator whose function answers. Declaring a tool again adds a case.

        Over a recording, `answer=mcptape.recorded(...)` is the recorded answer, later or with a
        fault; `fault` delivers a declared answer with a wire fault (`"drop"`, `"disconnect"`,
        ... or the rule as a dict). Both are overlay rules (`mcptape.mocks.overlaid`)."""
        if callable(name) and answer is NOTHING:  # @mock.tool without parentheses
            return self.tool()(name)
        source = declared_at()
        if isinstance(answer, Recorded):
            self._recorded("tools/call", name, answer, args, source)
            return ToolHandle(self, self.server.tools.get(str(name)) or Tool(str(name)))
        asked = tuple(asks) + ((("elicitation/create", elicit),) if elicit is not None else ())
        steps = tuple(_step(p) for p in progress)
        case_kw: dict[str, Any] = {
            "args": args,
            "delay": delay,
            "progress": steps,
            "logs": tuple(logs),
            "asks": asked,
            "source": source,
        }

        def declare(fn_or_value: Any, fn_name: str | None) -> ToolHandle:
            tool_name = name if isinstance(name, str) else fn_name
            if not tool_name:
                raise ConfigError(f"{source}: mock.tool needs a name (or a decorated function)")
            fn = fn_or_value if inspect.isfunction(fn_or_value) else None
            if fn is not None and inspect.iscoroutinefunction(fn):
                raise ConfigError(
                    f"{source}: mock tool {tool_name}: answer with a plain function, not async (the engine answers synchronously)"
                )
            tool = self.server.tools.get(tool_name)
            if tool is None:
                schema = input_schema or (schema_of(fn) if fn is not None else {"type": "object"})
                desc = description or (doc_of(fn) if fn is not None else None)
                out = output_schema or (output_schema_of(fn) if fn is not None else None)
                tool = Tool(tool_name, desc, schema, out, title)
                self.server.tools[tool_name] = tool
            tool.cases.append(Case(fn_or_value, **case_kw))
            if fault is not None:
                self.server.rules.append(
                    fault_rule(fault, "tools/call", tool_name, args, delay, source)
                )
            return ToolHandle(self, tool, fn)

        if answer is NOTHING:
            return lambda fn: declare(fn, getattr(fn, "__name__", None))
        return declare(answer, None)

    def _recorded(
        self, method: str, name: Any, answer: Recorded, args: dict[str, Any] | None, source: str
    ) -> None:
        """`mock.tool(name, mcptape.recorded(...))` (a prompt's, a resource's): an overlay rule
        on the recorded answer."""
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{source}: recorded(...) is declared for a name (or a URI)")
        if not self.server.overlay:
            raise ConfigError(
                f"{source}: recorded(...) is the recording's answer: declare it over one, mcptape.mock(cassette=...)"
            )
        self.server.rules.append(recorded_rule(answer, method, name, args, source))

    def fault(self, rule: dict[str, Any] | None = None, /, **keys: Any) -> None:
        """Adds a fault rule, written as in a fault file (docs/faults.md):
        `mock.fault(tool="add", nth=2, action="error", code=-32603)`. An overlay rule, applied
        with the declarations' own."""
        from mcptape.replay.fault_rules import parse_rules

        self.server.rules.extend(parse_rules({**(rule or {}), **keys}))

    def resource(
        self,
        uri: str,
        answer: Any = NOTHING,
        *,
        name: str | None = None,
        mime_type: str | None = "text/plain",
        description: str | None = None,
    ) -> Any:
        """Declares a resource (`{part}` holes make a template; a function gets the parts);
        `answer=mcptape.recorded(...)`: the recorded answer of that URI, later or faulty."""
        if isinstance(answer, Recorded):
            return self._recorded("resources/read", uri, answer, None, declared_at())

        def declare(value: Any) -> Any:
            self.server.resources[uri] = Resource(
                uri, value, name or uri.rsplit("/", 1)[-1] or uri, mime_type, description
            )
            return value

        return (lambda fn: declare(fn)) if answer is NOTHING else declare(answer)

    def prompt(
        self,
        name: str | Callable[..., Any] | None = None,
        answer: Any = NOTHING,
        *,
        description: str | None = None,
        arguments: Sequence[dict[str, Any] | str] | None = None,
    ) -> Any:
        """Declares a prompt giving `answer` (text, messages, or a function of its arguments);
        `answer=mcptape.recorded(...)`: the recorded answer, later or faulty."""
        if isinstance(answer, Recorded):
            return self._recorded("prompts/get", name, answer, None, declared_at())
        if callable(name) and answer is NOTHING:
            return self.prompt()(name)

        def declare(value: Any, fn_name: str | None) -> Any:
            pname = name if isinstance(name, str) else fn_name
            if not pname:
                raise ConfigError(f"{declared_at()}: mock.prompt needs a name")
            fn = value if inspect.isfunction(value) else None
            args = (
                [({"name": a} if isinstance(a, str) else a) for a in arguments]
                if arguments is not None
                else _prompt_args(fn)
            )
            desc = description or (doc_of(fn) if fn is not None else None)
            self.server.prompts[pname] = Prompt(pname, value, desc, args)
            return value

        if answer is NOTHING:
            return lambda fn: declare(fn, getattr(fn, "__name__", None))
        return declare(answer, None)

    # -- the journal ----------------------------------------------------------------------------

    @property
    def calls(self) -> list[Call]:
        """Every request the mock received (handshake and lists included), in order."""
        return self.server.journal.calls

    def call_count(self, tool: str) -> int:
        return len(self.server.journal.of("tools/call", tool))

    def __getitem__(self, tool: str) -> ToolHandle:
        """The handle of declared tool `tool`."""
        return ToolHandle(self, self.server.tools[tool])

    def unused(self) -> list[str]:
        return self.server.unused()

    def assert_all_called(self) -> None:
        """Every declaration was used (AssertionError naming those that were not)."""
        left = self.unused()
        if left:
            raise AssertionError("declared but never used: " + "; ".join(left))

    # -- ways in --------------------------------------------------------------------------------

    def engine_config(self) -> ReplayConfig:
        from dataclasses import replace

        return replace(self.config, answerer=self.server, label=f"mcptape mock {self.server.name}")

    def cassette(self) -> Any:
        """The cassette the mock is served over: the recording (an overlay), else the handshake
        its declarations make."""
        if self.cassette_path is not None:
            from mcptape.replay.cache import open_for_replay

            recorded = open_for_replay(self.cassette_path)
            self.server.adopt(recorded)
            return recorded
        return synthesized(self.server)

    def transport(self) -> Any:
        """A fresh in-process transport for an `mcp.Client`."""
        require("sdk", "mcp", "mock.transport() (a transport for an mcp.Client)")
        from mcptape.replay.memory import ReplayTransport

        return ReplayTransport(self.cassette(), self.engine_config(), on_note=_loud)

    @contextlib.asynccontextmanager
    async def connect(self, **options: Any) -> AsyncIterator[Any]:
        """A connected `mcp.Client` (options as for `mcp.Client`, e.g. mode="legacy")."""
        require("sdk", "mcp", "mock.connect() (an in-process mcp.Client)")
        from mcp import Client

        async with Client(self.transport(), **options) as client:
            yield client

    @property
    def client(self) -> Any:
        """The connected `mcp.Client` inside `async with mcptape.mock() as mock`."""
        if self._client is None:
            raise RuntimeError(
                "mock.client is connected only inside `async with mcptape.mock()`; elsewhere use `async with mock.connect() as client`"
            )
        return self._client

    @property
    def session(self) -> Any:
        return self.client

    @property
    def url(self) -> str:
        """An HTTP URL serving the mock (Streamable HTTP at /mcp), from a thread of this process."""
        if not self._threads:
            require("http", "uvicorn", "mock.url (an HTTP server in this process)")
            from .threaded import HttpThread

            self._threads.append(HttpThread(self.cassette(), self.engine_config()))
        url: str = self._threads[0].url
        return url

    @property
    def command(self) -> list[str]:
        """A stdio command serving the mock while it is open: a relay process
        (`python -m mcptape.mocks.relay`) to a Unix socket that threads of this process serve,
        one stdio session per connection, so that function answers run here and the journal
        sees the calls (`mcptape.mocks.stdio_socket`)."""
        from . import stdio_socket

        if not stdio_socket.supported():
            raise ConfigError(
                "mock.command needs Unix sockets, which this platform lacks; use mock.client or mock.url"
            )
        if self._stdio is None:
            self._stdio = stdio_socket.StdioSocket(self.cassette(), self.engine_config())
        command: list[str] = self._stdio.command
        return command

    def close(self) -> None:
        for thread in self._threads:
            thread.stop()
        self._threads.clear()
        if self._stdio is not None:
            self._stdio.stop()
            self._stdio = None

    # -- context managers -------------------------------------------------------------------------

    def __enter__(self) -> Mock:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
        if exc_type is None and self.assert_all_called_on_exit:
            self.assert_all_called()

    async def __aenter__(self) -> Mock:
        self._exit = contextlib.AsyncExitStack()
        if _sdk_installed():
            self._client = await self._exit.enter_async_context(self._lazy_client())
        return self

    @contextlib.asynccontextmanager
    async def _lazy_client(self) -> AsyncIterator[Any]:
        """A client connected on first use would need the loop; one is connected at entry."""
        async with self.connect() as client:
            yield client

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        stack, self._exit, self._client = self._exit, None, None
        if stack is not None:
            await stack.aclose()
        self.__exit__(exc_type, exc, tb)


def _loud(note: Any) -> None:
    """The engine's notes worth a test's stderr: errors (a call no declaration answers)."""
    if note.level == "error":
        import sys

        print(note.text, file=sys.stderr)


def _sdk_installed() -> bool:
    from mcptape.extras import installed

    return installed("mcp")


def _step(p: Any) -> tuple[float, float | None, str | None]:
    """A progress step: a number, or (progress, total[, message])."""
    if isinstance(p, (int, float)):
        return (float(p), None, None)
    seq = tuple(p)
    return (float(seq[0]), seq[1] if len(seq) > 1 else None, seq[2] if len(seq) > 2 else None)


def _prompt_args(fn: Callable[..., Any] | None) -> list[dict[str, Any]]:
    if fn is None:
        return []
    return [
        {"name": n, "required": p.default is p.empty}
        for n, p in inspect.signature(fn).parameters.items()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]


def mock(
    name: str = "mcptape-mock",
    *,
    cassette: str | Path | None = None,
    assert_all_called: bool = False,
    instructions: str | None = None,
) -> Mock:
    """A declared MCP server (`with`/`async with`); see the module docstring."""
    return Mock(
        name, cassette=cassette, assert_all_called=assert_all_called, instructions=instructions
    )
