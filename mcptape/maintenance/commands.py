"""Cassette maintenance: `prune` (drop exchanges), `redact` (apply new rules), `fmt` (canonical form).

Each reads a cassette one line at a time (`mcptape.cassette.stream`; prune twice: once to pair
it into an `Outline`, once to write) and writes the result atomically (a temporary file
in the same directory, fsynced, renamed over the original, only once the last line was read and
valid): a crash or a bad line leaves the old file, never half of either. Memory stays that of a
line (prune: and the outline, a few numbers per event), whatever the cassette's size. `fmt`, `redact_file`
and `prune` stream; `read` and `redact` do the same in memory. Lines an operation does not
change keep their bytes; prune only renumbers `seq`. Messages are never altered, except where redaction replaces a
secret. See docs/maintenance.md.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from mcptape.cassette import AtomicWriter, Cassette, CassetteStream, loads, stream
from mcptape.cassette.codec import decode_line, event_line, header_line, renumbered
from mcptape.cassette.model import HEADER_MARKER, Event, Kind
from mcptape.errors import CassetteError, ConfigError
from mcptape.redaction.redact import DEFAULT_KEYS, DEFAULT_PATTERNS, RedactConfig, Redactor
from mcptape.replay.report import UnplayedReport
from mcptape.skeletons import NONE, Outline

ALWAYS_KEPT: frozenset[str] = frozenset({"initialize", "server/discover"})
"""Methods `prune --keep` never drops: the handshake and discovery every client starts with."""


# -- reading and writing -------------------------------------------------------------------


@dataclass(slots=True)
class CassetteLines:
    """A cassette with the bytes of each line, so untouched lines are written back as they were."""

    cassette: Cassette
    head: bytes
    lines: list[bytes]
    """The line of each event (no newline), parallel to `cassette.events`."""


def read(path: str | os.PathLike[str]) -> CassetteLines:
    """Reads a cassette for rewriting; a truncated or corrupt line is an error (rewriting would lose it).

    Raises:
        CassetteError: the file is missing, not a cassette, or has a corrupt or truncated line.
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise CassetteError(f"{p}: cannot read: {exc.strerror or exc}") from None
    cassette = loads(data, name=str(p), path=p)
    if cassette.truncated is not None:
        raise CassetteError(
            f"{cassette.truncated}: rewriting would drop it; fix or delete that line first"
        )
    rows = [ln for ln in data.split(b"\n") if ln.strip()]
    lines = [ln.strip() for ln in rows[1:]]
    if len(lines) != len(cassette.events):  # migrated from an older format: write the events anew
        lines = [event_line(e).rstrip(b"\n") for e in cassette.events]
    return CassetteLines(cassette, rows[0].strip(), lines)


def _join(head: bytes, lines: Iterable[bytes]) -> bytes:
    """A cassette's bytes: its header's line (newline included), then the event lines."""
    return b"".join([head, *(ln + b"\n" for ln in lines)])


class Rewrite:
    """A streamed rewrite of `src` into `target`: each piece of output is given with the input
    line it stands for, and the file is written only from the first difference (the identical
    prefix is copied from `src` then), so a file already in shape is never written at all.
    `finish()` commits (atomically) and says whether anything changed; an exception before it
    leaves `target` as it was (`abort()`, in a `finally`).

    With `write=False` nothing is written (`fmt --check`); with `always=True` the output is
    written even when identical (to another file: `-o`).
    """

    def __init__(
        self, src: CassetteStream, target: Path, write: bool = True, always: bool = False
    ) -> None:
        self.src, self.target, self.write = src, target, write
        self.pos = 0
        """How many bytes of the input the output has matched so far (while `out` is None)."""
        self.out: AtomicWriter | None = None
        self.changed = False
        if always:
            self._diverge()

    def line(self, offset: int, raw: bytes | None, out: bytes) -> None:
        """`out` (newline included) replaces `raw`, the input line at `offset` (None: it is new)."""
        if not self.changed:
            if raw is not None and offset == self.pos and out == raw:
                self.pos += len(raw)
                return
            self._diverge()
        if self.out is not None:
            self.out.write(out)

    def _diverge(self) -> None:
        self.changed = True
        if not self.write:
            return
        self.out = AtomicWriter(self.target)
        left = self.pos
        if left:
            with open(self.src.path, "rb") as f:
                while left:
                    chunk = f.read(min(left, 1 << 20))
                    if not chunk:
                        break
                    self.out.write(chunk)
                    left -= len(chunk)

    def finish(self) -> bool:
        """Commits the output, if it differs (or `always`); True when it differs."""
        if not self.changed and self.pos != self.src.size:  # lines dropped at the end
            self._diverge()
        if self.out is not None:
            self.out.commit()
        return self.changed

    def abort(self) -> None:
        if self.out is not None:
            self.out.abort()


