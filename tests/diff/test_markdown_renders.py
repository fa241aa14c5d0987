"""`diff --format markdown` read by a real CommonMark/GFM renderer (markdown-it-py, tables on):
values with backticks and pipes stay whole in their code spans, and a heading a CI script appends
after the report still renders as a heading."""

from __future__ import annotations

import subprocess
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from mcptape.diff.report import render_markdown
from mcptape.diff.types import (
    MISSING,
    Change,
    Difference,
    DiffOptions,
    DiffReport,
    Impact,
    Section,
    Side,
)
from tests.conftest import ROOT, mcptape_cmd

SIDE = Side("a.jsonl", "legacy", "2025-11-25", 5, 4)
GFM = MarkdownIt("commonmark").enable("table")


class Codes(HTMLParser):
    """The text of every <code> element, in order."""

    def __init__(self) -> None:
        super().__init__()
        self.codes: list[str] = []
        self._depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "code":
            self._depth += 1
            self.codes.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "code":
            self._depth -= 1

    def handle_data(self, data: str) -> None:
        if self._depth:
            self.codes[-1] += data


def codes(markdown: str) -> list[str]:
    parser = Codes()
    parser.feed(GFM.render(markdown))
    return parser.codes


def report(*diffs: Difference, envelope: tuple[Difference, ...] = ()) -> DiffReport:
    return DiffReport(SIDE, SIDE, DiffOptions(), list(diffs), list(envelope))


TICKS = Difference(Section.RESULT, Change.CHANGED, Impact.BEHAVIOUR, "tools/call run", "/result/content/0/text",
                   "run `ls` now", "``a`` | b", "text changed")  # fmt: skip
EDGE = Difference(
    Section.RESULT,
    Change.CHANGED,
    Impact.BEHAVIOUR,
    "tools/call x",
    "/result/x",
    "`",
    " padded ",
    "",
)
ENV = Difference(
    Section.ENVELOPE,
    Change.ADDED,
    Impact.ENVELOPE,
    "tools/list",
    "/result/`ttl`",
    MISSING,
    0,
    "",
    4,
)


def test_backticks_and_pipes_stay_inside_their_code_spans() -> None:
    spans = codes(render_markdown(report(TICKS, EDGE, envelope=(ENV,))))
    assert '"run `ls` now"' in spans and '"``a`` | b"' in spans
    assert '"`"' in spans and '" padded "' in spans and "/result/`ttl`" in spans


@pytest.mark.parametrize("with_envelope", [False, True], ids=["table-last", "details-last"])
def test_a_heading_appended_after_the_report_still_renders(with_envelope: bool) -> None:
    md = render_markdown(report(TICKS, envelope=(ENV,) if with_envelope else ()))
    assert md.rstrip().endswith("</details>") is with_envelope
    before = GFM.render(md)
    after = GFM.render(md + "### next cassette\n")
    assert after == before + "<h3>next cassette</h3>\n"


def test_the_real_report_of_two_golden_cassettes_takes_an_appended_heading() -> None:
    golden = ROOT / "cassettes" / "python-sdk"
    proc = subprocess.run(mcptape_cmd("diff", str(golden / "2025-11-25/stdio.jsonl"), str(golden / "2026-07-28/stdio.jsonl"), "--format", "markdown"),
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "</details>" in proc.stdout
    after = GFM.render(proc.stdout + "### cassettes/next.jsonl\n")
    assert after == GFM.render(proc.stdout) + "<h3>cassettes/next.jsonl</h3>\n"
