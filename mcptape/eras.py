"""The two protocol eras, mapped onto each other: one translation for diff, verify and replay.

Pure, no I/O. The legacy era (2024-11-05 .. 2025-11-25) opens a session with `initialize`;
the stateless 2026-07-28 era carries everything per request. What one says, the other says
differently, and this module is the only place that knows how:

- the era of a version, and the version a server of the other era would negotiate;
- the server's self-description: an `initialize` result <-> a `server/discover` result
  (serverInfo, capabilities, instructions; `protocolVersion` <-> `supportedVersions`);
- the client's identity: handshake capabilities and clientInfo, and the level set with
  `logging/setLevel`, <-> the reserved `_meta` keys of every 2026-07-28 request;
- what one era's messages carry and the other's never do, one table (`ERA_MEMBERS`): results
  with the 2026 envelope (`resultType`, caching hints, serverInfo in `_meta`) for a 2026-07-28
  client, without it for a legacy one; resource-not-found -32002 (legacy) as -32602;
- input: an `input_required` result's `inputRequests` and the retry's `inputResponses` <->
  legacy server-to-client requests (elicitation, sampling, roots) and the client's answers;
- subscriptions: the URIs of a `subscriptions/listen` filter <-> `resources/subscribe` calls,
  its list-changed flags <-> the `listChanged` capabilities, and its stream's notifications
  (tagged with the listen's id, first an acknowledgement) <-> a legacy server's untagged ones.
"""

from __future__ import annotations

from functools import cache
from typing import Any, NamedTuple

from mcptape.versions import (
    HANDSHAKE_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_LOG_LEVEL,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    MODERN,
    is_modern,
)

__all__ = [
    "CACHEABLE",
    "CHANGE_NOTIFICATIONS",
    "ENVELOPE_RESULT_KEYS",
    "ERA_MEMBERS",
    "LEGACY",
    "MODERN_ERA",
    "Identity",
    "InputPair",
    "Member",
    "acknowledged",
    "describe_servable",
    "discover_result",
    "era_of",
    "honoured",
    "identity_meta",
    "initialize_result",
    "input_pairs",
    "input_requests",
    "is_input_required",
    "legacy_version",
    "listen_filter",
    "listen_uris",
    "members",
    "modern_error",
    "modern_result",
    "reserved",
    "retry_params",
    "servable",
    "server_description",
    "set_level",
    "strip_envelope",
    "strip_identity",
    "tagged",
    "take",
    "untagged",
    "wanted",
]

LEGACY = "legacy"
"""The era with an `initialize` handshake (2024-11-05 .. 2025-11-25)."""
MODERN_ERA = "modern"
"""The stateless era (2026-07-28 and later)."""

RESERVED_PREFIXES = ("io.modelcontextprotocol/", "modelcontextprotocol.io/")

INPUT_REQUIRED = "input_required"


def era_of(version: str | None) -> str:
    """`"modern"` for 2026-07-28 and later, else `"legacy"` (None: legacy, the older default)."""
    return MODERN_ERA if is_modern(version) else LEGACY


def reserved(key: str) -> bool:
    """True for `_meta` keys the protocol reserves (`io.modelcontextprotocol/...`)."""
    return key.startswith(RESERVED_PREFIXES)


def legacy_version(asked: Any) -> str:
    """What a server of the 2026-07-28 release that also speaks the handshake answers to
    `initialize`: the client's version when it is a handshake version, else the latest one."""
    return (
        asked if isinstance(asked, str) and asked in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]
    )


def servable(versions: list[str], cross_era: bool = True) -> dict[str, str]:
    """Which clients a cassette recorded at `versions` serves: era -> "recorded" or "translated"."""
    recorded = {era_of(v) for v in versions}
    out = {era: "recorded" for era in (LEGACY, MODERN_ERA) if era in recorded}
    if cross_era and out:
        for era in (LEGACY, MODERN_ERA):
            out.setdefault(era, "translated")
    return out


