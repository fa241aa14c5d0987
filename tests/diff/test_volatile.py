"""volatile: timestamps, UUIDs and times masked only where both sides have that shape, and reported."""

from __future__ import annotations

import pytest

from mcptape.diff.engine import diff_cassettes
from mcptape.diff.types import DiffOptions
from mcptape.diff.volatile import masked

from .builders import cassette, legacy_handshake, req, res, text_result


@pytest.mark.parametrize(("a", "b", "shape"), [
    ("2026-01-02T10:00:00Z", "2026-03-04T11:30:59.123Z", "timestamp"),
    ("at 2026-01-02 10:00:00+01:00 sharp", "at 2026-01-02 10:00:01+01:00 sharp", "timestamp"),
    ("id 0b1c3c2e-8a7b-4f56-9d7e-0a1b2c3d4e5f", "id 7f0e1d2c-3b4a-4c5d-8e9f-a0b1c2d3e4f5", "uuid"),
    ("The time is 10:00:01 PM", "The time is 11:59:59 AM", "time"),
    ("on 2026-01-02", "on 2026-12-31", "date"),
    ("seen 2026-01-02T10:00:00Z by 0b1c3c2e-8a7b-4f56-9d7e-0a1b2c3d4e5f",
     "seen 2026-01-03T10:00:00Z by 1b1c3c2e-8a7b-4f56-9d7e-0a1b2c3d4e5f", "timestamp, uuid"),
    ("at 10:00:01", "closed", None),  # only one side has the shape
    ("ok at 10:00:01", "failed at 11:00:01", None),  # the rest differs
    ("2026-01-02T10:00:00Z", "0b1c3c2e-8a7b-4f56-9d7e-0a1b2c3d4e5f", None),  # different shapes
    ("42", "43", None),
    ("same 10:00:01", "same 10:00:01", None),
])  # fmt: skip
def test_masked_only_when_both_sides_have_the_shape(a: str, b: str, shape: str | None) -> None:
    assert masked(a, b) == shape


def call(i: int, text: str) -> list[object]:
    return [req(i, "tools/call", {"name": "now"}), res(i, text_result(text))]


def test_the_report_lists_what_it_masked_and_counts_it_not() -> None:
    a = cassette(*legacy_handshake(), *call(2, "2026-01-02T10:00:00Z"), *call(3, "one"))
    b = cassette(*legacy_handshake(), *call(2, "2026-05-06T07:08:09Z"), *call(3, "two"))
    report = diff_cassettes(a, b)
    assert [(d.exchange, d.path) for d in report.differences] == [
        ("tools/call now #2", "/result/content/0/text")
    ]
    assert [(d.exchange, d.path, d.message) for d in report.masked] == [
        ("tools/call now", "/result/content/0/text", "timestamp on both sides (masked)")]  # fmt: skip
    unmasked = diff_cassettes(a, b, DiffOptions(mask_volatile=False))
    assert len(unmasked.differences) == 2 and unmasked.masked == []
