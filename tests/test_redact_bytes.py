"""The recorder tests a payload's bytes before it walks the parsed message (`Redactor.message`
with `raw`): no base64 run, no literal of a rule, no walk. That test may only save time: the
message redacted with its bytes must be the message redacted without them, whatever escapes
or characters the bytes use to spell its strings."""

from __future__ import annotations

import json
import re

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from mcptape.literals import trie_pattern
from mcptape.redact import _OPAQUE, REDACTED, Redactor
from mcptape.secrets import B64_MIN
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


_BYTES = st.binary(max_size=200) | _STRINGS.map(lambda s: s.encode())


@given(_BYTES)
@settings(max_examples=400)
def test_the_quick_byte_facts_are_the_regex_facts(raw: bytes) -> None:
    """The prefix tree of the literals, `translate` for base64 runs and `memchr` for escapes
    say what one alternation regex per question said, for any bytes."""
    literals = re.compile(b"|".join(re.escape(n) for n in R._needles)).search(raw.lower())
    runs = re.search(rb"[A-Za-z0-9+/]{%d}" % B64_MIN, raw)
    opaque = re.search(b"|".join(re.escape(o) for o in _OPAQUE), raw)
    facts = R._raw_facts(raw)
    assert facts == ((True, True) if opaque else (runs is not None, literals is not None))


@given(st.lists(st.binary(min_size=1, max_size=4), max_size=8), st.binary(max_size=60))
def test_a_prefix_tree_finds_what_the_alternation_finds(literals: list[bytes], text: bytes) -> None:
    tree = re.compile(trie_pattern(literals))
    plain = re.compile(b"|".join(re.escape(n) for n in literals) or b"(?!)")
    assert (tree.search(text) is None) == (plain.search(text) is None)
    assert all(tree.search(n) for n in literals)
