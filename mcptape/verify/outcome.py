"""What happened to the live server during one re-drive: the facts a CI gate acts on.

Plain data, filled by the shells (`stdio`, `http`); `problem()` says, in one line, why the
run cannot be trusted (exit 2), or None when every request was answered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mcptape.proc.child import describe_exit


@dataclass(slots=True)
class Outcome:
    """One re-drive's server side: how it ended, what it left unanswered, its last stderr lines."""

    target: str
    """The live side as the user named it: the command line or the URL."""
    exit_code: int | None = None
    signal: str | None = None
    stderr: list[str] = field(default_factory=list)
    abandoned: list[str] = field(default_factory=list)
    """Requests (method names) that got no answer within the timeout."""
    unanswered: list[str] = field(default_factory=list)
    """Requests still to send or in flight when the server went away."""
    unreachable: str | None = None
    """Why the server could not be reached at all (HTTP: connection refused, ...)."""

    def problem(self) -> str | None:
        """Why this run is not a verdict on the server's behaviour, or None."""
        if self.unreachable:
            return f"cannot reach {self.target}: {self.unreachable}"
        if self.unanswered:
            how = (
                ""
                if self.exit_code is None and self.signal is None
                else f" ({describe_exit(self.exit_code)})"
            )
            return f"the server ended before answering {_methods(self.unanswered)}{how}"
        if self.abandoned:
            return f"the server left {_methods(self.abandoned)} unanswered (raise --timeout if it is only slow)"
        return None


def _methods(names: list[str]) -> str:
    shown = ", ".join(names[:5]) + (f", ... ({len(names)} in all)" if len(names) > 5 else "")
    return f"{len(names)} request{'s' if len(names) != 1 else ''}: {shown}"
