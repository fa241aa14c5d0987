"""Fixtures of the view tests: one headless Chromium per test process."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from selenium import webdriver

from .browser import chromium


@pytest.fixture(scope="session")
def browser() -> Iterator[webdriver.Chrome]:
    with chromium() as driver:
        driver.set_script_timeout(60)
        yield driver
