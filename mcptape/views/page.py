"""A self-contained HTML page: the project's template with its CSS, its script and the data inlined.

Nothing is fetched when the page opens (it works from disk and as a CI artifact). The data goes
in a `<script type="application/json">` block with every `<` written as `\\u003c`, so no value
in a cassette can close the block or inject markup; the script builds the page from it.
"""

from __future__ import annotations

import html
import re
from importlib import resources
from typing import Any

import orjson

ASSETS = resources.files("mcptape.views") / "assets"
_PLACEHOLDER = re.compile(r"@(?:TITLE|STYLE|DATA|SCRIPT)@")


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def embed(data: Any) -> str:
    """JSON for a `<script type="application/json">` block: valid JSON that never contains `<`."""
    text = orjson.dumps(data, default=repr, option=orjson.OPT_NON_STR_KEYS).decode()
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render(title: str, data: Any, script: str) -> str:
    """The page: the template with the title, the stylesheet, the data and the scripts filled in."""
    template = _asset("page.html")
    parts = {
        "@TITLE@": html.escape(title),
        "@STYLE@": _asset("page.css"),
        "@DATA@": embed(data),
        "@SCRIPT@": _asset("common.js") + "\n" + _asset(script),
    }
    return _PLACEHOLDER.sub(lambda m: parts[m.group(0)], template)  # one pass: no value is re-read
