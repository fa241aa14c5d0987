"""A corpus of planted secrets: every shape issue 14 lists, and the places to plant them.

Fake secrets, built in pieces so that no scanner mistakes this file for a leak. Each value in
`SECRETS` is the part that must never reach a cassette (for a `user:password@` URL, the
password; for a PEM key, a line of its body). `texts()` embeds every one in free text the way
logs, env dumps and connection strings carry them; `members()` holds them under secret names;
`error_body()` is a plain-text HTTP error body holding some.
"""

from __future__ import annotations

import base64
from typing import Any

A = "q7Rz2Lm9Xv4Tn8Kp"
B = "W3eY6uI1oP5aS0dF"

SECRETS: dict[str, str] = {
    "aws_secret": "wJal" + "rXUtnFEMI/K7MDENG/" + "bPxRfiCY" + A[:8],  # 40 characters
    "aws_id": "AK" + "IA" + "QWERTYUI12345678",
    "stripe_sk": "sk" + "_live_" + A + B,
    "stripe_rk": "rk" + "_live_" + B + A,
    "gitlab": "gl" + "pat-" + A + B[:6],
    "hf": "hf" + "_" + A + B + "Zz",
    "npm": "np" + "m_" + A + B + "abcd",
    "github": "gh" + "p_" + A + B + "w3",
    "openai": "sk-" + "proj-" + A + B,
    "slack": "xo" + "xb-" + "1234567890-" + A,
    "google": "AI" + "za" + "Sy" + A + B + "a",
    "jwt": "ey" + "J" + A + ".ey" + "J" + B + "." + A,
    "azure": B + A + "Zm9vYmFy" + "==",
    "pg_password": "pg-" + A + "!",
    "userinfo": "ui-" + B,
    "basic": base64.b64encode(("alice:" + "bp-" + A).encode()).decode(),
    "bearer": "bt-" + A + "x",
    "db_env": "dbpw-" + A,
    "gh_env": "env-" + B + A,
    "pem_rsa": "MIIEpA" + A + B + A,
    "pem_ssh": "b3BlbnNzaC1rZXktdjEA" + B + A,
    "member_list": "ml-" + A + "1",
    "member_dict": "md-" + B + "2",
    "passphrase": "pp-" + A + "3",
    "aws_member": "am-" + B + A[:4],
    "api_token": "at-" + A + "4",
    "deep": "dp-" + B + "5",
    "b64_inner": "b64-" + A + B,
    "secret_header": "sh-" + A + "6",
    "location": "lq-" + B + "7",
    "www_auth": "wa-" + A + "8",
    "sig": "sg" + B + A + "%2B9",
    "amz_sig": "a1b2c3d4e5f6" * 4 + "0f1e2d3c",
    "sse_comment": "sc-" + B + "0",
    "sse_id": "gh" + "o_" + B + A + "ab",
    "cookie": "ck-" + A,
    "query": "qs-" + A,
    "aws_colon": "wJal"
    + "rXUtnFEMI/K7MDENG/"
    + "bPxRfiCY"
    + "EXAMPLE"
    + "KEY",  # the AWS docs' example
    "api_key_eq": "ak-" + B + "9",
    "auth_token_header": "xt-" + A + "7",
    "aligned": "al-" + B + A[:6],
    "arrow": "ar-" + A + "2",
    "sse_id_named": "si-" + A + B[:4],
    "body_bearer": "tb-" + B + "3",
    "body_token": "tt-" + A + "5",
}
"""Name -> the fake secret (the part that must not survive)."""

PEM_RSA = [
    "-----BEGIN RSA PRIVATE " + "KEY-----",
    SECRETS["pem_rsa"],
    "hZJ3" + A + B,
    "-----END RSA PRIVATE " + "KEY-----",
]
PEM_SSH = [
    "-----BEGIN OPENSSH PRIVATE " + "KEY-----",
    SECRETS["pem_ssh"],
    "-----END OPENSSH PRIVATE " + "KEY-----",
]
"""PEM private keys as a server logs them: one line each, so BEGIN and END never meet."""

BASE64_BLOB = base64.b64encode(f"aws_secret_access_key={SECRETS['b64_inner']}\n".encode()).decode()


