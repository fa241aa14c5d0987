"""`mcptape fmt`: canonical layout, idempotent, `--check` for CI; no message ever changes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load
from tests.conftest import mcptape_cmd
from tests.maintain.replaying import GOLDEN, ROOT, calls_of, results

pytestmark = [pytest.mark.anyio]
EVERY_GOLDEN = sorted(
    (ROOT / "cassettes").glob("*/*/*.jsonl")
)  # the committed ones (make demo writes others)
HTTP_2025 = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "streamable-http.jsonl"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(mcptape_cmd(*args), capture_output=True, text=True, timeout=60)


def reversed_keys(obj: dict[str, Any]) -> dict[str, Any]:
    return dict(reversed(list(obj.items())))


def scramble(src: Path, dest: Path) -> None:
    """The same cassette as a careless editor saves it: keys of the header, the events and their `http`
    in reverse order, spaces after separators, non-ASCII escaped, CRLF line ends and a blank line.
    Messages keep their key order (that is data, which fmt never touches)."""
    out = []
    for i, line in enumerate(src.read_bytes().splitlines()):
        obj = orjson.loads(line)
        if i == 0:
            obj["redaction"] = reversed_keys(obj["redaction"])
        elif isinstance(obj.get("http"), dict):
            obj["http"] = reversed_keys(obj["http"])
        out.append(json.dumps(reversed_keys(obj), ensure_ascii=True))
    dest.write_text("\r\n".join(out[:3] + [""] + out[3:]) + "\r\n", newline="")


@pytest.mark.parametrize(
    "golden", EVERY_GOLDEN, ids=[str(p.relative_to(ROOT / "cassettes")) for p in EVERY_GOLDEN]
)
def test_recorded_cassettes_are_canonical_and_fmt_restores_them_byte_for_byte(
    golden: Path, tmp_path: Path
) -> None:
    assert cli("fmt", "--check", str(golden)).returncode == 0
    messy = tmp_path / golden.name
    scramble(golden, messy)
    checked = cli("fmt", "--check", str(messy))
    assert checked.returncode == 1 and f"would reformat {messy}" in checked.stderr
    assert cli("fmt", str(messy)).returncode == 0
    assert messy.read_bytes() == golden.read_bytes()
    again = cli("fmt", str(messy))
    assert again.returncode == 0 and "0 file(s) reformatted, 1 already canonical" in again.stderr


def test_fmt_keeps_every_message_and_its_key_order(tmp_path: Path) -> None:
    messy = tmp_path / "m.jsonl"
    scramble(HTTP_2025, messy)
    assert cli("fmt", str(messy)).returncode == 0
    before, after = load(HTTP_2025), load(messy)
    assert [orjson.dumps(e.msg) for e in after.events] == [
        orjson.dumps(e.msg) for e in before.events
    ]
    assert [e.to_json() for e in after.events] == [e.to_json() for e in before.events]
    assert after.header == before.header


@pytest.mark.parametrize(
    "golden", GOLDEN[:2] + GOLDEN[-2:], ids=lambda p: str(p.relative_to(ROOT / "cassettes"))
)
async def test_a_reformatted_cassette_replays_the_same(golden: Path, tmp_path: Path) -> None:
    messy = tmp_path / golden.name
    scramble(golden, messy)
    calls = calls_of(golden)
    want = await results(messy, calls)
    assert cli("fmt", str(messy)).returncode == 0
    assert await results(messy, calls) == want


def test_unknown_keys_go_last_sorted_and_renumber_is_opt_in(tmp_path: Path) -> None:
    objs = [orjson.loads(line) for line in HTTP_2025.read_bytes().splitlines()[:6]]
    objs[0] = {"zeta": 1, **objs[0], "alpha": 2}
    objs[2] = {"x-note": "kept", **objs[2]}
    for o, seq in zip(objs[1:], (3, 7, 8, 20, 21), strict=True):
        o["seq"] = seq
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(orjson.dumps(o) + b"\n" for o in objs))
    assert cli("fmt", str(path)).returncode == 0
    out = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    assert (
        list(out[0])[-2:] == ["alpha", "zeta"]
        and list(out[2])[-1] == "x-note"
        and out[2]["x-note"] == "kept"
    )
    assert [o["seq"] for o in out[1:]] == [3, 7, 8, 20, 21]
    assert cli("fmt", "--check", str(path)).returncode == 0
    assert cli("fmt", "--check", "--renumber", str(path)).returncode == 1
    assert cli("fmt", "--renumber", str(path)).returncode == 0
    assert [
        o["seq"] for o in (orjson.loads(line) for line in path.read_bytes().splitlines()[1:])
    ] == [1, 2, 3, 4, 5]


def test_check_lists_every_file_and_a_truncated_cassette_is_refused(tmp_path: Path) -> None:
    good, messy, cut = tmp_path / "good.jsonl", tmp_path / "messy.jsonl", tmp_path / "cut.jsonl"
    shutil.copy(HTTP_2025, good)
    scramble(HTTP_2025, messy)
    cut.write_bytes(HTTP_2025.read_bytes()[:-20])
    done = cli("fmt", "--check", str(good), str(messy))
    assert (
        done.returncode == 1
        and "1 file(s) would be reformatted, 1 already canonical" in done.stderr
    )
    refused = cli("fmt", str(cut))
    assert (
        refused.returncode == 1
        and "truncated" in refused.stderr
        and refused.stderr.count("\n") == 1
    )
    assert cut.read_bytes() == HTTP_2025.read_bytes()[:-20]


def test_fmt_streams_writes_only_what_changes_and_never_half_a_file(tmp_path: Path) -> None:
    """A canonical file is not written at all (same inode, same mtime); a bad line far down
    stops the rewrite with its real line, and leaves the file and its directory as they were."""
    canonical, messy = tmp_path / "canonical.jsonl", tmp_path / "messy.jsonl"
    shutil.copy(HTTP_2025, canonical)
    before = canonical.stat()
    done = cli("fmt", str(canonical))
    after = canonical.stat()
    assert done.returncode == 0 and "1 already canonical" in done.stderr
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    scramble(HTTP_2025, messy)
    lines = messy.read_bytes().split(b"\n")
    bad = len(lines) - 2  # the last line but one
    lines[bad - 1] = b'{"seq": 3, "kind": "message", "msg": '
    messy.write_bytes(b"\n".join(lines))
    original = messy.read_bytes()
    refused = cli("fmt", str(messy))
    assert refused.returncode == 1 and f"messy.jsonl:{bad}: corrupt line" in refused.stderr
    assert messy.read_bytes() == original
    assert sorted(p.name for p in tmp_path.iterdir()) == ["canonical.jsonl", "messy.jsonl"]
