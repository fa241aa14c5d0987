"""Recorded server messages as the replay sends them: what each needs rewritten for the live
client, and its bytes encoded once, with holes where the client's request id and progress
token go. Pure.

A replayed message differs from the recorded one in at most a few places: a response's `id`;
a progress notification's `progressToken`; a cancellation's `requestId` and a subscription id
in `_meta` (both the client's request id). `rewrite` makes the message the client gets (a dict,
for the shells that pass dicts on); `template` encodes it once with unguessable placeholder
strings where the client's values go and cuts the bytes there, so that `Template.fill` gives
exactly `orjson.dumps(rewrite(...))` for any id and token by splicing their JSON in, without
encoding the rest again (a large result is encoded once per index, not once per play).
"""

from __future__ import annotations

import re
import secrets
from typing import Any, NamedTuple

import orjson

from mcptape._perf import trimmed
from mcptape.versions import META_SUBSCRIPTION_ID

KEEP, PROGRESS, CANCELLED, SUBSCRIPTION = range(4)
"""What `rewrite` changes in a recorded server message: nothing, the progress token, the
cancelled request's id, the subscription id in `_meta` (see `rewrite_kind`)."""

_NONCE = secrets.token_hex(8)
CLIENT_ID = f"\x00mcptape-{_NONCE}-id\x00"
"""Stands for the client's request id while a template is made (no recording can contain it)."""
TOKEN = f"\x00mcptape-{_NONCE}-token\x00"
"""Stands for the client's progress token while a template is made."""
_HOLES = re.compile(b"(" + re.escape(orjson.dumps(CLIENT_ID)) + b"|" + re.escape(orjson.dumps(TOKEN)) + b")")  # fmt: skip
_ID_HOLE = orjson.dumps(CLIENT_ID)


def rewrite_kind(msg: dict[str, Any]) -> int:
    """What the replay rewrites in this recorded server message (`KEEP`, `PROGRESS`, ...)."""
    method = msg.get("method")
    body = msg.get("result" if method is None else "params")
    if not isinstance(body, dict):
        return KEEP
    if method == "notifications/progress" and "progressToken" in body:
        return PROGRESS
    if method == "notifications/cancelled":
        return CANCELLED
    meta = body.get("_meta")
    if isinstance(meta, dict) and META_SUBSCRIPTION_ID in meta:
        return SUBSCRIPTION
    return KEEP


def rewrite(msg: dict[str, Any], kind: int, client_id: Any, token: Any) -> dict[str, Any] | None:
    """The client's progress token and request id in place of the recorded ones (`kind` from
    `rewrite_kind(msg)`); None to drop a progress notification the client did not ask for."""
    if kind == KEEP:
        return msg
    if kind == PROGRESS:
        if token is None:
            return None  # this client asked for no progress
        return {**msg, "params": {**msg["params"], "progressToken": token}}
    if kind == CANCELLED:
        return {**msg, "params": {**msg["params"], "requestId": client_id}}
    part = "result" if msg.get("method") is None else "params"
    body = msg[part]
    return {**msg, part: {**body, "_meta": {**body["_meta"], META_SUBSCRIPTION_ID: client_id}}}


class Template(NamedTuple):
    """A message's bytes cut where the client's values go: pieces[0] hole pieces[1] hole ..."""

    pieces: tuple[bytes, ...]
    ids: tuple[bool, ...]
    """Per hole: True for the client's request id, False for its progress token."""

    def fill(self, client_id: Any, token: Any) -> bytes:
        """The message's JSON (no newline) with `client_id` and `token` in the holes."""
        pieces = self.pieces
        if len(pieces) == 1:
            return pieces[0]
        if len(pieces) == 2:
            return b"".join(
                (pieces[0], orjson.dumps(client_id if self.ids[0] else token), pieces[1])
            )
        out = [pieces[0]]
        for is_id, piece in zip(self.ids, pieces[1:], strict=True):
            out.append(orjson.dumps(client_id if is_id else token))
            out.append(piece)
        return b"".join(out)


def template(msg: dict[str, Any], kind: int, response: bool) -> Template:
    """The template of `rewrite(msg, kind, id, token)` (a response: with `"id"` the client's too)."""
    holed = {**msg, "id": CLIENT_ID} if response else msg
    rewritten = rewrite(holed, kind, CLIENT_ID, TOKEN)
    assert rewritten is not None  # (a progress notification is only filled for a client's token)
    parts = _HOLES.split(orjson.dumps(rewritten))
    if len(parts) == 1:  # no hole: the whole of orjson's buffer, which it does not shrink
        parts = [trimmed(parts[0])]
    return Template(tuple(parts[::2]), tuple(p == _ID_HOLE for p in parts[1::2]))


class Templates:
    """One exchange's templates, by position in its items (the response: after the last)."""

    __slots__ = ("_made",)

    def __init__(self, size: int) -> None:
        self._made: list[Template | None] = [None] * size

    def template(
        self, pos: int, msg: dict[str, Any], kind: int, response: bool = False
    ) -> Template:
        made = self._made[pos]
        if made is None:
            made = self._made[pos] = template(msg, kind, response)
        return made


class Encodings:
    """An index's templates, made for an exchange when it plays the second time: the first
    play encodes each message once anyway (a template costs that much to make), and most
    replays play each exchange once. Repeats (`allow_repeats`, a new session, the HTTP shell's
    engines sharing the index) then splice instead of encoding again."""

    __slots__ = ("_played", "_templates")

    def __init__(self) -> None:
        self._played: set[int] = set()
        self._templates: dict[int, Templates] = {}

    def of(self, exchange: int, size: int) -> Templates | None:
        """The templates of exchange `exchange` (`size` messages with its response), None on its
        first play."""
        made = self._templates.get(exchange)
        if made is None:
            if exchange not in self._played:
                self._played.add(exchange)
                return None
            made = self._templates[exchange] = Templates(size)
        return made
