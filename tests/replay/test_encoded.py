"""Pre-encoded answers: the bytes a replay splices are exactly the bytes encoding them anew gives."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from mcptape.cassette import load
from mcptape.cassette.model import Source
from mcptape.replay import ReplayConfig, ReplayEngine, Send
from mcptape.replay.encoded import (
    CANCELLED,
    KEEP,
    PROGRESS,
    SUBSCRIPTION,
    rewrite,
    rewrite_kind,
    template,
)
from mcptape.replay.index import ReplayIndex
from mcptape.wire.jsonrpc import MessageType
from tests.conftest import ROOT
from tests.replay.tape import call, note, ok, tape

SUB = "io.modelcontextprotocol/subscriptionId"
IDS = [7, 0, -3, 2**53, "seven", 'a "quoted" \\ id', "ünïcode ✓", "\u2028", ""]
TOKENS = [1, "tok", 'x"y', None]

MESSAGES = [
    (note("notifications/progress", {"progressToken": 3, "progress": 1, "total": 2}), PROGRESS),
    (note("notifications/message", {"level": "info", "data": "adding"}), KEEP),
    (note("notifications/cancelled", {"requestId": 4, "reason": "x"}), CANCELLED),
    (note("notifications/tools/list_changed", {"_meta": {SUB: "listen-1"}}), SUBSCRIPTION),
    (
        ok(3, {"content": [{"type": "text", "text": "2 ✓ \u2028"}], "_meta": {SUB: "l"}}),
        SUBSCRIPTION,
    ),
    (ok(3, {"content": [{"type": "text", "text": "the id 3 and a token"}]}), KEEP),
    ({"jsonrpc": "2.0", "error": {"code": -1, "message": "no id in the recording"}}, KEEP),
]


@pytest.mark.parametrize(("msg", "kind"), MESSAGES)
def test_a_template_filled_is_the_rewritten_message_encoded(msg: dict[str, Any], kind: int) -> None:
    assert rewrite_kind(msg) == kind
    response = "method" not in msg
    for client_id in IDS:
        for token in TOKENS:
            base = {**msg, "id": client_id} if response else msg
            want = rewrite(base, kind, client_id, token)
            if want is None:  # a progress notification for a client that asked for none
                assert kind == PROGRESS and token is None
                continue
            got = template(msg, kind, response).fill(client_id, token)
            assert got == orjson.dumps(want), (client_id, token)


def test_a_repeated_exchange_is_spliced_from_its_first_encoding_to_the_same_bytes() -> None:
    progress = [
        ("c", call(3, "add", {"a": 1}, _meta={"progressToken": 3})),
        ("s", note("notifications/progress", {"progressToken": 3, "progress": 1})),
        ("s", ok(3, {"content": [{"type": "text", "text": "2"}]})),
    ]
    engine = ReplayEngine.from_cassette(tape(*progress), ReplayConfig(allow_repeats=True))
    lines = []
    for n, (client_id, token) in enumerate(((10, "a"), ("eleven", 11), (12, "a"))):
        request = call(client_id, "add", {"a": 1}, _meta={"progressToken": token})
        sends = [o for o in engine.receive(request) if isinstance(o, Send)]
        assert all((s._encoding is not None) == (n > 0) for s in sends)  # spliced when played again
        assert [s.encoded() for s in sends] == [orjson.dumps(s.msg) for s in sends]
        lines.append([orjson.loads(s.encoded()) for s in sends])
    assert [[m.get("id"), m.get("params", {}).get("progressToken")] for ms in lines for m in ms] == [
        [None, "a"], [10, None], [None, 11], ["eleven", None], [None, "a"], [12, None]
    ]  # fmt: skip
    assert lines[2][1]["result"] == lines[0][1]["result"]


GOLDEN = sorted((ROOT / "cassettes").rglob("*.jsonl"))


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: str(p.relative_to(ROOT / "cassettes")))
def test_every_golden_answer_replayed_again_is_the_bytes_of_its_message(path: Path) -> None:
    """Each recorded request sent three times (the second and third play from templates):
    whatever the engine sends encodes to `orjson.dumps` of the message it says it sends."""
    index = ReplayIndex(load(path))
    engine = ReplayEngine(index, ReplayConfig(index.policy, allow_repeats=True))
    checked = 0
    for round_ in range(3):
        for ex in index.session.exchanges:
            if ex.request.src is not Source.CLIENT or ex.request.type is not MessageType.REQUEST:
                continue
            msg = {**ex.msg, "id": f"r{round_}-{ex.index}"}
            for out in engine.receive(msg):
                if isinstance(out, Send):
                    assert out.encoded() == orjson.dumps(out.msg)
                    checked += 1
    assert checked > 0


def test_a_send_delayed_by_a_fault_keeps_its_splice() -> None:
    """A delay changes when, not what: the later Send still fills the template (a
    `dataclasses.replace` alone would drop it and encode the message anew)."""
    exchange = [("c", call(3, "add", {"a": 1})), ("s", ok(3, {"content": []}))]
    engine = ReplayEngine.from_cassette(tape(*exchange), ReplayConfig(allow_repeats=True))
    engine.receive(call(10, "add", {"a": 1}))
    (spliced,) = [o for o in engine.receive(call(11, "add", {"a": 1})) if isinstance(o, Send)]
    assert spliced._encoding is not None
    later = spliced.later(0.25)
    assert later.delay == 0.25 and spliced.delay == 0.0
    assert later._encoding == spliced._encoding
    assert later.encoded() == spliced.encoded() == orjson.dumps(later.msg)
