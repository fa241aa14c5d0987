"""The stdio recorder's hard cases: bytes pass through unchanged and every line is recorded."""

from __future__ import annotations

import base64
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from mcptape.cassette import load
from mcptape.cassette.model import Kind, Source
from mcptape.redaction.redact import REDACTED
from mcptape.schema import cassette_schema
from tests.conftest import mcptape_cmd

ECHO = str(Path(__file__).with_name("echo_server.py"))
pytestmark = pytest.mark.e2e


def record(
    tmp_path: Path, stdin: bytes, *extra: str, timeout: float = 60
) -> tuple[subprocess.CompletedProcess[bytes], Path]:
    out = tmp_path / "c.jsonl"
    cmd = mcptape_cmd("record", "-q", "-o", str(out), *extra, "--", sys.executable, ECHO)
    proc = subprocess.run(cmd, input=stdin, capture_output=True, timeout=timeout)
    return proc, out


def messages(path: Path, src: Source) -> list[object]:
    return [e.msg for e in load(path).events if e.kind is Kind.MESSAGE and e.src is src]


def test_json_lines_pass_through_and_are_recorded_in_order(tmp_path: Path) -> None:
    lines = [b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % i for i in range(50)]
    proc, out = record(tmp_path, b"\n".join(lines) + b"\n")
    assert proc.returncode == 0
    assert proc.stdout == b"\n".join(lines) + b"\n"
    cas = load(out)
    assert cas.warnings == []
    events = [e for e in cas.events if e.kind is Kind.MESSAGE]
    assert len(events) == 100
    assert [e.msg["id"] for e in events if e.src is Source.CLIENT] == list(range(50))
    seq = {(e.src, e.msg["id"]): e.seq for e in events}
    assert all(seq[(Source.CLIENT, i)] < seq[(Source.SERVER, i)] for i in range(50)), (
        "a line is recorded before its echo"
    )


def test_non_json_line_passes_untouched_and_is_recorded_as_raw(tmp_path: Path) -> None:
    data = b"hello, not json {\n"
    proc, out = record(tmp_path, data)
    assert proc.stdout == data
    raws = [e for e in load(out).events if e.kind is Kind.RAW]
    assert [(e.src, e.text) for e in raws] == [
        (Source.CLIENT, "hello, not json {"),
        (Source.SERVER, "hello, not json {"),
    ]


def test_invalid_utf8_is_recorded_losslessly(tmp_path: Path) -> None:
    data = b"\xff\xfe\x00binary\x80\n"
    proc, out = record(tmp_path, data)
    assert proc.stdout == data
    raws = [e for e in load(out).events if e.kind is Kind.RAW]
    assert [e.raw_bytes for e in raws] == [data[:-1], data[:-1]]
    assert raws[0].b64 == base64.b64encode(data[:-1]).decode()


def test_batch_array_is_one_event(tmp_path: Path) -> None:
    batch = b'[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"}]\n'
    proc, out = record(tmp_path, batch)
    assert proc.stdout == batch
    assert messages(out, Source.CLIENT) == [orjson.loads(batch)]


def test_crlf_and_odd_whitespace_pass_byte_exact(tmp_path: Path) -> None:
    data = b'{ "jsonrpc" : "2.0", "method" : "x" }\r\n   \n'
    proc, out = record(tmp_path, data)
    assert proc.stdout == data
    assert messages(out, Source.CLIENT)[0] == {"jsonrpc": "2.0", "method": "x"}


def test_twenty_megabyte_line(tmp_path: Path) -> None:
    n = 20 * 1024 * 1024
    proc, out = record(tmp_path, b"big %d\n" % n)
    assert len(proc.stdout) == n + 1 and proc.stdout.endswith(b'"}}\n')
    (msg,) = messages(out, Source.SERVER)
    assert len(msg["result"]["text"]) == n - 45  # type: ignore[index]


def test_line_over_the_limit_passes_whole_and_is_recorded_by_size(tmp_path: Path) -> None:
    proc, out = record(tmp_path, b"big 100000\n", "--max-line", "4096")
    assert len(proc.stdout) == 100001 and proc.stdout.endswith(b'"}}\n')
    (ev,) = [e for e in load(out).events if e.kind is Kind.RAW and e.src is Source.SERVER]
    assert ev.size == 100000 and ev.info and ev.info["oversize"]


