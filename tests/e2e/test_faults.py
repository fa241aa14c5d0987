"""End to end: the official `mcp` SDK client sees each injected fault as the real failure it stands for.

Over stdio (`mcptape replay --fault ...` as the client's server command) and in process
(`replay_transport(faults=...)`), on the golden demo cassette (2026-07-28). Plus the Python
API, the pytest marker and `mcptape replay --dry-run`.
"""

from __future__ import annotations

import json
import subprocess
from typing import Any

import anyio
import pytest
from mcp import Client, MCPError, StdioServerParameters
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT
from pydantic import ValidationError

from mcptape.api import use_cassette
from mcptape.replay.memory import replay_transport
from tests.conftest import ROOT, mcptape_cmd
from tests.sdk_helpers import accept_name

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]
pytest_plugins = ["pytester"]
DEMO = ROOT / "cassettes" / "python-sdk" / "2026-07-28" / "stdio.jsonl"
"""The demo server's standard session, 2026-07-28: add (with progress), fail, divide, greet, readme, review."""
CLIENT: dict[str, Any] = {
    "mode": "auto",
    "elicitation_callback": accept_name,
    "log_level": "info",
    "cache": None,
}
"""Options that make the SDK client's requests match the recorded ones."""
TRANSPORTS = ["memory", "stdio"]


def transport(kind: str, *rules: dict[str, Any], allow_repeats: bool = True) -> Any:
    """The demo cassette with fault rules, in process or as a `mcptape replay` subprocess."""
    if kind == "memory":
        return replay_transport(DEMO, faults=list(rules), allow_repeats=allow_repeats, on_note=None)
    args = ["-q", *(["--allow-repeats"] if allow_repeats else [])]
    for rule in rules:
        args += ["--fault", json.dumps(rule)]
    cmd = mcptape_cmd("replay", *args, str(DEMO))
    return StdioServerParameters(command=cmd[0], args=cmd[1:])


