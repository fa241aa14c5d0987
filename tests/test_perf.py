"""`mcptape._perf.paused_gc`: what a pause built is never walked by the collections after it,
and what the program froze stays frozen."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT

BUILD = (
    "import gc\n"
    "from mcptape._perf import paused_gc\n"
    "gc.collect()\n"
    "{before}\n"
    "with paused_gc():\n"
    "    built = [{{'n': [i]}} for i in range(50_000)]  # (a dict of atoms is not tracked)\n"
    "assert gc.isenabled()\n"
    "ids = {{id(d) for d in built[::997]}}\n"
    "young = {{id(o) for g in (0, 1) for o in gc.get_objects(generation=g)}}\n"
    "old = {{id(o) for o in gc.get_objects(generation=2)}}\n"
    "print(len(ids & young), len(ids & old), gc.get_freeze_count())\n"
)


def _run(before: str = "") -> list[int]:
    code = BUILD.format(before=before)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return [int(x) for x in out.stdout.split()]


def test_what_a_pause_built_is_in_the_oldest_generation_when_it_ends() -> None:
    young, old, frozen = _run()
    assert (young, old, frozen) == (0, 51, 0)  # none left for the young collections to walk


def test_a_pause_thaws_nothing_the_program_froze() -> None:
    young, old, frozen = _run("gc.freeze()\nkept = gc.get_freeze_count()\nassert kept > 1000")
    assert frozen > 1000  # still frozen
    assert young == 51 and old == 0  # (so what was built waits for the young collections)


def test_a_pause_inside_a_pause_and_with_the_collector_off_leaves_it_as_it_was() -> None:
    code = (
        "import gc\n"
        "from mcptape._perf import paused_gc\n"
        "with paused_gc():\n"
        "    with paused_gc():\n"
        "        pass\n"
        "    assert not gc.isenabled()\n"
        "assert gc.isenabled()\n"
        "gc.disable()\n"
        "with paused_gc():\n"
        "    pass\n"
        "assert not gc.isenabled()\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
