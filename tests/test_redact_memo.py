"""Redaction remembers what repeats: the headers of a session's requests, and within one message
the names that are no secret names and the short strings with nothing to redact. A remembered
answer is the answer, for the same name and value only; every secret is still replaced."""

from __future__ import annotations

from mcptape.redaction.redact import REDACTED, Redactor
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


def test_repeated_members_and_strings_are_each_redacted() -> None:
    bearer = "Bearer " + SECRETS["bearer"]
    rows = [
        {"id": i, "note": "ok", "password": "hunter2-x", "auth_header": bearer, "say": "ok"}
        for i in range(3)
    ]
    out, paths = Redactor().message({"rows": rows, "tail": ["ok", bearer, "ok", bearer]})
    assert out == {
        "rows": [{"id": i, "note": "ok", "password": REDACTED, "auth_header": REDACTED, "say": "ok"}
                 for i in range(3)],
        "tail": ["ok", REDACTED, "ok", REDACTED],
    }  # fmt: skip
    assert paths == [
        p for i in range(3) for p in (f"/rows/{i}/password", f"/rows/{i}/auth_header")
    ] + [
        "/tail/1",
        "/tail/3",
    ]
