"""What `mcptape check` reports: a `Finding` (a line and what is wrong on it) and a `Report`
(the findings, which fail the check, and the warnings, which do not). Every check writes into
its own `Report`; `mcptape.check.check_lines` merges them in a fixed order."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where (line 0 for the whole file) and what."""

    line: int
    check: str
    what: str

    def render(self, name: str) -> str:
        return f"{name}:{self.line}: {self.what}" if self.line else f"{name}: {self.what}"


@dataclass(slots=True)
class Report:
    """What `check_bytes` found: problems (exit 1) and warnings (printed, not failing)."""

    findings: list[Finding] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    def add(self, line: int, check: str, what: str) -> None:
        self.findings.append(Finding(line, check, what))

    def warn(self, line: int, check: str, what: str) -> None:
        self.warnings.append(Finding(line, check, what))


def short(text: str, limit: int = 160) -> str:
    """A validator's message on one line, cut to `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."
