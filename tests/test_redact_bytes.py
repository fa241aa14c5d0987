"""The recorder tests a payload's bytes before it walks the parsed message (`Redactor.message`
with `raw`): no base64 run, no literal of a rule, no walk. That test may only save time: the
message redacted with its bytes must be the message redacted without them, whatever escapes
or characters the bytes use to spell its strings."""

from __future__ import annotations

import base64
import json
import re

import orjson
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mcptape.redaction.literals import holds_b64_run, trie_pattern
from mcptape.redaction.redact import _OPAQUE, REDACTED, Redactor
from mcptape.redaction.secrets import B64_MAX, B64_MIN
from tests.leak_corpus import SECRETS, members, texts

R = Redactor()


def _encodings(value: object) -> list[bytes]:
    """The same message as different peers write it: compact UTF-8, `\\u` escapes for every
    non-ASCII character, and `/` escaped as `\\/` (PHP's default)."""
    plain = orjson.dumps(value)
    return [plain, json.dumps(value).encode(), plain.replace(b"/", b"\\/")]


def _same(value: object) -> None:
    expected = R.message(value)
    for raw in _encodings(value):
        assert orjson.loads(raw) == value
        assert R.message(value, raw=raw) == expected, raw


def test_a_url_password_behind_escaped_slashes_is_redacted() -> None:
    raw = b'{"log":"cloning https:\\/\\/deploy:Zq8xP2vL9mK4@git.internal\\/repo.git"}'
    out, paths = R.message(orjson.loads(raw), raw=raw)
    assert paths == ["/log"]
    assert "Zq8xP2vL9mK4" not in out["log"]


def test_a_secret_name_spelled_with_the_kelvin_sign_is_redacted() -> None:
    """`K` (U+212A) lowercases to `k`: `apiKey` is a secret name, and the bytes hold no `key`."""
    raw = '{"api\u212aey":"Zq8xP2vL9mK4wR7t"}'.encode()
    out, paths = R.message(orjson.loads(raw), raw=raw)
    assert out == {"api\u212aey": REDACTED}
    assert paths == ["/api\u212aey"]


def test_the_corpus_redacts_the_same_with_its_bytes() -> None:
    _same(members())
    _same({"content": [{"type": "text", "text": t} for t in texts()]})
    _same({"rows": [{"id": i, "note": "ok", "at": "2026-01-01T00:00:00Z"} for i in range(2000)],
           "env": "GITHUB_TOKEN=" + SECRETS["gh_env"]})  # fmt: skip


def test_a_big_clean_payload_is_not_walked_and_stays_as_it_was() -> None:
    value = {"rows": [{"id": i, "name": f"user {i}", "note": "ok"} for i in range(5000)]}
    raw = orjson.dumps(value)
    assert not R.might_hold_secrets(raw)
    out, paths = R.message(value, raw=raw)
    assert out is value and paths == []


