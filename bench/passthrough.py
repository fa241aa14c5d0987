"""The floor for any pass-through process: the recorder's pipe pumps with the recording taken out.

`python bench/passthrough.py CMD...` runs CMD and copies stdin/stdout between it and us with
one thread per direction, exactly as `mcptape record` moves bytes, but records nothing.
The difference between this and `mcptape record` is what recording itself costs; the
difference between this and the server alone is what any extra process hop costs.
"""

import os
import subprocess
import sys
import threading

proc = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
assert proc.stdin and proc.stdout


def pump(src: int, dst: int, close: bool) -> None:
    while chunk := os.read(src, 1 << 17):
        os.write(dst, chunk)
    if close and proc.stdin:
        proc.stdin.close()


threading.Thread(target=pump, args=(0, proc.stdin.fileno(), True), daemon=True).start()
threading.Thread(target=pump, args=(proc.stdout.fileno(), 1, False), daemon=True).start()
sys.exit(proc.wait())
