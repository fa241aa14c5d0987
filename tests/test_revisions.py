"""`mcptape.revisions`: a message as a server of an older handshake revision sends it."""

from __future__ import annotations

from mcptape.revisions import as_of, sendable, sent_as_of

TOOLS = {
    "tools": [
        {
            "name": "weather",
            "title": "Weather",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True},
            "icons": [{"src": "https://example.com/w.png"}],
            "execution": {"taskSupport": "optional"},
        }
    ]
}


def test_a_tool_listing_loses_what_later_revisions_added() -> None:
    def keys(version: str) -> list[str]:
        return sorted(as_of(version, "result", "tools/list", TOOLS)["tools"][0])

    assert keys("2024-11-05") == ["inputSchema", "name"]
    assert keys("2025-03-26") == ["annotations", "inputSchema", "name"]
    assert keys("2025-06-18") == ["annotations", "inputSchema", "name", "outputSchema", "title"]
    assert keys("2025-11-25") == sorted(TOOLS["tools"][0])
    assert keys("2099-01-01") == sorted(TOOLS["tools"][0])  # unknown: newer than all
    assert "title" in TOOLS["tools"][0]  # (copied, never changed in place)


def test_results_and_notifications_of_other_methods() -> None:
    call = {"content": [], "structuredContent": {"t": 1}, "isError": False}
    assert as_of("2025-03-26", "result", "tools/call", call) == {"content": [], "isError": False}
    assert as_of("2025-06-18", "result", "tools/call", call) == call
    progress = {"progressToken": "p", "progress": 1, "message": "half"}
    assert "message" not in as_of("2024-11-05", "notification", "notifications/progress", progress)
    assert as_of("2025-03-26", "notification", "notifications/progress", progress) == progress
    init = {
        "protocolVersion": "2024-11-05",
        "serverInfo": {"name": "s", "version": "1", "title": "S"},
    }
    assert as_of("2024-11-05", "result", "initialize", init)["serverInfo"] == {
        "name": "s",
        "version": "1",
    }
    prompts = {"prompts": [{"name": "p", "title": "P", "arguments": [{"name": "a", "title": "A"}]}]}
    assert as_of("2025-03-26", "result", "prompts/list", prompts) == {
        "prompts": [{"name": "p", "arguments": [{"name": "a"}]}]
    }


def test_server_requests_a_revision_has() -> None:
    form = {"message": "m", "requestedSchema": {"type": "object"}}
    assert not sendable("2025-03-26", "elicitation/create", form)
    assert sendable("2025-06-18", "elicitation/create", form)
    assert not sendable("2025-06-18", "elicitation/create", {"mode": "url", "url": "u"})
    assert sendable("2025-11-25", "elicitation/create", {"mode": "url", "url": "u"})
    assert sendable("2024-11-05", "roots/list", {})
    assert as_of("2025-06-18", "request", "elicitation/create", {**form, "mode": "form"}) == form


def test_a_server_message_as_a_revision_sends_it() -> None:
    ask = {"jsonrpc": "2.0", "id": "m", "method": "elicitation/create", "params": {"message": "m"}}
    assert sent_as_of("2025-03-26", ask) is None
    assert sent_as_of("2025-06-18", ask) == ask
    step = {
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progress": 1, "message": "x"},
    }
    assert sent_as_of("2024-11-05", step) == {**step, "params": {"progress": 1}}
