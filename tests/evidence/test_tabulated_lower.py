"""Certified lower bounds for tabulated bases (symsel.evidence.tabulated_lower): the pair's profile, summed by brute
force at 40 digits, is never above the table's interpolation in either direction, and its selection's ε is never
above ``best``."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symsel import distributions as dists
from symsel.bounds import bound
from symsel.evidence.lower import lower_bound
from symsel.evidence.tabulated_lower import tabulated_pair
from symsel.evidence.verify import verify_selection
from symsel.profiles import GaussianProfile
from symsel.profiles.tabulated import TabulatedProfile


def _hockey_stick(p: list, q: list, eps: float) -> mpmath.mpf:
    """``Σ [p − e^ε q]_+`` at 40 digits (brute force)."""
    with mpmath.workdps(40):
        e = mpmath.exp(mpmath.mpf(eps))
        return mpmath.fsum(max(mpmath.mpf(a) - e * mpmath.mpf(b), 0) for a, b in zip(p, q, strict=True))


def _tables() -> list[TabulatedProfile]:
    gauss = GaussianProfile(2.0)
    grid = [float(x) for x in np.linspace(0.0, 4.0, 9)]
    deltas = [float(gauss.delta(e)) for e in grid]
    return [TabulatedProfile(grid, deltas), TabulatedProfile(grid, deltas, interpolation="convex"),
            # not convex in e^ε, starting above 0, ending above 0 (mass at +∞)
            TabulatedProfile([0.5, 1.0, 3.0, 6.0], [0.3, 0.25, 1e-3, 1e-5]),
            TabulatedProfile([1.0, 2.0], [0.6, 0.5])]  # steep: the atoms need scaling down


@pytest.mark.parametrize("table", _tables(), ids=lambda t: t.spec[:40])
def test_pair_profile_is_below_the_table_in_both_directions(table: TabulatedProfile) -> None:
    pair = tabulated_pair(table)
    for eps in np.concatenate([np.linspace(-3.0, 8.0, 45), table.eps_grid]):
        allowed = float(table.delta(float(eps)))
        assert _hockey_stick(pair.p, pair.q, eps) <= allowed * (1 + 1e-12)
        assert _hockey_stick(pair.q, pair.p, eps) <= allowed * (1 + 1e-12)
    # at the table's points with ε ≥ 0 the pair meets the table where the table is convex in e^ε
    if table.interpolation == "convex":
        for eps, delta in zip(table.eps_grid, table.deltas, strict=True):
            assert float(_hockey_stick(pair.p, pair.q, eps)) == pytest.approx(float(delta), rel=1e-9)


def test_lower_bound_of_a_tabulated_base_is_below_best() -> None:
    table = _tables()[0]
    law = dists.geometric(mean=10)
    found = lower_bound(table, law, 1e-6, budget=20, slices=200)
    upper = bound(law, table).epsilon(1e-6)
    assert math.isfinite(found.epsilon) and 0.95 * upper < found.epsilon <= upper


def test_verify_accepts_a_tabulated_base(monkeypatch: pytest.MonkeyPatch) -> None:
    from symsel.evidence import verify

    # only the lower side is exercised here (every upper bound on a tabulated base costs about a minute)
    monkeypatch.setattr(verify, "_bounds", lambda *args, **kwargs: {})
    report = verify_selection(dists.point(3), _tables()[2], 1e-4, budget=20)
    assert report["sound"] and report["lower_bound"] > 0
