"""Record an MCP server on HTTP through mitmproxy: `mcptape record --http` in front of it.

    python examples/record_http.py [OUT.jsonl]

Starts the example server on Streamable HTTP (a free port on 127.0.0.1), puts
`mcptape record --http` in front of it, runs a session with the official SDK client
against the proxy's URL, stops the recorder with Ctrl-C's signal, and shows the cassette.
By hand it is:

    python examples/demo_server.py http 8000 &
    mcptape record --http --upstream http://127.0.0.1:8000/mcp --host 127.0.0.1 --port 8080 -o out.jsonl
    # clients use http://127.0.0.1:8080/mcp; Ctrl-C ends the recording
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio
from mcp import Client

HERE = Path(__file__).resolve().parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, deadline: float = 30) -> None:
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    sys.exit(f"nothing listens on 127.0.0.1:{port}")


async def session(url: str) -> None:
    async with Client(url) as client:
        print(f"connected through the proxy, protocol {client.protocol_version}")
        progress = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append(message)

        result = await client.call_tool("add", {"a": 1, "b": 2}, progress_callback=on_progress)
        print("add(1, 2) =", result.content[0].text, "progress:", progress)  # type: ignore[union-attr]


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "cassettes/http-demo.jsonl"
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(HERE / "demo_server.py"), "http", str(port)], stderr=subprocess.DEVNULL
    )
    try:
        wait_port(port)
        recorder = subprocess.Popen(
            [sys.executable, "-m", "mcptape", "record", "--http", "--upstream", f"http://127.0.0.1:{port}/mcp", "-o", out],
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert recorder.stderr
        # "mcptape record: proxying http://127.0.0.1:PORT/mcp -> ..."
        line = recorder.stderr.readline()
        found = re.search(r"(http://127\.0\.0\.1:\d+/mcp)", line)
        if not found:
            sys.exit(f"unexpected recorder output: {line!r}")
        print(line.strip())
        anyio.run(session, found.group(1))
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=30)
    subprocess.run([sys.executable, "-m", "mcptape", "show", out], check=True)


if __name__ == "__main__":
    main()
