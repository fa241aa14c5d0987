"""The cassette reader's fast path (`shape.plain_event`) never calls a line well-formed that
the full checks or the schema reject: the same verdict on every golden line and on hypothesis mutations of
them (one value of a wrong type anywhere), and most real lines take it (else it buys nothing).
The event it builds is the one `Event.from_json` builds from the same line."""

from __future__ import annotations

from pathlib import Path

import orjson
from hypothesis import HealthCheck, given, settings

from mcptape.cassette.model import Event
from mcptape.cassette.shape import _event_problem, event_problem, plain_event
from mcptape.check.format import schema_validators
from mcptape.check.report import Report

from .test_mutations import LINES, mutated

VALIDATORS = schema_validators(Report())
assert VALIDATORS is not None  # (jsonschema is installed with the test dependencies)


def test_every_golden_line_gets_the_full_checks_verdict_and_most_take_the_fast_path() -> None:
    fast = total = 0
    for lines in LINES.values():
        for line in lines[1:]:
            obj = orjson.loads(line)
            assert event_problem(obj) == _event_problem(obj) is None
            total += 1
            fast += plain_event(obj) is not None
            event = plain_event(obj)
            assert event is None or event == Event.from_json(obj), line
    assert total > 500
    assert fast / total > 0.6, f"only {fast} of {total} golden lines take the fast path"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_a_mutated_line_is_never_passed_by_the_fast_path_when_the_checks_reject_it(
    case: tuple[Path, int, bytes],
) -> None:
    _, lineno, line = case
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return  # (an integer beyond 64 bits): the reader calls the line corrupt first
    if lineno == 1 or not isinstance(obj, dict):
        return  # the header, or not an object: the reader rejects it before these checks
    event = plain_event(obj)
    if event is not None:  # certainly valid: for the readers and against the schema
        assert _event_problem(obj) is None, obj
        assert not list(VALIDATORS["event"].iter_errors(obj)), obj
        assert event == Event.from_json(obj)
        assert type(event.t) is float
    assert event_problem(obj) == _event_problem(obj)
