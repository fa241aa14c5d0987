"""A mock served over HTTP from a thread of the test process (`Mock.url`): the replay's ASGI
app (`mcptape.replay.http.app`) under uvicorn, so that function answers, which cannot cross
into another process, are served too."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import uvicorn

from mcptape.cassette import Cassette
from mcptape.replay.http.app import HttpReplayApp
from mcptape.replay.http.run import bind, url_of
from mcptape.replay.outputs import Note, ReplayConfig


class _Server(uvicorn.Server):
    """uvicorn in a thread: no signal handlers (the test process keeps its own), and the app's
    open event streams end as soon as shutdown starts."""

    def __init__(self, config: uvicorn.Config, app: HttpReplayApp) -> None:
        super().__init__(config)
        self.app = app

    async def shutdown(self, sockets: Any = None) -> None:
        self.app.stopping.set()
        await super().shutdown(sockets)

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


def _errors_only(note: Note) -> None:
    if note.level == "error":
        import sys

        print(note.text, file=sys.stderr)


class HttpThread:
    """Serves `cassette` (with `config`'s answerer) at `url` until `stop`."""

    def __init__(self, cassette: Cassette, config: ReplayConfig) -> None:
        app = HttpReplayApp(cassette, config, on_note=_errors_only, quiet=True)
        self._sock = bind("127.0.0.1", 0)  # listening already: clients wait in its backlog
        path = app.plan.sse_path if app.plan.legacy_sse else app.plan.path
        self.url = url_of(self._sock, "127.0.0.1", path)
        uv = uvicorn.Config(
            app, lifespan="off", log_level="warning", access_log=False, timeout_graceful_shutdown=1
        )
        self._server = _Server(uv, app)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [self._sock]},
            name="mcptape-mock-http",
            daemon=True,
        )
        self._thread.start()

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join()
        self._sock.close()
