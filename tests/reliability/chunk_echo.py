"""The fastest possible stdio peer for the soak test: echoes stdin to stdout chunk by chunk."""

import os

while True:
    chunk = os.read(0, 1 << 17)
    if not chunk:
        break
    view = memoryview(chunk)
    while view:
        view = view[os.write(1, view) :]
