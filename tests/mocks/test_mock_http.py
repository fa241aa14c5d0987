"""`mock.url`: a mock with function answers, served over HTTP from a thread of the test
process, to the SDK client in both eras; and `mcptape serve` of a mock file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client

import mcptape
from tests.replay.recorded import ERAS

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_mock_url_serves_function_answers_over_http(mode: str) -> None:
    pytest.importorskip("uvicorn")
    with mcptape.mock("web") as mock:

        @mock.tool()
        def add(a: int, b: int) -> int:
            """Adds."""
            return a + b

        mock.tool("slow", "late", delay=0.3)
        with anyio.fail_after(30):
            async with Client(mock.url, mode=mode) as c:
                assert c.protocol_version == ERAS[mode]
                assert [t.name for t in (await c.list_tools()).tools] == ["add", "slow"]
                result = await c.call_tool("add", {"a": 2, "b": 40})
                assert result.content[0].text == "42"
                start = anyio.current_time()
                assert (await c.call_tool("slow", {})).content[0].text == "late"
                assert anyio.current_time() - start >= 0.3
        add.assert_called_once_with(a=2, b=40)


@pytest.mark.parametrize("mode", sorted(ERAS))
async def test_mcptape_serve_takes_a_mock_file(tmp_path: Path, mode: str) -> None:
    pytest.importorskip("uvicorn")
    from mcptape.proc.background import Background

    path = tmp_path / "demo.json"
    tree = {"mcptape_mock": 1, "tools": [{"name": "add", "answers": [{"result": 3}]}]}
    path.write_text(json.dumps(tree))
    served = Background(
        [sys.executable, "-m", "mcptape", "serve", "--port", "0", str(path)], what="mcptape serve"
    )
    try:
        with anyio.fail_after(30):
            async with Client(served.url, mode=mode) as c:
                assert c.protocol_version == ERAS[mode]
                assert (await c.call_tool("add", {"a": 1})).content[0].text == "3"
    finally:
        assert served.stop() == 0
