"""Recordings that cannot destroy data: a failed re-recording keeps the old cassette, two
recorders never share a file, a killed recorder has written everything its client received,
and a full disk leaves the session untouched and fails loudly at the end."""

from __future__ import annotations

import os
import random
import select
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source
from tests.conftest import mcptape_cmd

from .helpers import start_recorder

pytestmark = pytest.mark.e2e

ANSWER_SERVER = str(Path(__file__).with_name("answer_server.py"))
ECHO = str(Path(__file__).parents[1] / "capture" / "echo_server.py")


def initialize(rid: int, name: str) -> bytes:
    params = {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": name, "version": "1"},
    }
    return (
        orjson.dumps({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params})
        + b"\n"
    )


def session(name: str, first_id: int = 0) -> bytes:
    """A whole client session: the handshake and two requests, ids from `first_id`."""
    return b"".join([
        initialize(first_id, name),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n',
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % (first_id + 1),
        b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % (first_id + 2),
    ])  # fmt: skip


def check(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        mcptape_cmd("check", *map(str, paths)), capture_output=True, text=True, timeout=120
    )


def client_names(path: Path) -> list[str]:
    return [e.msg["params"]["clientInfo"]["name"] for e in load(path).events
            if e.kind is Kind.MESSAGE and e.msg.get("method") == "initialize"]  # fmt: skip