def texts() -> list[str]:
    """Free-text lines, each holding one or more planted secrets (no PEM: see `PEM_RSA`)."""
    s = SECRETS
    return [
        f"aws_secret_access_key = {s['aws_secret']} (id {s['aws_id']})",
        f"charging with {s['stripe_sk']}, restricted {s['stripe_rk']}",
        f"tokens: {s['gitlab']} {s['hf']} {s['npm']}",
        f"github {s['github']} openai {s['openai']} slack {s['slack']} google {s['google']}",
        f"session {s['jwt']}",
        f"DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s['azure']};EndpointSuffix=core.windows.net",
        f"connecting to postgres://app:{s['pg_password']}@db.internal:5432/app",
        f"fetching https://deploy:{s['userinfo']}@git.internal/repo.git",
        f"Authorization: Basic {s['basic']}",
        f"Authorization: Bearer {s['bearer']}",
        f"env: PATH=/usr/bin DATABASE_PASSWORD={s['db_env']} HOME=/root GITHUB_TOKEN={s['gh_env']}",
        f"config blob {BASE64_BLOB}",
        f"aws-secret-access-key: {s['aws_colon']}",
        f"request refused: api_key={s['api_key_eq']} is not valid",
        f"X-Auth-Token: {s['auth_token_header']}",
        f"aws_secret_access_key       =\t{s['aligned']}",
        f"{{:auth_token => '{s['arrow']}'}}",
    ]


def text_secrets() -> list[str]:
    """The secrets `texts()` holds (base64 included: its inner value must not be readable)."""
    names = ["aws_secret", "aws_id", "stripe_sk", "stripe_rk", "gitlab", "hf", "npm", "github", "openai", "slack",
             "google", "jwt", "azure", "pg_password", "userinfo", "basic", "bearer", "db_env", "gh_env",
             "aws_colon", "api_key_eq", "auth_token_header", "aligned", "arrow"]  # fmt: skip
    return [SECRETS[n] for n in names] + [BASE64_BLOB]


def error_body() -> str:
    """A plain-text error body as a server's 401 carries it: a bearer token and a `token: ...`."""
    s = SECRETS
    return f"401 Unauthorized\ninvalid credentials: Bearer {s['body_bearer']}\ntoken: {s['body_token']}\n"


def deep(levels: int, leaf: Any) -> Any:
    value = leaf
    for i in range(levels):
        value = {f"level{i}": value} if i % 2 else [value]
    return value


def members() -> dict[str, Any]:
    """Secret-named members of every kind: a list, an object, `passphrase`, an AWS variable."""
    s = SECRETS
    return {
        "password": [s["member_list"], "second"],
        "credentials": {"pw": s["member_dict"], "user": "alice"},
        "passphrase": s["passphrase"],
        "AWS_SECRET_ACCESS_KEY": s["aws_member"],
        "api_token": s["api_token"],
        "nested": deep(60, {"client_secret": s["deep"]}),
        "blob": BASE64_BLOB,
    }


def member_secrets() -> list[str]:
    return [
        SECRETS[n]
        for n in ("member_list", "member_dict", "passphrase", "aws_member", "api_token", "deep")
    ]


FALSE_POSITIVES: dict[str, Any] = {
    "pageToken": "p2-" + A,
    "nextPageToken": "p3-" + B,
    "cursor": "c-" + A,
    "nextCursor": "c-" + B,
    "pass": "yes",
    "auth": "oauth",
    "tokens_used": 42,
    "max_tokens": 100,
}
"""Members that look secret-ish but are not: they must stay as they are."""

KEPT_TEXTS: list[str] = [
    f"nextCursor: {FALSE_POSITIVES['nextCursor']}",
    f"fetching page pageToken={FALSE_POSITIVES['pageToken']}&limit=10",
    f"cursor => {FALSE_POSITIVES['cursor']}",
    f"nextPageToken:       {FALSE_POSITIVES['nextPageToken']}",
]
"""Free-text lines of pagination names: cursors and page tokens are no secrets (a replay needs them)."""


def leaked(data: bytes, secrets: list[str]) -> list[str]:
    """The planted secrets found in `data` (as they are, or JSON-escaped)."""
    out = []
    for secret in secrets:
        forms = {
            secret.encode(),
            secret.replace("/", "\\/").encode(),
            secret.replace("+", "%2B").encode(),
        }
        if any(f in data for f in forms):
            out.append(secret)
    return out
