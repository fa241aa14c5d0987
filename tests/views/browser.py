"""A real headless Chromium (Debian's `chromium` and `chromium-driver`, driven by Selenium) for the view tests.

scripts/install-test-deps installs both (`make test` runs it). Screenshots go to test-artifacts/views/
(git-ignored) to be looked at.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service

from tests.conftest import ROOT

ARTIFACTS = ROOT / "test-artifacts" / "views"
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--window-size=1500,950",
)  # fmt: skip
"""Without the background-networking flags a closed network makes Chromium hang at start."""


def _need(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        raise RuntimeError(
            f"{program} is not installed: run scripts/install-test-deps (as root), as `make test` does"
        )
    return path


@contextmanager
def chromium() -> Iterator[webdriver.Chrome]:
    """One headless Chromium with a fresh profile, its console log kept."""
    options = Options()
    options.binary_location = _need("chromium")
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    with tempfile.TemporaryDirectory(prefix="mcptape-chromium-") as profile:
        options.add_argument(f"--user-data-dir={profile}")
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver = webdriver.Chrome(options=options, service=Service(_need("chromedriver")))
        try:
            yield driver
        finally:
            driver.quit()


def console_problems(driver: webdriver.Chrome) -> list[dict[str, Any]]:
    """Console errors and warnings since the last call (the log is drained)."""
    return [e for e in driver.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]


def open_page(driver: webdriver.Chrome, path: Path) -> None:
    """Loads a page from disk and waits until its script has drawn it."""
    console_problems(driver)
    driver.get(path.resolve().as_uri())
    driver.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "const t0 = performance.now();"
        "(function wait() { if (document.body.dataset.ready === '1' || performance.now() - t0 > 20000) done();"
        " else requestAnimationFrame(wait); })();"
    )


def screenshot(driver: webdriver.Chrome, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    driver.save_screenshot(str(path))
    return path
