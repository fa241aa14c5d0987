"""`mcptape import` of a file it cannot use says, on one line, which file and what is wrong
with it: where its JSON stops parsing, that it holds no HTTP flows, or the mitmproxy reader's
complaint cut short (never a whole body quoted back)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pytest

from mcptape.capture.importer import import_file
from mcptape.errors import McpTapeError
from tests.conftest import mcptape_cmd
from tests.e2e.test_import_formats import entry, har

BIG = 50 * 1024 * 1024


def refused(tmp_path: Path, name: str, data: bytes) -> str:
    src = tmp_path / name
    src.write_bytes(data)
    with pytest.raises(McpTapeError) as exc:
        import_file(src, tmp_path / "out.jsonl")
    text = str(exc.value)
    assert text.startswith(f"{src}: ") and "\n" not in text
    assert len(text) < 1000, "a bounded message whatever the file holds"
    assert not (tmp_path / "out.jsonl").exists()
    return text


def test_a_json_lines_file_with_a_huge_line_is_named_with_where_it_stops(tmp_path: Path) -> None:
    data = b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"x" * BIG + b'"}}\n{"id":2}\n'
    text = refused(tmp_path, "log.jsonl", data)
    assert "not a HAR file: line 2, column 1" in text and "JSON Lines" in text


def test_a_har_that_stops_parsing_says_where(tmp_path: Path) -> None:
    assert "line 1, column 2" in refused(tmp_path, "c.har", b"{oops")


def test_a_capture_without_http_flows_says_so_and_names_the_file(tmp_path: Path) -> None:
    text = refused(tmp_path, "empty.har", b'{"log": {"entries": []}}')
    assert "holds no flows" in text


def test_a_flow_file_of_tcp_flows_only_says_so(tmp_path: Path) -> None:
    from mitmproxy.io import FlowWriter
    from mitmproxy.test import tflow

    buf = io.BytesIO()
    FlowWriter(buf).add(tflow.ttcpflow())
    text = refused(tmp_path, "tcp.flow", buf.getvalue())
    assert "holds only 1 flow(s) that are not HTTP" in text


def test_no_mcp_traffic_names_the_file(tmp_path: Path) -> None:
    page = har(entry("GET", "http://h/", at=0.0, ctype="text/html", response="<p>"))
    assert "no MCP traffic among the 1 flow(s)" in refused(tmp_path, "page.har", page)


def test_an_unreadable_flow_file_is_quoted_short(tmp_path: Path) -> None:
    data = b"%d:" % BIG + b"x" * BIG + b","
    text = refused(tmp_path, "big.flow", data)
    assert "not a readable mitmproxy flow file (at its start: " in text


@pytest.mark.e2e
def test_the_cli_prints_one_line(tmp_path: Path) -> None:
    src = tmp_path / "big.flow"
    src.write_bytes(b"%d:" % BIG + b"x" * BIG + b",")
    done = subprocess.run(mcptape_cmd("import", str(src), "-o", str(tmp_path / "o.jsonl")),
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert done.returncode == 1 and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"mcptape: error: {src}: ") and len(done.stderr) < 1000
