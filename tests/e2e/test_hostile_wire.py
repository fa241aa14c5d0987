"""Hostile client input, end to end: a real `mcptape replay` process on pipes and a real
`mcptape serve` process on 127.0.0.1, each kept running across the whole table of
tests/hostile_wire.py. Every bad payload gets its JSON-RPC answer (and over HTTP a status that
ends the exchange), then a good request is answered by the same process."""

from __future__ import annotations

import queue
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import orjson
import pytest

from tests.conftest import mcptape_cmd
from tests.hostile_wire import (
    CASES,
    EVENTS,
    INIT,
    INITIALIZED,
    LEGACY,
    MODERN,
    Case,
    check,
    echo,
    echoed,
    modern_meta,
)
from tests.reliability.helpers import client, server, write_cassette
from tests.reliability.test_serve import Served

pytestmark = pytest.mark.e2e

IDS = [c.what for c in CASES]
ERAS = {"handshake": None, "2026-07-28": modern_meta()}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
WAIT = 60.0
"""Seconds any one answer may take on a loaded machine."""


@pytest.fixture(scope="module")
def cassette(tmp_path_factory: pytest.TempPathFactory) -> Path:
    events = [(client if who == "client" else server)(msg) for who, msg in EVENTS]
    return write_cassette(tmp_path_factory.mktemp("hostile") / "echo.jsonl", *events)


class Replay:
    """`mcptape replay` as a process; `ask` writes lines and collects its answers."""

    def __init__(self, cassette: Path, modern: bool) -> None:
        self.modern = modern
        """A 2026-07-28 client (each request carries its `_meta`), else a handshake one."""
        self.proc = subprocess.Popen(
            mcptape_cmd("replay", "-q", "--allow-repeats", str(cassette)),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")  # end of output

    def send(self, *payloads: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(p + b"\n" for p in payloads))
        self.proc.stdin.flush()

    def until(self, good_id: str) -> list[bytes]:
        """The lines it writes up to (without) the answer to request `good_id`, which must come."""
        out: list[bytes] = []
        while True:
            line = self.lines.get(timeout=WAIT)
            assert line, f"mcptape replay ended (exit {self.proc.wait()}) before answering"
            msg = orjson.loads(line)
            if isinstance(msg, dict) and msg.get("id") == good_id:
                assert msg == echoed(good_id, self.modern)
                return out
            out.append(line)

    def close(self) -> tuple[int, bytes]:
        """Ends its input; its exit code and everything it wrote to stderr."""
        assert self.proc.stdin is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        stderr = self.proc.stderr.read()  # -q: only errors (each no-match, a few hundred bytes)
        return self.proc.wait(timeout=WAIT), stderr


@pytest.fixture(scope="module", params=sorted(ERAS))
def replay(request: pytest.FixtureRequest, cassette: Path) -> Iterator[Replay]:
    r = Replay(cassette, ERAS[request.param] is not None)
    if not r.modern:
        r.send(orjson.dumps(INIT), orjson.dumps(INITIALIZED))
        assert orjson.loads(r.lines.get(timeout=WAIT))["id"] == INIT["id"]
    yield r
    code, stderr = r.close()
    assert code == 0 and b"Traceback" not in stderr and b"internal error" not in stderr


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_mcptape_replay_answers_each_bad_line_and_serves_the_next(
    replay: Replay, case: Case
) -> None:
    meta = modern_meta() if replay.modern else None
    good = f"good-{CASES.index(case)}"
    replay.send(case.body(meta), orjson.dumps(echo(good, meta)))
    bad = replay.until(good)
    check(case.stdio, [orjson.loads(ln) for ln in bad], sum(map(len, bad)))


@pytest.fixture(scope="module")
def serve(cassette: Path) -> Iterator[Served]:
    s = Served(cassette, "--allow-repeats", "--max-body", str(32 * 1024 * 1024))
    yield s
    assert s.stop() == 0
    assert s.proc.stderr is not None
    stderr = s.proc.stderr.read()
    assert "Traceback" not in stderr and "internal error" not in stderr


def _modern_headers(method: str) -> dict[str, str]:
    return {**ACCEPT, "mcp-protocol-version": MODERN, "mcp-method": method, "mcp-name": "echo"}


async def _post(
    http: httpx.AsyncClient, url: str, body: bytes, headers: dict[str, str]
) -> tuple[int, str, bytes]:
    r = await http.post(url, content=body, headers=headers)
    return r.status_code, r.headers.get("content-type", ""), r.content


@pytest.mark.anyio
@pytest.mark.parametrize("era", sorted(ERAS))
@pytest.mark.parametrize("case", CASES, ids=IDS)
async def test_mcptape_serve_answers_each_bad_body_with_a_status_that_ends_it(
    serve: Served, case: Case, era: str
) -> None:
    modern = ERAS[era] is not None
    with anyio.fail_after(WAIT):
        async with httpx.AsyncClient(timeout=WAIT) as http:
            if modern:
                headers = _modern_headers(case.method)
                expect = case.modern
            else:
                r = await http.post(serve.url, content=orjson.dumps(INIT), headers=ACCEPT)
                headers = {
                    **ACCEPT,
                    "mcp-session-id": r.headers["mcp-session-id"],
                    "mcp-protocol-version": LEGACY,
                }
                await http.post(serve.url, content=orjson.dumps(INITIALIZED), headers=headers)
                expect = case.session
            status, ctype, raw = await _post(http, serve.url, case.body(ERAS[era]), headers)
            good = echo("good", ERAS[era])
            ok = await http.post(
                serve.url,
                content=orjson.dumps(good),
                headers=_modern_headers("tools/call") if modern else headers,
            )
    assert status == expect.status
    if status == 202:
        assert raw == b""
    else:  # one line of JSON: the exchange is over
        assert ctype == "application/json" and b"\n" not in raw
    check(expect, [orjson.loads(raw)] if raw else [], len(raw))
    assert ok.status_code == 200 and ok.json() == echoed("good", modern)
