"""The sans-IO HTTP-flow core both HTTP capture shells drive: who caused a failure, what a flow records."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from mcptape.capture.http_flow import HttpCapture, Notes, client_caused
from mcptape.capture.recorder import Recorder
from mcptape.cassette import CassetteBuffer, new_header
from mcptape.cassette.model import Transport
from mcptape.redaction.redact import RedactConfig, Redactor

NOTES = Notes(body="no body", stream="no events", open_at_end="still open")
SSE = (("Content-Type", "text/event-stream"),)


def capture() -> tuple[HttpCapture, CassetteBuffer]:
    buf = CassetteBuffer(new_header(Transport.STREAMABLE_HTTP, {}, {}))
    rec = Recorder(buf, Redactor(RedactConfig()))
    return HttpCapture(lambda: rec, NOTES), buf


def events(buf: CassetteBuffer) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in buf.data().splitlines()[1:]]


@pytest.mark.parametrize(
    ("message", "client_gone", "by_client"),
    [
        ("Client disconnected.", False, True),  # mitmproxy, HTTP/1
        ("stream reset by client (CANCEL)", False, True),  # mitmproxy, HTTP/2 and HTTP/3
        ("Connection refused", False, False),
        ("Connection killed.", False, False),
        ("peer closed connection", True, True),  # live: the client's side stopped reading
        ("server said: client error", False, False),  # the word "client" alone decides nothing
    ],
)
def test_who_caused_a_failure(message: str, client_gone: bool, by_client: bool) -> None:
    assert client_caused(message, client_gone) is by_client


def test_a_2026_post_stream_closed_by_the_client_before_its_answer_is_a_cancel() -> None:
    cap, buf = capture()
    st = cap.flow("POST")
    st.request(
        "/mcp",
        [("Mcp-Protocol-Version", "2026-07-28")],
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
    )
    st.stream_head(200, SSE)
    st.feed(b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n')
    st.error("stream reset by client (CANCEL)")
    last = events(buf)[-1]
    assert last["from"] == "client" and last["http"] == {
        "exchange": 1,
        "stream": "post",
        "phase": "disconnect",
    }
    assert last["info"] == {"error": "stream reset by client (CANCEL)", "cancel": True}


def test_a_broken_gzip_stream_is_one_error_event_and_the_rest_is_ignored() -> None:
    cap, buf = capture()
    st = cap.flow("GET")
    st.request("/mcp", [], b"")
    st.stream_head(200, (*SSE, ("Content-Encoding", "gzip")))
    st.feed(b"not gzip at all")
    st.feed(b"more")
    kinds = [(e["http"]["phase"], e.get("info")) for e in events(buf)]
    assert (
        kinds[-1][0] == "error"
        and "the rest of the stream passes unrecorded" in kinds[-1][1]["error"]
    )
    assert len(kinds) == 3


def test_a_stream_the_shell_does_not_see_says_so_on_its_head() -> None:
    cap, buf = capture()
    st = cap.flow("GET")
    st.request("/mcp", [], None)
    st.stream_head(200, SSE, encoded=False, kept=False)
    st.feed(b"data: {}\n\n")
    st.left_open()
    ev = events(buf)
    assert ev[0]["info"] == {"note": "no body"} and ev[1]["info"] == {"note": "no events"}
    assert ev[2]["info"] == {"error": "still open"} and len(ev) == 3
