"""docs/reliability.md cites the tests that prove each guarantee: every cited test exists."""

from __future__ import annotations

import re

from tests.conftest import ROOT

CITATION = re.compile(r"`(tests/[\w/]+\.py)?(?:::(\w+))?`")


def test_every_test_cited_in_the_reliability_doc_exists() -> None:
    text = (ROOT / "docs" / "reliability.md").read_text()
    current = None
    cited = 0
    for m in CITATION.finditer(text):
        path, name = m.groups()
        if path:
            current = path
            assert (ROOT / path).is_file(), path
        if name:
            assert current is not None, name
            source = (ROOT / current).read_text()
            assert re.search(rf"^(async )?def {name}\(", source, re.M), f"{current}::{name}"
            cited += 1
    assert cited >= 30
