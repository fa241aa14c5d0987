"""`mcptape diff` through CliRunner: exit codes 0 / 1 / 2 and the three formats."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner

from mcptape.cassette import dumps
from mcptape.cli.diff import diff

from .builders import cassette, err, legacy_handshake, meta, modern_handshake, req, res, text_result


def write(path: Path, *wire: object) -> str:
    path.write_bytes(dumps(cassette(*wire)))  # type: ignore[arg-type]
    return str(path)


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    call = [req(2, "tools/call", {"name": "f"}), err(2, -32000, "x")]
    return {
        "a": write(tmp_path / "a.jsonl", *legacy_handshake(), *call),
        "a2": write(
            tmp_path / "a2.jsonl",
            *legacy_handshake(9),
            req(10, "tools/call", {"name": "f"}),
            err(10, -32000, "y"),
        ),
        "modern": write(
            tmp_path / "m.jsonl",
            *modern_handshake(),
            req(2, "tools/call", {"name": "f", "_meta": meta()}),
            err(2, -32000, "x"),
        ),
        "b": write(
            tmp_path / "b.jsonl",
            *legacy_handshake(),
            req(2, "tools/call", {"name": "f"}),
            res(2, text_result("ok")),
        ),
    }


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(diff, list(args))
    return result.exit_code, result.output


def test_equivalent_exits_0(files: dict[str, str]) -> None:
    code, out = run(files["a"], files["a2"])
    assert code == 0 and out.startswith("equivalent")


def test_era_differences_are_envelope_unless_strict(files: dict[str, str]) -> None:
    assert run(files["a"], files["modern"])[0] == 0
    code, out = run(files["a"], files["modern"], "--strict-envelope")
    assert code == 1 and out.startswith("envelope differs")


def test_messages_count_with_strict_messages(files: dict[str, str]) -> None:
    assert run(files["a"], files["a2"], "--strict-messages")[0] == 1


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_behaviour_difference_exits_1_in_every_format(files: dict[str, str], fmt: str) -> None:
    code, out = run(files["a"], files["b"], "--format", fmt)
    assert code == 1
    assert "behaviour differs: 1 changed" in out
    if fmt == "json":
        data = orjson.loads(out)
        assert data["differences"][0]["exchange"] == "tools/call f" and data["exit_code"] == 1


def test_ignore_option(files: dict[str, str]) -> None:
    assert run(files["a"], files["b"], "--ignore", "/result/content")[0] == 1
    assert (
        run(files["a"], files["b"], "--ignore", "/error")[0] == 0
    )  # a result <-> error flip is at /error


@pytest.mark.parametrize("pattern", ["", "/", "result/content"])
def test_ignore_needs_a_pointer_below_the_root(files: dict[str, str], pattern: str) -> None:
    code, out = run(files["a"], files["b"], "--ignore", pattern)
    assert code == 2 and "JSON pointer" in out


def test_errors_exit_2(tmp_path: Path, files: dict[str, str]) -> None:
    code, out = run(str(tmp_path / "missing.jsonl"), files["a"])
    assert code == 2 and "no such cassette" in out
    (tmp_path / "bad.jsonl").write_text("not json\n")
    assert run(str(tmp_path / "bad.jsonl"), files["a"])[0] == 2
    assert run(files["a"], files["b"], "--format", "xml")[0] == 2


def test_help_has_examples() -> None:
    code, out = run("--help")
    assert code == 0 and "mcptape diff cassettes/v1.jsonl cassettes/v2.jsonl" in out


def test_a_cut_short_cassette_is_diffed_with_a_warning(
    tmp_path: Path, files: dict[str, str]
) -> None:
    data = Path(files["a"]).read_bytes().splitlines(keepends=True)
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(data[:-1]))  # without the end marker
    result = CliRunner().invoke(diff, [str(cut), files["a"]])
    assert result.exit_code == 0
    assert "mcptape diff: warning:" in result.stderr and "cut short" in result.stderr


def test_a_crash_inside_the_diff_still_exits_2(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*_: object) -> None:
        raise RuntimeError("bug")

    monkeypatch.setattr("mcptape.cli.diff.diff_cassettes", boom)
    monkeypatch.delenv("MCPTAPE_DEBUG", raising=False)
    code, out = run(files["a"], files["b"])
    assert code == 2 and "internal error: RuntimeError: bug" in out