def describe_servable(serves: dict[str, str]) -> str:
    """`legacy (recorded) and 2026-07-28 (translated) clients`."""
    names = {LEGACY: "legacy", MODERN_ERA: "2026-07-28"}
    parts = [f"{names[era]} ({how})" for era, how in serves.items()]
    return " and ".join(parts) + " clients" if parts else "no client (nothing was recorded)"


# -- the server's self-description -------------------------------------------------------------


def server_description(method: str, result: Any) -> tuple[Any, dict[str, Any]]:
    """(serverInfo or None, {"capabilities", "instructions"} present) of an `initialize` or
    `server/discover` result."""
    if not isinstance(result, dict):
        return None, {}
    if method == "server/discover":
        meta = result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    else:
        info = result.get("serverInfo")
    return info, {k: result[k] for k in ("capabilities", "instructions") if k in result}


def initialize_result(discover: dict[str, Any], asked: Any) -> dict[str, Any]:
    """The `initialize` result a server with this `server/discover` result gives a legacy client."""
    info, fields = server_description("server/discover", discover)
    out: dict[str, Any] = {
        "protocolVersion": legacy_version(asked),
        "capabilities": fields.get("capabilities", {}),
    }
    out["serverInfo"] = (
        info if isinstance(info, dict) else {"name": "mcptape-replay", "version": "0"}
    )
    if "instructions" in fields:
        out["instructions"] = fields["instructions"]
    return out


def discover_result(initialize: dict[str, Any]) -> dict[str, Any]:
    """The `server/discover` result of a server whose `initialize` result this is."""
    info, fields = server_description("initialize", initialize)
    out: dict[str, Any] = {"supportedVersions": list(MODERN)}
    out["capabilities"] = fields.get("capabilities", {})
    if "instructions" in fields:
        out["instructions"] = fields["instructions"]
    return modern_result("server/discover", out, info)


# -- the client's identity ----------------------------------------------------------------------


class Identity(NamedTuple):
    """What a client says about itself: once in the handshake (legacy), or on every request."""

    capabilities: Any = None
    info: Any = None
    level: str | None = None
    """The log level asked for: `logging/setLevel` (legacy) or the per-request `_meta` logLevel."""

    @classmethod
    def of_initialize(cls, params: dict[str, Any], level: str | None = None) -> Identity:
        return cls(params.get("capabilities"), params.get("clientInfo"), level)

    @classmethod
    def of_meta(cls, meta: dict[str, Any]) -> Identity:
        level = meta.get(META_LOG_LEVEL)
        return cls(
            meta.get(META_CLIENT_CAPABILITIES),
            meta.get(META_CLIENT_INFO),
            level if isinstance(level, str) else None,
        )


def identity_meta(version: str | None, who: Identity) -> dict[str, Any]:
    """The reserved `_meta` keys a 2026-07-28 request carries for this client."""
    meta: dict[str, Any] = {
        META_PROTOCOL_VERSION: version or MODERN[0],
        META_CLIENT_CAPABILITIES: who.capabilities or {},
    }
    if who.info is not None:
        meta[META_CLIENT_INFO] = who.info
    if who.level is not None:
        meta[META_LOG_LEVEL] = who.level
    return meta


def strip_identity(params: Any) -> Any:
    """Request params without the reserved `_meta` keys (and without `_meta` when nothing is left)."""
    if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
        return params
    out = {k: v for k, v in params.items() if k != "_meta"}
    kept = {k: v for k, v in params["_meta"].items() if not reserved(k)}
    if kept:
        out["_meta"] = kept
    return out


def set_level(level: str, msg_id: Any = 0) -> dict[str, Any]:
    """The legacy `logging/setLevel` request that stands for a per-request log level."""
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "logging/setLevel",
        "params": {"level": level},
    }


# -- what each era adds -----------------------------------------------------------------------


