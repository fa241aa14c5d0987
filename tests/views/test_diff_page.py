"""`mcptape diff --format html` in a real headless Chromium: the two releases of the demo server
(recorded through `mcptape record` with the official SDK client) and each change between them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from selenium import webdriver
from selenium.webdriver.common.by import By

from tests.conftest import DEMO_SERVER, ROOT, mcptape_cmd
from tests.e2e.test_diff_e2e import V1_TO_V2, record_demo

from .browser import console_problems, open_page, screenshot

pytestmark = pytest.mark.e2e

SURFACE = {"server", "tools", "prompts", "resources", "resourceTemplates"}


@pytest.fixture(scope="module")
def releases(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("releases")

    async def both() -> tuple[Path, Path]:
        return await record_demo(tmp / "v1.jsonl", "modern", "v1"), await record_demo(
            tmp / "v2.jsonl", "modern", "v2"
        )

    return anyio.run(both)


def diff_page(a: Path, b: Path, out: Path, *extra: str) -> tuple[int, Path]:
    proc = subprocess.run(
        mcptape_cmd("diff", str(a), str(b), "--format", "html", *extra),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    out.write_text(proc.stdout)
    return proc.returncode, out


def test_the_page_of_two_releases_shows_each_change(
    browser: webdriver.Chrome, releases: tuple[Path, Path], tmp_path: Path
) -> None:
    code, page = diff_page(*releases, tmp_path / "diff.html")
    assert code == 1
    open_page(browser, page)
    assert console_problems(browser) == []
    assert browser.find_element(By.ID, "verdict").text.startswith("behaviour differs: 2 breaking")
    for section, kind, exchange, path in V1_TO_V2:
        where = "#surface-diffs .diff-row" if section in SURFACE else "#exchange-diffs .change"
        found = browser.find_elements(
            By.CSS_SELECTOR,
            f"{where}[data-exchange={json.dumps(exchange)}][data-path={json.dumps(path)}]",
        )
        assert [f.get_attribute("data-kind") for f in found] == [kind], (section, exchange, path)
    kinds = [
        r.get_attribute("data-kind")
        for r in browser.find_elements(By.CSS_SELECTOR, "#surface-diffs .diff-row")
    ]
    assert (
        kinds[: kinds.count("breaking")]
        == ["breaking"] * kinds.count("breaking")
        == ["breaking", "breaking"]
    )  # breaking first

    # A changed exchange side by side: the differing value highlighted in A and in B.
    card = browser.find_element(By.CSS_SELECTOR, ".exchange-card[data-exchange='tools/call fail']")
    marked_a = card.find_element(By.CSS_SELECTOR, ".mark-a[data-ptr='/response/error/code']").text
    marked_b = card.find_element(By.CSS_SELECTOR, ".mark-b[data-ptr='/response/error/code']").text
    assert marked_a != marked_b and {marked_a, marked_b} <= {"-32000", "-32001", "-32602", "-32603"}
    screenshot(browser, "diff-demo-releases")
    browser.execute_script("arguments[0].scrollIntoView()", card)
    screenshot(browser, "diff-demo-releases-exchanges")

    # The envelope is folded away until opened.
    envelope = browser.find_element(By.ID, "folded-envelope")
    assert envelope.get_attribute("open") is None and envelope.find_elements(
        By.CSS_SELECTOR, ".diff-row"
    )
    assert not envelope.find_element(By.CSS_SELECTOR, ".diff-row").is_displayed()
    envelope.find_element(By.TAG_NAME, "summary").click()
    assert envelope.find_element(By.CSS_SELECTOR, ".diff-row").is_displayed()
    assert console_problems(browser) == []


def test_two_equivalent_recordings_say_so(browser: webdriver.Chrome, tmp_path: Path) -> None:
    golden = ROOT / "cassettes" / "python-sdk"
    code, page = diff_page(
        golden / "2025-11-25/stdio.jsonl", golden / "2026-07-28/stdio.jsonl", tmp_path / "same.html"
    )
    assert code == 0
    open_page(browser, page)
    assert console_problems(browser) == []
    assert browser.find_element(By.ID, "verdict").text.startswith("equivalent")
    assert (
        browser.find_elements(By.CSS_SELECTOR, "#surface-diffs .diff-row, #exchange-diffs .change")
        == []
    )
    screenshot(browser, "diff-equivalent-eras")


def test_verify_draws_the_same_page_against_a_live_server(
    browser: webdriver.Chrome, releases: tuple[Path, Path], tmp_path: Path
) -> None:
    v1, _ = releases
    proc = subprocess.run(mcptape_cmd("verify", str(v1), "--format", "html", "--", sys.executable, str(DEMO_SERVER), "--v2"),
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    page = tmp_path / "verify.html"
    page.write_text(proc.stdout)
    open_page(browser, page)
    assert console_problems(browser) == []
    assert browser.find_element(By.ID, "verdict").text.startswith("behaviour differs: 2 breaking")
    removed = browser.find_element(
        By.CSS_SELECTOR, "#surface-diffs .diff-row[data-path='/tools/weather']"
    )
    assert removed.get_attribute("data-kind") == "breaking" and "removed" in removed.text
    assert (
        "demo_server.py --v2" in browser.find_element(By.TAG_NAME, "h1").text
    )  # side B: the live command
    screenshot(browser, "verify-demo-v2")


def test_the_same_change_in_nine_tools_is_one_card_and_a_relaxation_is_not_red(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    runs = ROOT / "cassettes" / "runs" / "everything"
    code, page = diff_page(
        runs / "2026.1.26/run-1.jsonl", runs / "2026.8.31/run-1.jsonl", tmp_path / "everything.html"
    )
    assert code == 1
    open_page(browser, page)
    assert console_problems(browser) == []
    assert (
        browser.find_element(By.ID, "verdict").text
        == "behaviour differs: 1 added, 9 relaxed, 15 cosmetic"
    )
    assert (
        browser.find_element(By.ID, "surface").text
        == "Server surface (25 differences in 6 entries)"
    )
    assert browser.find_elements(By.CSS_SELECTOR, ".diff-row[data-kind='removed']") == []
    (card,) = browser.find_elements(
        By.CSS_SELECTOR,
        "#surface-diffs .diff-row[data-path='/tools/*/inputSchema/additionalProperties']",
    )
    assert (card.get_attribute("data-kind"), card.get_attribute("data-rows")) == ("relaxed", "9")
    items = [i.text for i in card.find_elements(By.CSS_SELECTOR, ".item")]
    assert len(items) == 9 and items[0] == "echo" and "gzip-file-as-resource" in items
    kind = card.find_element(By.CSS_SELECTOR, ".kind")
    assert (
        kind.value_of_css_property("color") == "rgba(21, 128, 61, 1)"
    )  # --res, the colour of "added"
    assert browser.find_element(By.CSS_SELECTOR, ".count-box[data-count='relaxed'] b").text == "9"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#surface-diffs .diff-row")) == 6
    assert (
        browser.find_elements(By.ID, "folded-groups") == []
    )  # groups are cards, not a folded list
    screenshot(browser, "diff-everything-releases")


def test_an_input_required_call_shows_its_final_result(
    browser: webdriver.Chrome, tmp_path: Path
) -> None:
    from tests.diff.test_input_required import pair

    code, page = diff_page(*pair(tmp_path), tmp_path / "input.html")
    assert code == 1
    open_page(browser, page)
    assert console_problems(browser) == []
    card = browser.find_element(By.CSS_SELECTOR, ".exchange-card[data-exchange='tools/call greet']")
    ptr = "/response/result/content/0/text"
    assert card.find_element(By.CSS_SELECTOR, f".mark-a[data-ptr='{ptr}']").text == '"Hello, Ada!"'
    assert card.find_element(By.CSS_SELECTOR, f".mark-b[data-ptr='{ptr}']").text == '"Hi, Ada!"'
    rounds = card.find_elements(By.CSS_SELECTOR, ".j-fold[data-ptr='/rounds']")
    assert len(rounds) == 2 and all(
        "closed" in r.get_attribute("class") for r in rounds
    )  # folded, not hidden
    rounds[0].find_element(By.CSS_SELECTOR, ".j-toggle").click()
    asked = card.find_element(
        By.CSS_SELECTOR, "[data-ptr='/rounds/0/input_required/result/resultType']"
    )
    assert asked.text == '"input_required"'
    browser.execute_script("arguments[0].scrollIntoView()", card)
    screenshot(browser, "diff-input-required")
