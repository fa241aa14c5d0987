"""`mcptape wrap` / `unwrap` on the config files of each agent host, and a wrapped server
launched as hosts launch it (HOME and a short PATH only), twice at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcptape.cassette import load
from mcptape.cli import cli
from tests.conftest import DEMO_SERVER

VENV_BIN = str(Path(sys.executable).parent)

HOSTS = {
    # Claude Desktop: claude_desktop_config.json, stdio servers only.
    "claude_desktop_config.json": """{
  "mcpServers": {
    "demo": {
      "command": "python3",
      "args": ["DEMO"],
      "env": {"DEMO_SERVER_VARIANT": "v1"}
    }
  },
  "globalShortcut": "Ctrl+Space"
}
""",
    # Cursor: .cursor/mcp.json, stdio and remote (url + headers) servers.
    "cursor-mcp.json": """{
  "mcpServers": {
    "demo": {"command": "python3", "args": ["DEMO"]},
    "docs": {"url": "http://127.0.0.1:8931/mcp", "headers": {"Authorization": "Bearer ${env:DOCS_TOKEN}"}}
  }
}
""",
    # VS Code: .vscode/mcp.json: "servers", "type", comments, trailing commas, inputs.
    "vscode-mcp.json": """// VS Code MCP servers
{
  "inputs": [{"type": "promptString", "id": "key", "description": "API key", "password": true}],
  "servers": {
    /* the local one */
    "demo": {
      "type": "stdio",
      "command": "python3",
      "args": ["DEMO"],
      "env": {"API_KEY": "${input:key}"},
    },
    "remote": {"type": "http", "url": "http://127.0.0.1:8932/mcp"},
  },
}
""",
    # A plain mcp.json (agent frameworks), four spaces, no final newline.
    "mcp.json": """{
    "mcpServers": {
        "demo": {
            "command": "python3",
            "args": [
                "DEMO"
            ]
        }
    }
}""",
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        cli, list(args), catch_exceptions=False, env={"PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
    )
    return result.exit_code, result.stdout, result.stderr


def servers_of(path: Path) -> dict[str, dict[str, object]]:
    from mcptape.maintenance.agents import parse

    return parse(path.read_text(), str(path)).servers


@pytest.mark.parametrize("host", list(HOSTS))
def test_wrap_then_unwrap_restores_each_hosts_config_byte_for_byte(
    tmp_path: Path, host: str
) -> None:
    config = tmp_path / host
    original = HOSTS[host].replace("DEMO", str(DEMO_SERVER)).encode()
    config.write_bytes(original)
    folder = tmp_path / "recorded"
    code, _, err = run("wrap", str(config), "--cassettes", str(folder))
    assert code == 0, err
    demo = servers_of(config)["demo"]
    command, args = str(demo["command"]), [str(a) for a in demo["args"]]  # type: ignore[union-attr]
    assert Path(command).is_absolute() and Path(command).name == "mcptape"
    assert args[:3] == ["record", "-o", f"{folder}/demo-{{time}}-{{pid}}.jsonl"]
    cut = args.index("--")
    assert args[cut + 1] == str(Path(VENV_BIN) / "python3"), "the command made absolute"
    assert args[cut + 2 :] == [str(DEMO_SERVER)]
    kept = {k: v for k, v in demo.items() if k not in ("command", "args")}
    assert kept == {
        k: v
        for k, v in json.loads(_plain(original))[_key(host)]["demo"].items()
        if k not in ("command", "args")
    }
    for name, entry in servers_of(config).items():
        if name != "demo":
            assert "url" in entry and "command" not in entry, "HTTP servers are left alone"
    assert str(config) in err and "backup of the original" in err, "absolute paths in the messages"
    if "docs" in servers_of(config) or "remote" in servers_of(config):
        assert "mcptape record --http --upstream http://127.0.0.1:893" in err
    backup = config.with_name(config.name + ".mcptape-backup")
    assert backup.read_bytes() == original
    code, _, err = run("unwrap", str(config))
    assert code == 0, err
    assert config.read_bytes() == original, "byte for byte"
    assert not backup.exists()
    assert "restored byte for byte" in err


def _plain(data: bytes) -> str:
    from mcptape.maintenance.agents import strip_jsonc

    return strip_jsonc(data.decode())


def _key(host: str) -> str:
    return "servers" if host.startswith("vscode") else "mcpServers"


def test_unwrap_keeps_edits_made_since_wrap(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(HOSTS["cursor-mcp.json"].replace("DEMO", str(DEMO_SERVER)))
    assert run("wrap", str(config))[0] == 0
    value = json.loads(config.read_text())
    value["mcpServers"]["added"] = {"command": "/bin/true"}
    config.write_text(json.dumps(value, indent=2))
    code, _, err = run("unwrap", str(config))
    assert code == 0, err
    after = json.loads(config.read_text())["mcpServers"]
    assert after["demo"] == {"command": "python3", "args": [str(DEMO_SERVER)]}
    assert after["added"] == {"command": "/bin/true"}
    assert "not byte for byte" in err


def test_wrapping_twice_changes_nothing_and_keeps_the_first_backup(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    original = HOSTS["mcp.json"].replace("DEMO", str(DEMO_SERVER))
    config.write_text(original)
    assert run("wrap", str(config))[0] == 0
    wrapped = config.read_bytes()
    code, _, err = run("wrap", str(config))
    assert code == 0 and config.read_bytes() == wrapped
    assert "demo: already wrapped" in err and "nothing to wrap" in err
    assert config.with_name("mcp.json.mcptape-backup").read_text() == original


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {"a": {"command": "x",}\n  "b": 1}}', "mcp.json:2: not valid JSON"),
        ('{"tools": []}', 'no "mcpServers" object'),
    ],
)
def test_a_bad_config_is_one_line_with_its_place(tmp_path: Path, text: str, message: str) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(text)
    proc = subprocess.run(
        [sys.executable, "-m", "mcptape", "wrap", str(config)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert message in proc.stderr and str(tmp_path) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "Traceback" not in proc.stderr


@pytest.mark.e2e
@pytest.mark.anyio
async def test_a_wrapped_server_under_a_hosts_short_path_records_each_launch(
    tmp_path: Path,
) -> None:
    config = tmp_path / "claude_desktop_config.json"
    config.write_text(HOSTS["claude_desktop_config.json"].replace("DEMO", str(DEMO_SERVER)))
    folder = tmp_path / "recorded"
    assert run("wrap", str(config), "--cassettes", str(folder))[0] == 0
    entry = servers_of(config)["demo"]
    env = {"HOME": str(tmp_path), "PATH": "/usr/bin:/bin", **entry.get("env", {})}  # type: ignore[dict-item]
    params = StdioServerParameters(
        command=str(entry["command"]), args=[str(a) for a in entry["args"]], env=env
    )  # type: ignore[union-attr]
    results: list[str] = []

    async def launch(a: int) -> None:
        async with Client(stdio_client(params)) as client:
            results.append((await client.call_tool("add", {"a": a, "b": 1})).content[0].text)  # type: ignore[union-attr]

    with anyio.fail_after(120):
        async with anyio.create_task_group() as tg:
            tg.start_soon(launch, 1)
            tg.start_soon(launch, 2)
    assert sorted(results) == ["2", "3"]
    cassettes = sorted(folder.glob("demo-*.jsonl"))
    assert len(cassettes) == 2, cassettes
    args = sorted(
        e.msg["params"]["arguments"]["a"]
        for c in cassettes
        for e in load(c).events
        if e.msg and e.msg.get("method") == "tools/call"
    )
    assert args == [1, 2], "each launch in its own cassette"
