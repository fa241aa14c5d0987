"""`mcptape --version`: the version, then which extras and outside tools are present.

Read from the installed distribution's metadata (`Provides-Extra`, `Requires-Dist`) and from
PATH: nothing is imported, so the answer is quick and an extra broken at import still shows.
"""

from __future__ import annotations

import re
import shutil
from importlib import metadata

from mcptape._version import __version__

USES: dict[str, str] = {
    "mitm": "record --http, import of mitmproxy flows",
    "sdk": "the in-process transport and the pytest fixture's SDK session",
    "http": "serve, verify --url",
    "check": "check's schema checks",
    "secrets": "check --detect-secrets",
}
"""extra -> what needs it (an extra not listed here is still reported)."""

SKIPPED = frozenset({"all", "test"})
"""Extras that only gather others (all) or the test tools (test)."""

TOOLS: dict[str, str] = {
    "node": "Node servers and the TypeScript helper (docs/typescript.md)",
    "npx": "the TypeScript helper's tests and the MCP inspector",
}
"""Outside programs some workflows run, and which."""

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_EXTRA = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")


def extras() -> dict[str, list[str]]:
    """extra -> the distributions it installs, from mcptape's metadata ({} when not installed)."""
    try:
        meta = metadata.metadata("mcptape")
    except metadata.PackageNotFoundError:
        return {}
    found: dict[str, list[str]] = {e: [] for e in meta.get_all("Provides-Extra") or []}
    for requirement in meta.get_all("Requires-Dist") or []:
        extra = _EXTRA.search(requirement)
        name = _NAME.match(requirement)
        if extra and name and name.group() != "mcptape" and extra.group(1) in found:
            found[extra.group(1)].append(name.group())
    return {e: names for e, names in found.items() if e not in SKIPPED and names}


def _installed(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def extra_line(extra: str, names: list[str]) -> str:
    """`http: installed (uvicorn 0.30.0, ...)` or `http: missing httpx: pip install 'mcptape[http]'`."""
    versions = {n: _installed(n) for n in names}
    missing = [n for n, v in versions.items() if v is None]
    use = f" (for {USES[extra]})" if extra in USES else ""
    if not missing:
        return f"{extra}: installed ({', '.join(f'{n} {v}' for n, v in versions.items())})"
    what = "missing" if len(missing) == len(names) else f"missing {', '.join(missing)}"
    return f"{extra}: {what}: pip install 'mcptape[{extra}]'{use}"


def tool_line(tool: str) -> str:
    """`node: /usr/bin/node` or `node: not found (needed for ...)`."""
    path = shutil.which(tool)
    return f"{tool}: {path}" if path else f"{tool}: not found (needed for {TOOLS[tool]})"


def report() -> str:
    """What `mcptape --version` prints."""
    lines = [f"mcptape {__version__}"]
    lines += [extra_line(e, names) for e, names in extras().items()]
    lines += [tool_line(t) for t in TOOLS]
    return "\n".join(lines)
