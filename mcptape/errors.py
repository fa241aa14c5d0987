"""mcptape's exceptions: one small tree, translated to one-line messages at the CLI seam.

McpTapeError                 base: every error mcptape raises on purpose
 +-- CassetteError           a cassette cannot be read or written (names file and line)
 |    +-- CassetteVersionError   written by a newer mcptape: upgrade
 +-- ConfigError             a bad option value (exit code 2 on the CLI)
 |    +-- MissingExtraError      a command needs an optional extra that is not installed
 +-- RecordError             the recorder cannot go on (child did not start, disk full)
 +-- NoMatchError            the replay has no recorded answer for a request
"""

from __future__ import annotations

from typing import Any


class McpTapeError(Exception):
    """Base of all errors mcptape raises on purpose; `str()` is a one-line explanation."""


class CassetteError(McpTapeError):
    """A cassette file is missing, corrupt, or cannot be written."""


class CassetteVersionError(CassetteError):
    """A cassette was written in a format newer than this mcptape knows."""


class CassetteNotFoundError(CassetteError):
    """A cassette named on the command line (or to the API) does not exist: a usage error (exit 2)."""


class ConfigError(McpTapeError):
    """An option or argument has a value mcptape cannot use."""


class MissingExtraError(ConfigError):
    """A command needs an optional extra (`pip install 'mcptape[http]'`) that is not installed."""


class RecordError(McpTapeError):
    """Recording cannot continue (the server did not start, the cassette cannot be written)."""


class NoMatchError(McpTapeError):
    """No recorded exchange answers a request."""

    def __init__(self, message: str, data: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.data = data or {}
