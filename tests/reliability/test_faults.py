"""Faults end to end: servers that quit, hang or crash mid-request; a recorder killed mid-session;
cassettes that are broken in every way a user meets. Real processes, no sleeps."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source
from mcptape.check import check_bytes
from tests.conftest import mcptape_cmd

from .helpers import HEADER, client, run_cli, server, write_cassette

FAULT_SERVER = str(Path(__file__).with_name("fault_server.py"))
pytestmark = pytest.mark.e2e


def request(i: int, method: str, params: dict[str, Any] | None = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        msg["params"] = params
    return orjson.dumps(msg) + b"\n"


class Session:
    """`mcptape record` in front of the fault server, driven line by line like a client would."""

    def __init__(self, cassette: Path) -> None:
        self.proc = subprocess.Popen(
            mcptape_cmd("record", "-q", "-o", str(cassette), "--", sys.executable, FAULT_SERVER),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert self.proc.stdin and self.proc.stdout
        self.stdin, self.fd = self.proc.stdin, self.proc.stdout.fileno()
        self.buf = b""

    def send(self, data: bytes) -> None:
        self.stdin.write(data)
        self.stdin.flush()

    def readline(self, timeout: float = 30) -> bytes:
        """The next line from the server; b"" at end of output."""
        while b"\n" not in self.buf:
            ready, _, _ = select.select([self.fd], [], [], timeout)
            assert ready, "timed out waiting for the recorder's output"
            chunk = os.read(self.fd, 65536)
            if not chunk:
                rest, self.buf = self.buf, b""
                return rest
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line + b"\n"

    def call(self, i: int, method: str) -> dict[str, Any]:
        self.send(request(i, method))
        answer: dict[str, Any] = orjson.loads(self.readline())
        return answer

    def wait(self) -> int:
        code = self.proc.wait(timeout=30)
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.proc.stderr.close()  # type: ignore[union-attr]
        return code


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    s = Session(tmp_path / "c.jsonl")
    yield s
    if s.proc.poll() is None:
        s.proc.kill()
        s.proc.wait()


def exits(path: Path) -> list[Any]:
    return [e.info for e in load(path).events if e.kind is Kind.EXIT]


def test_a_server_exiting_mid_request_passes_its_code_and_is_recorded(
    tmp_path: Path, session: Session
) -> None:
    assert session.call(1, "ping")["result"] == {"method": "ping"}
    session.send(request(2, "test/exit", {"code": 3}))
    assert session.readline() == b"", "the client sees end of output, not a made-up answer"
    assert session.wait() == 3
    cas = load(tmp_path / "c.jsonl")
    assert cas.warnings == [] and cas.events[-1].kind is Kind.END
    assert exits(tmp_path / "c.jsonl") == [{"code": 3}]
    report = check_bytes((tmp_path / "c.jsonl").read_bytes())
    assert report.findings == []
    assert [w.what for w in report.warnings] == [
        "test/exit (id 2) was never answered: the server exited first"
    ]


def test_a_server_that_never_answers_is_stopped_by_the_client_and_recorded(
    tmp_path: Path, session: Session
) -> None:
    assert session.call(1, "ping")["result"] == {"method": "ping"}
    session.send(request(2, "test/hang"))
    session.send(request(3, "tools/list"))  # the server no longer reads: this one waits in the pipe
    session.proc.send_signal(signal.SIGTERM)  # the client gives up, as SDK clients do at shutdown
    assert session.wait() == 128 + signal.SIGTERM
    cas = load(tmp_path / "c.jsonl")
    assert cas.warnings == []
    sent = [e.msg["id"] for e in cas.events if e.kind is Kind.MESSAGE and e.src is Source.CLIENT]
    answered = [
        e.msg["id"] for e in cas.events if e.kind is Kind.MESSAGE and e.src is Source.SERVER
    ]
    assert sent == [1, 2, 3] and answered == [1]
    assert exits(tmp_path / "c.jsonl") == [{"code": -15, "signal": "SIGTERM"}]


def test_a_server_crashing_mid_request_keeps_what_it_sent(tmp_path: Path, session: Session) -> None:
    session.send(request(1, "test/crash"))
    note = orjson.loads(session.readline())
    assert note["method"] == "notifications/progress"
    assert session.readline() == b""
    assert session.wait() == 128 + signal.SIGKILL
    kinds = [(e.kind, e.src) for e in load(tmp_path / "c.jsonl").events]
    assert kinds[:2] == [
        (Kind.MESSAGE, Source.CLIENT),
        (Kind.MESSAGE, Source.SERVER),
    ]  # the request, the progress
    assert kinds[-2:] == [(Kind.EXIT, Source.SERVER), (Kind.END, None)]
    assert exits(tmp_path / "c.jsonl") == [{"code": -9, "signal": "SIGKILL"}]


@pytest.fixture
def cut_short(tmp_path: Path, session: Session) -> Path:
    """A cassette whose recorder was SIGKILLed mid-session, with a half-written last line:
    the recording left at its `.partial` name (the cassette's own name is never taken by a
    killed recording)."""
    for i, method in enumerate(["ping", "tools/list", "prompts/list", "resources/list"], start=1):
        assert session.call(i, method)["id"] == i
    session.proc.kill()
    session.wait()
    assert not (tmp_path / "c.jsonl").exists()
    path = tmp_path / "c.jsonl.partial"
    with path.open("ab") as f:
        f.write(b'{"seq":99,"t":9.0,"kind":"message","from":"cli')  # what a kill mid-write leaves
    return path


def test_show_replay_diff_and_check_work_on_a_cassette_cut_short(
    cut_short: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(capsys, "show", str(cut_short))
    assert code == 0 and "tools/list" in out
    assert "mcptape show: warning:" in err and "truncated" in err and "cut short" in err

    lines = b"".join(request(i, m) for i, m in [(7, "tools/list"), (8, "prompts/list")])
    proc = subprocess.run(
        mcptape_cmd("replay", str(cut_short)), input=lines, capture_output=True, timeout=60
    )
    assert proc.returncode == 0
    answers = [orjson.loads(ln) for ln in proc.stdout.splitlines()]
    assert answers == [
        {"jsonrpc": "2.0", "id": 7, "result": {"method": "tools/list"}},
        {"jsonrpc": "2.0", "id": 8, "result": {"method": "prompts/list"}},
    ]
    assert b"cut short" in proc.stderr

    code, out, err = run_cli(capsys, "diff", str(cut_short), str(cut_short))
    assert code == 0 and "cut short" in err

    code, out, err = run_cli(capsys, "check", str(cut_short))
    assert code == 0 and out == "" and "truncated" in err and "cut short" in err


ANOTHER_TOOL_JSON = (
    b'{"log": {"version": "1.2", "creator": {"name": "WebInspector"}, "entries": []}}\n'
)
ANOTHER_TOOL_YAML = b"interactions:\n- request:\n    body: null\n    method: GET\n"


@pytest.fixture(params=["har", "vcrpy-yaml", "corrupt-middle", "empty", "newer-format"])
def broken(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Path, str, str]:
    """(cassette, where the error must point, what it must say)."""
    path = tmp_path / f"{request.param}.jsonl"
    kind = request.param
    if kind == "har":
        path.write_bytes(ANOTHER_TOOL_JSON)
        return path, f"{path}:1:", "not an mcptape cassette"
    if kind == "vcrpy-yaml":
        path.write_bytes(ANOTHER_TOOL_YAML)
        return path, f"{path}:1:", "not an mcptape cassette"
    if kind == "corrupt-middle":
        write_cassette(
            path,
            client({"jsonrpc": "2.0", "id": 1, "method": "ping"}),
            server({"jsonrpc": "2.0", "id": 1, "result": {}}),
        )
        lines = path.read_bytes().splitlines(keepends=True)
        lines[2] = lines[2][: len(lines[2]) // 2] + b"\n"
        path.write_bytes(b"".join(lines))
        return path, f"{path}:3:", "corrupt line"
    if kind == "empty":
        path.write_bytes(b"")
        return path, f"{path}:", "empty file"
    path.write_bytes(
        orjson.dumps({**HEADER, "mcptape_cassette": 2}) + b'\n{"seq":1,"t":0,"kind":"end"}\n'
    )
    return path, f"{path}:1:", "upgrade mcptape"


@pytest.mark.parametrize(
    ("command", "exit_code"), [("show", 1), ("replay", 1), ("diff", 2), ("check", 1)]
)
def test_a_broken_cassette_is_one_line_naming_file_and_line(
    broken: tuple[Path, str, str], command: str, exit_code: int, capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    path, where, what = broken
    args = [command, str(path), str(path)] if command == "diff" else [command, str(path)]
    code, out, err = run_cli(capsys, *args)
    assert code == exit_code
    text = out if command == "check" else err
    first = text.splitlines()[0]
    if command == "check":
        assert first.startswith(where) and what in first
        assert err.splitlines()[-1].endswith("problem(s) in 1 of 1 cassette(s)")
    else:
        assert out == "" and err.count("\n") == 1
        assert first.startswith(f"mcptape: error: {where}") and what in first
