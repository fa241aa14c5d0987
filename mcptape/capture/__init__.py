"""Capture: the transport-agnostic recorder and the shells that feed it (stdio, mitmproxy)."""