def test_a_re_recording_whose_server_fails_to_start_keeps_the_old_cassette(tmp_path: Path) -> None:
    out = tmp_path / "good.jsonl"
    rec = mcptape_cmd("record", "-o", str(out), "--", sys.executable, ANSWER_SERVER)
    assert (
        subprocess.run(rec, input=session("first"), capture_output=True, timeout=60).returncode == 0
    )
    good = out.read_bytes()
    assert check(out).returncode == 0

    missing = tmp_path / "nonexistent.py"
    proc = subprocess.run(mcptape_cmd("record", "-o", str(out), "--", sys.executable, str(missing)),
                          input=session("second").decode(), capture_output=True, text=True, timeout=60)  # fmt: skip
    assert proc.returncode == 2, "the server's exit code is passed on"
    assert out.read_bytes() == good, "the old cassette is kept byte for byte"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["good.jsonl"], "no recording left behind"
    error = proc.stderr.strip().splitlines()[-1]
    assert error.startswith(
        f"mcptape: error: the server answered nothing (it exited with code 2), so {out} was left as it was; its stderr: "
    )
    assert "No such file or directory" in error, "the server's own stderr says why"

    proc = subprocess.run(
        mcptape_cmd("record", "-o", str(out), "--", str(missing)),
        input="",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and out.read_bytes() == good
    assert proc.stderr.strip().endswith(f"{out} was left as it was")


def test_a_relaunch_with_the_same_name_replaces_the_cassette_with_one_whole_session(
    tmp_path: Path,
) -> None:
    out = tmp_path / "c.jsonl"
    for name in ("first", "second"):  # two runs (launches of one run append: test_multi_session)
        rec = mcptape_cmd(
            "record", "-q", "--run", name, "-o", str(out), "--", sys.executable, ANSWER_SERVER
        )
        assert (
            subprocess.run(rec, input=session(name), capture_output=True, timeout=60).returncode
            == 0
        )
    assert client_names(out) == ["second"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def _launch(cmd: list[str], cwd: Path, n: int) -> list[subprocess.Popen[bytes]]:
    """`n` recorders started together, each a run of its own (launches of one run append to
    one cassette: test_multi_session); without -q, returns once each says it is recording
    (so all are recording at once before any session starts)."""
    procs = [
        subprocess.Popen(
            cmd,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "MCPTAPE_RUN": f"run-{i}"},
        )
        for i in range(n)
    ]
    if "-q" not in cmd:
        for p in procs:
            assert p.stderr is not None
            assert p.stderr.readline().startswith(b"mcptape record: recording "), (
                "bounded by the recorder: it exits or says it"
            )
    return procs


def _finish(procs: list[subprocess.Popen[bytes]]) -> None:
    threads = []
    for i, proc in enumerate(procs):

        def talk(p: subprocess.Popen[bytes] = proc, i: int = i) -> None:
            out, err = p.communicate(session(f"client-{i}", first_id=100 * i), timeout=120)
            p.stderr_text = err.decode()  # type: ignore[attr-defined]
            assert p.returncode == 0, err
            assert out.count(b"\n") == 3, "every request answered"

        threads.append(threading.Thread(target=talk))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(p.returncode == 0 for p in procs)


def test_two_recorders_with_the_same_name_never_share_a_file(tmp_path: Path) -> None:
    procs = _launch(
        mcptape_cmd("record", "-o", "c.jsonl", "--", sys.executable, ANSWER_SERVER), tmp_path, 2
    )
    _finish(procs)
    files = sorted(tmp_path.iterdir())
    assert [p.name for p in files] == ["c-2.jsonl", "c.jsonl"], (
        "the second to finish keeps the first's cassette"
    )
    assert sorted(n for p in files for n in client_names(p)) == ["client-0", "client-1"]
    assert all(len(client_names(p)) == 1 for p in files), "one session per file"
    assert check(*files).returncode == 0
    notes = [
        line for p in procs for line in p.stderr_text.splitlines() if "another recorder" in line
    ]  # type: ignore[attr-defined]
    assert notes == [
        f"mcptape record: recorded to {files[0].name}: {files[1].name} was written by another recorder meanwhile and is kept"
    ]


def test_twenty_recorders_with_the_default_name_get_twenty_cassettes(tmp_path: Path) -> None:
    procs = _launch(mcptape_cmd("record", "-q", "--", sys.executable, ANSWER_SERVER), tmp_path, 20)
    _finish(procs)
    files = sorted((tmp_path / "cassettes").iterdir())
    assert len(files) == 20 and all(
        p.name.startswith("answer_server-") and p.suffix == ".jsonl" for p in files
    )
    assert sorted(n for p in files for n in client_names(p)) == sorted(
        f"client-{i}" for i in range(20)
    )
    assert all(len(client_names(p)) == 1 for p in files), "one session per file"
    result = check(*files)
    assert result.returncode == 0, result.stdout + result.stderr


def _read_answers(fd: int, want: int, got: list[bytes], buf: bytearray) -> None:
    """Reads until `want` complete lines arrived in total (bounded by select's timeout)."""
    while len(got) < want:
        ready, _, _ = select.select([fd], [], [], 60)
        assert ready, "timed out waiting for the recorder"
        chunk = os.read(fd, 65536)
        assert chunk, "the recorder closed stdout"
        buf += chunk
        while b"\n" in buf:
            line, _, rest = bytes(buf).partition(b"\n")
            got.append(line)
            buf[:] = rest


@pytest.mark.parametrize("batch", range(5))
def test_a_stdio_recorder_killed_at_any_point_has_every_answer_the_client_received(
    tmp_path: Path, batch: int
) -> None:
    """10 kills a batch, 50 in all: after k answers, with a request in flight, or with half a
    request written; every line the client received (and every line it sent that was answered)
    is in the recording the killed recorder left."""
    rng = random.Random(1300 + batch)
    for run in range(10):
        out = tmp_path / f"k{run}.jsonl"
        proc = subprocess.Popen(mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, ECHO),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)  # fmt: skip
        assert proc.stdin and proc.stdout
        answered, buf, got = rng.randint(0, 8), bytearray(), []
        big = rng.random() < 0.3
        for i in range(answered):
            pad = "x" * (rng.randint(200_000, 600_000) if big else rng.randint(0, 50))
            proc.stdin.write(
                orjson.dumps({"jsonrpc": "2.0", "id": i, "method": "ping", "params": {"pad": pad}})
                + b"\n"
            )
            proc.stdin.flush()
            _read_answers(proc.stdout.fileno(), i + 1, got, buf)
        where = rng.choice(["after", "in flight", "half a line"])
        if where == "in flight":
            proc.stdin.write(b'{"jsonrpc":"2.0","id":999,"method":"ping"}\n')
            proc.stdin.flush()
        elif where == "half a line":
            proc.stdin.write(b'{"jsonrpc":"2.0","id":998,')
            proc.stdin.flush()
        proc.kill()
        proc.wait(timeout=30)
        assert not out.exists()
        received = [orjson.loads(line)["id"] for line in got]
        partial = out.with_name(out.name + ".partial")
        if not partial.exists():  # killed before it began recording
            assert received == []
            continue
        cas = load(partial)
        recorded = [
            e.msg["id"] for e in cas.events if e.kind is Kind.MESSAGE and e.src is Source.SERVER
        ]
        assert recorded[: len(received)] == received, (run, where)
        sent = [
            e.msg["id"] for e in cas.events if e.kind is Kind.MESSAGE and e.src is Source.CLIENT
        ]
        assert sent[: len(received)] == received, (run, where)


