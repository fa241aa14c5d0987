"""The Python API: `use_cassette`, vcrpy-style record modes over mcptape's replay and recorder.

    async with mcptape.use_cassette("tests/cassettes/demo.jsonl", server=["python", "server.py"]) as tape:
        result = await tape.client.call_tool("add", {"a": 1, "b": 2})

Record modes (vcrpy's and pytest-recording's names):
- `none`: replay only; a missing cassette or an unmatched request is an error. The CI default.
- `once`: record when the cassette does not exist yet, else replay.
- `new_episodes`: replay what matches; requests the cassette has no answer for go to the
  real server, and their exchanges are appended to the cassette.
- `rewrite` (also spelled `all`): always record anew. This is pytest-recording's `rewrite`.
  vcrpy's `all` would keep the old interactions too; mcptape has no such mode. The old
  cassette is replaced once the new recording ends, and only when the server answered:
  a server that fails to start keeps the old one.

Recording runs the real server through the recorder (`mcptape record`): a stdio command
(`server=[...]`) or, for an HTTP server (`url=...`), the mitmproxy reverse proxy.
`live=True` talks to the real server with recording off (the cassette is not touched).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from mcptape.errors import CassetteError, ConfigError
from mcptape.replay.faults import parse_rules
from mcptape.replay.report import PYTHON_HINTS, Hints
from mcptape.tape import (
    RecordMode,
    Redaction,
    ServerStartError,
    Tape,
    validate_record_mode,
)

__all__ = [
    "RecordMode",
    "Redaction",
    "ServerStartError",
    "Tape",
    "cassette_path",
    "use_cassette",
    "validate_record_mode",
]


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
    # once and new_episodes record a missing cassette; rewrite (all) always records
    recording = mode.rewrites or not exists
    if recording and not server and not url:
        raise ConfigError(
            f"{path}: recording needs the real server: server=[command, ...] or url=..."
        )
    return recording


class use_cassette:
    """Replay (or record) an MCP session from a cassette; a sync or async context manager.

    Args:
        path: the cassette file; or several cassettes, or a folder of them, replayed as the
            sessions of one (replay only: record mode `none` or `once`).
        record_mode: `none` (default), `once`, `new_episodes` or `rewrite` (`all`); see the
            module docstring.
        server: the real server's stdio command, used when recording (or live).
        url: the real server's URL (HTTP), used when recording (or live).
        allow_repeats: replay a request's last recording again when its recordings are used up.
        ignore: JSON pointers into params left out of matching.
        strict: on exit, fail if recorded exchanges were never played (in process, and for
            `tape.command` and `tape.url`).
        client: options for the connected `mcp.Client` (`mode`, `elicitation_callback`, ...).
        faults: fault rules for replays (dicts or `FaultRule`s, see docs/faults.md): delay,
            fail, corrupt, drop or disconnect chosen answers. A recording ignores them.
        match_on: matcher names or functions (`mcptape.register_matcher`, docs/replay.md);
            default: `["method", "params"]`.
        redact_keys / redact_patterns: redaction rules added to the defaults when recording
            (member, header and query names; regexes). `redact=False` turns redaction off.
        live: recording off: talk to the real server, never read or write the cassette.

    Raises:
        ConfigError: a bad record mode, fault rule or matcher name.
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
        record_mode: str | RecordMode = RecordMode.NONE,
        *,
        server: Sequence[str] | None = None,
        url: str | None = None,
        allow_repeats: bool = False,
        ignore: Sequence[str] = (),
        strict: bool = False,
        client: dict[str, Any] | None = None,
        faults: Any = (),
        match_on: Sequence[Any] | None = None,
        redact_keys: Sequence[str] = (),
        redact_patterns: Sequence[str] = (),
        redact: bool = True,
        live: bool = False,
        hints: Hints = PYTHON_HINTS,
    ) -> None:
        self.mode = validate_record_mode(record_mode)
        self._merged: Path | None = None
        """The temporary cassette holding several cassettes' sessions (removed on exit)."""
        self.path = self._one_path(path)
        self.server = list(server) if server else None
        self.url = url
        self.live = live
        if isinstance(ignore, str) or isinstance(match_on, str):
            raise ConfigError(
                "ignore and match_on take lists: ignore=['/arguments/when'], match_on=['method', 'name']"
            )
        if match_on is not None:
            from mcptape.matching import resolve_matchers

            resolve_matchers(match_on)  # unknown names fail here, not at the first request
        self.options: dict[str, Any] = {
            "allow_repeats": allow_repeats, "ignore": tuple(ignore), "strict": strict,
            "client_options": dict(client or {}), "faults": parse_rules(faults),
            "match_on": tuple(match_on) if match_on is not None else None,
            "redaction": Redaction(tuple(redact_keys), tuple(redact_patterns), redact), "hints": hints,
        }  # fmt: skip
        self._tape: Tape | None = None

    def _one_path(self, path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> Path:
        """The cassette to play: `path`, or a temporary one merging the sessions of several."""
        paths = [path] if isinstance(path, (str, os.PathLike)) else list(path)
        if len(paths) == 1 and not Path(paths[0]).is_dir():
            return Path(paths[0]).absolute()
        if self.mode not in (RecordMode.NONE, RecordMode.ONCE) or not paths:
            raise ConfigError(
                f"{', '.join(map(str, paths)) or 'no cassette'}: several cassettes (or a folder) "
                "replay only: give record_mode='none', or one cassette file to record"
            )
        import tempfile

        from mcptape.cassette import save
        from mcptape.cassette.sessions import load_many

        merged = load_many(paths)
        self._merged = Path(tempfile.mkdtemp(prefix="mcptape-sessions-")) / "merged.jsonl"
        save(merged, self._merged)
        return self._merged

    def _cleanup(self) -> None:
        if self._merged is not None:
            import shutil

            shutil.rmtree(self._merged.parent, ignore_errors=True)
            self._merged = None

    def _make(self) -> Tape:
        if self.live:
            if not self.server and not self.url:
                raise ConfigError(
                    f"{self.path}: recording is off, so the real server is needed: server=[...] or url=..."
                )
            return Tape(
                self.path, self.mode, False, self.server, self.url, live=True, **self.options
            )
        recording = _decide(self.path, self.mode, self.server, self.url)
        if (
            recording
        ):  # the recorder replaces an old cassette only with a session the server answered
            self.path.parent.mkdir(parents=True, exist_ok=True)
        return Tape(self.path, self.mode, recording, self.server, self.url, **self.options)

    def __enter__(self) -> Tape:
        self._tape = self._make()
        return self._tape

    def __exit__(self, *exc: object) -> None:
        tape, self._tape = self._tape, None
        try:
            if tape is not None:
                tape.close()
        finally:
            self._cleanup()

    @contextlib.asynccontextmanager
    async def connected(self, tape: Tape) -> Any:
        """`tape` with its `client` connected for the duration (what `async with` and the plugin use)."""
        async with contextlib.AsyncExitStack() as stack:
            stack.callback(tape.close)
            tape._client = await _open(tape, stack)
            try:
                yield tape
            finally:
                tape._client = None

    async def __aenter__(self) -> Tape:
        tape = self._make()
        cm = self.connected(tape)
        await cm.__aenter__()
        tape._exit = cm  # type: ignore[assignment]
        self._tape = tape
        return tape

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        tape, self._tape = self._tape, None
        try:
            if tape is not None and tape._exit is not None:
                cm, tape._exit = tape._exit, None
                await cm.__aexit__(exc_type, exc, tb)
        finally:
            self._cleanup()


async def _open(tape: Tape, stack: contextlib.AsyncExitStack) -> Any:
    """Connects `tape`'s client; a real server that does not start is one clear error."""
    try:
        return await stack.enter_async_context(tape.connect())
    except Exception as exc:
        if not (tape.recording or tape.live):
            raise
        reason = _leaf(exc)
        stderr = tape.server_stderr().strip()
        said = (
            "; its stderr:\n" + "\n".join("  " + line for line in stderr.splitlines()[-20:])
            if stderr
            else "; it printed nothing on stderr"
        )
        what = "recording" if tape.recording else "recording off"
        raise ServerStartError(f"{tape.path}: the real server ({tape.describe_server()}) did not start or closed "
                               f"the connection ({what}): {reason}{said}") from None  # fmt: skip


def _leaf(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[-1]
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def cassette_path(
    directory: str | os.PathLike[str], name: str, within: str | os.PathLike[str] | None = None
) -> Path:
    """`directory/name` (`.jsonl` added), refusing names that would escape `within` (default: `directory`)."""
    base = Path(directory).resolve()
    target = (base / name).resolve()
    fence = Path(within).resolve() if within is not None else base
    if not target.is_relative_to(fence):
        where = "the cassette directory" if within is None else "the rootdir"
        raise ConfigError(
            f"cassette name {json.dumps(name)} escapes {where} {fence}: give a path inside it, or an absolute path"
        )
    return target if target.name.endswith(".jsonl") else target.with_name(target.name + ".jsonl")
