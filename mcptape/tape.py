"""`Tape`: what `use_cassette` and the pytest fixtures hand a test, and the record modes.

A tape is one cassette and the ways to talk to it: `client` (an `mcp.Client`, with the SDK's
1.x line a `ClientSession`, connected in process), `connect()` (another one), `command` (a stdio command for a client in another
process), `url` (an HTTP server on a free loopback port), `run(fn)` (a sync test's way in).
Whether those reach the replay, the recorder in front of the real server, or the real server
alone (`live`, recording off) is decided once, when the tape is made.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import IO, Any, TypeVar

from mcptape.errors import ConfigError, McpTapeError, MissingExtraError
from mcptape.extras import installed, missing_extra_message, require
from mcptape.replay.report import EXHAUSTED, NO_MATCH, PYTHON_HINTS, Hints

T = TypeVar("T")


class RecordMode(StrEnum):
    """When a cassette is recorded and when it is replayed (vcrpy's and pytest-recording's names).

    `rewrite` and `all` are the same mode: the cassette is deleted and recorded anew
    (pytest-recording calls it `rewrite`; vcrpy's `all` would also keep the old interactions,
    which mcptape never does).
    """

    NONE = "none"
    ONCE = "once"
    NEW_EPISODES = "new_episodes"
    REWRITE = "rewrite"
    ALL = "all"

    @property
    def rewrites(self) -> bool:
        return self in (RecordMode.REWRITE, RecordMode.ALL)


def validate_record_mode(value: str | RecordMode) -> RecordMode:
    """The mode named by `value`; a `ConfigError` listing the valid names otherwise."""
    try:
        return RecordMode(value)
    except ValueError:
        valid = ", ".join(m.value for m in RecordMode)
        raise ConfigError(f"record mode {json.dumps(str(value))} is not one of: {valid}") from None


class ServerStartError(McpTapeError):
    """The real server (recording, or live) did not start, or closed the connection at once."""


@dataclass(frozen=True, slots=True)
class Redaction:
    """Extra redaction rules for what a tape records (the defaults always apply unless `enabled` is off)."""

    keys: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    enabled: bool = True

    def flags(self) -> list[str]:
        """The same rules as `mcptape record` options."""
        out = [] if self.enabled else ["--no-redact"]
        for key in self.keys:
            out += ["--redact-key", key]
        for pattern in self.patterns:
            out += ["--redact-pattern", pattern]
        return out


@dataclass
class Tape:
    """See the module docstring. Attributes are as `use_cassette` was given them."""

    path: Path
    record_mode: RecordMode
    recording: bool
    """True when this run records: the client talks to the real server through the recorder."""
    server: list[str] | None = None
    url_upstream: str | None = None
    allow_repeats: bool = False
    ignore: tuple[str, ...] = ()
    strict: bool = False
    client_options: dict[str, Any] = field(default_factory=dict)
    faults: tuple[Any, ...] = ()
    """Fault rules (`mcptape.replay.faults.FaultRule`) for replays; a recording runs without them."""
    match_on: tuple[Any, ...] | None = None
    """Matcher names or functions (`mcptape.matching`); None: method + params."""
    redaction: Redaction = field(default_factory=Redaction)
    live: bool = False
    """Recording off (`--mcptape-disable`): the real server, nothing read or written."""
    hints: Hints = PYTHON_HINTS
    _client: Any = None
    _exit: contextlib.AsyncExitStack | None = None
    _background: Any = None
    _transports: list[Any] = field(default_factory=list)
    _journal: Any = None
    _errlogs: list[IO[str]] = field(default_factory=list)
    _run: str = field(default_factory=lambda: f"tape:{uuid.uuid4().hex}")
    """The recording run of this tape's launches (`record --run`): they append to one cassette."""

    # -- ways in ------------------------------------------------------------------------

    @property
    def command(self) -> list[str]:
        """A stdio command: the replay, the recorder in front of `server`, or (live) `server` itself."""
        py = [sys.executable, "-m", "mcptape"]
        if self.live or self.recording:
            if not self.server:
                raise ConfigError(f"{self.path}: tape.command needs the real server's stdio command "
                                  "(server=[...]); for an HTTP server (url=...) use tape.url")  # fmt: skip
            if self.live:
                return list(self.server)
            return [
                *py,
                "record",
                "-q",
                "-o",
                str(self.path),
                "--run",
                self._run,
                *self.redaction.flags(),
                "--",
                *self.server,
            ]
        return [*py, "replay", *self._replay_flags(), str(self.path)]

    @property
    def url(self) -> str:
        """An HTTP URL for the session, started on first use and stopped when the tape closes.

        Replaying: `mcptape serve` on a free loopback port. Recording an HTTP server
        (`url=...`): the recording reverse proxy in front of it. Live: the server's URL.
        """
        if self.live or self.recording:
            if not self.url_upstream:
                raise ConfigError(f"{self.path}: tape.url needs the real server's URL (url=...); "
                                  "for a stdio server (server=[...]) use tape.command or tape.client")  # fmt: skip
            if self.live:
                return self.url_upstream
        if self._background is None:
            from mcptape.proc.background import Background

            py = [sys.executable, "-m", "mcptape"]
            if self.recording:
                assert self.url_upstream is not None
                require("mitm", "mitmproxy", "tape.url (the recording proxy)")
                argv = [*py, "record", "--http", "--upstream", self.url_upstream, "--host", "127.0.0.1", "--port", "0",
                        "-o", str(self.path), *self.redaction.flags()]  # fmt: skip
                self._background = Background(
                    argv, what=f"the recording proxy for {self.url_upstream}"
                )
            else:
                require("http", "uvicorn", "tape.url (mcptape serve)")
                argv = [*py, "serve", "-q", "--port", "0", *self._replay_flags(), str(self.path)]
                self._background = Background(argv, what=f"mcptape serve {self.path}")
        url: str = self._background.url
        return url

    def _replay_flags(self) -> list[str]:
        opts = ["--allow-repeats"] if self.allow_repeats else []
        if self.strict:
            opts.append("--strict")
        for pointer in self.ignore:
            opts += ["--ignore", pointer]
        for rule in self.faults:
            opts += ["--fault", json.dumps(rule.to_json())]
        if self.match_on is not None:
            from mcptape.matching import builtin_names, resolve_matchers

            names = builtin_names(resolve_matchers(self.match_on))
            if names is None:
                raise ConfigError(f"{self.path}: custom matchers run in this process only: use tape.client or "
                                  "tape.connect(); tape.command and tape.url take built-in matcher names")  # fmt: skip
            for name in names:
                opts += ["--match-on", name]
        return opts

    @property
    def client(self) -> Any:
        """The connected `mcp.Client` (inside `async with use_cassette(...)`, or an async test)."""
        if self._client is None:
            if not installed("mcp"):
                raise MissingExtraError(
                    missing_extra_message("sdk", "the in-process client (tape.client)")
                )
            raise RuntimeError("tape.client is connected only inside `async with use_cassette(...)` and while an "
                               "async test runs; elsewhere use `async with tape.connect() as client`, "
                               "tape.run(fn), tape.command or tape.url")  # fmt: skip
        return self._client

    def transport(self) -> Any:
        """A fresh transport for an `mcp.Client`: in-process replay, the recorder, or the live server."""
        require("sdk", "mcp", "tape.transport() (a transport for an mcp.Client)")
        if self.live or self.recording:
            if self.server:
                return self._stdio(self.server if self.live else self.command)
            return self.url
        if self.record_mode is RecordMode.NEW_EPISODES:
            if not self.server:
                raise ConfigError(
                    f"{self.path}: record mode 'new_episodes' needs the real server's command: server=[...]"
                )
            if self.faults:
                raise ConfigError(
                    "faults are not supported with record mode 'new_episodes': use 'none' or 'once'"
                )
            from mcptape.replay.engine import ReplayConfig
            from mcptape.replay.episodes import EpisodesTransport

            config = ReplayConfig(
                self._policy(), self.allow_repeats, self.hints, exact_clients=self.strict
            )
            episodes = EpisodesTransport(self.path, self.server, config=config)
            self._transports.append(episodes)
            return episodes
        from mcptape.replay.memory import ReplayTransport

        replay = ReplayTransport(self.path, self._config(), strict=self.strict, faults=self.faults)
        self._transports.append(replay)
        return replay

    def _policy(self) -> Any:
        from mcptape.matching import match_policy

        return match_policy(self.match_on, self.ignore)

    def _config(self) -> Any:
        from mcptape.mocks.journal import Listening
        from mcptape.replay.engine import ReplayConfig

        return ReplayConfig(
            self._policy(), self.allow_repeats, self.hints, exact_clients=self.strict,
            answerer=Listening(self.journal),
        )  # fmt: skip

    @property
    def journal(self) -> Any:
        """The requests in-process replays received, and their answers
        (`mcptape.mocks.journal.Journal`: `calls`, `call_count(tool)`, `assert_called_with`)."""
        if self._journal is None:
            from mcptape.mocks.journal import Journal

            self._journal = Journal()
        return self._journal

    @property
    def calls(self) -> list[Any]:
        """`journal.calls`: every request in-process replays received, in order."""
        calls: list[Any] = self.journal.calls
        return calls

    def _stdio(self, command: list[str]) -> Any:
        import os

        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        errlog = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by close()
        self._errlogs.append(errlog)
        params = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
        return stdio_client(params, errlog=errlog)

    @contextlib.asynccontextmanager
    async def connect(self, **options: Any) -> AsyncIterator[Any]:
        """Another connected client: an `mcp.Client` (options as for it, e.g. mode="legacy"), or
        with the SDK's 1.x line an initialized `mcp.ClientSession` (`mcptape.replay.sdk_compat`)."""
        require("sdk", "mcp", "tape.connect() (an in-process mcp.Client)")
        from mcptape.replay.sdk_compat import connect

        async with connect(self.transport(), {**self.client_options, **options}) as client:
            yield client

    def run(self, fn: Callable[[Any], Awaitable[T]], **options: Any) -> T:
        """For sync code: runs `await fn(client)` with a connected client, in a fresh event loop."""
        import anyio

        async def main() -> T:
            async with self.connect(**options) as client:
                return await fn(client)

        return anyio.run(main)

    # -- what was played ------------------------------------------------------------------

    def _engines(self) -> list[Any]:
        return [t.engine for t in self._transports if getattr(t, "engine", None) is not None]

    @property
    def play_count(self) -> int:
        """How many recorded exchanges were replayed (handshake included), over every in-process session."""
        return sum(e.played for e in self._engines())

    @property
    def unplayed(self) -> list[tuple[int, str, str | None]]:
        """Recorded exchanges no in-process session played: (cassette line, method, name)."""
        engines = self._engines()
        if not engines:
            if self.recording or self.live:
                return []
            from mcptape.cassette import load
            from mcptape.replay.index import ReplayIndex

            index = ReplayIndex(load(self.path), self._policy())
            line_of = index.cassette.line_of
            return [(line_of(e.seq), e.exchange.method, e.exchange.name) for e in index.entries]
        left = set.intersection(*({x.index for x in e.unplayed()} for e in engines))
        first = engines[0]
        line_of = first.index.cassette.line_of
        return [
            (line_of(x.request.event.seq), x.method, x.name)
            for x in first.unplayed()
            if x.index in left
        ]

    @property
    def all_played(self) -> bool:
        """True when every recorded exchange was replayed at least once (False while recording)."""
        if self.recording or self.live:
            return False
        return not self.unplayed

    # -- the end ----------------------------------------------------------------------------

    def close(self) -> None:
        """Stops what the tape started (the HTTP server or proxy) and passes on the server's stderr.

        Raises:
            UnplayedExchangesError: strict, and `tape.url`'s server reports unplayed exchanges.
        """
        background, self._background = self._background, None
        for log in self._errlogs:
            log.seek(0)
            text = log.read()
            if text:
                sys.stderr.write(text)
            log.close()
        self._errlogs.clear()
        if background is None:
            return
        code = background.stop()
        if code and self.strict and not self.recording:
            from mcptape.replay.memory import UnplayedExchangesError

            raise UnplayedExchangesError(background.stderr.strip())
        if code not in (0, None) and self.recording:
            raise McpTapeError(
                f"{self.path}: the recording proxy exited with {code}: {background.stderr.strip()}"
            )

    def server_stderr(self) -> str:
        """What the real server printed on stderr so far (recording or live, over stdio)."""
        out = []
        for log in self._errlogs:
            pos = log.tell()
            log.seek(0)
            out.append(log.read())
            log.seek(pos)
        return "".join(out)

    def describe_server(self) -> str:
        return shlex.join(self.server) if self.server else str(self.url_upstream)