# -- prune ----------------------------------------------------------------------------------------


def parse_run_log(text: str) -> list[UnplayedReport]:
    """Every unplayed-exchanges report in a run log (`replay --report` JSON or the text
    `replay --strict` prints, amid any output): see `UnplayedReport.find_all`."""
    return UnplayedReport.find_all(text)


def same_cassette(name: str, path: Path) -> bool:
    """True when a report's cassette name denotes `path` (the same file, or a relative path ending it)."""
    if not name or name.startswith("<"):
        return False
    named, target = Path(name), path.resolve()
    if named.is_absolute():
        return named.resolve() == target
    return named.resolve() == target or target.parts[-len(named.parts) :] == named.parts


def unused_exchanges(outline: Outline, reports: Sequence[UnplayedReport]) -> list[int]:
    """The exchanges (indexes into `outline`) no session of the reports (those about this
    cassette) ever played.

    Raises:
        ConfigError: no report is about this cassette, or a report names a request the cassette
            does not hold (the cassette changed since the run).
    """
    mine = [r for r in reports if same_cassette(r.cassette, outline.path)]
    if not mine:
        names = sorted({r.cassette for r in reports})
        about = (
            f"it reports on {', '.join(names)}"
            if names
            else "it holds no unplayed-exchanges report (replay with --strict or --report FILE)"
        )
        raise ConfigError(f"the run log has no report for {outline.name}: {about}")
    requests = {
        line: ex for ex, line in enumerate(outline.line)
    }  # by the file line the reports cite
    unused: set[int] | None = None
    for report in mine:
        for line, method, _name in report.unplayed:
            ex = requests.get(line)
            if ex is None or outline.methods[ex] != method:
                raise ConfigError(
                    f"the run log does not fit {outline.name}: line {line} is not a {method} request "
                    "(was the cassette changed since the run? run the tests again)"
                )
        lines = {line for line, _, _ in report.unplayed}
        unused = lines if unused is None else unused & lines  # played by any session: still used
    return [requests[line] for line in sorted(unused or ())]


def not_kept(outline: Outline, patterns: Sequence[str]) -> list[int]:
    """The request exchanges (indexes into `outline`) whose method, tool/prompt name or resource
    URI matches none of `patterns` (shell-style wildcards). The handshake, discovery and client
    notifications are always kept.

    Raises:
        ConfigError: a pattern matches nothing in the cassette (a typo would drop everything).
    """
    methods, names, retry_of = outline.methods, outline.names, outline.retry_of
    used = dict.fromkeys(patterns, False)
    kept: set[int] = set()
    for ex, (method, name) in enumerate(zip(methods, names, strict=True)):
        for p in patterns:
            if fnmatchcase(method, p) or (name is not None and fnmatchcase(name, p)):
                used[p] = True
                kept.add(ex)
    unknown = [p for p, hit in used.items() if not hit]
    if unknown:
        have = sorted(set(methods) | {name for name in names if name})
        raise ConfigError(
            f"--keep {unknown[0]!r} matches no method, tool, prompt or resource of {outline.name} (it has: {', '.join(have)})"
        )
    kept |= {retry_of[ex] for ex in kept if retry_of[ex] != NONE}
    return [
        ex for ex in range(len(methods))
        if not outline.notification[ex] and methods[ex] not in ALWAYS_KEPT and ex not in kept
        and (retry_of[ex] == NONE or retry_of[ex] not in kept)
    ]  # fmt: skip


def events_of(outline: Outline, drop: Sequence[int]) -> bytearray:
    """Which events (1 at their place in the file) belong only to the exchanges in `drop`.

    A message event goes when each message in it (a batch holds several) belongs to a dropped
    exchange: its request, its response, the notifications and server requests for it, the
    client's answers. On HTTP, the other events of an HTTP exchange (heads, stream ends, 202s)
    go with it when all its messages went. Retries of dropped 2026-07-28 calls go too.
    """
    doomed = set(drop)
    doomed |= {ex for ex, chain in enumerate(outline.retry_of) if chain in doomed}
    gone = bytearray(len(outline))
    http_dropped: set[int] = set()
    http_kept: set[int] = set()
    first, more, message, http = outline.first, outline.more, outline.message, outline.http_exchange
    for pos in range(len(outline)):
        if not message[pos]:
            continue
        if pos in more:
            msgs = more[pos]
            dropped = bool(msgs) and all(any(ex in doomed for ex in m) for m in msgs)
        else:
            dropped = first[pos] in doomed
        gone[pos] = dropped
        if http[pos] != NONE:
            (http_dropped if dropped else http_kept).add(http[pos])
    http_gone = http_dropped - http_kept
    if http_gone:
        for pos, hx in enumerate(http):
            if hx in http_gone:
                gone[pos] = 1
    return gone


