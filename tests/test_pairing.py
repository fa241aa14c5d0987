"""Pairing: a server request outside any client request pairs with the client's answer."""

from __future__ import annotations

from mcptape.cassette import Cassette, dumps
from mcptape.check import check_bytes
from mcptape.pairing import pair
from tests.replay.tape import LEGACY_INIT, ok, req, tape

AFTER_INITIALIZED = [  # as server-filesystem does: roots/list while nothing is in flight
    *LEGACY_INIT,
    ("s", req(0, "roots/list")),
    ("c", req(2, "tools/list")),
    ("s", ok(2, {"tools": []})),
    ("c", ok(0, {"roots": [{"uri": "file:///work"}]})),  # answered later, wherever it falls
]


def test_a_server_request_in_no_request_pairs_with_the_answer_wherever_it_falls() -> None:
    session = pair(tape(*AFTER_INITIALIZED).events)
    assert session.orphans == []
    ((request, answer),) = session.replies
    assert request.msg["method"] == "roots/list" and answer.msg["result"]["roots"]
    assert [item.msg["method"] for _, item in session.unsolicited] == ["roots/list"]
    tools = session.exchanges[2]
    assert tools.method == "tools/list" and tools.items == [] and tools.response is not None


def test_on_http_the_answer_pairs_by_session_with_a_request_on_the_get_stream() -> None:
    http = {
        3: {"session": "s1", "exchange": 9},  # the GET stream
        4: {"session": "s1", "exchange": 10},  # the client's POST of its answer
        5: {"session": "s2", "exchange": 11},  # another session's answer with the same id
    }
    steps = [
        *LEGACY_INIT,
        ("s", req(0, "roots/list")),
        ("c", ok(0, {"roots": []})),
        ("c", ok(0, {})),
    ]
    session = pair(tape(*steps, http=http).events)
    assert len(session.replies) == 1 and session.replies[0][1].event.http == http[4]
    assert [o.event.http for o in session.orphans] == [http[5]]


def test_check_finds_no_pairing_problem_and_still_finds_an_answer_to_nothing() -> None:
    clean = tape(*AFTER_INITIALIZED)
    broken = tape(*AFTER_INITIALIZED, ("c", ok(0, {"roots": []})))  # a second answer to id 0

    def pairing(cassette: Cassette) -> list[str]:
        report = check_bytes(dumps(cassette))
        return [f.what for f in report.findings if f.check == "pairing"]

    assert pairing(clean) == []
    assert pairing(broken) == ["a response (id 0) that answers no request"]
