"""The views' pure parts: the data embedded in a page, sessions, links, the server surface, and a
hostile cassette's page in the browser (nothing in a cassette becomes markup or script)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import orjson
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from mcptape.cassette import load
from mcptape.pairing import pair
from mcptape.views import page, session_data, timeline
from tests.conftest import ROOT, mcptape_cmd
from tests.reliability.helpers import client, server, write_cassette

from .browser import console_problems, open_page, screenshot

GOLDEN_HTTP = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "streamable-http.jsonl"
HOSTILE = ['</script><script>window.pwned = 1</script>', '<img src=x onerror="window.pwned = 2">', "@SCRIPT@ @DATA@",
           "<!-- <script>", "\u2028 line separator", "[REDACTED]"]  # fmt: skip


def test_embedded_data_is_json_without_a_single_angle_bracket() -> None:
    text = page.embed({"k": HOSTILE, "<key>": 1})
    assert "<" not in text and "\u2028" not in text
    assert json.loads(text) == {"k": HOSTILE, "<key>": 1}


def test_a_placeholder_inside_the_data_is_not_filled_again() -> None:
    html = page.render("t", {"v": "@SCRIPT@ @STYLE@"}, "session.js")
    assert html.count("const ROW_H = 34;") == 1 and html.count(":root {") == 1


def test_an_http_initialize_belongs_to_the_session_its_answer_opened() -> None:
    cas = load(GOLDEN_HTTP)
    rows = timeline.rows(cas, pair(cas.events))
    first_list = next(r for r in rows if r.what == "tools/list")
    init = next(r for r in rows if r.what == "initialize")
    assert init.session == first_list.session == 1
    assert len({r.session for r in rows}) == 1, "one client, one session"


def test_two_client_sessions_are_numbered_apart() -> None:
    cas = load(ROOT / "cassettes" / "everything" / "2025-11-25" / "streamable-http.jsonl")
    data = session_data.page_data(cas, pair(cas.events), "x")
    assert [s["n"] for s in data["sessions"]] == [1, 2]
    inits = [r for r in data["rows"] if r["what"] == "initialize"]
    assert [r["session"] for r in inits] == [2]
    assert {r["session"] for r in data["rows"] if r["what"] == "server/discover"} == {1}


def test_rows_link_requests_answers_and_what_came_between() -> None:
    cas = load(GOLDEN_HTTP)
    data = session_data.page_data(cas, pair(cas.events), "x")
    by_seq = {r["seq"]: r for r in data["rows"]}
    add = next(r for r in data["rows"] if r["what"] == "tools/call" and r["tool"] == "add")
    answer = by_seq[add["pair"]]
    assert (
        answer["pair"] == add["seq"] and answer["latency"] >= 0 and answer["method"] == "tools/call"
    )
    during = [by_seq[s] for s in add["related"]]
    assert [r["what"] for r in during] == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
    ]
    assert all(r["exchange"] == add["seq"] and r["own"] == r["what"] for r in during)
    assert [t["name"] for t in data["surface"]["tools"]] == [
        "add",
        "echo",
        "weather",
        "divide",
        "fail",
        "greet",
    ]
    assert (
        data["surface"]["protocolVersion"] == "2025-11-25"
        and "tools" in data["surface"]["capabilities"]
    )


@pytest.mark.e2e
def test_a_hostile_cassette_is_shown_as_text(browser: webdriver.Chrome, tmp_path: Path) -> None:
    params = {"name": "echo", "arguments": {str(i): s for i, s in enumerate(HOSTILE)}}
    cassette = write_cassette(
        tmp_path / "hostile.jsonl",
        client({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
        server(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"content": [{"type": "text", "text": s} for s in HOSTILE]},
            }
        ),
        {"kind": "stderr", "from": "server", "text": HOSTILE[0]},
    )
    out = tmp_path / "hostile.html"
    proc = subprocess.run(
        mcptape_cmd("show", str(cassette), "-f", "html", "-o", str(out)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    open_page(browser, out)
    assert browser.execute_script(
        "return window.pwned === undefined && document.images.length === 0"
    )
    browser.execute_script("window.mcptapeSelect(1)")
    browser.find_element(By.CSS_SELECTOR, "#detail button.unfold").click()
    shown = browser.find_element(By.CSS_SELECTOR, "#detail .full-json").get_attribute("textContent")
    for s in HOSTILE:
        assert orjson.dumps(s).decode() in shown
    assert browser.find_elements(By.CSS_SELECTOR, "#detail .redacted"), (
        "a redaction marker is marked"
    )
    assert console_problems(browser) == []
    screenshot(browser, "hostile-cassette")