def prune(
    outline: Outline, drop: Sequence[int], output: str | os.PathLike[str] | None = None
) -> int:
    """Writes the cassette `outline` was read from without the events of `drop` (to `output`,
    or in place), `seq` renumbered, reading it again line by line; returns how many events went."""
    gone = events_of(outline, drop)
    src = stream(outline.path)
    rw = Rewrite(src, Path(output) if output is not None else src.path, always=True)
    try:
        rw.line(0, src.head_raw, src.head_raw.strip() + b"\n")
        n = 0
        for pos, el in enumerate(src.events):
            if gone[pos]:
                continue
            n += 1
            line = el.raw.strip()
            new = renumbered(line, n)
            if new is not None:
                rw.line(el.offset, el.raw, new + b"\n")
            else:
                rw.line(el.offset, el.raw, event_line(el.event._replace(seq=n)))
        rw.finish()
    finally:
        rw.abort()
    return gone.count(1)


# -- redact -----------------------------------------------------------------------------------------


def _union(*groups: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(x for g in groups for x in g))


def redaction_for(
    header: dict[str, Any], keys: Sequence[str] = (), patterns: Sequence[str] = ()
) -> tuple[RedactConfig, dict[str, Any]]:
    """The rules to apply (the default ones, the secret names the header lists, the new ones) and
    the header's new description of what the cassette has been through.

    The header's own patterns are described but not run again: a cassette is data, and a regular
    expression from a file nobody vetted could take forever (`mcptape check` ignores them too).
    """
    recorded = header.get("redaction")
    old: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    old_keys = [k for k in old.get("keys") or () if isinstance(k, str)]
    old_patterns = [p for p in old.get("patterns") or () if isinstance(p, str)]
    config = RedactConfig(
        True, _union(DEFAULT_KEYS, old_keys, keys), _union(DEFAULT_PATTERNS, patterns)
    )
    described = RedactConfig(
        True, config.keys, _union(DEFAULT_PATTERNS, old_patterns, patterns)
    ).describe()
    return config, {**old, **described}


def redact_event(red: Redactor, ev: Event) -> Event:
    """The event with `red` applied to its message, text and HTTP metadata (the same object when nothing changed)."""
    msg, paths = red.message(ev.msg) if ev.kind is Kind.MESSAGE else (ev.msg, [])
    if ev.text is None:
        text = None
    elif ev.kind in (Kind.STDERR, Kind.RAW) and ev.http is None:
        text = red.line((ev.src, ev.kind), ev.text)  # (a PEM key split over lines)
    else:
        text = red.text(ev.text)
    http = _redact_http(red, ev.http) if ev.http is not None else None
    info = _strings(red, ev.info)
    redacted = _union(ev.redacted, paths, [""] if text != ev.text else [])
    if msg is ev.msg and text == ev.text and http == ev.http and info == ev.info:
        return ev
    return ev._replace(msg=msg, text=text, http=http, info=info, redacted=redacted)


def _redact_http(red: Redactor, http: dict[str, Any]) -> dict[str, Any]:
    out = dict(http)
    if isinstance(out.get("path"), str):
        out["path"] = red.url(out["path"])[0]
    if isinstance(out.get("headers"), dict):
        out["headers"] = red.headers({str(k): str(v) for k, v in out["headers"].items()})[0]
    sse = out.get("sse")
    if isinstance(sse, dict):
        sse = dict(sse)
        if isinstance(sse.get("data"), str):
            sse["data"] = red.url(sse["data"])[0]
        for name in ("comment", "id", "event"):
            if isinstance(sse.get(name), str):
                sse[name] = red.text(sse[name])
        out["sse"] = sse
    return out


