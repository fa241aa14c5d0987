"""Processes and descriptors: running a server as a child (`child`), a mcptape child that
announces its URL (`background`), what is still unread on a pipe (`fds`), which run a launch
belongs to (`runs`), resolving a server command (`commands`) and filling a cassette name's
`{server}`, `{time}`, `{pid}`, `{n}` (`names`).

Nothing is re-exported: each module is imported by its own path.
"""
