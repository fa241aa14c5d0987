"""The import graph stays one-directional: no cycles, no import from a lower floor to a higher one;
and the pure floors do no I/O of their own.

Every module of the package sits on one floor of `FLOORS` (the most specific entry wins).
A module may import modules of its own floor and the floors below, never above: the core
never imports an I/O shell, a shell never imports the API or the CLI. Imports are read with
`ast` from the source (those under `if TYPE_CHECKING:` included: a type is a dependency
too), so the test needs nothing importable. A new module must be given a floor here.

The base and core floors are pure: none of their modules imports an I/O module (`IO_MODULES`)
or calls `open(`; a module that does I/O of its own sits on the storage floor (cassette files)
or the shell floor (processes, sockets, threads, caches), never exempted here. Reading a file
through a lower floor (`mcptape.cassette.stream`) is not I/O of its own, and neither is an
import for types alone (under `if TYPE_CHECKING:`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1] / "mcptape"

BASE, STORAGE, CORE, SHELL, API, CLI = range(6)
FLOOR_NAMES = ("base", "storage", "core", "shell", "api", "cli")

FLOORS: dict[str, int] = {
    # base: leaves that know nothing of the rest
    "mcptape._perf": BASE,
    "mcptape._version": BASE,
    "mcptape.errors": BASE,
    "mcptape.extras": BASE,
    "mcptape.cassette.model": BASE,  # the values that flow through everything
    "mcptape.pointer": BASE,
    "mcptape.schema": BASE,
    "mcptape.versions": BASE,
    "mcptape.wire": BASE,
    "mcptape.diff.types": BASE,
    "mcptape.eras": BASE,
    "mcptape.revisions": BASE,  # what each handshake revision added (over eras' path walk)
    "mcptape.capture.httpmeta": BASE,
    "mcptape.redaction.literals": BASE,  # literal hints and tries, for the secret rules
    # storage: cassette files and their format versions
    "mcptape.cassette": STORAGE,  # codec, format, stream, atomic, shape, lazy, migrate, sessions
    # core: sans-IO logic over messages and cassettes
    "mcptape.keys": CORE,
    "mcptape.pairing": CORE,
    "mcptape.skeletons": CORE,
    "mcptape.diff": CORE,
    "mcptape.replay": CORE,
    "mcptape.views": CORE,
    "mcptape.redaction": CORE,  # redact and the secret rules
    "mcptape.maintenance.agents": CORE,  # wrap and unwrap an agent host's config (pure)
    "mcptape.matching": CORE,
    "mcptape.mocks": CORE,
    # shells: processes, sockets, proxies, SDK transports
    "mcptape.capture": SHELL,
    "mcptape.replay.memory": SHELL,
    "mcptape.replay.episodes": SHELL,
    "mcptape.replay.server_stdio": SHELL,
    "mcptape.replay.sessions": SHELL,  # the sessions a run's launches picked, in a locked file
    "mcptape.replay.http": SHELL,
    "mcptape.replay.cache": SHELL,  # the index files: read, written, locked, pruned
    "mcptape.replay.pacing": SHELL,  # waits on the clock in a thread of its own
    "mcptape.capture.recorder": SHELL,  # thread-safe (its locks)
    "mcptape.check": SHELL,  # opens the file it checks (its `__init__` and `format`)
    "mcptape.check.detect_secrets": CORE,
    "mcptape.check.report": CORE,
    "mcptape.check.secrets": CORE,
    "mcptape.verify": SHELL,
    "mcptape.verify.plan": CORE,
    "mcptape.maintenance": SHELL,  # prune, redact, fmt: open and rewrite cassettes
    "mcptape.proc": SHELL,  # children, descriptors (os.fstat, ioctl), runs (/proc), PATH, names
    "mcptape.mocks.threaded": SHELL,
    "mcptape.mocks.file": SHELL,
    "mcptape.mocks.journal_file": SHELL,
    "mcptape.mocks.stdio_socket": SHELL,  # `mock.command`: a Unix socket served by threads
    "mcptape.mocks.relay": SHELL,  # the process `mock.command` runs: stdio <-> that socket
    # the Python API and the pytest plugin over it
    "mcptape.api": API,
    "mcptape.tape": API,
    "mcptape.pytest_plugin": API,
    "mcptape.mocks.mock": API,
    # the command line
    "mcptape.__main__": CLI,
    "mcptape.cli": CLI,
}
"""Module or package -> floor. A package entry covers its modules unless they have their own."""

FACADES: dict[str, int] = {
    "mcptape": CLI,  # re-exports the API (lazily)
    "mcptape.replay": SHELL,  # re-exports the in-memory transport (lazily)
}
"""Package `__init__` modules whose floor differs from their modules': what they re-export."""

KNOWN_CYCLES: dict[frozenset[str], str] = {}
"""Import cycles not yet untangled, each with who fixes it. Must only shrink."""