def _strings(red: Redactor, value: Any) -> Any:
    if isinstance(value, str):
        return red.text(value)
    if isinstance(value, dict):
        return {k: _strings(red, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_strings(red, v) for v in value]
    return value


def redact(
    tape: CassetteLines, keys: Sequence[str] = (), patterns: Sequence[str] = ()
) -> tuple[bytes, int]:
    """The cassette with the rules of `redaction_for` applied, and its header describing them.

    Returns (new bytes, how many events changed).

    Raises:
        ConfigError: a pattern is not a valid regular expression.
    """
    header = decode_line(tape.head)
    config, described = redaction_for(header, keys, patterns)
    red = Redactor(config)
    lines: list[bytes] = []
    changed = 0
    for ev, line in zip(tape.cassette.events, tape.lines, strict=True):
        new = redact_event(red, ev)
        if new is ev:
            lines.append(line)
            continue
        changed += 1
        lines.append(event_line(new).rstrip(b"\n"))
    header["redaction"] = described
    return _join(header_line(header), lines), changed


def redact_file(
    path: str | os.PathLike[str],
    keys: Sequence[str] = (),
    patterns: Sequence[str] = (),
    output: str | os.PathLike[str] | None = None,
) -> tuple[bool, int]:
    """`redact`, streamed from `path` into `output` (or in place, and then only when something
    changed). Returns (whether the output differs from the input, how many events changed).

    Raises:
        CassetteError: the cassette cannot be read or written (it is left as it was).
        ConfigError: a pattern is not a valid regular expression.
    """
    src = stream(path)
    header = dict(src.head)
    config, described = redaction_for(header, keys, patterns)
    red = Redactor(config)
    header["redaction"] = described
    rw = Rewrite(src, Path(output) if output is not None else src.path, always=output is not None)
    try:
        rw.line(0, src.head_raw, header_line(header))
        changed = 0
        for el in src.events:
            new = redact_event(red, el.event)
            if new is el.event:
                rw.line(el.offset, el.raw, el.raw.strip() + b"\n")
            else:
                changed += 1
                rw.line(el.offset, el.raw, event_line(new))
        return rw.finish(), changed
    finally:
        rw.abort()


# -- fmt ----------------------------------------------------------------------------------------------

HEADER_ORDER = (HEADER_MARKER, "mcptape_version", "transport", "target", "recorded_at", "redaction")
REDACTION_ORDER = ("enabled", "marker", "keys", "patterns")
EVENT_ORDER = ("seq", "t", "kind", "from", "msg", "text", "b64", "size", "http", "info", "redacted")
HTTP_ORDER = (
    "exchange",
    "session",
    "legacy",
    "stream",
    "phase",
    "method",
    "path",
    "status",
    "headers",
    "content_type",
    "sse",
)
SSE_ORDER = ("id", "event", "retry", "data", "comment")


def _ordered(obj: dict[str, Any], order: Sequence[str]) -> dict[str, Any]:
    """Known keys in `order`, then any others sorted by name. Values are untouched."""
    out = {k: obj[k] for k in order if k in obj}
    out.update((k, obj[k]) for k in sorted(obj) if k not in out)
    return out


def canonical_event(obj: dict[str, Any], seq: int | None = None) -> dict[str, Any]:
    """An event's keys in the documented order (and those of its `http` and `sse`); `msg`, `info`
    and header values keep their own order: they are data, not layout."""
    out = _ordered(obj, EVENT_ORDER)
    if seq is not None:
        out["seq"] = seq
    if isinstance(out.get("http"), dict):
        http = _ordered(out["http"], HTTP_ORDER)
        if isinstance(http.get("sse"), dict):
            http["sse"] = _ordered(http["sse"], SSE_ORDER)
        out["http"] = http
    return out


def canonical_header(obj: dict[str, Any]) -> dict[str, Any]:
    out = _ordered(obj, HEADER_ORDER)
    if isinstance(out.get("redaction"), dict):
        out["redaction"] = _ordered(out["redaction"], REDACTION_ORDER)
    return out


def fmt(path: str | os.PathLike[str], renumber: bool = False, write: bool = True) -> bool:
    """Rewrites the cassette at `path` in canonical form, line by line: compact JSON, one line per
    event, keys in a fixed order; with `renumber`, `seq` is 1..n. Every value (messages included)
    is unchanged. True when the file was not canonical; with `write=False` nothing is written.

    Raises:
        CassetteError: the cassette cannot be read or written (it is left as it was).
    """
    src = stream(path)
    rw = Rewrite(src, src.path, write)
    try:
        rw.line(0, src.head_raw, header_line(canonical_header(src.head)))
        for i, el in enumerate(src.events, start=1):
            event = canonical_event(el.obj, i if renumber else None)
            rw.line(el.offset, el.raw, event_line(event))
        return rw.finish()
    finally:
        rw.abort()
