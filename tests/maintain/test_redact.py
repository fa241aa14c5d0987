"""`mcptape redact`: new rules applied to an existing cassette, in place and atomically; `mcptape check`
passes after; the SDK client gets the same answers (a redacted argument matches any value)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load, write_atomic
from mcptape.errors import CassetteError
from mcptape.maintenance import commands as maintain
from mcptape.redaction.redact import REDACTED
from tests.conftest import mcptape_cmd
from tests.maintain.replaying import GOLDEN, ROOT, calls_of, results

pytestmark = [pytest.mark.anyio]
STDIO_2026 = ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl"
HTTP_2025 = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "streamable-http.jsonl"
GITHUB = "ghp_" + "Zq7x" * 9
"""A GitHub token shape: the default rules know it."""
ACME = "acme_" + "0123456789abcdef" * 2
ACME_RX = r"acme_[0-9a-f]{32}"
"""A house token the default rules do not know: `--pattern` teaches it."""
TENANT = "t-4242-blue-falcon"
"""A value only a secret name (`--key x-tenant`) reveals."""


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(mcptape_cmd(*args), capture_output=True, text=True, timeout=60)


def lines(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def write(path: Path, objs: list[dict[str, Any]]) -> None:
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))


def plant_in_echo(src: Path, dest: Path) -> None:
    """The echo call says (and gets back) a GitHub token and a house token, as if recorded with --no-redact."""
    objs = lines(src)
    secret = f"{GITHUB} {ACME}"
    for o in objs[1:]:
        msg = o.get("msg")
        if isinstance(msg, dict) and msg.get("params", {}).get("name") == "echo":
            msg["params"]["arguments"]["message"] = secret
        if (
            isinstance(msg, dict)
            and isinstance(msg.get("result"), dict)
            and msg["result"].get("content", [{}])[0].get("text") == "hello"
        ):
            msg["result"]["content"][0]["text"] = secret
            msg["result"]["structuredContent"]["result"] = secret
    write(dest, objs)


def plant_in_http(src: Path, dest: Path) -> None:
    """Headers and a query string that a careless capture kept."""
    objs = lines(src)
    for o in objs[1:]:
        http = o.get("http")
        if http and http.get("phase") == "request":
            http["headers"] |= {"Authorization": f"Bearer {GITHUB}", "X-Tenant": TENANT}
            http["path"] = f"/mcp?access_token={ACME}&page=2"
    write(dest, objs)


def check(path: Path) -> subprocess.CompletedProcess[str]:
    return cli("check", "--skip", "protocol", str(path))


async def test_redact_removes_planted_secrets_and_check_passes_after(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    plant_in_echo(STDIO_2026, cassette)
    others = [c for c in calls_of(cassette) if c[1].get("name") != "echo"]
    before = await results(cassette, others)
    assert check(cassette).returncode == 1
    done = cli("redact", str(cassette), "--key", "x-tenant", "--pattern", ACME_RX)
    assert done.returncode == 0, done.stderr
    assert "mcptape redact: redacted" in done.stderr
    events = cassette.read_bytes().split(b"\n", 1)[1]
    assert GITHUB.encode() not in events and ACME.encode() not in events
    assert check(cassette).returncode == 0, check(cassette).stdout
    cas = load(cassette)
    assert (
        "x-tenant" in cas.header.redaction["keys"] and ACME_RX in cas.header.redaction["patterns"]
    )
    redacted = {p for e in cas.events for p in e.redacted}
    assert {
        "/params/arguments/message",
        "/result/content/0/text",
        "/result/structuredContent/result",
    } <= redacted
    assert await results(cassette, others) == before
    # a redacted argument is a wildcard: the client may say anything there and gets the (redacted) answer
    got = await results(
        cassette, [("tools/call", {"name": "echo", "arguments": {"message": f"{GITHUB} {ACME}"}})]
    )
    assert got[0]["content"][0]["text"] == f"{REDACTED} {REDACTED}"


def test_redact_reaches_http_headers_and_query_strings(tmp_path: Path) -> None:
    cassette = tmp_path / "h.jsonl"
    plant_in_http(HTTP_2025, cassette)
    assert cli("redact", str(cassette), "--key", "x-tenant").returncode == 0
    data = cassette.read_bytes()
    assert GITHUB.encode() not in data and TENANT.encode() not in data and ACME.encode() not in data
    heads = [o["http"] for o in lines(cassette)[1:] if o.get("http", {}).get("phase") == "request"]
    assert all(
        h["headers"]["Authorization"] == REDACTED and h["headers"]["X-Tenant"] == REDACTED
        for h in heads
    )
    assert all(h["path"] == "/mcp?access_token=%5BREDACTED%5D&page=2" for h in heads)
    assert check(cassette).returncode == 0


def test_redact_is_idempotent_and_leaves_a_clean_file_untouched(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    plant_in_echo(STDIO_2026, cassette)
    assert cli("redact", str(cassette), "--pattern", ACME_RX).returncode == 0
    once, inode = cassette.read_bytes(), cassette.stat().st_ino
    again = cli("redact", str(cassette), "--pattern", ACME_RX)
    assert again.returncode == 0 and "nothing to redact" in again.stderr
    assert cassette.read_bytes() == once and cassette.stat().st_ino == inode


@pytest.mark.parametrize(
    "golden", GOLDEN, ids=[str(p.relative_to(ROOT / "cassettes")) for p in GOLDEN]
)
async def test_redacting_a_clean_golden_cassette_changes_only_its_header_and_no_answer(
    golden: Path, tmp_path: Path
) -> None:
    cassette = tmp_path / golden.name
    shutil.copy(golden, cassette)
    assert cli("redact", str(cassette), "--key", "x-internal-id").returncode == 0
    old, new = golden.read_bytes().splitlines(), cassette.read_bytes().splitlines()
    assert new[1:] == old[1:] and new[0] != old[0]
    calls = calls_of(golden)
    assert await results(cassette, calls) == await results(golden, calls)


def test_the_file_is_replaced_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = tmp_path / "c.jsonl"
    plant_in_echo(STDIO_2026, cassette)
    cassette.chmod(0o640)
    original, inode = cassette.read_bytes(), cassette.stat().st_ino
    tape = maintain.read(cassette)
    data, _ = maintain.redact(tape)

    def crash(*_: Any) -> None:
        raise OSError(28, "No space left on device")

    for where in ("fsync", "replace"):  # the disk fills while writing; the rename fails
        with monkeypatch.context() as m:
            m.setattr(os, where, crash)
            with pytest.raises(CassetteError, match="No space left on device"):
                write_atomic(cassette, data)
        assert cassette.read_bytes() == original and sorted(tmp_path.iterdir()) == [cassette]
    write_atomic(cassette, data)
    assert cassette.read_bytes() == data and cassette.stat().st_ino != inode, (
        "a new file renamed over the old one"
    )
    assert cassette.stat().st_mode & 0o777 == 0o640 and sorted(tmp_path.iterdir()) == [cassette]


def test_a_bad_pattern_is_a_usage_error(tmp_path: Path) -> None:
    cassette = tmp_path / "c.jsonl"
    shutil.copy(STDIO_2026, cassette)
    done = cli("redact", str(cassette), "--pattern", "([unclosed")
    assert done.returncode == 2 and done.stderr.startswith("mcptape: error: bad --redact-pattern")
    assert cassette.read_bytes() == STDIO_2026.read_bytes()


def test_redact_takes_many_files_like_check_and_fmt(tmp_path: Path) -> None:
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    plant_in_echo(STDIO_2026, first)
    plant_in_echo(STDIO_2026, second)
    proc = cli("redact", str(first), str(second), "--pattern", ACME_RX)
    assert proc.returncode == 0, proc.stderr
    assert ACME.encode() not in first.read_bytes() and ACME.encode() not in second.read_bytes()
    assert proc.stderr.count("redacted") == 2 and str(second) in proc.stderr
    many_out = cli("redact", str(first), str(second), "-o", str(tmp_path / "x.jsonl"))
    assert many_out.returncode == 2 and "-o takes one CASSETTE" in many_out.stderr
