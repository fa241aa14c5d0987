"""The HTML page of a big cassette in headless Chromium: how long until it is interactive, and
how long a filter takes (the issue's bound: 10,000 exchanges open and filter without freezing).

    python -m bench --only views

The cassette is bench/diff_scale's: 10,000 tools/call exchanges, each with two progress
notifications and a log line (50,000 messages). Times: writing the page (`show --format html`),
loading it until its script has drawn the first screen, filtering by method and by text, and
opening one message's full JSON. Needs Debian's chromium and chromium-driver (scripts/install-test-deps).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import ROOT, Row, mcptape, pick
from .diff_scale import build

MEASURE = """
const [needle, done] = [arguments[0], arguments[arguments.length - 1]];
const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
(async () => {
  const out = { ready: performance.getEntriesByType("navigation")[0].domContentLoadedEventEnd };
  const method = document.getElementById("filter-method"), text = document.getElementById("filter-text");
  let t0 = performance.now();
  method.value = "notifications/progress"; method.dispatchEvent(new Event("change"));
  await frame();
  out.method = performance.now() - t0;
  out.method_rows = Number(document.getElementById("row-count").dataset.shown);
  method.value = ""; method.dispatchEvent(new Event("change"));
  t0 = performance.now();
  text.value = needle; text.dispatchEvent(new Event("input"));
  const deadline = performance.now() + 30000;
  while (document.getElementById("row-count").dataset.shown !== "1" && performance.now() < deadline) await frame();
  out.text = performance.now() - t0;
  text.value = ""; text.dispatchEvent(new Event("input"));
  while (Number(document.getElementById("row-count").dataset.shown) < 1000 && performance.now() < deadline) await frame();
  out.text_rows = Number(document.getElementById("row-count").dataset.shown);
  t0 = performance.now();
  window.mcptapeSelect(Math.floor(out.text_rows / 2));
  await frame();
  out.open = performance.now() - t0;
  done(out);
})();
"""


def _page(n: int, tmp: Path) -> tuple[Path, float]:
    cassette = tmp / "big.jsonl"
    cassette.write_bytes(build(n, 40, False))
    page = tmp / "big.html"
    t0 = time.perf_counter()
    subprocess.run(
        mcptape("show", str(cassette), "--format", "html", "-o", str(page)), check=True, timeout=600
    )
    return page, time.perf_counter() - t0


def _measure(page: Path, runs: int, needle: str) -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from tests.views.browser import chromium, open_page  # the same headless Chromium as the tests

    samples: list[dict[str, Any]] = []
    with chromium() as driver:
        driver.set_script_timeout(120)
        for _ in range(runs):
            t0 = time.perf_counter()
            open_page(driver, page)
            loaded = time.perf_counter() - t0
            out = driver.execute_async_script(MEASURE, needle)
            out["interactive"] = loaded
            samples.append(out)
    return {k: statistics.median(s[k] for s in samples) for k in samples[0]}


def views_suite(level: int) -> list[Row]:
    n = pick(level, 500, 10_000, 10_000)
    with tempfile.TemporaryDirectory(prefix="mcptape-bench-views-") as tmp:
        page, write_s = _page(n, Path(tmp))
        size = page.stat().st_size
        m = _measure(page, pick(level, 1, 2, 3), f"working on {n // 2}")  # one log line has it
    limit = max(2.0, 4.0 * n / 10_000)  # a floor for the browser's own start-up on small pages
    return [
        Row(f"views: show --format html, {n:,} exchanges", write_s, None, "s", "< 10 s", write_s < 10,
            note=f"page {size / 1e6:.1f} MB"),
        Row(f"views: page of {n:,} exchanges interactive in Chromium", m["interactive"], None, "s",
            f"< {limit:.2g} s", m["interactive"] < limit, note=f"DOMContentLoaded {m['ready']:.0f} ms"),
        Row(f"views: filter {n * 5:,} rows by method", m["method"] / 1000, None, "s", "< 0.5 s", m["method"] < 500,
            note=f"{m['method_rows']:,.0f} rows left"),
        Row(f"views: filter {n * 5:,} rows by text", m["text"] / 1000, None, "s", "< 1 s", m["text"] < 1000,
            note="includes the 120 ms typing debounce"),
        Row("views: open one message's full JSON", m["open"] / 1000, None, "s", "< 0.2 s", m["open"] < 200),
    ]  # fmt: skip


if __name__ == "__main__":
    for row in views_suite(2):
        print(f"{row.target}: {row.value:.3f} {row.unit} (goal {row.goal}) {row.note}")