KNOWN_UPWARD: dict[tuple[str, str], str] = {}
"""(importer, imported) pairs that break the floors today, with who fixes them. Must only shrink."""


def modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = modules()


def floor(module: str) -> int:
    if module in FACADES:
        return FACADES[module]
    name = module
    while name not in FLOORS:
        if name.count(".") < 1:
            raise KeyError(module)
        name = name.rsplit(".", 1)[0]
    return FLOORS[name]


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def imports(module: str) -> Iterator[str]:
    """The package modules `module` imports by name (a package's `__init__` that Python runs on
    the way to a submodule is not counted: it is the package's facade, not a dependency)."""
    path = MODULES[module]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path, node)
            names = [
                f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target
                for a in node.names
            ]
        else:
            continue
        for name in names:
            if name in MODULES and name != module:
                yield name


GRAPH = {m: sorted(set(imports(m))) for m in MODULES}


def test_every_module_has_a_floor() -> None:
    missing = []
    for m in MODULES:
        try:
            floor(m)
        except KeyError:
            missing.append(m)
    assert not missing, f"give these modules a floor in FLOORS: {missing}"


def test_no_import_goes_up_a_floor() -> None:
    upward = [
        f"{m} ({FLOOR_NAMES[floor(m)]}) imports {d} ({FLOOR_NAMES[floor(d)]})"
        for m, deps in GRAPH.items()
        for d in deps
        if floor(d) > floor(m) and (m, d) not in KNOWN_UPWARD
    ]
    assert not upward, "imports from a lower floor to a higher one:\n" + "\n".join(upward)


def _cycles() -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[frozenset[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in GRAPH:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle() -> None:
    cycles = [sorted(c) for c in _cycles() if c not in KNOWN_CYCLES]
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("known", [*KNOWN_CYCLES, *KNOWN_UPWARD], ids=lambda k: "+".join(sorted(k)))
def test_the_known_exceptions_still_exist(known: frozenset[str] | tuple[str, str]) -> None:
    """An exception that no longer happens must leave the list (so the list only shrinks)."""
    if isinstance(known, frozenset):
        assert known in _cycles(), f"the cycle {sorted(known)} is gone: remove it from KNOWN_CYCLES"
    else:
        importer, imported = known
        assert imported in GRAPH[importer], (
            f"{importer} no longer imports {imported}: remove it from KNOWN_UPWARD"
        )


IO_MODULES = frozenset(
    {"os", "io", "threading", "subprocess", "socket", "selectors", "shutil", "tempfile"}
)
"""Modules a pure floor's module never imports."""

PURE = (BASE, CORE)


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes under an `if TYPE_CHECKING:` (imports for types alone)."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            out.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return out


def io_of(source: str) -> list[str]:
    """What `source` does of I/O itself: each I/O module it imports (`IO_MODULES`) and each call
    of `open(` (the builtin, or a module's: `os.open`, `io.open`), with its line."""
    tree = ast.parse(source)
    types_only = _type_checking_only(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        if id(node) in types_only:
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [node.module or ""]
        elif isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Name) and node.func.id == "open")
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "open"
                and isinstance(node.func.value, ast.Name) and node.func.value.id in IO_MODULES)
        ):  # fmt: skip
            found.append(f"line {node.lineno}: calls open(")
            continue
        else:
            continue
        found += [
            f"line {node.lineno}: imports {n}" for n in names if n.split(".")[0] in IO_MODULES
        ]
    return found


def test_the_pure_floors_do_no_io_of_their_own() -> None:
    doing = [
        f"{m} ({FLOOR_NAMES[floor(m)]}), {what}"
        for m, path in MODULES.items()
        if floor(m) in PURE
        for what in io_of(path.read_text(encoding="utf-8"))
    ]
    assert not doing, (
        "modules of the pure floors doing I/O (move them to the storage or shell floor):\n"
        + "\n".join(doing)
    )


def test_the_io_check_sees_io() -> None:
    """Every way in is caught (or the check above is vacuous), and a type-only import is not."""
    caught = io_of(
        "import os\nimport threading as t\nfrom subprocess import run\nfrom io import BytesIO\n"
        "with open('x') as f: pass\nimport tempfile, shutil\n"
    )
    assert len(caught) == 7, caught
    assert io_of("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import os\n") == []
    assert io_of("import mcptape.os_like\nimport osmosis\nx.open()\n") == []


def test_the_test_sees_imports() -> None:
    """The parser finds relative, absolute and package-level imports (or every check above is vacuous)."""
    assert "mcptape.capture.recorder" in GRAPH["mcptape.capture.http_flow"]
    assert "mcptape.wire.sse" in GRAPH["mcptape.capture.http_flow"]
    assert "mcptape.api" in GRAPH["mcptape.pytest_plugin"]
    assert floor("mcptape.replay.engine") == CORE and floor("mcptape.cli.record") == CLI