def test_stderr_passes_through_and_is_recorded(tmp_path: Path) -> None:
    proc, out = record(
        tmp_path, b"stderr warming up\nstderr token=Bearer abcdefghijklmnopqrstu\n{}\n"
    )
    assert proc.stderr == b"warming up\ntoken=Bearer abcdefghijklmnopqrstu\n"
    texts = [e.text for e in load(out).events if e.kind is Kind.STDERR]
    assert texts == ["warming up", f"token={REDACTED}"]


def test_exit_code_is_passed_on_and_recorded(tmp_path: Path) -> None:
    proc, out = record(tmp_path, b'{"jsonrpc":"2.0","method":"x"}\nexit 3\n')
    assert proc.returncode == 3
    cas = load(out)
    assert cas.events[-2].kind is Kind.EXIT and cas.events[-2].info == {"code": 3}
    assert cas.events[-1].kind is Kind.END


def test_crashed_server_is_recorded_with_its_signal(tmp_path: Path) -> None:
    proc, out = record(tmp_path, b'{"jsonrpc":"2.0","id":1,"method":"x"}\ncrash\n')
    assert proc.returncode == 128 + signal.SIGKILL
    ex = [e for e in load(out).events if e.kind is Kind.EXIT][0]
    assert ex.info == {"code": -9, "signal": "SIGKILL"}


def test_secrets_in_messages_are_redacted_but_pass_through(tmp_path: Path) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"api_key":"s3cr3t-value"}}}\n'
    proc, out = record(tmp_path, line)
    assert proc.stdout == line
    assert b"s3cr3t-value" not in out.read_bytes()
    ev = next(e for e in load(out).events if e.kind is Kind.MESSAGE)
    assert ev.msg["params"]["arguments"]["api_key"] == REDACTED
    assert ev.redacted == ("/params/arguments/api_key",)
    proc, out = record(tmp_path, line, "--no-redact")
    assert b"s3cr3t-value" in out.read_bytes()


def test_written_cassette_validates_against_the_shipped_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    _, out = record(
        tmp_path, b'{"jsonrpc":"2.0","id":1,"method":"a"}\nnot json\n\xff\nstderr x\nexit 0\n'
    )
    validator = jsonschema.Draft202012Validator(cassette_schema())
    for line in out.read_bytes().splitlines():
        validator.validate(orjson.loads(line))


