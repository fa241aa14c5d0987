"""`mcptape record -o` name templates: {server}, {time}, {pid}, {n}; paths in messages as given."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from mcptape.errors import ConfigError
from mcptape.proc.names import expand
from tests.conftest import DEMO_SERVER


def test_fields_are_filled_in(tmp_path: Path) -> None:
    now = datetime(2026, 12, 1, 14, 25, 3)
    path = expand(f"{tmp_path}/{{server}}-{{time}}-{{pid}}.jsonl", "my server", now=now, pid=42)
    assert path == tmp_path / "my-server-20261201-142503-42.jsonl"
    assert expand("plain.jsonl", "x").is_absolute()


def test_n_is_the_first_number_not_taken(tmp_path: Path) -> None:
    template = f"{tmp_path}/{{server}}-{{n}}.jsonl"
    assert expand(template, "s").name == "s-1.jsonl"
    (tmp_path / "s-1.jsonl").touch()
    (tmp_path / "s-2.jsonl").touch()
    assert expand(template, "s").name == "s-3.jsonl"


@pytest.mark.parametrize(
    ("template", "message"),
    [("{host}.jsonl", "unknown field {host}"), ("{n.jsonl", "literal braces")],
)
def test_bad_templates_say_what_is_allowed(template: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        expand(template, "s")


@pytest.mark.e2e
def test_each_launch_gets_its_own_cassette_and_says_where(tmp_path: Path) -> None:
    cmd = [
        sys.executable,
        "-m",
        "mcptape",
        "record",
        "-o",
        "rec/{server}-{n}.jsonl",
        "--",
        sys.executable,
        str(DEMO_SERVER),
    ]
    init = (
        '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}\n'
    )  # a session the server answers: only those become cassettes
    for _ in range(2):
        proc = subprocess.run(
            cmd, cwd=tmp_path, input=init, capture_output=True, text=True, timeout=120, check=False
        )
        assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in (tmp_path / "rec").iterdir()) == [
        "demo_server-1.jsonl",
        "demo_server-2.jsonl",
    ]
    assert proc.stderr.startswith("mcptape record: recording ")
    assert " to rec/demo_server-2.jsonl " in proc.stderr, "relative as given"