def _encoded(secret: str, size: int) -> str:
    """Prose ending in `secret`, base64-encoded into a run of exactly `size` characters."""
    plain = ("lorem ipsum " * (size // 8))[: size * 3 // 4 - len(secret) - 1] + " " + secret
    run = base64.b64encode(plain.encode()).decode()
    assert len(run) == size
    return run


def test_an_image_is_not_decoded_and_a_credential_beside_it_is() -> None:
    """A base64 run longer than `B64_MAX` is never decoded (an image, a file): its bytes do not
    send the walk to base64 at all. A run short enough, beside it or behind an escape whose
    letter makes the run one longer in the bytes, still is."""
    image = base64.b64encode(bytes(range(256)) * 400).decode()  # 136 KB of base64
    value = {"content": [{"type": "image", "data": image, "mimeType": "image/png"}]}
    assert R._raw_facts(orjson.dumps(value)) == (False, True)
    secret = SECRETS["github"]
    for run in (_encoded(secret, B64_MAX), _encoded(secret, 64)):
        for text in (run, "\n" + run, "a\tb\n" + run + "\n"):
            held = {**value, "note": text}
            out, paths = R.message(held, raw=orjson.dumps(held))
            assert paths == ["/note"], (len(run), text[:6])
            assert run not in out["note"]
            _same(held)
    too_long = {**value, "note": "\n" + _encoded(secret, B64_MAX + 4)}
    assert R.message(too_long) == (too_long, [])
    _same(too_long)


_CHARS = 'aAkK:/=_- ."\\\n\u212a\u0130\u00e9/+0123456789'
_PIECES = [
    *SECRETS.values(),
    "password",
    "api_key",
    "token=",
    "Bearer ",
    "https://u:",
    "@h",
    "\u212aey",
]
_STRINGS = st.one_of(
    st.text(_CHARS, max_size=30),
    st.lists(st.one_of(st.sampled_from(_PIECES), st.text(_CHARS, max_size=8)), max_size=6).map(
        "".join
    ),
)
_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), _STRINGS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(_STRINGS, inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_the_bytes_never_change_what_is_redacted(value: object) -> None:
    _same(value)


_LONG_RUN = st.tuples(
    st.binary(max_size=30), st.integers(B64_MAX - 4, B64_MAX + 4), st.binary(max_size=30)
)
_BYTES = (
    st.binary(max_size=200)
    | _STRINGS.map(lambda s: s.encode())
    | _LONG_RUN.map(lambda t: t[0] + b"Zm9v" * (t[1] // 4) + b"x" * (t[1] % 4) + t[2])
)


@given(_BYTES)
@settings(max_examples=400)
def test_the_quick_byte_facts_are_the_regex_facts(raw: bytes) -> None:
    """The prefix tree of the literals, `translate` for base64 runs and `memchr` for escapes
    say what one alternation regex per question said, for any bytes (for a payload of 8 KB or
    more, a literal may be assumed rather than searched for: then it is "may hold")."""
    literals = re.compile(b"|".join(re.escape(n) for n in R._needles)).search(raw.lower())
    runs = re.search(
        rb"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{%d,%d}(?![A-Za-z0-9+/])" % (B64_MIN, B64_MAX + 1), raw
    )
    opaque = re.search(b"|".join(re.escape(o) for o in _OPAQUE), raw)
    facts = R._raw_facts(raw)
    if opaque:
        assert facts == (True, True)
        return
    assert facts[0] is (runs is not None)
    assert facts[1] is (literals is not None) or (len(raw) >= 8192 and facts[1])


@given(st.lists(st.binary(min_size=1, max_size=4), max_size=8), st.binary(max_size=60))
def test_a_prefix_tree_finds_what_the_alternation_finds(literals: list[bytes], text: bytes) -> None:
    tree = re.compile(trie_pattern(literals))
    plain = re.compile(b"|".join(re.escape(n) for n in literals) or b"(?!)")
    assert (tree.search(text) is None) == (plain.search(text) is None)
    assert all(tree.search(n) for n in literals)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 70_000), st.integers(1, 9_000)), max_size=4))
@example([(60_000, 9_000)])  # too long, though its part in the head is not
@example([(60_000, 9_000), (75_000, 100)])
def test_a_bounded_run_is_found_wherever_it_is(spans: list[tuple[int, int]]) -> None:
    """`holds_b64_run` with a bound reads a 64 KB head first; a run across its end, or any
    run of the whole payload, counts as the regex counts it."""
    data = bytearray(b" " * 80_000)
    for at, length in spans:
        data[at : at + length] = b"Q" * len(data[at : at + length])
    raw = bytes(data)
    want = re.search(rb"(?<!Q)Q{%d,%d}(?!Q)" % (B64_MIN, B64_MAX), raw) is not None
    assert holds_b64_run(raw, B64_MIN, B64_MAX) is want
    assert holds_b64_run(raw, B64_MIN) is (re.search(rb"Q{%d}" % B64_MIN, raw) is not None)
