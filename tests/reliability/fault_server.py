"""A stand-in stdio MCP server that misbehaves on request, for the fault tests.

Every request is answered `{"result": {"method": ...}}` (a notification is not answered),
except these methods:
- `test/exit` {"code": N}: exits with code N without answering (a server that quits early);
- `test/hang`: stops reading and answering, forever (a server that never answers);
- `test/crash`: sends a progress notification, then dies from SIGKILL (a crash mid-request).
Leaves at end of input with code 0.
"""

import json
import os
import signal
import sys
import threading

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    try:
        msg = json.loads(line)
    except ValueError:
        continue
    if not isinstance(msg, dict) or "id" not in msg or "method" not in msg:
        continue
    method = msg["method"]
    if method == "test/exit":
        sys.exit(int(msg.get("params", {}).get("code", 1)))
    if method == "test/hang":
        threading.Event().wait()
    if method == "test/crash":
        note = {
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": {"progressToken": msg["id"], "progress": 1},
        }
        out.write(json.dumps(note).encode() + b"\n")
        out.flush()
        os.kill(os.getpid(), signal.SIGKILL)
    out.write(
        json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"method": method}}).encode()
        + b"\n"
    )
    out.flush()
