"""mcptape's pytest plugin (entry point `pytest11`): cassettes as MCP servers in tests.

Like pytest-recording: `--mcptape-record-mode` (default `none`, so CI never talks to real
servers; `once`, `new_episodes`, `rewrite`, `all` = `rewrite`), `--mcptape-disable` (recording
off: the live server, cassettes untouched; pytest-recording's `--disable-recording`), ini
options `mcptape_record_mode` and `mcptape_cassette_dir`, cassettes at
`<test dir>/cassettes/<module>/<test name>.jsonl`, and fixtures a project can override
(`mcptape_cassette_dir`, `mcptape_cassette_name`, `mcptape_config`: vcr_config's twin). The
marker configures one test:

    @pytest.mark.mcptape(server=["python", "server.py"], client={"mode": "legacy"})
    async def test_add(mcptape):
        assert (await mcptape.client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"

`mcptape` is a plain fixture: for an async test (anyio, pytest-asyncio strict or auto, trio)
the client is connected in the test's own task, just before the test body runs, and closed
right after it, so no async plugin has to run an async fixture. A sync test gets the same
`Tape`, with `command`, `url` and `run(fn)`. `mcptape_cassette` is the same fixture under
the name older code uses.

In `server=[...]`, `python` is the running interpreter and relative paths are found in the
test file's folder, then in the rootdir.
"""

from __future__ import annotations

import functools
import inspect
import re
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from mcptape.api import cassette_path, use_cassette
from mcptape.errors import McpTapeError, MissingExtraError
from mcptape.extras import installed
from mcptape.proc.commands import resolve_command
from mcptape.replay.report import MARKER_HINTS
from mcptape.tape import RecordMode, Tape, no_match_failure, validate_record_mode

MARKER_KEYS = (
    "cassette", "server", "url", "allow_repeats", "ignore", "strict", "client", "faults", "match_on",
    "redact_keys", "redact_patterns", "redact",
)  # fmt: skip
BACKEND_FIXTURES = ("anyio_backend",)
"""Parametrizations that do not change what the server is asked, so they share one cassette."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcptape", "MCP cassettes (mcptape)")
    group.addoption(
        "--mcptape-record-mode",
        action="store",
        default=None,
        choices=[m.value for m in RecordMode],
        help="none (default: replay only), once (record missing cassettes), new_episodes (record what is "
        "missing, append), rewrite or all (delete and re-record)",
    )
    group.addoption(
        "--mcptape-disable",
        action="store_true",
        default=False,
        help="recording off: tests talk to the real servers; cassettes are neither read nor written "
        "(pytest-recording's --disable-recording)",
    )
    parser.addini(
        "mcptape_record_mode",
        "default record mode (none, once, new_episodes, rewrite, all)",
        default="none",
    )
    parser.addini("mcptape_cassette_dir", "cassette folder, relative to the rootdir (default: cassettes/ beside each test file); "
                  "cassettes go to <folder>/<module>/<test>.jsonl", default="")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcptape(cassette=None, server=None, url=None, allow_repeats=False, ignore=(), strict=False, client=None, "
        "faults=(), match_on=None, redact_keys=(), redact_patterns=(), redact=True): "
        "replay (or record) this test's MCP cassette",
    )


def sanitize(name: str) -> str:
    """A test name as a safe file name: no path separators, no leading dots, bounded length."""
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]+", "-", name).strip("-.")
    return (cleaned or "test")[:200]


def test_name(node: Any) -> str:
    """The test's name with its parameters, but not the async backend's (`test_add`, not `test_add[asyncio]`)."""
    callspec = getattr(node, "callspec", None)
    name = getattr(node, "originalname", None) or node.name
    if callspec is None:
        return str(node.name)
    ids = [i for i in callspec.id.split("-")] if callspec.id else []
    for fixture in BACKEND_FIXTURES:
        if fixture in callspec.params:
            value = callspec.params[fixture]
            backend = value[0] if isinstance(value, tuple) else value
            if str(backend) in ids:
                ids.remove(str(backend))
    return f"{name}[{'-'.join(ids)}]" if ids else name


@pytest.fixture
def mcptape_record_mode(request: pytest.FixtureRequest) -> RecordMode:
    """The record mode: --mcptape-record-mode, else the ini option `mcptape_record_mode`, else `none`."""
    value = (
        request.config.getoption("--mcptape-record-mode")
        or request.config.getini("mcptape_record_mode")
        or "none"
    )
    try:
        return validate_record_mode(str(value).strip())
    except McpTapeError as exc:
        error = f"{exc} (from --mcptape-record-mode or the ini option mcptape_record_mode)"
    raise pytest.UsageError(error)


@pytest.fixture
def mcptape_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """This module's cassette folder: `<test dir>/cassettes/<module>/`, or `<mcptape_cassette_dir>/<module>/`."""
    module = Path(request.node.path)
    configured = str(request.config.getini("mcptape_cassette_dir") or "").strip()
    if configured:
        return (Path(request.config.rootpath) / configured / module.stem).resolve()
    return module.parent / "cassettes" / module.stem


@pytest.fixture
def mcptape_cassette_name(request: pytest.FixtureRequest) -> str:
    """This test's cassette name: its (sanitized) name, class included, the async backend left out."""
    node = request.node
    name = test_name(node)
    return sanitize(name if node.cls is None else f"{node.cls.__name__}.{name}")


@pytest.fixture
def mcptape_config() -> dict[str, Any]:
    """Defaults for every test's marker options, like pytest-recording's `vcr_config`.

    Override it in a conftest.py, e.g. `return {"redact_keys": ["x-tenant"], "match_on": ["method", "name"]}`.
    """
    return {}