def no_match_failure(exc: BaseException, path: Path, where: str = "") -> str | None:
    """A replay's no-match error (the `MCPError` or 1.x `McpError` a client raises for it) as a test failure: what
    was asked, the nearest recording and what differs, and the fix; None for any other error.

    `where` (`test_x.py:12`) says which line of the test made the request.
    """
    error = getattr(exc, "error", None)  # the SDK's ErrorData (2.x and 1.x alike)
    code, message, data = (getattr(error, name, None) for name in ("code", "message", "data"))
    if code not in (NO_MATCH, EXHAUSTED) or not isinstance(message, str):
        return None
    data = data if isinstance(data, dict) else {}
    lines = [
        f"{where + ': ' if where else ''}{message.removeprefix('mcptape replay: ')}",
        f"  cassette: {path}",
    ]
    request = data.get("request")
    if isinstance(request, dict):
        lines.append(f"  asked:    {_quote(request)}")
    near = data.get("nearest")
    if isinstance(near, list) and near and isinstance(near[0], dict):
        lines.append(f"  nearest:  line {near[0].get('line', '?')}: {_quote(near[0])}")
    if data.get("hint"):
        lines.append(f"  fix:      {data['hint']}")
    return "\n".join(lines)


def _quote(request: dict[str, Any], limit: int = 200) -> str:
    """`tools/call {"name": "add", ...}`: a request's method and params, cut after `limit` characters."""
    text = json.dumps(request.get("params"), ensure_ascii=False, default=str)
    if len(text) > limit:
        text = f"{text[:limit]}... ({len(text.encode())} bytes)"
    return f"{request.get('method', '?')} {text}"
