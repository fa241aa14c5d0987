"""`mcptape check --detect-secrets`: Yelp's detect-secrets as a second, optional backend.

An extra (`pip install mcptape[secrets]`), never a core dependency: imported only when asked
for. Its plugins (AWS, Azure, Stripe, private keys, keyword and high-entropy detectors...) run
on every line of every string of the cassette; each finding names the plugin that made it.
Its high-entropy detectors flag short fragments of ordinary hex and base64 text: findings
shorter than `MIN_LENGTH` are dropped.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any, Self

MIN_LENGTH = 12
"""detect-secrets findings shorter than this are noise (`3e`, `acce` from its hex detector)."""

MAX_LINE = 20_000
"""Longer lines are scanned in pieces of this size (its regular expressions are not all linear)."""


class DetectSecretsMissing(ImportError):
    """detect-secrets is not installed."""


class DetectSecrets:
    """Scans strings with detect-secrets' default plugins."""

    name = "detect-secrets"

    def __init__(self) -> None:
        try:
            from detect_secrets.core.scan import scan_line
            from detect_secrets.settings import default_settings
        except ImportError:
            raise DetectSecretsMissing(
                "--detect-secrets needs detect-secrets: pip install 'mcptape[secrets]'"
            ) from None
        self._scan_line = scan_line
        self._settings: AbstractContextManager[Any] = default_settings()

    def __enter__(self) -> Self:
        self._settings.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._settings.__exit__(*exc)

    def findings(self, text: str) -> Iterator[tuple[str, str]]:
        """(plugin, the secret found) for each finding in `text`."""
        for line in text.splitlines() or [text]:
            for start in range(0, max(len(line), 1), MAX_LINE):
                for secret in self._scan_line(line[start : start + MAX_LINE]):
                    value = secret.secret_value or ""
                    if len(value) >= MIN_LENGTH and "REDACTED" not in value:
                        yield secret.type, value
