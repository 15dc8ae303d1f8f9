"""The labelled pairs of symsel.pairs.dpsgd against brute force in exact rationals: composing two labelled pairs sums
their labels at the coarser of their two units (a label ``t`` at unit ``2^s`` is ``⌊t / 2^{S−s}⌋`` at unit ``2^S``),
and every composed mass is within the stated relative error of the exact mass of that post-processing."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from symsel.pairs.dpsgd import _Labelled


def _masses(rng: np.random.Generator, size: int) -> np.ndarray:
    values = rng.random(size) + 0.05
    return values / values.sum()


def _exact_composition(factors: list[_Labelled], shift: int) -> dict[str, dict[int, Fraction]]:
    """Brute force: every pair of labels, each brought to unit ``2^shift`` by an exact floor division, summed."""
    out: dict[str, dict[int, Fraction]] = {"p": {}, "n": {}}
    first, second = factors
    for side in ("p", "n"):
        for i, x in enumerate(getattr(first, side).tolist()):
            for j, y in enumerate(getattr(second, side).tolist()):
                label = ((first.first + i) >> (shift - first.shift)) + ((second.first + j) >> (shift - second.shift))
                out[side][label] = out[side].get(label, Fraction(0)) + Fraction(x) * Fraction(y)
    return out


@pytest.mark.parametrize("swap", [False, True])
def test_two_labelled_pairs_at_different_units_compose_at_the_coarser_one(swap: bool) -> None:
    """A pair at unit 1 (labels −3 … 8) and one at unit 4 (labels −2 … 3), composed with room for every label and no
    tail merged: the labels are those of the brute-force sum at unit 4, and each mass is within ``err`` (relative)
    of its exact value (the inputs count as exact: their ``err`` is 0)."""
    rng = np.random.default_rng(7)
    fine = _Labelled(_masses(rng, 12), _masses(rng, 12), -3, 0, 0.0, tail=0.0)
    coarse = _Labelled(_masses(rng, 6), _masses(rng, 6), -2, 2, 0.0, tail=0.0)
    factors = [coarse, fine] if swap else [fine, coarse]
    composed = factors[0].compose(factors[1], max_labels=1000)
    assert composed.shift == 2
    exact = _exact_composition(factors, 2)
    for side in ("p", "n"):
        values = getattr(composed, side).tolist()
        labels = range(composed.first, composed.first + len(values))
        assert {label for label, v in zip(labels, values, strict=True) if v > 0} == set(exact[side])
        for label, value in zip(labels, values, strict=True):
            truth = exact[side].get(label, Fraction(0))
            assert abs(Fraction(value) - truth) <= Fraction(composed.err) * truth, (side, label)
