"""End to end: `mcptape verify` re-drives recorded SDK sessions against the demo server (stdio and HTTP)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from mcptape.cassette import load
from mcptape.pairing import pair
from tests.conftest import DEMO_SERVER, free_port, mcptape_cmd
from tests.e2e.test_diff_e2e import MODES, V1_TO_V2, changes, record_demo

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("verify-e2e")

    async def both() -> dict[str, Path]:
        with anyio.fail_after(60):
            return {era: await record_demo(root / f"{era}.jsonl", era, "v1") for era in MODES}

    return anyio.run(both)


def verify(*args: Any, variant: str = "v1") -> tuple[int, str, str]:
    env = {**os.environ, "DEMO_SERVER_VARIANT": variant}
    proc = subprocess.run(
        mcptape_cmd("verify", *map(str, args)), capture_output=True, text=True, timeout=90, env=env
    )
    return proc.returncode, proc.stdout, proc.stderr


SERVER = (sys.executable, str(DEMO_SERVER))


@pytest.mark.parametrize("era", list(MODES))
def test_verify_against_the_unchanged_server_is_equivalent(
    recorded: dict[str, Path], era: str, tmp_path: Path
) -> None:
    new = tmp_path / "new.jsonl"
    code, out, err = verify(recorded[era], "-o", new, "--", *SERVER)
    assert code == 0, out + err
    assert out.splitlines()[0] == "equivalent"
    old_methods = [ex.method for ex in pair(load(recorded[era]).events).exchanges]
    assert [
        ex.method for ex in pair(load(new).events).exchanges
    ] == old_methods  # same calls, MRTR retry included


@pytest.mark.parametrize("era", list(MODES))
def test_verify_against_the_second_release_lists_its_changes(
    recorded: dict[str, Path], era: str
) -> None:
    code, out, _ = verify(recorded[era], "--format", "json", "--", *SERVER, variant="v2")
    assert code == 1
    assert sorted(changes(orjson.loads(out))) == sorted(V1_TO_V2)


def test_verify_a_legacy_cassette_in_2026(recorded: dict[str, Path], tmp_path: Path) -> None:
    new = tmp_path / "new.jsonl"
    code, out, _ = verify(
        recorded["legacy"], "--protocol", "2026-07-28", "-o", new, "--format", "json", "--", *SERVER
    )
    report = orjson.loads(out)
    assert code == 0 and report["b"]["era"] == "modern" and report["differences"] == []
    assert "/protocol/version" in {d["path"] for d in report["envelope"]}
    code, _, _ = verify(
        recorded["legacy"], "--protocol", "2026-07-28", "--strict-envelope", "--", *SERVER
    )
    assert code == 1


@pytest.mark.parametrize(("args", "message"), [
    ((), "give the server command after --"),
    (("--url", "http://127.0.0.1:1/mcp", "--", "x"), "not both"),
    (("--protocol", "1999-01-01", "--", "x"), "unknown protocol version"),
])  # fmt: skip
def test_verify_usage_errors_exit_2(
    recorded: dict[str, Path], args: tuple[str, ...], message: str
) -> None:
    code, out, err = verify(recorded["legacy"], *args)
    assert code == 2 and message in err and out == ""


def test_verify_a_server_that_cannot_start_exits_2(recorded: dict[str, Path]) -> None:
    code, _, err = verify(recorded["legacy"], "--", "/nonexistent/server")
    assert code == 2 and "cannot start" in err


@asynccontextmanager
async def http_server(variant: str) -> AsyncIterator[str]:
    """The demo server on Streamable HTTP; yields its URL once uvicorn says it listens."""
    port = free_port()
    env = {**os.environ, "DEMO_SERVER_VARIANT": variant}
    proc = await anyio.open_process(
        [*SERVER, "http", str(port)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        assert proc.stderr is not None
        seen = b""
        async for chunk in proc.stderr:
            seen += chunk
            if b"Uvicorn running" in seen:
                break
        else:
            raise AssertionError(f"the demo server did not start: {seen.decode()}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        with anyio.move_on_after(10):
            await proc.wait()
        if proc.returncode is None:
            proc.kill()
        await proc.aclose()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("era", "variant", "want"), [("legacy", "v1", 0), ("modern", "v1", 0), ("modern", "v2", 1)]
)
async def test_verify_over_streamable_http(
    recorded: dict[str, Path], tmp_path: Path, era: str, variant: str, want: int
) -> None:
    new = tmp_path / "http.jsonl"
    with anyio.fail_after(60):
        async with http_server(variant) as url:
            cmd = mcptape_cmd(
                "verify", str(recorded[era]), "--url", url, "-o", str(new), "--format", "json"
            )
            proc = await anyio.run_process(cmd, check=False)
    report = orjson.loads(proc.stdout)
    assert proc.returncode == want, proc.stderr
    assert report["b"]["name"] == url  # side B is the live server as the user named it
    if want == 1:
        assert sorted(changes(report)) == sorted(V1_TO_V2)
    events = load(new).events
    assert events[0].http and events[0].http["method"] == "POST"
    assert any(
        e.http and e.http.get("sse") is not None for e in events
    )  # the progress call answered as SSE


def one_call_cassette(path: Path) -> Path:
    lines = [
        {"mcptape_cassette": 1, "mcptape_version": "0.1.0", "transport": "stdio", "target": {"command": ["x"]},
         "recorded_at": "2026-01-01T00:00:00Z", "redaction": {}},
        {"seq": 1, "t": 0, "kind": "message", "from": "client", "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}},
        {"seq": 2, "t": 0, "kind": "message", "from": "server", "msg": {"jsonrpc": "2.0", "id": 1, "result": {"tools": []}}},
        {"seq": 3, "t": 0, "kind": "end"},
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    return path


@pytest.mark.parametrize(
    ("server", "why"),
    [("import sys\nfor _ in sys.stdin: pass", "never answers"), ("pass", "exits at once")],
)
def test_verify_against_a_silent_or_dead_server_reports_the_missing_answer(
    tmp_path: Path, server: str, why: str
) -> None:
    new = tmp_path / "new.jsonl"
    code, out, err = verify(one_call_cassette(tmp_path / "one.jsonl"), "--timeout", "0.5", "-o", new, "--format", "json",
                            "--", sys.executable, "-c", server)  # fmt: skip
    assert code == 2, (
        why,
        err,
    )  # a gate: no verdict on behaviour from a server that did not answer
    assert "tools/list" in err and out == ""
    events = load(new).events
    assert events[-1].kind == "end" and events[-2].kind == "exit"
    if why == "never answers":
        assert events[-1].info == {"abandoned": ["tools/list"]}


def test_verify_a_server_that_exits_at_once_shows_its_stderr_and_status(tmp_path: Path) -> None:
    server = (
        "import sys\nsys.stderr.write('starting\\nboom: DATABASE_URL is not set\\n')\nsys.exit(3)"
    )
    code, out, err = verify(
        one_call_cassette(tmp_path / "one.jsonl"), "--", sys.executable, "-c", server
    )
    assert code == 2 and out == ""
    assert "ended before answering 1 request: tools/list (exit status 3)" in err
    assert "| boom: DATABASE_URL is not set" in err


def test_verify_a_refused_url_exits_2(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    code, out, err = verify(one_call_cassette(tmp_path / "one.jsonl"), "--url", url)
    assert code == 2 and out == ""
    assert f"cannot reach {url}: ConnectError" in err
