"""mcptape: record, replay and diff Model Context Protocol traffic."""

__version__ = "0.1.0"
