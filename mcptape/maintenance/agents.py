"""Wrapping the MCP servers of an agent host's config in `mcptape record`, and back. Pure.

The hosts and their shapes (docs/agents.md):
- Claude Desktop (`claude_desktop_config.json`), Cursor (`.cursor/mcp.json`) and a plain
  `mcp.json`: `{"mcpServers": {NAME: {"command", "args", "env"} | {"url", "headers"}}}`.
- VS Code (`.vscode/mcp.json`): `{"servers": {NAME: {"type": "stdio", "command", "args",
  "env", "envFile", "cwd"} | {"type": "http" | "sse", "url", "headers"}}, "inputs": [...]}`,
  JSON with comments; in `settings.json` the same object sits under `"mcp"`.

A stdio server's entry becomes `command: <absolute mcptape>`, `args: [record, -o, TEMPLATE,
--, <absolute command>, ARGS...]`; every other key (env, cwd, type, ...) stays. HTTP servers
are not changed: they are recorded through the reverse proxy (`mcptape record --http`), and
`wrap` says how. `unwrap` puts back the original entries (from the backup when there is one),
and the original bytes when nothing else changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from mcptape.errors import ConfigError

MARK = ["record", "-o"]


@dataclass(frozen=True, slots=True)
class Config:
    """A parsed host config: the value, where its servers are, and how it was written."""

    value: dict[str, Any]
    servers_path: tuple[str, ...]
    indent: int | str
    commented: bool

    @property
    def servers(self) -> dict[str, Any]:
        node: Any = self.value
        for key in self.servers_path:
            node = node[key]
        return node  # type: ignore[no-any-return]

    @property
    def host(self) -> str:
        return (
            "VS Code"
            if self.servers_path[-1] == "servers"
            else "Claude Desktop / Cursor / mcp.json"
        )


@dataclass
class Outcome:
    """What wrap or unwrap did, server by server, for the user."""

    text: str
    changed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (VS Code's mcp.json) as plain JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return re.sub(r",(\s*[}\]])", r"\1", "".join(out))


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def parse(text: str, where: str) -> Config:
    """The config in `text` (`where` names it in errors).

    Raises:
        ConfigError: not JSON (with the line), or no servers object.
    """
    plain = strip_jsonc(text)
    try:
        value = json.loads(plain)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{where}:{exc.lineno}: not valid JSON ({exc.msg}); fix the file and try again"
        ) from None
    if not isinstance(value, dict):
        raise ConfigError(f"{where}:1: an MCP config is a JSON object")
    if isinstance(value.get("mcpServers"), dict):
        path: tuple[str, ...] = ("mcpServers",)
    elif isinstance(value.get("servers"), dict):
        path = ("servers",)
    elif isinstance(value.get("mcp"), dict) and isinstance(value["mcp"].get("servers"), dict):
        path = ("mcp", "servers")
    else:
        raise ConfigError(f'{where}: no "mcpServers" object (Claude Desktop, Cursor, mcp.json) and no "servers" '
                          'object (VS Code): is this an MCP config?')  # fmt: skip
    m = re.search(r"\n([ \t]+)\S", text)
    indent: int | str = (len(m.group(1)) if m.group(1).strip(" ") == "" else m.group(1)) if m else 2
    return Config(value, path, indent, plain != text)


def dump(config: Config, value: dict[str, Any] | None = None, newline: bool = True) -> str:
    text = json.dumps(
        config.value if value is None else value, indent=config.indent, ensure_ascii=False
    )
    return text + ("\n" if newline else "")


def kind(entry: Any) -> str:
    """`stdio`, `http`, `wrapped` (already recording) or `unknown`."""
    if not isinstance(entry, dict):
        return "unknown"
    if (
        entry.get("type") in ("http", "sse", "streamable-http", "streamableHttp")
        or "url" in entry
        or "serverUrl" in entry
    ):
        return "http"
    if isinstance(entry.get("command"), str):
        return "wrapped" if is_wrapped(entry) else "stdio"
    return "unknown"


def is_wrapped(entry: dict[str, Any]) -> bool:
    """True when the entry already runs `mcptape record ... -- SERVER` (its script, or python -m mcptape)."""
    args = [str(a) for a in entry.get("args") or []]
    command = str(entry.get("command", ""))
    if re.search(r"(^|[/\\])mcptape(\.exe)?$", command):
        tail = args
    elif re.search(r"(^|[/\\])python[0-9.]*(\.exe)?$", command) and args[:2] == ["-m", "mcptape"]:
        tail = args[2:]
    else:
        return False
    return bool(tail) and tail[0] == "record" and "--" in tail


def server_file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.\-]+", "-", name).strip("-.") or "server"


def wrap(
    text: str,
    where: str,
    *,
    mcptape: Sequence[str],
    cassettes: str,
    template: str,
    resolve: Callable[[str], str | None],
    only: Sequence[str] = (),
) -> Outcome:
    """`text` with its stdio servers wrapped in `mcptape record`.

    Args:
        mcptape: the absolute command that runs mcptape (its script, or python -m mcptape).
        cassettes: the absolute cassette folder.
        template: the cassette name template (`{server}` is filled in here; `{time}`,
            `{pid}` and `{n}` by each launch).
        resolve: a program name -> its absolute path (None: not found).
        only: the servers to wrap (default: every stdio server).
    """
    config = parse(text, where)
    servers = config.servers
    _check_named(only, servers, where)
    out = Outcome("")
    for name, entry in servers.items():
        if only and name not in only:
            continue
        k = kind(entry)
        if k != "stdio":
            out.skipped.append(name)
            out.notes.append(_left_as_is(name, entry, k, cassettes))
            continue
        target = f"{cassettes}/{template.replace('{server}', server_file_name(name))}"
        absolute = resolve(entry["command"])
        if absolute is None:
            out.notes.append(_not_on_path(name, entry["command"]))
        servers[name] = _wrapped(entry, mcptape, target, absolute)
        out.changed.append(name)
        out.notes.append(f"{name}: records to {target}")
    out.text = dump(config) if out.changed else text
    if out.changed and config.commented:
        out.notes.append(
            "comments and trailing commas are not kept in the wrapped file; unwrap restores them"
        )
    return out


def _check_named(only: Sequence[str], servers: dict[str, Any], where: str) -> None:
    """Raises ConfigError when `only` names a server the file does not have."""
    unknown = [n for n in only if n not in servers]
    if unknown:
        raise ConfigError(f"{where}: no server named {', '.join(json.dumps(u) for u in unknown)}; "
                          f"it has {', '.join(json.dumps(n) for n in servers) or 'none'}")  # fmt: skip


def _left_as_is(name: str, entry: dict[str, Any], k: str, cassettes: str) -> str:
    """The note for a server `wrap` does not change (`k` is its `kind`, not stdio)."""
    if k == "wrapped":
        return f"{name}: already wrapped"
    if k != "http":
        return f"{name}: neither a command nor a url; left as it is"
    url = str(entry.get("url") or entry.get("serverUrl"))
    parts = urlsplit(url)
    local = f"http://127.0.0.1:8765{parts.path or '/'}{'?' + parts.query if parts.query else ''}"
    return (
        f"{name}: an HTTP server ({url}), left as it is; to record it, run "
        f"`mcptape record --http --upstream {url} --port 8765 -o {cassettes}/{server_file_name(name)}.jsonl` "
        f"and set its url to {local}"
    )


def _not_on_path(name: str, program: Any) -> str:
    return (f"{name}: {program!s} is not on PATH here; left as {json.dumps(program)} "
            "(hosts start servers with a short PATH: give its absolute path)")  # fmt: skip


def _wrapped(
    entry: dict[str, Any], mcptape: Sequence[str], target: str, absolute: str | None
) -> dict[str, Any]:
    """`entry` run under `mcptape record` into `target` (`absolute`: its program's full path,
    None to keep the program as written)."""
    wrapped = dict(entry)
    wrapped["command"] = mcptape[0]
    wrapped["args"] = [
        *mcptape[1:],
        *MARK,
        target,
        "--",
        absolute if absolute is not None else entry["command"],
        *[str(a) for a in entry.get("args") or []],
    ]
    return wrapped


def original_of(entry: dict[str, Any]) -> dict[str, Any]:
    """A wrapped entry's own server, rebuilt from its args (when there is no backup)."""
    args = list(entry.get("args") or [])
    cut = args.index("--")
    command, rest = args[cut + 1], args[cut + 2 :]
    original = dict(entry)
    original["command"] = command
    if rest:
        original["args"] = rest
    else:
        original.pop("args", None)
    return original


def unwrap(text: str, where: str, backup: str | None) -> Outcome:
    """`text` with its wrapped servers put back: the backup's entries (or rebuilt ones), and the
    backup's bytes exactly when nothing else changed since `wrap`."""
    config = parse(text, where)
    before = parse(backup, f"{where} (backup)") if backup is not None else None
    out = Outcome("")
    servers = config.servers
    for name, entry in list(servers.items()):
        if kind(entry) != "wrapped":
            continue
        if before is not None and kind(before.servers.get(name)) in ("stdio", "unknown", "http"):
            servers[name] = before.servers[name]
        else:
            servers[name] = original_of(entry)
            out.notes.append(
                f"{name}: rebuilt from its wrapped command (its command stays absolute)"
            )
        out.changed.append(name)
    if backup is not None and before is not None and config.value == before.value:
        out.text = backup
        out.notes.append("restored byte for byte from the backup")
    elif out.changed:
        out.text = dump(config)
        if backup is not None:
            out.notes.append(
                "the file changed since wrap: other edits kept, so it is not byte for byte the backup"
            )
    else:
        out.text = text
    return out