class Faults:
    """A message handler that keeps what the transport handed the session as exceptions."""

    def __init__(self) -> None:
        self.seen: list[Exception] = []
        self.arrived = anyio.Event()

    async def __call__(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.seen.append(message)
            self.arrived.set()


async def add(client: Client, **kw: Any) -> Any:
    return await client.call_tool("add", {"a": 1, "b": 2}, **kw)


@pytest.fixture(params=TRANSPORTS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


async def test_error_raises_mcp_error_with_the_given_code(kind: str) -> None:
    rule = {
        "tool": "add",
        "action": "error",
        "code": -32050,
        "message": "upstream down",
        "data": {"retry": True},
    }
    with anyio.fail_after(20):
        async with Client(transport(kind, rule), **CLIENT) as client:
            with pytest.raises(MCPError) as info:
                await add(client)
            assert (info.value.error.code, info.value.error.message, info.value.error.data) == (
                -32050,
                "upstream down",
                {"retry": True},
            )
            assert (await client.call_tool("greet", {})).content[
                0
            ].text == "Hello, Ada!"  # other calls unharmed


async def test_tool_error_is_an_is_error_result(kind: str) -> None:
    with anyio.fail_after(20):
        async with Client(
            transport(kind, {"tool": "add", "action": "tool_error", "text": "quota exceeded"}),
            **CLIENT,
        ) as client:
            result = await add(client)
    assert result.is_error is True and result.content[0].text == "quota exceeded"


async def test_nth_fails_only_that_call(kind: str) -> None:
    with anyio.fail_after(20):
        async with Client(
            transport(kind, {"tool": "add", "nth": 2, "action": "error", "code": -32000}), **CLIENT
        ) as client:
            assert (await add(client)).content[0].text == "3"
            with pytest.raises(MCPError, match=r"Internal error \(injected by mcptape\)"):
                await add(client)
            assert (await add(client)).content[0].text == "3"


async def test_drop_makes_the_call_time_out_and_the_session_goes_on(kind: str) -> None:
    with anyio.fail_after(20):
        async with Client(
            transport(kind, {"tool": "add", "nth": 1, "action": "drop"}), **CLIENT
        ) as client:
            with pytest.raises(MCPError) as info:
                await add(client, read_timeout_seconds=0.3)
            assert info.value.error.code == REQUEST_TIMEOUT
            assert (await add(client)).content[0].text == "3"


@pytest.mark.parametrize(
    ("rule", "says"),
    [
        ({"action": "malformed", "line": "Loading weights..."}, "Invalid JSON"),
        ({"action": "invalid"}, "JSONRPCResponse.jsonrpc"),
        ({"action": "truncate"}, "EOF while parsing"),
    ],
)
async def test_garbage_reaches_the_message_handler_and_the_call_times_out(
    kind: str, rule: dict[str, Any], says: str
) -> None:
    faults = Faults()
    with anyio.fail_after(20):
        async with Client(
            transport(kind, {"tool": "add", "nth": 1, **rule}), message_handler=faults, **CLIENT
        ) as client:
            with pytest.raises(MCPError) as info:
                await add(client, read_timeout_seconds=0.3)
            await faults.arrived.wait()
            assert info.value.error.code == REQUEST_TIMEOUT
            assert (await add(client)).content[
                0
            ].text == "3"  # one bad line does not end the session
    assert (
        len(faults.seen) == 1
        and isinstance(faults.seen[0], ValidationError)
        and says in str(faults.seen[0])
    )


async def test_a_stray_line_before_the_answer_does_not_lose_it(kind: str) -> None:
    faults = Faults()
    with anyio.fail_after(20):
        async with Client(
            transport(kind, {"tool": "add", "action": "malformed", "keep_answer": True}),
            message_handler=faults,
            **CLIENT,
        ) as client:
            assert (await add(client)).content[0].text == "3"
            await faults.arrived.wait()
    assert isinstance(faults.seen[0], ValidationError)


async def test_disconnect_closes_the_connection_mid_exchange(kind: str) -> None:
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    with anyio.fail_after(20):
        async with Client(
            transport(kind, {"tool": "add", "action": "disconnect"}), **CLIENT
        ) as client:
            with pytest.raises(MCPError) as info:
                await add(client, progress_callback=on_progress)
            assert info.value.error.code == CONNECTION_CLOSED
            with pytest.raises(MCPError) as again:
                await client.call_tool("greet", {})
            assert again.value.error.code == CONNECTION_CLOSED
    assert progress == [1, 2]  # the recorded progress came before the hang-up


async def test_a_delayed_answer_comes_after_a_later_prompt_one(kind: str) -> None:
    done: list[str] = []
    with anyio.fail_after(20):
        async with Client(
            transport(kind, {"tool": "add", "action": "delay", "seconds": 0.4}), **CLIENT
        ) as client:
            greeted = anyio.Event()

            async def slow() -> None:
                start = anyio.current_time()
                assert (await add(client)).content[0].text == "3"
                done.append("add")
                assert anyio.current_time() - start >= 0.4
                assert greeted.is_set()

            async def prompt() -> None:
                assert (await client.call_tool("greet", {})).content[0].text == "Hello, Ada!"
                done.append("greet")
                greeted.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(slow)
                tg.start_soon(prompt)
    assert done == ["greet", "add"]


async def test_jittered_delays_are_the_same_on_every_run() -> None:
    got = []
    for _ in range(2):
        notes: list[str] = []
        t = replay_transport(DEMO, faults=[{"method": "tools/call", "action": "delay", "seconds": [0.01, 0.05], "seed": 4}], allow_repeats=True,
                             on_note=lambda n, notes=notes: notes.append(n.text))  # fmt: skip
        with anyio.fail_after(20):
            async with Client(t, **CLIENT) as client:
                for _ in range(3):
                    await add(client)
        got.append(notes)
    assert got[0] == got[1] and len(got[0]) == 3 and len(set(got[0])) == 3


async def test_use_cassette_takes_faults_in_process_and_in_its_command() -> None:
    rule = {"tool": "add", "action": "error", "code": -32042}
    with anyio.fail_after(20):
        async with use_cassette(DEMO, faults=[rule], client=CLIENT) as tape:
            with pytest.raises(MCPError, match="injected") as info:
                await add(tape.client)
            assert info.value.error.code == -32042
            cmd = tape.command
            assert cmd[cmd.index("--fault") + 1] == json.dumps(
                {"action": "error", "method": "tools/call", "name": "add", "code": -32042}
            )
            async with Client(
                StdioServerParameters(command=cmd[0], args=cmd[1:]), **CLIENT
            ) as other:
                with pytest.raises(MCPError) as info:
                    await add(other)
                assert info.value.error.code == -32042


def test_the_pytest_marker_takes_faults(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_marker=f"""
import pytest
from mcp import MCPError

@pytest.fixture
def anyio_backend():
    return "asyncio"

async def elicit(ctx, params):
    return None

@pytest.mark.anyio
@pytest.mark.mcptape(cassette={str(DEMO)!r}, client={{"log_level": "info", "elicitation_callback": elicit, "cache": None}},
                     faults=[{{"tool": "add", "action": "tool_error", "text": "sorry"}}])
async def test_add_fails(mcptape):
    result = await mcptape.client.call_tool("add", {{"a": 1, "b": 2}})
    assert result.is_error and result.content[0].text == "sorry"

@pytest.mark.anyio
@pytest.mark.mcptape(cassette={str(DEMO)!r}, faults=[{{"action": "explode"}}])
async def test_bad_rule(mcptape):
    pass
"""
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "anyio", timeout=120)
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(["*fault rule 1: action 'explode' is not one of*"])


def test_dry_run_lists_the_hits_without_serving() -> None:
    rules = [
        '{"tool": "add", "action": "disconnect"}',
        '{"method": "tools/*", "every": 3, "action": "delay", "seconds": 1}',
    ]
    proc = subprocess.run([*mcptape_cmd("replay", "--dry-run", *[a for r in rules for a in ("--fault", r)]), str(DEMO)],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[1:] == [
        "rule 1: disconnect on tools/call add",
        "    #5 tools/call add  (match 1)",
        "rule 2: delay 1s on tools/*, every=3",
        "    #10 tools/call echo  (match 3, 1.000s)",
        "    #17 tools/call greet  (match 6, 1.000s)",
    ]
    assert proc.stdout.splitlines()[0].endswith(
        "stdio.jsonl: 2 fault rule(s), as if the client made the recorded requests in order"
    )


def test_a_bad_rule_is_a_usage_error() -> None:
    proc = subprocess.run([*mcptape_cmd("replay", "--fault", '{"action": "drop", "nth": 0}'), str(DEMO)],
                          capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)  # fmt: skip
    assert proc.returncode == 2 and "nth=0: must be a whole number >= 1" in proc.stderr
