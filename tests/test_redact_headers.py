"""Header redaction remembers the headers it has seen (every request of a session sends the same
ones): a remembered answer is the answer, for the same name and value only."""

from __future__ import annotations

from mcptape.redact import REDACTED, Redactor
from tests.leak_corpus import SECRETS


def test_the_same_headers_twice_and_then_changed() -> None:
    r = Redactor()
    first = {"accept": "application/json", "authorization": "Bearer " + SECRETS["bearer"],
             "location": "/cb?access_token=" + SECRETS["location"]}  # fmt: skip
    expected = (
        {"accept": "application/json", "authorization": REDACTED, "location": "/cb?access_token=" + REDACTED},
        ["authorization", "location"],
    )  # fmt: skip
    assert r.headers(first) == expected
    assert r.headers(first) == expected
    assert r.headers({"accept": "application/json", "x-note": "authorization"}) == (
        {"accept": "application/json", "x-note": "authorization"},
        [],
    )
    for i in range(3000):  # more distinct headers than it remembers: still answered the same
        assert r.headers({"x-token": f"tok-{i:05d}-{SECRETS['api_token']}"}) == (
            {"x-token": REDACTED},
            ["x-token"],
        )
    assert r.headers(first) == expected
