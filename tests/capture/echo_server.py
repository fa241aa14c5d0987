"""A stand-in server for recorder tests: echoes every stdin line back to stdout, verbatim.

Special lines: `stderr TEXT` writes TEXT to stderr instead; `exit N` exits with code N;
`crash` dies from SIGKILL (as a crashed server would); `big N` writes a JSON line of N bytes.
"""

import os
import signal
import sys

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    if line.startswith(b"stderr "):
        sys.stderr.buffer.write(line[7:])
        sys.stderr.buffer.flush()
        continue
    if line.startswith(b"exit "):
        sys.exit(int(line[5:]))
    if line.strip() == b"crash":
        os.kill(os.getpid(), signal.SIGKILL)
    if line.startswith(b"big "):
        n = int(line[4:])
        head, tail = b'{"jsonrpc":"2.0","id":1,"result":{"text":"', b'"}}'
        out.write(head + b"x" * (n - len(head) - len(tail)) + tail + b"\n")
        out.flush()
        continue
    out.write(line)
    out.flush()
