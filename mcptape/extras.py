"""Optional extras: a command that needs one says so in one line, with the pip command.

The core install (`pip install mcptape`) records, replays, diffs and shows stdio sessions.
HTTP serving, HTTP capture, the `mcp` SDK's in-process client and the second secret
scanner are extras (pyproject.toml's `optional-dependencies`). A command checks for its
extra before it starts (`require`), so a missing one is a usage error (exit 2) naming the
extra to install, not an `internal error: ModuleNotFoundError` halfway through.
"""

from __future__ import annotations

import importlib.util

from mcptape.errors import MissingExtraError

DISTRIBUTION = "mcptape"
"""The name pip installs mcptape under (the import package and the command are `mcptape` too)."""


def install_command(extra: str) -> str:
    """The pip command that adds `extra` to an installed mcptape: `pip install 'mcptape[http]'`."""
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def missing_extra_message(extra: str, for_what: str) -> str:
    """One line: `mcptape serve needs the 'http' extra: pip install 'mcptape[http]'`."""
    return f"{for_what} needs the {extra!r} extra: {install_command(extra)}"


def installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it (a dotted name's parents are)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package missing; a module without a spec
        return False


def require(extra: str, module: str, for_what: str) -> None:
    """Checks that `module`, which the extra `extra` brings, is installed.

    Raises:
        MissingExtraError: it is not (the CLI prints the message and exits 2).
    """
    if not installed(module):
        raise MissingExtraError(missing_extra_message(extra, for_what))
