"""The engine's session: one note per difference per session (also for the HTTP shell's stateless
requests, an engine each), the shell's label on the engine's errors, and what housekeeping counts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import anyio
import pytest

from mcptape.replay import ReplayConfig
from mcptape.replay.engine import HANDLERS, Note, ReplayEngine, Send
from mcptape.replay.http.app import HttpReplayApp
from tests.replay.tape import LEGACY_INIT, call, meta, ok, req, tape
from tests.replay.test_server_http import post_modern
from tests.replay.test_server_http_support import modern_streamable, served

SAMPLING = {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}
"""A client that declares what the recording client did not."""


@pytest.mark.anyio
async def test_a_stateless_client_that_declared_otherwise_gets_one_warning_per_session() -> None:
    said: list[Note] = []
    app = HttpReplayApp(modern_streamable(), ReplayConfig(allow_repeats=True), on_note=said.append)
    async with served(app) as client:
        with anyio.fail_after(5):
            answers = [
                await post_modern(client, req(i, "tools/list", {"_meta": meta(**SAMPLING)}))
                for i in range(3)
            ]
    assert [r.status_code for r in answers] == [200, 200, 200]
    warned = [n for n in said if "declared otherwise" in n.text]
    assert len(warned) == 1 and "clientCapabilities/sampling" in warned[0].text, said


def test_engines_sharing_a_session_share_what_they_said() -> None:
    first = ReplayEngine.from_cassette(modern_streamable(), ReplayConfig(allow_repeats=True))
    second = ReplayEngine(
        first.index,
        first.config,
        shared_pass=first.pass_,
        shared_housekeeping=first.housekeeping,
    )
    asked = req(1, "tools/list", {"_meta": meta(**SAMPLING)})
    assert [o for o in first.receive(asked) if isinstance(o, Note)]
    assert [o for o in second.receive(asked) if isinstance(o, Note)] == []
    alone = ReplayEngine(first.index, first.config)  # a session of its own says it again
    assert [o for o in alone.receive(asked) if isinstance(o, Note)]


@pytest.mark.anyio
async def test_serve_names_itself_in_the_no_match_error_and_its_line() -> None:
    said: list[Note] = []
    async with served(HttpReplayApp(modern_streamable(), on_note=said.append)) as client:
        with anyio.fail_after(5):
            r = await post_modern(client, call(1, "divide", {}, _meta=meta()))
    message = r.json()["error"]["message"]
    assert message.startswith("mcptape serve: tools/call 'divide' was never recorded")
    assert [n.text for n in said if n.level == "error"] == [
        f"{message}; {r.json()['error']['data']['hint']}"
    ]


def test_the_shell_names_itself_in_the_engines_errors() -> None:
    cassette = tape(*LEGACY_INIT, ("c", call(2, "add")), ("s", ok(2, {"n": 1})))
    served_ = ReplayEngine.from_cassette(
        cassette, replace(ReplayConfig(exact_clients=True), label="mcptape serve")
    )
    served_.receive(
        req(
            0,
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"sampling": {}},
                "clientInfo": {"name": "other", "version": "1"},
            },
        )
    )
    out = served_.receive(call(5, "add"))
    error = next(o.msg for o in out if isinstance(o, Send))["error"]
    assert error["message"].startswith("mcptape serve: tools/call 'add' was recorded only for")
    assert [o.text for o in out if isinstance(o, Note)] == [error["message"]]


def test_recorded_pings_are_counted_apart_from_the_exchanges() -> None:
    ping = [("c", req(7, "ping")), ("s", ok(7, {"n": "first"})), ("c", req(8, "ping")), ("s", ok(8, {"n": "last"}))]  # fmt: skip
    e = ReplayEngine.from_cassette(
        tape(*LEGACY_INIT, *ping, ("c", call(2, "add")), ("s", ok(2, {})))
    )
    e.receive(LEGACY_INIT[0][1])
    answers: list[Any] = []
    for i in range(3):
        answers += [o.msg["result"] for o in e.receive(req(f"p{i}", "ping")) if isinstance(o, Send)]
    e.receive(call(3, "add"))
    assert answers == [{"n": "first"}, {"n": "last"}, {"n": "last"}]
    assert e.housekeeping.pings == 3
    assert e.pass_.plays == {4: 1}  # exchange index -> plays: add (the handshake is answered apart)
    assert e.played == 1 + 3


@pytest.mark.parametrize("method", ["initialize", "ping", "server/discover", "logging/setLevel", "subscriptions/listen"])  # fmt: skip
def test_the_protocols_own_methods_have_a_handler(method: str) -> None:
    assert method in HANDLERS and "tools/call" not in HANDLERS
