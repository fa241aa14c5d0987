"""Verify: re-drive a cassette's client side against a live server, record it, diff it.

    plan (sans-IO: the steps to send, the Driver that answers the server)
        -> stdio | http (the shells: a child process via `mcptape.proc.child`, or POSTs)
        -> run (one cassette: plan + shell + Recorder -> new cassette and Outcome)

The decisions are `plan.Driver`'s: it turns a recorded session into the messages to send
next, one request at a time, with fresh ids, and answers what the server asks (legacy
server-to-client requests, 2026-07-28 `input_required` results) with the client answers
the cassette recorded. `--protocol` re-drives a legacy cassette in 2026-07-28 (or the
other way): the handshake and `_meta` envelope are rewritten.
"""

from __future__ import annotations

from .outcome import Outcome
from .plan import Answers, Driver, RedriveStep, build_steps, collect_answers, session_era
from .run import DEFAULT_TIMEOUT, redaction_of, verify

__all__ = [
    "DEFAULT_TIMEOUT",
    "Answers",
    "Driver",
    "Outcome",
    "RedriveStep",
    "build_steps",
    "collect_answers",
    "redaction_of",
    "session_era",
    "verify",
]  # fmt: skip