class Member(NamedTuple):
    """A member that one era's messages carry and the other era's never do: taken off a message
    translated for the other era, put on one translated for this one. `kind`: `"result"`,
    `"request"` or `"notification"` (their params); `path` from there (`"*"`: each item of a
    list); `methods` that carry it (None: all); `value` a translation puts there (None: it only
    comes off; `SERVER_INFO`: the recorded server's serverInfo)."""

    era: str
    kind: str
    path: tuple[str, ...]
    methods: frozenset[str] | None = None
    value: Any = None


SERVER_INFO = "<serverInfo>"
"""`Member.value` of the serverInfo a 2026-07-28 result carries: the recorded server's own."""

CACHEABLE = frozenset({"server/discover", "tools/list", "prompts/list", "resources/list",
                       "resources/templates/list", "resources/read"})  # fmt: skip
"""Methods whose complete 2026-07-28 results must carry the caching hints."""

ERA_MEMBERS: tuple[Member, ...] = (
    Member(MODERN_ERA, "result", ("resultType",), None, "complete"),
    Member(MODERN_ERA, "result", ("ttlMs",), CACHEABLE, 0),
    Member(MODERN_ERA, "result", ("cacheScope",), CACHEABLE, "private"),
    Member(MODERN_ERA, "result", ("_meta", META_SERVER_INFO), None, SERVER_INFO),
    Member(MODERN_ERA, "request", ("_meta", META_PROTOCOL_VERSION)),
    Member(MODERN_ERA, "request", ("_meta", META_CLIENT_CAPABILITIES)),
    Member(MODERN_ERA, "request", ("_meta", META_CLIENT_INFO)),
    Member(MODERN_ERA, "request", ("_meta", META_LOG_LEVEL)),
    Member(MODERN_ERA, "notification", ("_meta", META_SUBSCRIPTION_ID)),
    Member(LEGACY, "result", ("tools", "*", "execution"), frozenset({"tools/list"})),
)
"""What each era's messages carry that the other's never do: the one table the translations
(`strip_envelope`, `modern_result`, `tagged`, `identity_meta`) follow and a check can test.
A `resultType` other than `"complete"` is behaviour and stays; the caching hints go only on
complete results, made up as no caching (the recording says nothing about freshness). A
reserved `_meta` key this table does not name comes off a result for a legacy client too."""


ENVELOPE_RESULT_KEYS = tuple(m.path[0] for m in ERA_MEMBERS if m.methods is CACHEABLE)
"""Result members that only the 2026-07-28 envelope has (caching hints)."""


@cache
def members(era: str, kind: str, method: str | None = None) -> tuple[Member, ...]:
    """The table's members of `era` on messages of `kind` (of `method`; None: of any method)."""
    return tuple(
        m
        for m in ERA_MEMBERS
        if m.era == era
        and m.kind == kind
        and (method is None or m.methods is None or method in m.methods)
    )


def take(obj: Any, path: tuple[str, ...], at: str, taken: dict[str, Any]) -> Any:
    """`obj` without what is at `path` (copied where it changes); what came off, by pointer."""
    if not path:
        return obj
    if path[0] == "*":
        if not isinstance(obj, list):
            return obj
        return [take(v, path[1:], f"{at}/{i}", taken) for i, v in enumerate(obj)]
    if not isinstance(obj, dict) or path[0] not in obj:
        return obj
    key, out = path[0], dict(obj)
    where = f"{at}/{key.replace('~', '~0').replace('/', '~1')}"
    if len(path) == 1:
        taken[where] = out.pop(key)
    else:
        out[key] = take(out[key], path[1:], where, taken)
    return out


def without(era: str, kind: str, method: str | None, body: Any) -> tuple[Any, dict[str, Any]]:
    """`body` (a result, or params) without `era`'s members of the table; what was taken off."""
    taken: dict[str, Any] = {}
    for m in members(era, kind, method):
        body = take(body, m.path, f"/{kind}", taken)
    return body, taken


