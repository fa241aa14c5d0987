"""The table of secret rules (mcptape.redaction.secrets): whole names, never a bare suffix; short words only
with a credential-like value; every shape; linear time on adversarial 1 MB strings."""

from __future__ import annotations

import time

import pytest

from mcptape.redaction.redact import REDACTED, Redactor
from mcptape.redaction.secrets import SHAPES, Scanner, Strength, name_strength
from tests.leak_corpus import (
    FALSE_POSITIVES,
    PEM_RSA,
    SECRETS,
    leaked,
    member_secrets,
    members,
    text_secrets,
    texts,
)

R = Redactor()


@pytest.mark.parametrize("name", ["password", "GITHUB_TOKEN", "OpenAI-Api-Key", "client_secret", "passphrase",
                                  "AWS_SECRET_ACCESS_KEY", "X-Secret-Key", "api_token", "db_password", "credentials",
                                  "AccountKey", "x-amz-security-token", "Authorization", "Set-Cookie"])  # fmt: skip
def test_secret_names_are_strong(name: str) -> None:
    assert name_strength(name) is Strength.STRONG


@pytest.mark.parametrize("name", ["pageToken", "nextPageToken", "cursor", "nextCursor", "progressToken", "NextToken",
                                  "tokens_used", "max_tokens", "token_count", "password_file", "public_key", "keyId",
                                  "Mcp-Session-Id", "io.modelcontextprotocol/related-task", "tokenType", "monkey"])  # fmt: skip
def test_pagination_protocol_and_lookalike_names_are_not_secret(name: str) -> None:
    assert name_strength(name) is Strength.NONE


@pytest.mark.parametrize(
    "name", ["pass", "auth", "pw", "sig", "ssh_key", "basic_auth", "X-Amz-Signature"]
)
def test_short_words_are_weak_a_secret_only_with_a_credential_like_value(name: str) -> None:
    assert name_strength(name) is Strength.WEAK
    out, _ = R.message({name: "yes", "n": {name: "oauth"}, "r": {name: "Zq8xP2vL9mK4wR7t"}})
    assert out == {name: "yes", "n": {name: "oauth"}, "r": {name: REDACTED}}


def test_false_positives_stay_intact() -> None:
    out, paths = R.message({"result": dict(FALSE_POSITIVES)})
    assert out == {"result": FALSE_POSITIVES} and paths == []
    assert (
        Scanner(strict=True).spans(" ".join(f"{k}={v}" for k, v in FALSE_POSITIVES.items())) == []
    )


def test_secret_members_of_any_type_are_replaced_whole() -> None:
    out, paths = R.message(members())
    assert leaked(repr(out).encode(), member_secrets()) == []
    assert out["password"] == REDACTED and out["credentials"] == REDACTED, "a list, an object"
    assert "/nested/level59/0" in paths[-2] or any(p.endswith("/client_secret") for p in paths), (
        "deep"
    )


def test_a_json_schema_under_a_secret_name_is_a_schema_not_a_secret() -> None:
    schema = {
        "type": "object",
        "properties": {"password": {"type": "string", "description": "yours"}},
        "required": ["password"],
    }
    assert R.message({"inputSchema": schema}) == ({"inputSchema": schema}, [])


@pytest.mark.parametrize("text", texts())
def test_every_shape_in_text_is_redacted_and_found(text: str) -> None:
    assert leaked(R.text(text).encode(), text_secrets()) == []
    assert Scanner(strict=True).spans(text), "check finds it"


def test_every_shape_has_a_hint_and_a_name_check_reports() -> None:
    assert all(s.hints and s.name for s in SHAPES)
    assert len({s.name for s in SHAPES}) == len(SHAPES)


def test_a_pem_key_split_over_lines_is_redacted_line_by_line() -> None:
    r = Redactor()
    out = [r.line("stderr", ln) for ln in [*PEM_RSA, "after the key"]]
    assert out[:4] == [REDACTED] * 4 and out[4] == "after the key"
    assert Redactor().line("other", PEM_RSA[1]) == PEM_RSA[1], "a stream knows only its own keys"


def test_redaction_is_idempotent() -> None:
    once = [R.text(t) for t in texts()]
    assert [R.text(t) for t in once] == once
    assert Scanner(strict=True).spans(" ".join(once)) == []


ADVERSARIAL = {
    "separators": "a=" * 500_000,
    "colons": "x:" * 500_000,
    "word": "a" * 1_000_000,
    "base64ish": "QUJD" * 250_000,
    "schemes": "ab://" * 200_000,
    "userinfo": "http://" + "u" * 1_000_000,
    "pem": ("-----BEGIN RSA PRIVATE " + "KEY-----") * 30_000,
    "bearer": "Bearer " * 140_000,
    "names": "password_token_" * 66_000,
}


@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
def test_linear_time_on_a_1_mb_adversarial_string(kind: str) -> None:
    text = ADVERSARIAL[kind]
    start = time.perf_counter()
    R.text(text)
    Scanner(strict=True).spans(text)
    elapsed = time.perf_counter() - start
    # A quadratic scan of 1 MB takes minutes to hours; a linear one well under a second (the
    # bound is loose for a loaded machine: it tells linear from quadratic, not fast from slow).
    assert elapsed < 20, f"{kind}: {elapsed:.1f} s"


def test_userinfo_in_any_string() -> None:
    assert R.text(f"see https://bob:{SECRETS['userinfo']}@h/x") == f"see https://bob:{REDACTED}@h/x"
    assert R.text("https://h/x?a=1 and mailto:bob@h") == "https://h/x?a=1 and mailto:bob@h"
