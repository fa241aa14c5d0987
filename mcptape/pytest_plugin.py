"""mcptape's pytest plugin (entry point `pytest11`): cassettes as MCP servers in tests.

Like pytest-recording: the option `--mcptape-record-mode` (default `none`, so CI never talks
to real servers), cassettes at `<test dir>/cassettes/<module>/<test name>.jsonl`, and
fixtures a project can override (`mcptape_cassette_dir`, `mcptape_cassette_name`,
`mcptape_config`). The marker configures one test:

    @pytest.mark.mcptape(server=["python", "server.py"], client={"mode": "legacy"})
    async def test_add(mcptape):
        assert (await mcptape.client.call_tool("add", {"a": 1, "b": 2})).content[0].text == "3"

Fixtures: `mcptape` (async: a `Tape` with a connected `mcp.Client` as `.client`) and
`mcptape_cassette` (sync: a `Tape` with `.path`, `.command`, `.recording`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from mcptape.api import RecordMode, Tape, cassette_path, use_cassette, validate_record_mode
from mcptape.errors import McpTapeError

MARKER_KEYS = ("cassette", "server", "url", "allow_repeats", "ignore", "strict", "client", "faults")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("mcptape", "MCP cassettes (mcptape)")
    group.addoption(
        "--mcptape-record-mode",
        action="store",
        default=None,
        choices=[m.value for m in RecordMode],
        help="none (default: replay only), once (record missing cassettes), new_episodes, all (re-record)",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "mcptape(cassette=None, server=None, url=None, allow_repeats=False, ignore=(), strict=False, client=None, faults=()): "
        "replay (or record) this test's MCP cassette",
    )


def sanitize(name: str) -> str:
    """A test name as a safe file name: no path separators, no leading dots, bounded length."""
    cleaned = re.sub(r"[^A-Za-z0-9_.\-]+", "-", name).strip("-.")
    return (cleaned or "test")[:200]


@pytest.fixture
def mcptape_record_mode(request: pytest.FixtureRequest) -> RecordMode:
    """The record mode: --mcptape-record-mode, else `none`."""
    return validate_record_mode(request.config.getoption("--mcptape-record-mode") or "none")


@pytest.fixture
def mcptape_cassette_dir(request: pytest.FixtureRequest) -> Path:
    """Where this module's cassettes live: `<test dir>/cassettes/<module name>/`."""
    module = request.node.path
    return Path(module).parent / "cassettes" / Path(module).stem


@pytest.fixture
def mcptape_cassette_name(request: pytest.FixtureRequest) -> str:
    """This test's cassette name: its (sanitized) name, class included."""
    node = request.node
    name = node.name if node.cls is None else f"{node.cls.__name__}.{node.name}"
    return sanitize(name)


@pytest.fixture
def mcptape_config() -> dict[str, Any]:
    """Defaults for every test's marker options (override it in a conftest.py)."""
    return {}


def _options(request: pytest.FixtureRequest, config: dict[str, Any]) -> dict[str, Any]:
    merged = dict(config)
    for marker in reversed(list(request.node.iter_markers("mcptape"))):
        unknown = set(marker.kwargs) - set(MARKER_KEYS)
        if unknown or marker.args:
            raise pytest.UsageError(f"@pytest.mark.mcptape takes keyword arguments {', '.join(MARKER_KEYS)}; got {sorted(unknown) or marker.args}")
        merged.update(marker.kwargs)
    return merged


@pytest.fixture
def _mcptape_cm(
    request: pytest.FixtureRequest,
    mcptape_record_mode: RecordMode,
    mcptape_cassette_dir: Path,
    mcptape_cassette_name: str,
    mcptape_config: dict[str, Any],
) -> use_cassette:
    opts = _options(request, mcptape_config)
    name = opts.pop("cassette", None) or mcptape_cassette_name
    try:
        path = Path(name) if Path(name).is_absolute() else cassette_path(mcptape_cassette_dir, name)
        return use_cassette(path, mcptape_record_mode, **opts)
    except McpTapeError as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def mcptape_cassette(_mcptape_cm: use_cassette) -> Iterator[Tape]:
    """This test's cassette as a `Tape` (path, command, recording); no client connected."""
    try:
        tape = _mcptape_cm.__enter__()
    except McpTapeError as exc:
        pytest.fail(str(exc), pytrace=False)
    yield tape
    _mcptape_cm.__exit__(None, None, None)


@pytest.fixture
async def mcptape(_mcptape_cm: use_cassette) -> AsyncIterator[Tape]:
    """This test's cassette as a `Tape` with a connected `mcp.Client` (`mcptape.client`)."""
    try:
        tape = await _mcptape_cm.__aenter__()
    except McpTapeError as exc:
        pytest.fail(str(exc), pytrace=False)
    try:
        yield tape
    except BaseException as exc:
        await _mcptape_cm.__aexit__(type(exc), exc, exc.__traceback__)
        raise
    await _mcptape_cm.__aexit__(None, None, None)
