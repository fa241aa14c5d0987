"""The Python API: `use_cassette`, vcrpy-style record modes over mcptape's replay and recorder.

    async with mcptape.use_cassette("tests/cassettes/demo.jsonl", server=["python", "server.py"]) as tape:
        result = await tape.client.call_tool("add", {"a": 1, "b": 2})

Record modes (vcrpy's meanings):
- `none`: replay only; a missing cassette or an unmatched request is an error. The CI default.
- `once`: record when the cassette does not exist yet, else replay.
- `new_episodes`: replay what matches; requests the cassette has no answer for go to the
  real server, and their exchanges are appended to the cassette.
- `all`: always record anew (the old cassette is replaced).

Recording runs the real server through the recorder (`mcptape record`): a stdio command
(`server=[...]`) or, for an HTTP server (`url=...`), the mitmproxy reverse proxy.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any

from mcptape.errors import CassetteError, ConfigError
from mcptape.replay.faults import parse_rules


class RecordMode(StrEnum):
    """When a cassette is recorded and when it is replayed."""

    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    ALL = "all"


def validate_record_mode(value: str | RecordMode) -> RecordMode:
    """The mode named by `value`; a `ConfigError` listing the valid names otherwise."""
    try:
        return RecordMode(value)
    except ValueError:
        valid = ", ".join(m.value for m in RecordMode)
        raise ConfigError(f"record mode {value!r} is not one of: {valid}") from None


@dataclass
class Tape:
    """What `use_cassette` hands a test: the cassette, and ways to talk to it.

    `recording` says whether this run records (the client talks to the real server through
    the recorder) or replays. `command` is a stdio command that serves the session to a
    client in another process or language; `url` (HTTP) is started on first use. In an
    `async with`, `client` is an `mcp.Client` already connected in process.
    """

    path: Path
    record_mode: RecordMode
    recording: bool
    server: list[str] | None = None
    url_upstream: str | None = None
    allow_repeats: bool = False
    ignore: tuple[str, ...] = ()
    strict: bool = False
    client_options: dict[str, Any] = field(default_factory=dict)
    faults: tuple[Any, ...] = ()
    """Fault rules (`mcptape.replay.faults.FaultRule`) for replays; a recording runs without them."""
    _client: Any = None
    _exit: contextlib.AsyncExitStack | None = None
    _serve: Any = None

    @property
    def command(self) -> list[str]:
        """A stdio command that serves this cassette (replaying) or records it (recording)."""
        py = [sys.executable, "-m", "mcptape"]
        if self.recording:
            if not self.server:
                raise ConfigError("recording over stdio needs server=[command, ...]")
            return [*py, "record", "-q", "-o", str(self.path), "--", *self.server]
        opts = ["--allow-repeats"] if self.allow_repeats else []
        for pointer in self.ignore:
            opts += ["--ignore", pointer]
        for rule in self.faults:
            opts += ["--fault", json.dumps(rule.to_json())]
        return [*py, "replay", *opts, str(self.path)]

    @property
    def client(self) -> Any:
        """The connected `mcp.Client` (only inside `async with use_cassette(...)`)."""
        if self._client is None:
            raise RuntimeError("tape.client is only there inside `async with use_cassette(...)`; "
                               "with a plain `with`, use tape.command or tape.url")  # fmt: skip
        return self._client

    def transport(self) -> Any:
        """A fresh transport for an `mcp.Client`: in-process replay, or the recorder on the real server."""
        if self.recording:
            from mcp import StdioServerParameters

            if self.url_upstream and not self.server:
                raise ConfigError("recording an HTTP server in process is not supported yet: pass server=[...] "
                                  "or record with `mcptape record --http`")  # fmt: skip
            cmd = self.command
            return StdioServerParameters(command=cmd[0], args=cmd[1:])
        from mcptape.replay.memory import replay_transport

        if self.record_mode is RecordMode.NEW_EPISODES:
            if not self.server:
                raise ConfigError("record mode 'new_episodes' needs the real server's command: server=[...]")
            if self.faults:
                raise ConfigError("faults are not supported with record mode 'new_episodes': use 'none' or 'once'")
            from mcptape.replay.episodes import EpisodesTransport
            from mcptape.replay.engine import ReplayConfig
            from mcptape.replay.matcher import MatchPolicy

            config = ReplayConfig(MatchPolicy(self.ignore), self.allow_repeats)
            return EpisodesTransport(self.path, self.server, config=config)
        return replay_transport(self.path, allow_repeats=self.allow_repeats, ignore=self.ignore, strict=self.strict, faults=self.faults)

    @contextlib.asynccontextmanager
    async def connect(self, **options: Any) -> AsyncIterator[Any]:
        """Another connected `mcp.Client` (options as for `mcp.Client`, e.g. mode="legacy")."""
        from mcp import Client

        async with Client(self.transport(), **{**self.client_options, **options}) as client:
            yield client


def _decide(path: Path, mode: RecordMode, server: Sequence[str] | None, url: str | None) -> bool:
    """True when this run records."""
    exists = path.exists()
    if mode is RecordMode.NONE:
        if not exists:
            raise CassetteError(
                f"{path}: cassette not found and record mode is 'none'; record it with "
                "--mcptape-record-mode=once (pytest) or record_mode='once'"
            )
        return False
    # once and new_episodes record a missing cassette; all always records
    recording = mode is RecordMode.ALL or not exists
    if recording and not server and not url:
        raise ConfigError(f"{path}: recording needs the real server: server=[command, ...] or url=...")
    return recording


class use_cassette:  # noqa: N801 - named like vcrpy's, used as a context manager
    """Replay (or record) an MCP session from a cassette; a sync or async context manager.

    Args:
        path: the cassette file.
        record_mode: `none` (default), `once`, `new_episodes` or `all` (see the module docstring).
        server: the real server's stdio command, used when recording.
        url: the real server's URL (HTTP), used when recording.
        allow_repeats: replay a request's last recording again when its recordings are used up.
        ignore: JSON pointers into params left out of matching.
        strict: on exit, fail if recorded exchanges were never played.
        client: options for the connected `mcp.Client` (`mode`, `elicitation_callback`, ...).
        faults: fault rules for replays (dicts or `FaultRule`s, see docs/faults.md): delay,
            fail, corrupt, drop or disconnect chosen answers. A recording ignores them.

    Raises:
        ConfigError: a bad record mode or fault rule.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        record_mode: str | RecordMode = RecordMode.NONE,
        *,
        server: Sequence[str] | None = None,
        url: str | None = None,
        allow_repeats: bool = False,
        ignore: Sequence[str] = (),
        strict: bool = False,
        client: dict[str, Any] | None = None,
        faults: Any = (),
    ) -> None:
        self.path = Path(path)
        self.mode = validate_record_mode(record_mode)
        self.server = list(server) if server else None
        self.url = url
        self.options = dict(allow_repeats=allow_repeats, ignore=tuple(ignore), strict=strict, client_options=dict(client or {}))
        self.options["faults"] = parse_rules(faults)
        self._tape: Tape | None = None

    def _make(self) -> Tape:
        recording = _decide(self.path, self.mode, self.server, self.url)
        if recording and self.mode is RecordMode.ALL:
            self.path.unlink(missing_ok=True)
        if recording:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return Tape(self.path, self.mode, recording, self.server, self.url, **self.options)  # type: ignore[arg-type]

    def __enter__(self) -> Tape:
        self._tape = self._make()
        return self._tape

    def __exit__(self, *exc: object) -> None:
        self._tape = None

    async def __aenter__(self) -> Tape:
        tape = self._make()
        stack = contextlib.AsyncExitStack()
        await stack.__aenter__()
        try:
            tape._client = await stack.enter_async_context(tape.connect())
        except BaseException:
            await stack.aclose()
            raise
        tape._exit = stack
        self._tape = tape
        return tape

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        tape, self._tape = self._tape, None
        if tape is not None and tape._exit is not None:
            await tape._exit.__aexit__(exc_type, exc, tb)


def cassette_path(directory: str | os.PathLike[str], name: str) -> Path:
    """`directory/name` (`.jsonl` added), refusing names that would escape `directory`."""
    base = Path(directory).resolve()
    target = (base / name).resolve()
    if not target.is_relative_to(base):
        raise ConfigError(f"cassette name {name!r} escapes the cassette directory {base}")
    return target if target.name.endswith(".jsonl") else target.with_name(target.name + ".jsonl")
