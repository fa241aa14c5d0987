"""`mcptape check --detect-secrets`: the optional second backend (the `secrets` extra, installed
in the test environment), each finding saying which backend made it."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptape.check import check_bytes

from .helpers import client, run_cli, server, write_cassette

A = "q7Rz2Lm9Xv4Tn8Kp"
HIGH_ENTROPY = (
    "wJal" + "rXUtnFEMI/K7MDENG/bPxRfiCY" + A
)  # a base64-looking value in no known shape, no secret name


def leaky(tmp_path: Path) -> Path:
    return write_cassette(
        tmp_path / "leak.jsonl",
        client(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "t", "arguments": {"note": "gh" + "p_" + A + A + "w3"}},
            }
        ),
        server(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"content": [{"type": "text", "text": f'data = "{HIGH_ENTROPY}"'}]},
            }
        ),
    )


def test_each_finding_names_its_backend(tmp_path: Path) -> None:
    data = leaky(tmp_path).read_bytes()
    alone = check_bytes(data).findings
    assert [(f.line, f.what.split(":")[0]) for f in alone] == [
        (2, "possible secret not redacted (mcptape)")
    ]
    both = check_bytes(data, detect_secrets=True).findings
    assert [f.line for f in both] == [2, 3]
    assert "(mcptape): GitHub token" in both[0].what
    assert "(detect-secrets): Base64 High Entropy String" in both[1].what and both[1].what.endswith(
        "/msg/result/content/0/text"
    )
    assert HIGH_ENTROPY not in both[1].what and HIGH_ENTROPY[8:] not in both[1].what, (
        "never the secret itself"
    )


def test_the_cli_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = leaky(tmp_path)
    code, out, _ = run_cli(capsys, "check", "--detect-secrets", str(path))
    assert code == 1 and out.count("(detect-secrets)") == 1 and out.count("(mcptape)") == 1
    assert run_cli(capsys, "check", "--detect-secrets", "--skip", "secrets", str(path))[0] == 0


def test_without_the_extra_the_flag_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    for name in [m for m in sys.modules if m.split(".")[0] == "detect_secrets"] + [
        "detect_secrets"
    ]:
        monkeypatch.setitem(sys.modules, name, None)  # as if not installed
    code, _, err = run_cli(capsys, "check", "--detect-secrets", str(leaky(tmp_path)))
    assert code == 2 and "pip install 'mcptape[secrets]'" in err and "Traceback" not in err
