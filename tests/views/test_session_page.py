"""`mcptape show --format html` in a real headless Chromium: every golden cassette's page loads
without a console error, shows every message, opens any message to its full JSON, and filters."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from mcptape.cassette import load
from mcptape.cassette.model import Kind
from mcptape.pairing import pair
from tests.conftest import ROOT, mcptape_cmd

from .browser import console_problems, open_page, screenshot

pytestmark = pytest.mark.e2e

GOLDEN = sorted((ROOT / "cassettes").glob("*/*/*.jsonl"))
COLLECT_SEQS = """
const done = arguments[arguments.length - 1];
const list = document.getElementById("timeline");
const seen = new Set();
const frame = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
(async () => {
  for (let top = 0; ; top += list.clientHeight / 2) {
    list.scrollTop = top;
    await frame();
    for (const row of list.querySelectorAll(".row[data-seq]")) {
      const box = row.getBoundingClientRect(), view = list.getBoundingClientRect();
      if (box.bottom > view.top && box.top < view.bottom) seen.add(Number(row.dataset.seq));
    }
    if (top >= list.scrollHeight) break;
  }
  list.scrollTop = 0;
  await frame();
  done([...seen].sort((a, b) => a - b));
})();
"""


def page_of(cassette: Path, tmp_path: Path) -> Path:
    out = tmp_path / (
        cassette.parent.parent.name + "-" + cassette.parent.name + "-" + cassette.stem + ".html"
    )
    proc = subprocess.run(
        mcptape_cmd("show", str(cassette), "--format", "html", "-o", str(out)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return out


def shown_seqs(driver: webdriver.Chrome) -> list[int]:
    return list(driver.execute_async_script(COLLECT_SEQS))


def listed_seqs(cassette: Path) -> list[int]:
    """Every event but HTTP transport-only ones (folded away until asked for): messages, stderr, exits."""
    return sorted(ev.seq for ev in load(cassette).events if ev.kind is not Kind.HTTP)


def leaves(value: Any, ptr: str = "") -> list[tuple[str, Any]]:
    """(JSON pointer, scalar) for every leaf of a message."""
    if isinstance(value, dict):
        return [
            x
            for k, v in value.items()
            for x in leaves(v, f"{ptr}/{k.replace('~', '~0').replace('/', '~1')}")
        ]
    if isinstance(value, list):
        return [x for i, v in enumerate(value) for x in leaves(v, f"{ptr}/{i}")]
    return [(ptr, value)]


@pytest.fixture(params=GOLDEN, ids=lambda p: "/".join(p.parts[-3:]))
def golden(request: pytest.FixtureRequest) -> Path:
    return Path(request.param)


def test_page_is_self_contained(golden: Path, tmp_path: Path) -> None:
    html = page_of(golden, tmp_path).read_text()
    assert 'http-equiv="Content-Security-Policy" content="default-src \'none\'' in html
    assert "<script src" not in html and "<link" not in html and "@import" not in html


def test_golden_page_shows_every_message_and_opens_each_to_its_json(
    browser: webdriver.Chrome, golden: Path, tmp_path: Path
) -> None:
    name = f"{golden.parent.parent.name}-{golden.parent.name}-{golden.stem}"
    open_page(browser, page_of(golden, tmp_path))
    assert console_problems(browser) == []
    screenshot(browser, f"{name}-timeline")
    shown = shown_seqs(browser)
    assert shown == listed_seqs(golden)
    assert {ev.seq for ev in load(golden).events if ev.kind is Kind.MESSAGE} <= set(shown)

    # The first tools/call (or the first request): clicked, the side pane holds every leaf of its JSON.
    events = {ev.seq: ev for ev in load(golden).events}
    call = next((ev for ev in events.values() if ev.kind is Kind.MESSAGE and isinstance(ev.msg, dict) and ev.msg.get("method") == "tools/call"),
                next(ev for ev in events.values() if ev.kind is Kind.MESSAGE))  # fmt: skip
    browser.execute_script("window.mcptapeSelect(arguments[0])", call.seq)
    detail = browser.find_element(By.ID, "detail")
    detail.find_element(By.CSS_SELECTOR, "button.unfold").click()
    for ptr, value in leaves(call.msg):
        node = detail.find_element(By.CSS_SELECTOR, f".full-json [data-ptr={json.dumps(ptr)}]")
        assert node.get_attribute("textContent").startswith(
            json.dumps(value, ensure_ascii=False)[:160]
        ), ptr
    answer = pair(list(events.values())).exchanges
    response = next(ex.response for ex in answer if ex.request.event.seq == call.seq)
    assert response is not None
    link = detail.find_element(By.CSS_SELECTOR, f"button.link[data-seq='{response.event.seq}']")
    screenshot(browser, f"{name}-detail")
    link.click()  # request -> response
    assert browser.find_element(By.CSS_SELECTOR, ".row.selected").get_attribute("data-seq") == str(
        response.event.seq
    )
    assert "Answers request" in browser.find_element(By.ID, "detail").text

    browser.find_element(By.CSS_SELECTOR, "button[data-tab=surface]").click()
    tools = [
        t["name"]
        for ex in answer
        if ex.method == "tools/list" and ex.result
        for t in ex.result.get("tools", [])
    ]
    surface = browser.find_element(By.ID, "pane-surface").text
    assert tools and all(t in surface for t in tools)
    screenshot(browser, f"{name}-server")
    assert console_problems(browser) == []


def test_the_filters_hide_what_they_should(browser: webdriver.Chrome, tmp_path: Path) -> None:
    golden = ROOT / "cassettes" / "python-sdk" / "2025-11-25" / "streamable-http.jsonl"
    cas = load(golden)
    exchanges = pair(cas.events).exchanges
    open_page(browser, page_of(golden, tmp_path))

    Select(browser.find_element(By.ID, "filter-method")).select_by_value("tools/call")
    calls = sorted({it.event.seq for ex in exchanges if ex.method == "tools/call"
                    for it in (ex.request, *ex.items, *([ex.response] if ex.response else []))})  # fmt: skip
    assert shown_seqs(browser) == calls
    Select(browser.find_element(By.ID, "filter-tool")).select_by_value("add")
    add = sorted({it.event.seq for ex in exchanges if ex.name == "add"
                  for it in (ex.request, *ex.items, *([ex.response] if ex.response else []))})  # fmt: skip
    assert shown_seqs(browser) == add and len(add) < len(calls)
    screenshot(browser, "filter-tool-add")

    Select(browser.find_element(By.ID, "filter-method")).select_by_value("")
    Select(browser.find_element(By.ID, "filter-tool")).select_by_value("")
    box = browser.find_element(By.ID, "filter-text")
    box.send_keys("BOOM")
    lines = {ev.seq: json.dumps(ev.msg).lower() for ev in cas.events if ev.kind is Kind.MESSAGE}
    browser.execute_async_script(
        "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(done));"
    )
    assert shown_seqs(browser) == sorted(s for s, text in lines.items() if "boom" in text) != []
    assert browser.find_element(By.ID, "row-count").get_attribute("data-shown") == str(
        len([t for t in lines.values() if "boom" in t])
    )

    box.clear()
    box.send_keys("no such text anywhere")
    browser.execute_async_script(
        "const done = arguments[0]; requestAnimationFrame(() => requestAnimationFrame(done));"
    )
    assert shown_seqs(browser) == []
    browser.find_element(By.ID, "filter-text").clear()
    browser.find_element(By.ID, "filter-transport").click()
    assert shown_seqs(browser) == sorted(ev.seq for ev in cas.events)
    assert console_problems(browser) == []