def strip_envelope(result: Any) -> tuple[Any, dict[str, Any]]:
    """(the result as a legacy server sends it, what was taken off by pointer under /result).

    The 2026-07-28 members of `ERA_MEMBERS` go, whatever the method: `resultType: "complete"`,
    the caching hints, serverInfo, and any other reserved `_meta` key; a `_meta` left empty
    goes too. Another `resultType` (`input_required`) is kept: it is behaviour.
    """
    if not isinstance(result, dict):
        return result, {}
    kept = result.get("resultType", "complete") != "complete"
    out, taken = without(MODERN_ERA, "result", None, dict(result))  # (a copy the caller may change)
    if kept:
        out = {**out, "resultType": taken.pop("/result/resultType")}
    meta = out.get("_meta")
    if isinstance(meta, dict):
        for k, v in meta.items():
            if reserved(k):
                taken[f"/result/_meta/{k.replace('~', '~0').replace('/', '~1')}"] = v
        plain = {k: v for k, v in meta.items() if not reserved(k)}
        out = {k: v for k, v in out.items() if k != "_meta"}
        if plain:
            out["_meta"] = plain
    return out, taken


def modern_result(method: str, result: dict[str, Any], server_info: Any = None) -> dict[str, Any]:
    """A legacy server's result as a 2026-07-28 server gives it: the 2026-07-28 members of
    `ERA_MEMBERS` (`resultType`; on complete cacheable results the caching hints; serverInfo
    in `_meta` when the recorded server's is known), and none of the legacy-only ones."""
    out, _ = without(LEGACY, "result", method, result)
    out = {"resultType": "complete", **out}
    complete = out["resultType"] == "complete"
    for m in members(MODERN_ERA, "result", method):
        if m.path == ("resultType",) or (m.methods is not None and not complete):
            continue
        if m.value == SERVER_INFO:
            if isinstance(server_info, dict):
                meta = out.get("_meta")
                out["_meta"] = {**(meta if isinstance(meta, dict) else {}), m.path[1]: server_info}
        else:
            out.setdefault(m.path[0], m.value)
    return out


RESOURCE_NOT_FOUND_LEGACY = -32002
"""Resource not found until 2025-11-25; -32602 (invalid params) since."""


def modern_error(method: str, error: dict[str, Any]) -> dict[str, Any]:
    """A legacy server's error as a 2026-07-28 server gives it (resource not found is -32602)."""
    if method.startswith("resources/") and error.get("code") == RESOURCE_NOT_FOUND_LEGACY:
        return {**error, "code": -32602}
    return error


# -- input requests ------------------------------------------------------------------------------


class InputPair(NamedTuple):
    """One question the server put to the client, and the client's answer (None: unanswered)."""

    key: str
    method: Any
    params: Any
    answer: Any


def is_input_required(result: Any) -> bool:
    return isinstance(result, dict) and result.get("resultType") == INPUT_REQUIRED


def input_requests(result: Any) -> dict[str, dict[str, Any]]:
    """The `inputRequests` of an `input_required` result, by key (empty for any other result)."""
    if not is_input_required(result):
        return {}
    requests = result.get("inputRequests")
    return (
        {str(k): v for k, v in requests.items() if isinstance(v, dict)}
        if isinstance(requests, dict)
        else {}
    )


def input_pairs(result: Any, retry_params: Any) -> list[InputPair]:
    """Each input request of an `input_required` result with the answer the retry carried."""
    responses = retry_params.get("inputResponses") if isinstance(retry_params, dict) else None
    return [
        InputPair(
            key,
            req.get("method"),
            req.get("params"),
            responses.get(key) if isinstance(responses, dict) else None,
        )
        for key, req in input_requests(result).items()
    ]


def retry_params(
    params: dict[str, Any], result: dict[str, Any], responses: dict[str, Any]
) -> dict[str, Any]:
    """The params of the retry of a request that got `input_required`: the answers, the state echoed."""
    out = dict(params)
    out["inputResponses"] = responses
    if "requestState" in result:
        out["requestState"] = result["requestState"]
    else:
        out.pop("requestState", None)
    return out


