"""A long string (a big tool result) is scanned the fast way (`Scanner._rules_long`: literals ruled
out by their characters, token shapes tried only at their anchors, base64 runs by `translate`):
it must find exactly the parts the plain rules (`Scanner._rules`) find in the same text, with
the same rule names, for every planted secret wherever it sits in the string."""

from __future__ import annotations

import base64
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcptape.redaction.literals import Haystack, b64_runs
from mcptape.redaction.redact import REDACTED, Redactor
from mcptape.redaction.secrets import (
    LONG,
    PEM_BEGIN,
    SHAPES,
    Scanner,
    _b64_matches,
    _b64_spans,
    _merge,
)
from tests.leak_corpus import PEM_RSA, SECRETS, leaked, text_secrets, texts

FILLERS = {
    "x": "x" * 5000,
    "prose": "the nearer basic task-list of classic items, passing keys: none. " * 80,
    "json": '{"id": 1, "name": "row", "note": "ok", "createdAt": "2026-01-01T00:00:00Z"}, ' * 70,
    "unicode": "Straße ſecret Kelvin \u212a İstanbul " * 160,
}
"""Long text for the planted secrets to sit in: plain, wordy (the words hold hints), JSON-like
(full of separators), and not ASCII (the case-insensitive shapes take the plain way)."""

SCANNERS = {
    "redact": Scanner(),
    "check": Scanner(strict=True),
    "extra": Scanner(["X-Internal-Auth"], [re.compile(r"int-[0-9]{6}")]),
}


def _same(scanner: Scanner, text: str) -> None:
    assert len(text) >= LONG
    for decode in (True, False):
        assert scanner._rules_long(text, decode) == scanner._rules(text, decode)


@pytest.mark.parametrize("filler", sorted(FILLERS))
@pytest.mark.parametrize("scanner", sorted(SCANNERS))
def test_the_long_way_finds_what_the_plain_rules_find(scanner: str, filler: str) -> None:
    pad = FILLERS[filler]
    planted = [
        *texts(),
        "\n".join(PEM_RSA),
        "ping int-123456 from X-Internal-Auth: zz-" + SECRETS["cookie"],
    ]
    for line in planted:
        for text in (pad + line, line + pad, pad[:2000] + line + pad[:3000]):
            _same(SCANNERS[scanner], text)
    _same(SCANNERS[scanner], pad + " ".join(planted) + pad)


def test_a_long_result_is_redacted_whole() -> None:
    """What the leak corpus plants, inside one 10 kB string: none of it survives."""
    text = FILLERS["prose"] + "\n".join([*texts(), *PEM_RSA]) + FILLERS["json"]
    out = Redactor().text(text)
    assert out.count(REDACTED) >= len(texts())
    assert leaked(out.encode(), [*text_secrets(), PEM_RSA[1]]) == []
    assert "nearer basic task-list of classic items" in out  # (words that hold hints stay)


def test_every_anchor_is_at_its_offset_in_the_hints() -> None:
    """An anchor must sit where every match of its shape holds it; without `fold`, the anchors
    are the hints (the fast way relies on both)."""
    for shape in SHAPES:
        if shape.finder is not None:
            continue
        assert shape.anchors, shape.name
        if not shape.fold:
            assert {lit for lit, _ in shape.anchors} == set(shape.hints), shape.name
        assert PEM_BEGIN.pattern not in shape.pattern.pattern


_ALPHABET = (
    "aAbBsSkK_-=:/+ ./@\"'\n\t0123456789eEyJrRiIzZpPhHfFgGlLtTxXoOuUnNmMcCvVwWdD\u212a\u017f\u0130"
)
_PIECES = sorted({*SECRETS.values(), "bearer ", "Basic ", "AccountKey=", "sk-", "ghp_", "://", "password=",
                  "token: ", "api_key=", "AKIA", "eyJ", "=", "=="})  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(_ALPHABET, max_size=40)), max_size=60))
def test_the_long_way_agrees_on_random_text(parts: list[str]) -> None:
    text = "".join(parts)
    text = text + "q" * (LONG - len(text)) if len(text) < LONG else text
    for scanner in SCANNERS.values():
        _same(scanner, text)


@given(st.text("AZaz09+/= -_.\u00e9", max_size=300))
def test_base64_runs_by_translate_are_the_regex_runs(text: str) -> None:
    ascii_text = text.replace("\u00e9", "#")
    assert list(_b64_spans(ascii_text)) == list(_b64_matches(ascii_text))
    assert all(end - start >= 4 for start, end in b64_runs(ascii_text, 4))


@given(st.text("abAB:_", max_size=60), st.sampled_from(["ab", "a:", "B", "_", "zz"]))
def test_haystack_positions_and_holds(text: str, literal: str) -> None:
    hay = Haystack(text)
    found = [i for i in range(len(text)) if text.startswith(literal, i)]
    assert list(hay.positions(literal)) == found
    assert hay.holds(literal) is (literal in text)
    assert hay.holds(literal.lower(), low=True) is (literal.lower() in text.lower())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(_ALPHABET, max_size=20)), max_size=8))
def test_a_short_string_skips_only_rules_that_cannot_match(parts: list[str]) -> None:
    """Below `LONG`, a string without any rule's literal gets only the base64 rule: the parts
    are the ones all the rules find."""
    text = "".join(parts)[: LONG - 1]
    for scanner in SCANNERS.values():
        for decode in (True, False):
            assert scanner.spans(text, decode) == _merge(scanner._rules(text, decode))


def test_a_short_string_of_base64_alone_still_has_its_secret_found() -> None:
    scanner = SCANNERS["redact"]
    tried = 0
    for secret in (
        b"token=Zq8xP2vL9mK4wR7tQ",
        b"api_key: Zq8xP2vL9mK4wR7tQ",
        b"ghp_" + b"Zq8xP2vL9mK4wR7tQ" * 3,
    ):
        for pad in range(6):
            text = "blob " + base64.b64encode(b"#" * pad + secret).decode()
            if scanner._quick.search(text.lower()) is not None:
                continue  # (its base64 happens to spell a literal: the other way)
            tried += 1
            assert scanner.spans(text) == _merge(scanner._rules(text, True))
            assert scanner.spans(text), text
    assert tried >= 6
