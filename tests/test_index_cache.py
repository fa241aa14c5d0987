"""Where the replay's index cache lives, and how it is turned off (`mcptape.replay.cache.location`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptape.replay.cache import location


def test_the_cache_is_in_the_platforms_user_cache_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MCPTAPE_CACHE_DIR", raising=False)
    monkeypatch.delenv("MCPTAPE_INDEX_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert location.cache_dir() == tmp_path / "xdg" / "mcptape" / "index"
    monkeypatch.setenv("MCPTAPE_CACHE_DIR", str(tmp_path / "mine"))
    assert location.cache_dir() == tmp_path / "mine" / "index"


@pytest.mark.parametrize("value", ["0", "off", "no", "false", "OFF"])
def test_mcptape_index_cache_0_turns_it_off_wherever_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("MCPTAPE_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("MCPTAPE_INDEX_CACHE", value)
    assert location.cache_dir() is None
    monkeypatch.setenv("MCPTAPE_INDEX_CACHE", "1")
    assert location.cache_dir() == tmp_path / "index"


def test_a_writer_that_finds_the_cache_locked_writes_nothing_and_does_not_wait(
    tmp_path: Path,
) -> None:
    with location.locked(tmp_path) as mine:
        assert mine
        with location.locked(tmp_path) as theirs:  # (a lock of its own, as another process's)
            assert not theirs
    with location.locked(tmp_path) as again:
        assert again