def test_unwritable_cassette_fails_before_the_server_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    cmd = mcptape_cmd(
        "record", "-o", "/dev/full", "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"
    )
    proc = subprocess.run(cmd, input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 1
    assert (
        proc.stderr.decode()
        .strip()
        .startswith("mcptape: error: /dev/full: cannot write the cassette")
    )
    assert len(proc.stderr.decode().strip().splitlines()) == 1
    assert not marker.exists()


def test_command_that_cannot_start(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    proc = subprocess.run(
        mcptape_cmd("record", "-o", str(out), "--", "/no/such/server"),
        input=b"",
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr.decode().splitlines() == [
        f"mcptape: error: cannot start '/no/such/server': No such file or directory; {out} was not written"
    ]
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [], "no recording is left behind"


def test_no_command_is_a_usage_error() -> None:
    proc = subprocess.run(mcptape_cmd("record"), input=b"", capture_output=True, timeout=60)
    assert proc.returncode == 2
    (line,) = proc.stderr.decode().splitlines()
    assert "give the server command after --" in line


def _readline(fd: int, timeout: float = 30) -> bytes:
    buf = b""
    while not buf.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, "timed out waiting for the recorder"
        chunk = os.read(fd, 4096)
        assert chunk, "recorder closed stdout"
        buf += chunk
    return buf


def test_sigkill_of_the_recorder_leaves_a_readable_cassette(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, ECHO),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin and proc.stdout
    for i in range(5):
        proc.stdin.write(b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i)
        proc.stdin.flush()
        assert _readline(proc.stdout.fileno()) == b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i
    proc.kill()
    proc.wait(timeout=30)
    assert not out.exists(), "a killed recording does not take the cassette's place"
    partial = tmp_path / "c.jsonl.partial"
    cas = load(partial)
    ids = [e.msg["id"] for e in cas.events if e.kind is Kind.MESSAGE]
    # Every message the client received is in the cassette, in order: lines are written
    # before they are forwarded.
    assert ids == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    assert any("cut short" in w for w in cas.warnings)
    show = subprocess.run(mcptape_cmd("show", str(partial)), capture_output=True, timeout=60)
    assert show.returncode == 0 and b"cut short" in show.stderr and b"ping" in show.stdout


def test_sigterm_is_forwarded_to_the_server(tmp_path: Path) -> None:
    out = tmp_path / "c.jsonl"
    proc = subprocess.Popen(
        mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, ECHO),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert proc.stdin and proc.stdout
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"ping"}\n')
    proc.stdin.flush()
    _readline(proc.stdout.fileno())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    cas = load(out)
    assert cas.warnings == []
    assert [e.info for e in cas.events if e.kind is Kind.EXIT] == [
        {"code": -15, "signal": "SIGTERM"}
    ]


def test_cassette_full_mid_session_keeps_the_session_and_fails_loudly_at_the_end(
    tmp_path: Path,
) -> None:
    """A cassette that stops taking writes (here: a file-size limit) does not disturb the
    session: every line still passes byte for byte, and the recorder says once, at the end,
    what happened and where, and exits non-zero; the cassette is not replaced."""
    import resource

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = tmp_path / "c.jsonl"
    out.write_bytes(b"the previous recording\n")
    proc = subprocess.Popen(
        mcptape_cmd("record", "-q", "-o", str(out), "--", sys.executable, ECHO),
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=limit,
    )  # fmt: skip
    assert proc.stdin and proc.stdout and proc.stderr
    lines = [
        b'{"jsonrpc":"2.0","id":%d,"method":"ping","params":{"pad":"' % i + b"x" * 300 + b'"}}\n'
        for i in range(100)
    ]
    for line in lines:
        proc.stdin.write(line)
        proc.stdin.flush()
        assert _readline(proc.stdout.fileno()) == line, "the session goes on, byte for byte"
    proc.stdin.close()
    code = proc.wait(timeout=60)
    err = proc.stderr.read().decode().strip().splitlines()
    assert code == 1
    partial = tmp_path / "c.jsonl.partial"
    assert err == [
        f"mcptape: error: {partial}: cannot write the cassette: File too large; the session went on "
        f"unrecorded from there; what was recorded is in {partial}, {out} was not changed"
    ]
    assert out.read_bytes() == b"the previous recording\n"
    assert partial.stat().st_size <= 4096
    assert [e.msg["id"] for e in load(partial).events if e.kind is Kind.MESSAGE][:2] == [0, 0]


def _readline_or_eof(fd: int, timeout: float = 30) -> bytes:
    buf = b""
    while not buf.endswith(b"\n"):
        ready, _, _ = select.select([fd], [], [], timeout)
        assert ready, "timed out waiting for the recorder"
        chunk = os.read(fd, 4096)
        if not chunk:
            return b""
        buf += chunk
    return buf


def test_a_pretty_printed_body_stays_on_one_cassette_line(tmp_path: Path) -> None:
    from mcptape.capture.recorder import Recorder
    from mcptape.cassette import CassetteWriter, new_header
    from mcptape.cassette.model import Transport
    from mcptape.redaction.redact import Redactor

    out = tmp_path / "c.jsonl"
    writer = CassetteWriter(out, new_header(Transport.STREAMABLE_HTTP, {}, {}))
    rec = Recorder(writer, Redactor())
    body = b'{\n  "jsonrpc": "2.0",\r\n  "id": 1,\n  "result": {"ok": true}\n}\n'
    assert rec.payload(Source.SERVER, body, http={"exchange": 1}) == {
        "jsonrpc": "2.0",
        "id": 1,
        "result": {"ok": True},
    }
    rec.end()
    writer.close()
    assert len(out.read_bytes().splitlines()) == 3
    (ev,) = [e for e in load(out).events if e.kind is Kind.MESSAGE]
    assert ev.msg == {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}} and ev.http == {
        "exchange": 1
    }