@pytest.mark.skipif(
    not Path(sys.executable).with_name("mitmdump").exists(), reason="HTTP capture needs mitmproxy"
)
@pytest.mark.parametrize("batch", range(5))
def test_an_http_recorder_killed_at_any_point_has_every_answer_the_client_received(
    tmp_path: Path, batch: int, upstream: ThreadingHTTPServer
) -> None:
    """10 kills a batch, 50 in all, after a random number of answered requests (some with a
    request in flight): every answer the client read is in the recording left behind."""
    from .test_faults_http import connect, post

    rng = random.Random(1400 + batch)
    for run in range(10):
        out = tmp_path / f"k{run}.jsonl"
        proc, url = start_recorder(f"http://127.0.0.1:{upstream.server_address[1]}/mcp", out)
        try:
            conn, path = connect(url)
            received = []
            for i in range(rng.randint(1, 6)):
                received.append(
                    orjson.loads(
                        post(conn, path, {"jsonrpc": "2.0", "id": i, "method": "tools/list"}).read()
                    )["id"]
                )
            if rng.random() < 0.5:
                body = orjson.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"})
                conn.request("POST", path, body, {"Content-Type": "application/json"})  # in flight
        finally:
            proc.kill()
            proc.wait(timeout=30)
        conn.close()
        assert not out.exists()
        cas = load(out.with_name(out.name + ".partial"))
        recorded = [
            e.msg["id"] for e in cas.events if e.kind is Kind.MESSAGE and e.src is Source.SERVER
        ]
        assert recorded[: len(received)] == received, run


@pytest.fixture
def upstream() -> Iterator[ThreadingHTTPServer]:
    from .test_faults_http import Flaky

    srv = ThreadingHTTPServer(("127.0.0.1", 0), Flaky)
    srv.sent, srv.reset = threading.Event(), threading.Event()  # type: ignore[attr-defined]
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.reset.set()  # type: ignore[attr-defined]
    srv.shutdown()
    srv.server_close()


def _small_tmpfs(tmp_path: Path) -> Path | None:
    """A 64 KiB tmpfs, when this process may mount one (root); None otherwise."""
    mnt = tmp_path / "full"
    mnt.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return None
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
        capture_output=True,
        timeout=30,
    )
    return mnt if proc.returncode == 0 else None


@pytest.fixture(params=["file-size limit", "full tmpfs"])
def full_disk(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, Any]]:
    """(directory for the cassette, preexec_fn for the recorder) such that writes fail part way."""
    if request.param == "file-size limit":
        import resource

        def limit() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (16384, 16384))

        yield tmp_path, limit
        return
    mnt = _small_tmpfs(tmp_path)
    if mnt is None:
        pytest.skip("mounting a tmpfs needs root; the file-size-limit variant covers the same path")
    try:
        yield mnt, None
    finally:
        subprocess.run(["umount", str(mnt)], capture_output=True, timeout=30)


def test_a_full_disk_keeps_the_session_byte_exact_and_fails_loudly_at_the_end(
    full_disk: tuple[Path, Any],
) -> None:
    where, preexec = full_disk
    out = where / "c.jsonl"
    proc = subprocess.Popen(mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, ECHO),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=preexec)  # fmt: skip
    lines = b"".join(
        orjson.dumps({"jsonrpc": "2.0", "id": i, "method": "ping", "params": {"pad": "y" * 1000}})
        + b"\n"
        for i in range(200)
    )
    stdout, stderr = proc.communicate(
        lines, timeout=120
    )  # 200 KB through a cassette that holds 16-64 KB
    assert stdout == lines, "the client's session is byte-exact"
    assert proc.returncode == 1
    (error,) = stderr.decode().strip().splitlines()
    partial = where / "c.jsonl.partial"
    assert error.startswith(f"mcptape: error: {partial}: cannot write the cassette: ")
    assert (
        "File too large" in error or "No space left on device" in error
    ) and f"{out} was not changed" in error
    assert not out.exists()
