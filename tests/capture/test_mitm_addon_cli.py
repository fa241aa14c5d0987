"""`mcptape addon-path` and the argument checks of `mcptape record --http` (no proxy started)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcptape.capture import mitm_addon
from mcptape.capture.http import parse_listen, record_http
from mcptape.cli import main
from mcptape.cli.addon_path import ADDON, addon_path
from mcptape.errors import ConfigError, RecordError
from mcptape.redaction.redact import RedactConfig


def test_addon_path_prints_the_addon_file() -> None:
    result = CliRunner().invoke(addon_path, [])
    assert result.exit_code == 0
    assert Path(result.output.strip()) == ADDON == Path(mitm_addon.__file__).resolve()


def test_addon_path_help_shows_mitmdump_use() -> None:
    result = CliRunner().invoke(addon_path, ["--help"])
    assert (
        "mitmdump -s" in result.output
        and "mcptape_cassette=" in result.output
        and "--mode reverse:" in result.output
    )


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("127.0.0.1:8080", ("127.0.0.1", 8080)),
        ("8080", ("127.0.0.1", 8080)),
        (":0", ("127.0.0.1", 0)),
        ("[::1]:9", ("::1", 9)),
    ],
)
def test_listen_addresses_parse(text: str, want: tuple[str, int]) -> None:
    assert parse_listen(text) == want


@pytest.mark.parametrize("text", ["127.0.0.1:http", "127.0.0.1:70000", "host:"])
def test_bad_listen_addresses_are_config_errors(text: str) -> None:
    with pytest.raises(ConfigError, match="listen address"):
        parse_listen(text)


@pytest.mark.parametrize("url", ["ftp://x/mcp", "127.0.0.1:8000/mcp", "http:///mcp"])
def test_a_non_http_upstream_is_a_config_error(tmp_path: Path, url: str) -> None:
    with pytest.raises(ConfigError, match="--upstream"):
        record_http(url, ("127.0.0.1", 0), tmp_path / "c.jsonl", RedactConfig())


def test_a_taken_listen_port_is_a_record_error(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(RecordError, match=f"cannot listen on 127.0.0.1:{port}"):
            record_http(
                "http://127.0.0.1:1/mcp", ("127.0.0.1", port), tmp_path / "c.jsonl", RedactConfig()
            )


def test_an_unwritable_cassette_is_a_record_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    with pytest.raises(RecordError, match="cannot write the cassette"):
        record_http(
            "http://127.0.0.1:1/mcp",
            ("127.0.0.1", 0),
            tmp_path / "file" / "c.jsonl",
            RedactConfig(),
        )


def test_record_http_errors_are_one_line_with_exit_code_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["record", "--http", "--upstream", "ftp://x", "-o", "/dev/null"])
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mcptape: error: --upstream") and "\n" not in err


def test_addon_path_and_the_cli_do_not_import_mitmproxy() -> None:
    import subprocess
    import sys

    code = "import sys; from mcptape.cli import main; import mcptape.cli.addon_path, mcptape.cli.record; print('mitmproxy' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "False"
