"""Redaction: secrets never reach a cassette; protocol fields are never touched."""

from __future__ import annotations

import pytest

from mcptape.errors import ConfigError
from mcptape.redaction.redact import REDACTED, RedactConfig, Redactor

R = Redactor()


def test_secret_keys_are_redacted_and_paths_reported() -> None:
    msg = {"params": {"arguments": {"api_key": "abc123", "password": "hunter2", "city": "Paris"},
                      "_meta": {"progressToken": "tok-1"}, "requestState": "v1.xyz", "cursor": "c2"}}  # fmt: skip
    out, paths = R.message(msg)
    assert out["params"]["arguments"] == {
        "api_key": REDACTED,
        "password": REDACTED,
        "city": "Paris",
    }
    assert out["params"]["_meta"]["progressToken"] == "tok-1"
    assert out["params"]["requestState"] == "v1.xyz" and out["params"]["cursor"] == "c2"
    assert sorted(paths) == ["/params/arguments/api_key", "/params/arguments/password"]
    assert msg["params"]["arguments"]["api_key"] == "abc123", "the input is not modified"


@pytest.mark.parametrize(
    "secret",
    [
        "Bearer abcdefghijklmnopqrstuvwxyz012345",
        "sk-live-ABCDEFGHIJKLMNOPQRSTUVWX",
        "ghp_" + "a" * 36,
        "AKIAABCDEFGHIJKLMNOP",
        "xoxb-1234567890-abcdef",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_token_shapes_are_redacted_inside_any_string(secret: str) -> None:
    out, paths = R.message(
        {"result": {"content": [{"type": "text", "text": f"here: {secret} end"}]}}
    )
    text = out["result"]["content"][0]["text"]
    assert secret not in text and REDACTED in text and text.endswith(" end")
    assert paths == ["/result/content/0/text"]


def test_suffix_rule_and_case() -> None:
    out, _ = R.message(
        {"GITHUB_TOKEN": "x1", "OpenAI-Api-Key": "x2", "client_secret": "x3", "tokens_used": 5}
    )
    assert out == {
        "GITHUB_TOKEN": REDACTED,
        "OpenAI-Api-Key": REDACTED,
        "client_secret": REDACTED,
        "tokens_used": 5,
    }


def test_unchanged_message_is_not_copied() -> None:
    msg = {"a": [1, {"b": "c"}]}
    out, paths = R.message(msg)
    assert out is msg and paths == []


def test_disabled_redacts_nothing() -> None:
    off = Redactor(RedactConfig(enabled=False))
    assert off.message({"password": "x"}) == ({"password": "x"}, [])
    assert off.text("Bearer abcdefghijklmnop") == "Bearer abcdefghijklmnop"


def test_extra_keys_and_patterns() -> None:
    r = Redactor(RedactConfig().with_extra(keys=["customer_id"], patterns=[r"ACME-\d{6}"]))
    out, _ = r.message({"customer_id": "c-9", "note": "order ACME-123456 shipped"})
    assert out == {"customer_id": REDACTED, "note": f"order {REDACTED} shipped"}


def test_headers_and_urls() -> None:
    h, names = R.headers(
        {
            "Authorization": "Bearer abcdefghijkl",
            "Content-Type": "application/json",
            "X-Api-Key": "k",
        }
    )
    assert h == {
        "Authorization": REDACTED,
        "Content-Type": "application/json",
        "X-Api-Key": REDACTED,
    }
    assert names == ["Authorization", "X-Api-Key"]
    url, qnames = R.url("/mcp?access_token=abc&x=1")
    assert "abc" not in url and "x=1" in url and qnames == ["access_token"]


def test_bad_pattern_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="redact-pattern"):
        Redactor(RedactConfig().with_extra(patterns=["(unclosed"]))
