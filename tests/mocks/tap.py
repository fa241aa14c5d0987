"""A transport wrapper that keeps every message both ways, in order, and writes them as a
cassette for `mcptape check` (what a mock sent, checked against its protocol version's schema)."""

from __future__ import annotations

from typing import Any

import orjson

from mcptape._version import __version__
from mcptape.cassette.model import HEADER_MARKER
from mcptape.check import check_bytes


class Tap:
    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.log: list[tuple[str, dict[str, Any]]] = []

    async def __aenter__(self) -> Any:
        read, write = await self.inner.__aenter__()
        log = self.log

        def dumped(item: Any) -> dict[str, Any]:
            out: dict[str, Any] = item.message.model_dump(
                by_alias=True, mode="json", exclude_unset=True
            )
            return out

        class W:
            async def send(self, item: Any) -> None:
                log.append(("client", dumped(item)))
                await write.send(item)

            async def aclose(self) -> None:
                await write.aclose()

            async def __aenter__(self) -> W:
                return self

            async def __aexit__(self, *exc: Any) -> None:
                await write.aclose()

        class R:
            def __aiter__(self) -> R:
                return self

            async def __anext__(self) -> Any:
                item = await read.__anext__()
                log.append(("server", dumped(item)))
                return item

            async def receive(self) -> Any:
                return await self.__anext__()

            async def aclose(self) -> None:
                await read.aclose()

            async def __aenter__(self) -> R:
                return self

            async def __aexit__(self, *exc: Any) -> None:
                await read.aclose()

        return R(), W()

    async def __aexit__(self, *exc: Any) -> Any:
        return await self.inner.__aexit__(*exc)

    def cassette(self) -> bytes:
        return cassette_of(self.log)

    def problems(self) -> list[str]:
        return problems_of(self.log)


def cassette_of(log: list[tuple[str, dict[str, Any]]]) -> bytes:
    """A stdio cassette of these messages, in order ("client" or "server", message)."""
    header = {
        HEADER_MARKER: 1,
        "mcptape_version": __version__,
        "transport": "stdio",
        "target": {"command": ["mock"]},
        "recorded_at": "2026-01-01T00:00:00.000Z",
        "redaction": {"enabled": False},
    }
    lines = [orjson.dumps(header)]
    for seq, (src, msg) in enumerate(log, 1):
        lines.append(
            orjson.dumps({"seq": seq, "t": 0.0, "kind": "message", "from": src, "msg": msg})
        )
    return b"\n".join(lines) + b"\n"


def problems_of(log: list[tuple[str, dict[str, Any]]]) -> list[str]:
    """What `mcptape check` finds in these messages (its secret scan aside)."""
    report = check_bytes(cassette_of(log), skip=frozenset({"secrets"}))
    return [f.render("mock") for f in report.findings]
