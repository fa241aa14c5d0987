"""The calls a mock (or a cassette) received, and what it answered: a journal to assert on.

The engine tells its `ReplayConfig.answerer` every client request and the outputs it made for
it (`saw`); the journal keeps one `Call` per request, its answer filled in when the final
response goes out (at once, or after the client answered the server's own requests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from mcptape.replay.outputs import Send, Step
from mcptape.wire.jsonrpc import id_key


@dataclass(slots=True)
class Call:
    """One client request: its method and params, what it was answered, and when."""

    method: str
    params: dict[str, Any]
    id: Any
    t: float
    """Seconds since the journal started."""
    answer: dict[str, Any] | None = None
    """The JSON-RPC response sent (None: not answered yet)."""

    def to_json(self, n: int) -> dict[str, Any]:
        """The line `--journal` writes for this call, the `n`th request received."""
        return {
            "n": n,
            "method": self.method,
            "params": self.params,
            "id": self.id,
            "t": round(self.t, 6),
            "answer": self.answer,
        }

    @property
    def asks(self) -> bool:
        """True while the answer is a 2026-07-28 `input_required` (the retry brings the final one)."""
        result = self.result
        return isinstance(result, dict) and result.get("resultType") == "input_required"

    @property
    def name(self) -> str | None:
        """The tool or prompt name (`tools/call`, `prompts/get`), the URI of `resources/read`."""
        key = "uri" if self.method.startswith("resources/") else "name"
        value = self.params.get(key)
        return value if isinstance(value, str) else None

    @property
    def retry(self) -> bool:
        """True for a 2026-07-28 retry (with `requestState`) of a request that asked for input:
        the same call again on the wire, not counted apart by `of`."""
        return "requestState" in self.params

    @property
    def arguments(self) -> dict[str, Any]:
        args = self.params.get("arguments")
        return args if isinstance(args, dict) else {}

    @property
    def result(self) -> Any:
        return self.answer.get("result") if self.answer is not None else None

    @property
    def error(self) -> Any:
        return self.answer.get("error") if self.answer is not None else None


class Journal:
    """Every request a session (or several) received, in order. Safe to read from the test
    while a server thread appends (appends are single list operations)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.calls: list[Call] = []
        self._clock = clock
        self._start = clock()
        self._open: dict[tuple[str, Any], Call] = {}
        self._asked: dict[str, Call] = {}
        """`requestState` of an `input_required` answer -> the call it answered (2026-07-28)."""

    def saw(self, msg: dict[str, Any], outputs: Sequence[Step]) -> None:
        """Client message `msg` and what was sent for it. The final answer to a retry is the
        answer of the call that asked for input too."""
        if "method" in msg and "id" in msg:
            params = msg.get("params")
            call = Call(
                str(msg["method"]),
                params if isinstance(params, dict) else {},
                msg["id"],
                self._clock() - self._start,
            )
            self.calls.append(call)
            self._open[id_key(msg["id"])] = call
        for out in outputs:
            if isinstance(out, Send) and out.final and isinstance(out.msg, dict):
                call_ = self._open.pop(
                    id_key(out.request_id if out.request_id is not None else out.msg.get("id")),
                    None,
                )
                if call_ is not None:
                    self._answered(call_, out.msg)

    def _answered(self, call: Call, answer: dict[str, Any]) -> None:
        call.answer = answer
        first = self._asked.pop(str(call.params.get("requestState")), None) if call.retry else None
        if first is not None:
            first.answer = answer
            call = first
        if call.asks:
            self._asked[str(call.result.get("requestState"))] = call

    def of(self, method: str, name: str | None = None) -> list[Call]:
        """The calls of `method` (and of tool, prompt or URI `name`), retries left out."""
        return [
            c
            for c in self.calls
            if c.method == method and (name is None or c.name == name) and not c.retry
        ]

    def call_count(self, tool: str) -> int:
        """How many times tool `tool` was called."""
        return len(self.of("tools/call", tool))

    def assert_called_with(self, tool: str, **arguments: Any) -> None:
        """The last call of tool `tool` had these arguments (AssertionError otherwise)."""
        calls = self.of("tools/call", tool)
        if not calls:
            raise AssertionError(f"tool {tool} was never called")
        if calls[-1].arguments != arguments:
            raise AssertionError(
                f"tool {tool} was last called with {calls[-1].arguments}, not {arguments}"
            )

    def clear(self) -> None:
        self.calls.clear()
        self._open.clear()


class Listening:
    """An answerer that answers nothing and keeps the journal: a cassette's replay, journaled
    (`Tape.journal`)."""

    delays = False
    overlay_rules: tuple[Any, ...] = ()

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def answer(self, msg: dict[str, Any], version: str | None) -> None:
        return None

    def saw(self, msg: dict[str, Any], outputs: Sequence[Step]) -> None:
        self.journal.saw(msg, outputs)
