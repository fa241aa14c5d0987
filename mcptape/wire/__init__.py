"""Pure wire-level codecs: JSON-RPC payloads, newline-delimited framing, server-sent events."""
