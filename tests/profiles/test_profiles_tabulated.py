"""Tabulated profiles: conservative interpolation between, below and above the grid."""

from __future__ import annotations

import math

import numpy as np
import pytest

from symsel.errors import ParameterError
from symsel.profiles import FAMILIES, GaussianProfile, TabulatedProfile

GAUSS = GaussianProfile(1.0)
GRID = [0.25, 0.5, 1.0, 2.0, 3.0, 4.0]
TABLE = [float(GAUSS.delta(e)) for e in GRID]
EPS = np.linspace(-6.0, 8.0, 1401)


@pytest.mark.parametrize("interpolation", ["step", "convex"])
def test_tabulated_is_an_upper_bound_of_the_true_profile(interpolation: str) -> None:
    """From exact values on a grid, the interpolated profile is ≥ the true one everywhere (any sign of ε)."""
    tab = TabulatedProfile(GRID, TABLE, interpolation=interpolation)
    truth = GAUSS.delta(EPS)
    ours = tab.delta(EPS)
    assert np.all(ours >= truth * (1 - 1e-12))
    assert np.all(np.diff(ours) <= 1e-15)
    assert np.allclose(tab.delta(np.array(GRID)), TABLE, rtol=1e-12)
    assert np.all(ours[EPS < 0] >= -np.expm1(EPS[EPS < 0]))


def test_convex_interpolation_is_tighter_than_step() -> None:
    step = TabulatedProfile(GRID, TABLE)
    convex = TabulatedProfile(GRID, TABLE, interpolation="convex")
    assert np.all(convex.delta(EPS) <= step.delta(EPS) + 1e-16)
    assert np.any(convex.delta(EPS) < step.delta(EPS) * 0.9)


def test_below_grid_uses_the_gamma_chord() -> None:
    """Below ε_0: 1 − (1 − δ_0) e^(ε − ε_0), valid by convexity in e^ε, tighter than 1."""
    tab = TabulatedProfile(GRID, TABLE)
    e = 0.1
    assert tab.delta(e) == pytest.approx(1 - (1 - TABLE[0]) * math.exp(e - GRID[0]), rel=1e-14)
    assert tab.delta(e) < 1
    assert tab.delta(10.0) == TABLE[-1]  # beyond the grid: the last value
    assert tab.delta(math.inf) == TABLE[-1]


def test_step_epsilon_and_region() -> None:
    tab = FAMILIES["tabulated"](eps_grid=[0, 1, 2], deltas=[0.5, 0.1, 0.01])
    assert tab.epsilon(0.1) == 1.0
    assert tab.epsilon(0.05) == 2.0
    assert tab.epsilon(0.5) == 0.0
    assert tab.epsilon(0.001) == math.inf
    assert tab.spec == "tabulated(eps_grid=[0.0, 1.0, 2.0], deltas=[0.5, 0.1, 0.01])"
    # the region of the step profile is exactly the max of the three polygons
    q = np.linspace(0, 1, 501)
    from symsel.profiles.region import polygon_lower

    brute = np.max([polygon_lower(q, e, d) for e, d in zip([0, 1, 2], [0.5, 0.1, 0.01], strict=True)], axis=0)
    assert np.allclose(tab.region_lower(q), brute, atol=1e-15)
    # and it is conservative for the Gaussian table
    gtab = TabulatedProfile(GRID, TABLE, interpolation="convex")
    assert np.all(gtab.region_lower(q) <= GAUSS.region_lower(q) + 1e-15)
    with pytest.raises(NotImplementedError):
        tab.delta_mp(0.5, 30)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"eps_grid": [0, 2, 1], "deltas": [0.5, 0.1, 0.01]}, "eps_grid"),
        ({"eps_grid": [0, 1, 1], "deltas": [0.5, 0.1, 0.01]}, "eps_grid"),
        ({"eps_grid": [0, 1, 2], "deltas": [0.5, 0.6, 0.01]}, "deltas"),
        ({"eps_grid": [0, 1, 2], "deltas": [0.5, 0.1]}, "deltas"),
        ({"eps_grid": [0, 1, 2], "deltas": [1.5, 0.1, 0.01]}, "deltas"),
        ({"eps_grid": [0, float("nan"), 2], "deltas": [0.5, 0.1, 0.01]}, "eps_grid"),
        ({"eps_grid": [0, 1, 2], "deltas": [0.5, float("nan"), 0.01]}, "deltas"),
        ({"eps_grid": [], "deltas": []}, "eps_grid"),
        ({"eps_grid": [0, 1], "deltas": [0.5, 0.1], "interpolation": "linear"}, "interpolation"),
    ],
)
def test_bad_tables(kwargs: dict, name: str) -> None:
    with pytest.raises(ParameterError, match=f"parameter {name}="):
        TabulatedProfile(**kwargs)
