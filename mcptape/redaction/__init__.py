"""Redaction: the secret rules (`secrets/`), the literal-matching helpers they scan with
(`literals`), and the `Redactor` that replaces secrets before anything is written (`redact`).

The redactor's names are re-exported here; its neighbours are imported by their own paths.
"""

from __future__ import annotations

from mcptape.redaction.redact import (
    DEFAULT_KEYS,
    DEFAULT_PATTERNS,
    REDACTED,
    RedactConfig,
    Redactor,
)

__all__ = ["DEFAULT_KEYS", "DEFAULT_PATTERNS", "REDACTED", "RedactConfig", "Redactor"]
