"""`mcptape record --http --upstream URL` checks the URL before mitmproxy starts: a host it
cannot parse is a one-line usage error (exit 2) naming the URL, never a traceback, never a
proxy left waiting, and never the URL's password."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from mcptape.capture.http import check_upstream
from mcptape.errors import ConfigError
from tests.conftest import mcptape_cmd

BAD = [
    ("http://bad host/mcp", "no spaces"),
    ("http://bad\thost/mcp", "no spaces"),
    ("http://a..b/mcp", "'a..b' is no valid host name"),
    ("http://127.0.0.1:99999/mcp", "the port must be a number in 0..65535"),
    ("http://127.0.0.1:http/mcp", "the port must be a number in 0..65535"),
    ("ftp://127.0.0.1/mcp", "give an http:// or https:// URL"),
]


@pytest.mark.parametrize(("url", "says"), BAD)
def test_a_bad_upstream_url_is_one_line_naming_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(ConfigError) as exc:
        check_upstream(url)
    assert says in str(exc.value) and "\n" not in str(exc.value)
    assert str(exc.value).startswith("--upstream ")


@pytest.mark.e2e
def test_a_host_with_a_space_is_refused_before_mitmproxy_starts(tmp_path: Path) -> None:
    proc = subprocess.run(
        mcptape_cmd("record", "--http", "--upstream", "http://ada:s3cr3t-pw@bad host/mcp",
                    "--listen", "127.0.0.1:0", "-o", str(tmp_path / "c.jsonl")),
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith("mcptape: error: --upstream 'http://bad host/mcp'")
    assert "s3cr3t-pw" not in proc.stderr, "the password is never printed"
    assert not (tmp_path / "c.jsonl").exists()


def test_credentials_in_the_url_become_a_basic_authorization() -> None:
    assert check_upstream("http://ada:pw@127.0.0.1:8000/mcp") == (
        "http://127.0.0.1:8000/mcp",
        "Basic YWRhOnB3",
    )
    assert check_upstream("https://[::1]:8443/mcp") == ("https://[::1]:8443/mcp", None)
