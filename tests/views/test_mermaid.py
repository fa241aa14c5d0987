"""`mcptape show --format mermaid`: every golden cassette's diagram renders in headless Chromium with
the real mermaid package (tests/views/js, from its lock file), with the real characters and no
character that no installed font can draw."""

from __future__ import annotations

import html
import re
import subprocess
from pathlib import Path

import orjson
import pytest
from selenium import webdriver

from mcptape.views.mermaid import escape
from tests.conftest import ROOT, mcptape_cmd

from .browser import console_problems, open_page, screenshot

pytestmark = pytest.mark.e2e

GOLDEN = sorted((ROOT / "cassettes").glob("*/*/*.jsonl"))
MERMAID_JS = (
    ROOT / "tests" / "views" / "js" / "node_modules" / "mermaid" / "dist" / "mermaid.min.js"
)
ENTITY = re.compile(r"#(\d+);")
RENDER = """
const [source, done] = [arguments[0], arguments[arguments.length - 1]];
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
mermaid.render("diagram", source).then(({ svg }) => {
  document.getElementById("out").innerHTML = svg;
  const texts = (sel) => [...document.querySelectorAll(sel)].map((n) => n.textContent);
  done({ ok: true, messages: texts("#out .messageText"), notes: texts("#out .noteText"), all: document.getElementById("out").textContent });
}).catch((e) => done({ ok: false, error: String(e && e.message || e) }));
"""


def host_page(tmp_path: Path) -> Path:
    page = tmp_path / "mermaid.html"
    page.write_text(f'<!doctype html><meta charset="utf-8"><body style="background:#fff"><div id="out"></div>'
                    f'<script src="{MERMAID_JS.as_uri()}"></script><script>document.body.dataset.ready="1"</script>')  # fmt: skip
    return page


def drawable(chars: set[str]) -> set[str]:
    """The characters some installed font has a glyph for (fontconfig, which Chromium uses)."""
    out = set()
    for c in chars:
        proc = subprocess.run(
            ["fc-list", f":charset={ord(c):x}", "family"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        if proc.stdout.strip():
            out.add(c)
    return out


def labels(source: str) -> tuple[list[str], list[str]]:
    """What each message and note of the diagram should read once Mermaid has decoded its entities."""
    messages, notes = [], []
    for line in source.splitlines()[3:]:
        line = line.strip()
        text = (
            ENTITY.sub(lambda m: chr(int(m.group(1))), line.split(": ", 1)[1])
            if ": " in line
            else ""
        )
        if line.startswith("Note "):
            notes.append(text)
        elif "->>" in line:
            messages.append(text)
    return messages, notes


@pytest.mark.parametrize("golden", GOLDEN, ids=lambda p: "/".join(p.parts[-3:]))
def test_the_diagram_renders_with_real_characters(
    browser: webdriver.Chrome, golden: Path, tmp_path: Path
) -> None:
    assert MERMAID_JS.is_file(), "run scripts/install-test-deps (npm ci in tests/views/js)"
    source = subprocess.run(
        mcptape_cmd("show", str(golden), "-f", "mermaid"),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    open_page(browser, host_page(tmp_path))
    out = browser.execute_async_script(RENDER, source)
    assert out["ok"], out.get("error")
    assert console_problems(browser) == []
    want_messages, want_notes = labels(source)
    assert sorted(html.unescape(t) for t in out["messages"]) == sorted(want_messages)
    assert sorted(out["notes"]) == sorted(want_notes)
    text = out["all"]
    assert "＃" not in text and "∶" not in text  # the look-alikes of old
    assert any(re.search(r" #\d+", m) for m in out["messages"]), "ids are written with a real #"
    chars = set(text) - set(" \n")
    assert drawable(chars) == chars, f"no font draws {sorted(chars - drawable(chars))}"
    if "streamable-http" in golden.name:
        assert not any(m.startswith("http") for m in out["messages"]), (
            "transport-only rows are folded"
        )
        assert any("HTTP transport events folded" in n for n in out["notes"])
    browser.set_window_size(1500, 950)
    screenshot(browser, f"mermaid-{golden.parent.parent.name}-{golden.parent.name}-{golden.stem}")


def test_escape_keeps_every_character_mermaid_would_misread() -> None:
    label = 'a#b;c:d<e>f&g"h%i{j}k|l\\m`n'
    escaped = escape(label)
    assert not set(escaped) & set(';:<>&"%{}|\\`') - {";"} and escaped.count("#") == escaped.count(
        ";"
    )
    assert ENTITY.sub(lambda m: chr(int(m.group(1))), escaped) == label
    assert escape("two\nlines") == "two lines"


def test_two_client_sessions_are_kept_apart() -> None:
    source = subprocess.run(mcptape_cmd("show", str(ROOT / "cassettes/everything/2025-11-25/streamable-http.jsonl"), "-f", "mermaid"),
                            capture_output=True, text=True, timeout=60, check=True).stdout  # fmt: skip
    lines = [ln.strip() for ln in source.splitlines()]
    assert lines.count("end") == 2 and sum(ln.startswith("rect ") for ln in lines) == 2
    first, second = (
        lines.index("Note over C,S: client session 1"),
        lines.index("Note over C,S: client session 2"),
    )
    assert first < lines.index("end") < second
    assert orjson.dumps(lines)  # the diagram is text a JSON tool can carry
