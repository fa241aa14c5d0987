"""Views of cassettes and diffs for people: the timeline, Mermaid diagrams, self-contained HTML pages.

The top presentation layer: it reads cassettes, pairing and the diff engine's report; nothing
below imports it.
"""