def _options(request: pytest.FixtureRequest, config: dict[str, Any]) -> dict[str, Any]:
    merged = dict(config)
    unknown = set(merged) - set(MARKER_KEYS)
    if unknown:
        raise McpTapeError(
            f"mcptape_config: unknown option(s) {', '.join(sorted(unknown))}; known: {', '.join(MARKER_KEYS)}"
        )
    for marker in reversed(list(request.node.iter_markers("mcptape"))):
        unknown = set(marker.kwargs) - set(MARKER_KEYS)
        if unknown or marker.args:
            got = ", ".join(sorted(unknown)) if unknown else "positional arguments"
            raise McpTapeError(
                f"@pytest.mark.mcptape: unknown {got}; it takes keyword arguments {', '.join(MARKER_KEYS)}"
            )
        merged.update(marker.kwargs)
    return merged


def _make_cm(
    request: pytest.FixtureRequest,
    mode: RecordMode,
    folder: Path,
    default_name: str,
    config: dict[str, Any],
) -> use_cassette:
    opts = _options(request, config)
    rootdir = Path(request.config.rootpath)
    bases = [Path(request.node.path).parent, rootdir]
    if opts.get("server"):
        opts["server"] = resolve_command(opts["server"], bases)
    name = str(opts.pop("cassette", None) or default_name)
    path = Path(name) if Path(name).is_absolute() else cassette_path(folder, name, within=rootdir)
    live = bool(request.config.getoption("--mcptape-disable"))
    return use_cassette(path, mode, live=live, hints=MARKER_HINTS, **opts)


@pytest.fixture
def mcptape(
    request: pytest.FixtureRequest,
    mcptape_record_mode: RecordMode,
    mcptape_cassette_dir: Path,
    mcptape_cassette_name: str,
    mcptape_config: dict[str, Any],
) -> Iterator[Tape]:
    """This test's cassette as a `Tape`; in an async test `mcptape.client` is a connected `mcp.Client`
    (with the SDK's 1.x line, an initialized `mcp.ClientSession`)."""
    error: str | None = None
    try:
        cm = _make_cm(
            request,
            mcptape_record_mode,
            mcptape_cassette_dir,
            mcptape_cassette_name,
            mcptape_config,
        )
        tape = cm.__enter__()
    except McpTapeError as exc:
        error = str(exc)
    if error is not None:
        pytest.fail(error, pytrace=False)
    node = request.node
    original = getattr(node, "obj", None)
    if "mcptape" in getattr(node, "fixturenames", ()) and callable(original):
        is_async = inspect.iscoroutinefunction(original)
        node.obj = _connected(original, cm, tape) if is_async else _one_line(original)
    try:
        yield tape
    finally:
        if original is not None and node.obj is not original:
            node.obj = original
        error = None
        try:
            cm.__exit__(None, None, None)
        except McpTapeError as exc:
            error = str(exc)
        if error is not None:
            pytest.fail(error, pytrace=False)


@pytest.fixture
def mcptape_cassette(mcptape: Tape) -> Tape:
    """The same tape under its older name (sync tests used it for `.command`)."""
    return mcptape


def _connected(test: Any, cm: use_cassette, tape: Tape) -> Any:
    """`test` with the tape's client connected around it, in the task that runs the test.

    Without the `mcp` SDK (the `sdk` extra) no client is connected: `tape.command` and
    `tape.url` still work, and `tape.client` fails in one line naming the extra. What the
    test raises comes out of the client's task groups as itself, not wrapped in exception
    groups; a request the cassette has no answer for fails the test with the replay's
    explanation and its fix, without a traceback.
    """

    @functools.wraps(test)
    async def run(*args: Any, **kwargs: Any) -> Any:
        error: str | None = None
        try:
            if not installed("mcp"):
                return await test(*args, **kwargs)
            async with cm.connected(tape):
                return await test(*args, **kwargs)
        except McpTapeError as exc:
            error = str(exc)
        except BaseExceptionGroup as group:
            leaf = _only_leaf(group)
            if leaf is None:
                raise
            error = (
                str(leaf)
                if isinstance(leaf, McpTapeError)
                else no_match_failure(leaf, tape.path, _where(leaf, test))
            )
            if error is None:
                raise leaf from None
        pytest.fail(error, pytrace=False)

    return run


def _one_line(test: Any) -> Any:
    """`test` (a sync one) failing in one line when a way into the tape needs a missing extra."""

    @functools.wraps(test)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return test(*args, **kwargs)
        except MissingExtraError as exc:
            error = str(exc)
        pytest.fail(error, pytrace=False)

    return run


def _only_leaf(group: BaseExceptionGroup[Any]) -> BaseException | None:
    """The one exception at the bottom of nested single-exception groups, or None."""
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        if len(exc.exceptions) != 1:
            return None
        exc = exc.exceptions[0]
    return exc


def _where(exc: BaseException, test: Any) -> str:
    """`test_x.py:12`: the line of `test` that `exc` came through ('' when it did not)."""
    code = getattr(inspect.unwrap(test), "__code__", None)
    where = ""
    for frame, line in traceback.walk_tb(exc.__traceback__):
        if frame.f_code is code:
            where = f"{Path(frame.f_code.co_filename).name}:{line}"
    return where


@pytest.fixture
def mcptape_mock() -> Iterator[Any]:
    """A declared MCP server (`mcptape.mock()`, see docs/mocks.md), closed after the test:
    declare its tools, then `async with mcptape_mock.connect() as client`, `.url` or `.command`."""
    from mcptape.mocks.mock import Mock

    with Mock() as mock:
        yield mock
