"""A command whose optional extra is not installed says so in one line and exits 2.

The child processes here run with a `sitecustomize` that hides the extras' modules (uvicorn,
mitmproxy, the mcp SDK, detect-secrets, httpx), as a core install (`pip install .`)
would lack them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcptape.errors import ConfigError, MissingExtraError
from mcptape.extras import installed, require
from tests.conftest import ROOT, mcptape_cmd

CASSETTE = ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl"
HIDDEN = ("uvicorn", "mitmproxy", "mcp", "mcp_types", "detect_secrets", "httpx")
HIDER = """
import sys

HIDDEN = {hidden!r}


class CoreInstall:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, CoreInstall())
"""


@pytest.fixture
def core_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a child that sees only the core install."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(HIDER.format(hidden=HIDDEN))
    path = [str(site), str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path)}


def run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["serve", str(CASSETTE)], "mcptape serve needs the 'http' extra: pip install 'mcptape[http]'"),
        (["record", "--http", "--upstream", "http://127.0.0.1:9/mcp", "-o", "x.jsonl"],
         "mcptape record --http needs the 'mitm' extra: pip install 'mcptape[mitm]'"),
        (["verify", str(CASSETTE), "--url", "http://127.0.0.1:9/mcp"],
         "mcptape verify --url needs the 'http' extra: pip install 'mcptape[http]'"),
        (["check", "--detect-secrets", str(CASSETTE)],
         "check: --detect-secrets needs the 'secrets' extra: pip install 'mcptape[secrets]' (see `mcptape check --help`)"),
    ],
    ids=["serve", "record-http", "verify-url", "check-detect-secrets"],
)  # fmt: skip
def test_a_command_without_its_extra_is_one_line_naming_it(
    core_env: dict[str, str], tmp_path: Path, args: list[str], line: str
) -> None:
    proc = run(mcptape_cmd(*args), core_env, tmp_path)
    assert (proc.returncode, proc.stderr.splitlines()) == (2, [f"mcptape: error: {line}"])
    assert not (tmp_path / "x.jsonl").exists()


def test_the_pytest_plugin_loads_without_the_sdk_and_only_the_client_asks_for_it(
    core_env: dict[str, str], tmp_path: Path
) -> None:
    """`tape.command` works with the core install; `tape.client` and `tape.url` fail the test in
    one line naming their extra."""
    (tmp_path / "test_core.py").write_text(f"""
import pytest

CASSETTE = {str(CASSETTE)!r}


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.mcptape(cassette=CASSETTE)
def test_command(mcptape):
    assert mcptape.command[-1] == CASSETTE


@pytest.mark.mcptape(cassette=CASSETTE)
def test_url(mcptape):
    assert mcptape.url


@pytest.mark.anyio
@pytest.mark.mcptape(cassette=CASSETTE)
async def test_client(mcptape):
    await mcptape.client.list_tools()
""")
    args = ["-m", "pytest", "-p", "no:cacheprovider", "-p", "anyio", "--tb=short", "-q", "-rN"]
    proc = run([sys.executable, *args, "test_core.py"], core_env, tmp_path)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "2 failed, 1 passed" in out
    failure = out[out.index("test_client ___") :].splitlines()
    assert failure[1] == (
        "the in-process client (tape.client) needs the 'sdk' extra: pip install 'mcptape[sdk]'"
    )
    failure = out[out.index("test_url ___") :].splitlines()
    assert failure[1] == (
        "tape.url (mcptape serve) needs the 'http' extra: pip install 'mcptape[http]'"
    )
    assert "Traceback" not in out and "ModuleNotFoundError" not in out


def test_require_checks_without_importing() -> None:
    assert installed("json") and installed("email.mime") and not installed("no_such_module.sub")
    require("core", "json", "anything")
    with pytest.raises(MissingExtraError) as info:
        require("http", "no_such_module_for_mcptape", "mcptape serve")
    assert isinstance(info.value, ConfigError), "the CLI exits 2 for it"
    assert str(info.value) == "mcptape serve needs the 'http' extra: pip install 'mcptape[http]'"
