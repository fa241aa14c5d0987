"""`mock.url`: a mock with function answers, served over HTTP from a thread of the test
process, to the SDK client in both eras."""

from __future__ import annotations

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
