"""align: n-th occurrence of a key with the n-th; leftovers are one-sided pairs."""

from __future__ import annotations

import pytest

from mcptape.diff.align import align
from mcptape.diff.normalize import Call


def calls(*keys: str) -> list[Call]:
    return [Call("m", k, k.encode(), {"i": i}) for i, k in enumerate(keys)]


def shape(a: list[str], b: list[str]) -> list[tuple[str | None, str | None, int]]:
    return [
        (p.a.name if p.a else None, p.b.name if p.b else None, p.occurrence)
        for p in align(calls(*a), calls(*b))
    ]


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        (["x", "y"], ["x", "y"], [("x", "x", 1), ("y", "y", 1)]),
        (["x", "y"], ["y", "x"], [("x", "x", 1), ("y", "y", 1)]),
        (["x", "x", "x"], ["x", "x"], [("x", "x", 1), ("x", "x", 2), ("x", None, 3)]),
        (["x"], ["x", "z", "x"], [("x", "x", 1), (None, "z", 1), (None, "x", 2)]),
        ([], ["z"], [(None, "z", 1)]),
        (["z"], [], [("z", None, 1)]),
    ],
)
def test_pairs_by_key_and_occurrence(
    a: list[str], b: list[str], want: list[tuple[str | None, str | None, int]]
) -> None:
    assert shape(a, b) == want


def test_nth_pairs_with_nth_whatever_is_interleaved() -> None:
    a, b = calls("x", "q", "x"), calls("x", "x", "q")
    pairs = align(a, b)
    assert [(p.a.body["i"], p.b.body["i"]) for p in pairs if p.a and p.b] == [
        (0, 0),
        (1, 2),
        (2, 1),
    ]


def test_aligning_ten_thousand_calls_is_linear() -> None:
    a = calls(*[str(i % 100) for i in range(10_000)])
    b = calls(*[str(i % 100) for i in range(10_000)])
    pairs = align(a, b)
    assert len(pairs) == 10_000 and all(
        p.a is not None and p.b is not None and p.a.name == p.b.name for p in pairs
    )
