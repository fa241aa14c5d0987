"""Verify one cassette: plan the re-drive, run it through a shell, record the new session.

`verify` builds the `plan.Driver` from the cassette, records what the live server says
through the same `Recorder` as `mcptape record` (with the cassette's redaction rules), and
returns the new cassette with the `Outcome` of the run, ready to diff like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from mcptape.capture.recorder import Recorder, recording_header
from mcptape.cassette import Cassette, CassetteWriter, load
from mcptape.cassette.model import Header, Transport
from mcptape.pairing import pair
from mcptape.redaction.redact import RedactConfig, Redactor

from .http import run_http
from .outcome import Outcome
from .plan import Driver, build_steps, collect_answers
from .stdio import run_stdio

DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for the server's next message before abandoning the request in flight."""


def redaction_of(header: Header) -> RedactConfig:
    """The redaction rules the cassette was recorded with, to record the new session alike."""
    red = header.redaction or {}
    base = RedactConfig(enabled=bool(red.get("enabled", True)))
    if "keys" in red and "patterns" in red:
        base = RedactConfig(
            enabled=base.enabled, keys=tuple(red["keys"]), patterns=tuple(red["patterns"])
        )
    return base


def verify(cassette: Cassette, out: Path, *, command: list[str] | None = None, url: str | None = None,
           protocol: str | None = None, timeout: float = DEFAULT_TIMEOUT,
           env: dict[str, str] | None = None) -> tuple[Cassette, Outcome]:  # fmt: skip
    """Re-drives `cassette` against a live server (`command` over stdio, or `url`), records it to `out`.

    Returns the new cassette, ready to diff against the old one, and how the run went.

    Raises:
        RecordError: the server could not be started.
        CassetteError: the new cassette cannot be written.
    """
    session = pair(cassette.events)
    steps, era, version = build_steps(session, protocol)
    driver = Driver(steps, collect_answers(session), era, version)
    config = redaction_of(cassette.header)
    target: dict[str, Any] = {"command": list(command)} if command else {"url": url}
    transport = Transport.STDIO if command else Transport.STREAMABLE_HTTP
    writer = CassetteWriter(out, recording_header(transport, target, config))
    recorder = Recorder(writer, Redactor(config))
    try:
        if command:
            outcome = run_stdio(driver, command, recorder, timeout, env)
        else:
            assert url is not None
            outcome = anyio.run(run_http, driver, url, recorder, timeout)
    except BaseException:
        writer.discard()
        raise
    end = (
        {"abandoned": driver.abandoned} if driver.abandoned else None
    )  # the recorder's sink writes it
    return load(
        recorder.finish(end, require_answer=False)
    ), outcome  # a silent server is what verify reports
