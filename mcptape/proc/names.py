"""Cassette name templates for `mcptape record -o`: `{server}`, `{time}`, `{pid}`, `{n}`.

    mcptape record -o 'cassettes/{server}-{time}-{pid}.jsonl' -- python server.py

`{server}` is the server's name (the script's stem, or the URL's host), `{time}` the local
start time (`20261201-142503`), `{pid}` the recorder's process id, `{n}` the smallest number
from 1 whose file does not exist yet. A name without fields is used as it is.
"""

from __future__ import annotations

import json
import os
import re
import string
from datetime import datetime
from pathlib import Path

from mcptape.errors import ConfigError

FIELDS = ("server", "time", "pid", "n")


def fields_of(template: str) -> list[str]:
    """The field names in `template`.

    Raises:
        ConfigError: an unknown field or a lone brace.
    """
    try:
        names = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError as exc:
        raise ConfigError(
            f"-o {json.dumps(template)}: {exc} (write {{{{ and }}}} for literal braces)"
        ) from None
    unknown = [f for f in names if f not in FIELDS]
    if unknown:
        raise ConfigError(f"-o {json.dumps(template)}: unknown field {{{unknown[0]}}}; "
                          f"the fields are {', '.join('{' + f + '}' for f in FIELDS)}")  # fmt: skip
    return names


def expand(
    template: str, server: str, *, now: datetime | None = None, pid: int | None = None
) -> Path:
    """The cassette path `template` names for this launch (absolute)."""
    names = fields_of(template)
    if not names:
        return Path(template).absolute()
    values: dict[str, object] = {
        "server": re.sub(r"[^A-Za-z0-9_.\-]+", "-", server).strip("-.") or "server",
        "time": (now or datetime.now()).strftime("%Y%m%d-%H%M%S"),
        "pid": os.getpid() if pid is None else pid,
    }
    if "n" not in names:
        return Path(template.format(**values)).absolute()
    n = 1
    while True:
        path = Path(template.format(**values, n=n)).absolute()
        if (
            not path.exists() and not path.with_name(path.name + ".partial").exists()
        ):  # nor being recorded
            return path
        n += 1
