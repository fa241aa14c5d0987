"""Verify as a CI gate: many cassettes against one live server, one report, noise learned.

`cassette_paths` expands what the user named (files, folders, globs) into cassettes;
`gate` re-drives each one (`run.verify`), `1 + extra` times when noise is to be learned
(what differs between live runs of the same server is noise, `diff.noise`), diffs each
cassette against its first live run, and folds the reports into one (`diff.combine`) whose
side B is named by the live command or URL. A run that says nothing about behaviour (the
server did not start, ended early, refused the connection, left requests unanswered) is a
`Problem`: the caller exits 2.
"""

from __future__ import annotations

import glob
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from mcptape.cassette import Cassette, load
from mcptape.diff.combine import combine
from mcptape.diff.engine import diff_cassettes
from mcptape.diff.types import DiffOptions, DiffReport
from mcptape.errors import ConfigError

from .outcome import Outcome
from .run import DEFAULT_TIMEOUT, verify


@dataclass(frozen=True, slots=True)
class Problem:
    """A cassette whose re-drive cannot be judged, and why (with the server's last stderr lines)."""

    cassette: str
    message: str
    stderr: tuple[str, ...] = ()


@dataclass(slots=True)
class Gate:
    """The outcome of a gate run: one report (None when no cassette could be judged) and the problems."""

    report: DiffReport | None
    problems: list[Problem] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    pair: tuple[Cassette, Cassette] | None = None
    """With one cassette: it and its first live run (the HTML page shows their exchanges)."""


def cassette_paths(specs: list[str]) -> list[Path]:
    """Files as given, folders as every `*.jsonl` under them, globs expanded; in order, once each.

    Raises:
        ConfigError: a name matches nothing.
    """
    out: list[Path] = []
    for spec in specs:
        path = Path(spec)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.jsonl") if p.is_file())
            if not found:
                raise ConfigError(f"{spec}: no *.jsonl cassettes in this folder")
        elif glob.has_magic(spec):
            found = sorted(Path(p) for p in glob.glob(spec, recursive=True) if Path(p).is_file())
            if not found:
                raise ConfigError(f"{spec}: no cassette matches this pattern")
        else:
            found = [path]
        out.extend(p for p in found if p not in out)
    return out


def live_name(command: list[str] | None, url: str | None) -> str:
    """Side B as the user knows it: the command line, or the URL."""
    return shlex.join(command) if command else str(url)


def _new_paths(paths: list[Path], out: Path, runs: int) -> list[list[Path]]:
    """Where each cassette's live runs are kept under `out`: its name, numbered when names clash or runs repeat."""
    stems: dict[str, int] = {}
    result = []
    for p in paths:
        n = stems.get(p.stem, 0)
        stems[p.stem] = n + 1
        base = p.stem if n == 0 else f"{p.stem}-{n + 1}"
        result.append(
            [
                out / (f"{base}.jsonl" if r == 0 else f"{base}.run-{r + 1}.jsonl")
                for r in range(runs)
            ]
        )
    return result


def gate(paths: list[Path], out: Path, *, command: list[str] | None = None, url: str | None = None,
         protocol: str | None = None, timeout: float = DEFAULT_TIMEOUT, env: dict[str, str] | None = None,
         noise_runs: int = 0, options_for: Callable[[Path], DiffOptions] = lambda _: DiffOptions(),
         loaded: dict[Path, Cassette] | None = None,
         on_cassette: Callable[[Path], None] = lambda _: None) -> Gate:  # fmt: skip
    """Re-drives every cassette in `paths` against the live server, keeping the new sessions in `out`.

    `noise_runs` >= 2 re-drives each cassette that many times: what differs between those
    live runs is noise. The first live run is the one compared with the cassette.
    `on_cassette(path)` is called as each cassette's re-drive begins (the CLI's progress bar).

    Raises:
        RecordError: the server command cannot be started at all.
        CassetteError: a cassette cannot be read or the new one written.
    """
    live = live_name(command, url)
    runs = max(1, noise_runs)
    reports: list[tuple[str, DiffReport]] = []
    result = Gate(None)
    out.mkdir(parents=True, exist_ok=True)
    for path, targets in zip(paths, _new_paths(paths, out, runs), strict=True):
        on_cassette(path)
        cassette = (loaded or {}).get(path) or load(path)
        news: list[Cassette] = []
        trouble: Outcome | None = None
        for target in targets:
            new, outcome = verify(
                cassette,
                target,
                command=command,
                url=url,
                protocol=protocol,
                timeout=timeout,
                env=env,
            )
            result.outcomes.append(outcome)
            if outcome.problem() is not None:
                trouble = outcome
                break
            news.append(new)
        if trouble is not None:
            result.problems.append(
                Problem(str(path), str(trouble.problem()), tuple(trouble.stderr))
            )
            continue
        first = news[0]
        report = diff_cassettes(cassette, first, options_for(path), noise=[(first, n) for n in news[1:]],
                                noise_source=f"{runs} live runs")  # fmt: skip
        report.b = replace(report.b, name=live)
        reports.append((str(path), report))
        if len(paths) == 1:
            result.pair = (cassette, first)
    if reports:
        result.report = (
            reports[0][1] if len(paths) == 1 else combine(reports, live, reports[0][1].options)
        )
    return result