# -- subscriptions --------------------------------------------------------------------------------


def listen_uris(params: Any) -> list[Any]:
    """The resource URIs a `subscriptions/listen` asks about: each one a legacy `resources/subscribe`."""
    filt = params.get("notifications") if isinstance(params, dict) else None
    uris = filt.get("resourceSubscriptions") if isinstance(filt, dict) else None
    return list(uris) if isinstance(uris, list) else []


LISTEN_FLAGS = {
    "toolsListChanged": ("notifications/tools/list_changed", "tools"),
    "promptsListChanged": ("notifications/prompts/list_changed", "prompts"),
    "resourcesListChanged": ("notifications/resources/list_changed", "resources"),
}
"""A `subscriptions/listen` filter flag -> the change notification it asks for, and the capability
family whose `listChanged` a legacy server declares when it sends that notification."""
RESOURCE_UPDATED = "notifications/resources/updated"
CHANGE_NOTIFICATIONS = frozenset({RESOURCE_UPDATED, *(m for m, _ in LISTEN_FLAGS.values())})
"""Server notifications that 2026-07-28 delivers only on a listen stream that asked for them."""


def listen_filter(params: Any) -> dict[str, Any]:
    """The `notifications` filter of a `subscriptions/listen` request (empty when absent)."""
    filt = params.get("notifications") if isinstance(params, dict) else None
    return filt if isinstance(filt, dict) else {}


def honoured(filt: dict[str, Any], capabilities: Any) -> dict[str, Any]:
    """What a server with these (legacy handshake) capabilities honours of a listen filter: the
    list-changed flags of the families it declares `listChanged` for, and the resource URIs when
    it declares `resources.subscribe`."""
    caps = capabilities if isinstance(capabilities, dict) else {}
    out: dict[str, Any] = {}
    for flag, (_, family) in LISTEN_FLAGS.items():
        declared = caps.get(family)
        if filt.get(flag) is True and isinstance(declared, dict) and declared.get("listChanged"):
            out[flag] = True
    resources = caps.get("resources")
    uris = listen_uris({"notifications": filt})
    if uris and isinstance(resources, dict) and resources.get("subscribe"):
        out["resourceSubscriptions"] = uris
    return out


def wanted(filt: dict[str, Any], msg: Any) -> bool:
    """True when a listen stream with this (honoured) filter carries this server notification."""
    if not isinstance(msg, dict):
        return False
    method = msg.get("method")
    if method == RESOURCE_UPDATED:
        params = msg.get("params")
        uri = params.get("uri") if isinstance(params, dict) else None
        return uri in listen_uris({"notifications": filt})
    return any(filt.get(flag) is True and m == method for flag, (m, _) in LISTEN_FLAGS.items())


def tagged(msg: dict[str, Any], listen_id: Any) -> dict[str, Any]:
    """A notification as a 2026-07-28 listen stream carries it: tagged with the listen's id."""
    params: dict[str, Any] = msg["params"] if isinstance(msg.get("params"), dict) else {}
    meta: dict[str, Any] = params["_meta"] if isinstance(params.get("_meta"), dict) else {}
    return {**msg, "params": {**params, "_meta": {**meta, META_SUBSCRIPTION_ID: listen_id}}}


def untagged(msg: dict[str, Any]) -> dict[str, Any]:
    """A listen stream's notification as a legacy server sends it (no reserved `_meta` keys)."""
    if "params" not in msg:
        return msg
    return {**msg, "params": strip_identity(msg["params"])}


def acknowledged(listen_id: Any, filt: dict[str, Any]) -> dict[str, Any]:
    """The first message of a listen stream: what the server honours of the filter."""
    return tagged(
        {
            "jsonrpc": "2.0",
            "method": "notifications/subscriptions/acknowledged",
            "params": {"notifications": filt},
        },
        listen_id,
    )
