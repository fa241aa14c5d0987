"""Maintenance commands: `prune`, `redact` and `fmt` over cassettes on disk (`commands`), and
wrapping an agent host's config in `mcptape record` and back (`agents`).

Nothing is re-exported: each module is imported by its own path.
"""
