"""Records one golden session over HTTP: server on a free port, `mcptape record --http` in front.

    python scripts/golden_http.py demo auto OUT.jsonl /mcp -- python examples/demo_server.py http {port}
    python scripts/golden_http.py everything auto OUT.jsonl /mcp -- node --require scripts/loopback.cjs .../index.js streamableHttp
    python scripts/golden_http.py demo ts OUT.jsonl /mcp -- python examples/demo_server.py http {port}

Mode `ts` drives the session with the TypeScript SDK 1.x client (tests/e2e/js/ts-client.mjs)
instead of the Python SDK's.

`{port}` in the server command (and the PORT environment variable) is the server's port.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).parent))
from golden_session import run

TS_CLIENT = Path(__file__).resolve().parent.parent / "tests" / "e2e" / "js" / "ts-client.mjs"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            sys.exit(f"golden_http: {proc.args} exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    sys.exit(f"golden_http: nothing listens on 127.0.0.1:{port} after {timeout} s")


def main(argv: list[str]) -> None:
    profile, mode, out, path = argv[:4]
    command = argv[argv.index("--") + 1 :]
    port, proxy_port = free_port(), free_port()
    server_cmd = [c.replace("{port}", str(port)) for c in command]
    server = subprocess.Popen(
        server_cmd,
        env=dict(os.environ, PORT=str(port)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_port(port, server)
        recorder = subprocess.Popen([sys.executable, "-m", "mcptape", "record", "--http", "-q", "-o", out,
                                     "--upstream", f"http://127.0.0.1:{port}{path}", "--port", str(proxy_port)])  # fmt: skip
        try:
            wait_port(proxy_port, recorder)
            url = f"http://127.0.0.1:{proxy_port}{path}"
            if mode == "ts":
                subprocess.run(["node", str(TS_CLIENT), "session", url], check=True)
            else:
                anyio.run(run, profile, mode, url)
        finally:
            recorder.send_signal(signal.SIGINT)
            recorder.wait(timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main(sys.argv[1:])
