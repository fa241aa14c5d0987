"""What each handshake revision added to the messages, and a message as an older one sends it.

Pure, no I/O. `mcptape.eras` maps the two eras onto each other; inside the legacy era
(2024-11-05 .. 2025-11-25) a revision differs from the one before by what it added: members
(tool `annotations` and progress `message` in 2025-03-26; `title` on tools, prompts, resources
and serverInfo, a tool's `outputSchema` and a result's `structuredContent` in 2025-06-18;
icons, a tool's `execution`, the `tasks` capability in 2025-11-25) and server requests
(`elicitation/create` in 2025-06-18, its URL mode in 2025-11-25). `ADDED` lists the members,
`as_of` takes off a message what its revision does not have (the path walk of the era table,
`eras.take`), `sendable` says whether a server request exists in a revision, and `sent_as_of`
does both for a server notification or request. A declared mock answers each client in the
revision it negotiated (`mcptape.mocks.server`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mcptape.eras import take
from mcptape.versions import is_at_least

__all__ = ["ADDED", "REQUESTS_SINCE", "Added", "as_of", "sendable", "sent_as_of"]


class Added(NamedTuple):
    """A member that revision `since` added to messages of `kind` (`"result"`, or the params of
    a `"notification"` or server `"request"`) of `methods`, at `path` (`"*"`: each item of a list)."""

    since: str
    kind: str
    path: tuple[str, ...]
    methods: frozenset[str]


_INIT = frozenset({"initialize"})
_TOOLS = frozenset({"tools/list"})
_LISTS = {
    "tools": _TOOLS,
    "prompts": frozenset({"prompts/list"}),
    "resources": frozenset({"resources/list"}),
    "resourceTemplates": frozenset({"resources/templates/list"}),
}

ADDED: tuple[Added, ...] = (
    Added("2025-03-26", "result", ("tools", "*", "annotations"), _TOOLS),
    Added("2025-03-26", "result", ("capabilities", "completions"), _INIT),
    Added("2025-03-26", "notification", ("message",), frozenset({"notifications/progress"})),
    *(Added("2025-06-18", "result", (k, "*", m), v) for k, v in _LISTS.items() for m in ("title", "_meta")),
    Added("2025-06-18", "result", ("prompts", "*", "arguments", "*", "title"), _LISTS["prompts"]),
    Added("2025-06-18", "result", ("tools", "*", "outputSchema"), _TOOLS),
    Added("2025-06-18", "result", ("structuredContent",), frozenset({"tools/call"})),
    Added("2025-06-18", "result", ("serverInfo", "title"), _INIT),
    *(Added("2025-11-25", "result", (k, "*", "icons"), v) for k, v in _LISTS.items()),
    Added("2025-11-25", "result", ("tools", "*", "execution"), _TOOLS),
    *(Added("2025-11-25", "result", ("serverInfo", m), _INIT) for m in ("icons", "description", "websiteUrl")),
    Added("2025-11-25", "result", ("capabilities", "tasks"), _INIT),
    Added("2025-11-25", "request", ("mode",), frozenset({"elicitation/create"})),
    *(Added("2025-11-25", "request", (m,), frozenset({"sampling/createMessage"})) for m in ("tools", "toolChoice")),
)  # fmt: skip
"""The members each revision added, as the revisions' schemas have them."""

REQUESTS_SINCE: dict[str, str] = {"elicitation/create": "2025-06-18"}
"""Server requests younger than 2024-11-05, by the revision that added them."""


def as_of(version: str, kind: str, method: str, body: Any) -> Any:
    """`body` (a result, or params) of a `method` message of `kind` without the members revisions
    after `version` added (copied where it changes). An unknown `version` keeps them all."""
    for added in ADDED:
        if added.kind == kind and method in added.methods and not is_at_least(version, added.since):
            body = take(body, added.path, f"/{kind}", {})
    return body


def sendable(version: str, method: str, params: Any) -> bool:
    """True when a server of `version` can send the client request `method` with `params`: the
    method exists there (elicitation since 2025-06-18), and so does its mode (URL since 2025-11-25)."""
    since = REQUESTS_SINCE.get(method)
    if since is not None and not is_at_least(version, since):
        return False
    url = isinstance(params, dict) and params.get("mode") == "url"
    return not (method == "elicitation/create" and url and not is_at_least(version, "2025-11-25"))


def sent_as_of(version: str, msg: dict[str, Any]) -> dict[str, Any] | None:
    """A server notification or request as a server of `version` sends it (None: a request that
    revision does not have)."""
    method, params, request = str(msg.get("method")), msg.get("params"), "id" in msg
    if request and not sendable(version, method, params):
        return None
    if not isinstance(params, dict):
        return msg
    return {
        **msg,
        "params": as_of(version, "request" if request else "notification", method, params),
    }
