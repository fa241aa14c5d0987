"""The floor for any Python MCP mock: a few lines that answer every request with a canned result."""

import sys

import orjson

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    msg = orjson.loads(line)
    if "id" in msg and "method" in msg:
        out.write(
            b'{"jsonrpc":"2.0","id":'
            + orjson.dumps(msg["id"])
            + b',"result":{"content":[{"type":"text","text":"ok"}],"isError":false}}\n'
        )
        out.flush()
