"""The two protocol eras, mapped onto each other: one translation for diff, verify and replay.

Pure, no I/O. The legacy era (2024-11-05 .. 2025-11-25) opens a session with `initialize`;
the stateless 2026-07-28 era carries everything per request. What one says, the other says
differently, and this module is the only place that knows how:

- the era of a version, and the version a server of the other era would negotiate;
- the server's self-description: an `initialize` result <-> a `server/discover` result
  (serverInfo, capabilities, instructions; `protocolVersion` <-> `supportedVersions`);
- the client's identity: handshake capabilities and clientInfo, and the level set with
  `logging/setLevel`, <-> the reserved `_meta` keys of every 2026-07-28 request;
- results: the 2026-only envelope (`resultType: "complete"`, `ttlMs`, `cacheScope`, reserved
  `_meta` keys such as serverInfo) taken off, so a result reads as a legacy server's; and
  resource-not-found -32002 (legacy) as -32602;
- input: an `input_required` result's `inputRequests` and the retry's `inputResponses` <->
  legacy server-to-client requests (elicitation, sampling, roots) and the client's answers;
- subscriptions: the URIs of a `subscriptions/listen` filter <-> `resources/subscribe` calls,
  its list-changed flags <-> the `listChanged` capabilities, and its stream's notifications
  (tagged with the listen's id, first an acknowledgement) <-> a legacy server's untagged ones.
"""

from __future__ import annotations

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
    "CHANGE_NOTIFICATIONS",
    "ENVELOPE_RESULT_KEYS",
    "LEGACY",
    "MODERN_ERA",
    "Identity",
    "InputPair",
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
    "untagged",
    "wanted",
]

LEGACY = "legacy"
"""The era with an `initialize` handshake (2024-11-05 .. 2025-11-25)."""
MODERN_ERA = "modern"
"""The stateless era (2026-07-28 and later)."""

ENVELOPE_RESULT_KEYS = ("ttlMs", "cacheScope")
"""Result members that only the 2026-07-28 envelope has (caching hints)."""

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
    out: dict[str, Any] = {"resultType": "complete", "supportedVersions": list(MODERN)}
    out["capabilities"] = fields.get("capabilities", {})
    if "instructions" in fields:
        out["instructions"] = fields["instructions"]
    out.update({"ttlMs": 0, "cacheScope": "private"})
    if isinstance(info, dict):
        out["_meta"] = {META_SERVER_INFO: info}
    return out


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


# -- results ------------------------------------------------------------------------------------


def strip_envelope(result: Any) -> tuple[Any, dict[str, Any]]:
    """(the result as a legacy server sends it, what was taken off by pointer under /result).

    `resultType: "complete"`, the caching hints and reserved `_meta` keys go; a `_meta` left
    empty goes too. Another `resultType` (`input_required`) is kept: it is behaviour.
    """
    if not isinstance(result, dict):
        return result, {}
    out = dict(result)
    taken: dict[str, Any] = {}
    if out.get("resultType", "complete") == "complete" and "resultType" in out:
        taken["/result/resultType"] = out.pop("resultType")
    for k in ENVELOPE_RESULT_KEYS:
        if k in out:
            taken[f"/result/{k}"] = out.pop(k)
    meta = out.get("_meta")
    if isinstance(meta, dict):
        for k, v in meta.items():
            if reserved(k):
                taken[f"/result/_meta/{k.replace('~', '~0').replace('/', '~1')}"] = v
        plain = {k: v for k, v in meta.items() if not reserved(k)}
        if plain:
            out["_meta"] = plain
        else:
            del out["_meta"]
    return out, taken


CACHEABLE = frozenset(
    {
        "server/discover",
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
    }
)
"""Methods whose 2026-07-28 results must carry the caching hints."""


def modern_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A legacy server's result as a 2026-07-28 server gives it: `resultType`, and on cacheable
    results the caching hints (no caching: the recording says nothing about freshness)."""
    out = {"resultType": "complete", **result}
    if method in CACHEABLE and out["resultType"] == "complete":
        out.setdefault("ttlMs", 0)
        out.setdefault("cacheScope", "private")
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
