"""child: the one way mcptape runs a server (the stdio recorder and verify both use it)."""

from __future__ import annotations

import sys

import pytest

from mcptape.errors import RecordError
from mcptape.proc.child import Child, StderrTail, describe_exit, exit_status


def test_a_missing_command_is_one_clear_error() -> None:
    with pytest.raises(
        RecordError, match=r"cannot start '/nonexistent/server': No such file or directory"
    ):
        Child.start(["/nonexistent/server"])


def test_stop_returns_the_exit_status_and_kills_a_child_that_ignores_eof() -> None:
    done = Child.start([sys.executable, "-c", "import sys; sys.stdin.read(); sys.exit(4)"])
    done.close_stdin()
    assert done.stop(grace=30) == 4 and describe_exit(4) == "exit status 4"
    stuck = Child.start([sys.executable, "-c", "import time\nwhile True: time.sleep(1)"])
    code = stuck.stop(grace=0.2)
    assert exit_status(code) == (code, "SIGKILL") and describe_exit(code) == "killed by SIGKILL"


def test_stderr_tail_keeps_the_last_lines() -> None:
    tail = StderrTail(size=2)
    for line in (b"one\n", b"two\r\n", b"thr\xffee\n"):
        tail.add(line)
    assert tail.text() == "two\nthr\ufffdee"
