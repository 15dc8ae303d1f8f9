"""The floor of a composed DP-SGD profile, and ``best`` skipping the composition with it.

``k`` runs of ``dpsgd(q, σ, T)`` compose into ``k T`` steps; :class:`symsel.profiles.dpaccounting.DpsgdCompositionFloor`
bounds their ``δ(ε)`` from below by the hockey-stick divergence of a dominated pair (one step bucketed by loss, the
steps' labels summed), computed from below (:func:`symsel.pairs.loss.hockey_stick_below`). ``best`` asks that floor
before building the composition's PLD (a 40000-step FFT for 40 runs of 1000 steps), and skips the composition where
the floor is already over the target at the other components' ``ε``.

References here are independent: brute-force hockey-stick sums at 50 digits on random finite pairs, the closed form
of the Gaussian profile (``q = 1``: ``T`` steps are one Gaussian of ``μ = √T / σ``), and dp-accounting's pessimistic
composition itself."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

import symsel
from symsel.pairs.loss import DominatedPair, from_finite, hockey_stick_below, loss_pair
from symsel.profiles.dpaccounting import DpsgdCompositionFloor


def _hockey_stick_mp(a: np.ndarray, b: np.ndarray, a_inf: float, eps: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps))
        return mpmath.mpf(a_inf) + mpmath.fsum(max(mpmath.mpf(0), mpmath.mpf(x) - e * mpmath.mpf(y))
                                               for x, y in zip(a.tolist(), b.tolist(), strict=True))


@pytest.mark.parametrize("seed", range(6))
def test_the_hockey_stick_from_below_is_the_exact_sum_from_below(seed: int) -> None:
    """On random finite pairs (some atoms at loss ±∞), at most the exact divergence and within 1e-12 of it."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    a, b = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
    a[rng.integers(n)] = 0.0
    b[rng.integers(n)] = 0.0
    a, b = a / a.sum(), b / b.sum()
    pair = from_finite(a, b, DominatedPair, "P,Q", "random")
    eps = np.concatenate([np.linspace(-3.0, 4.0, 57), [50.0, 800.0]])
    below = hockey_stick_below(pair, eps)
    for e, value in zip(eps, below, strict=True):
        exact = _hockey_stick_mp(a, b, 0.0, float(e))
        assert value <= exact
        assert value >= exact - 1e-12


def test_the_allowances_lower_the_bound_by_what_they_allow() -> None:
    """A pair with masses known within 1 % relative and 1e-3 absolute: the bound is at most the exact divergence of
    the lowest masses the allowances admit for ``Q`` against the highest for ``Q'``."""
    a, b = np.array([0.1, 0.3, 0.6]), np.array([0.5, 0.3, 0.2])
    pair = loss_pair(a, b, DominatedPair, "P,Q", "allowances", relative_error=0.01, mass_error=1e-3)
    eps = np.array([-1.0, 0.0, 0.5, 1.0])
    below = hockey_stick_below(pair, eps)
    for e, value in zip(eps, below, strict=True):
        # the best set here is the suffix of atoms with a > e^ε b: its masses moved by the allowances
        worst = max(0.0, max(sum(a[j:]) * 0.99 - 1e-3 - math.exp(e) * (sum(b[j:]) * 1.01 + 1e-3) for j in range(3)))
        assert value <= worst + 1e-15
        assert value >= worst - 1e-12


def _gaussian_delta_mp(mu: float, eps: float) -> mpmath.mpf:
    with mpmath.workdps(50):
        mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-eps / mu + mu / 2) - mpmath.exp(eps) * mpmath.ncdf(-eps / mu - mu / 2)


@pytest.mark.parametrize(("sigma", "steps"), [(2.0, 40), (8.0, 1000), (30.0, 40_000)])
def test_the_floor_of_unsampled_steps_is_below_the_gaussian_and_close(sigma: float, steps: int) -> None:
    """``q = 1``: ``T`` steps of noise ``σ`` are the Gaussian mechanism with ``μ = √T / σ`` (closed form at 50
    digits). The floor is below it everywhere, and within 15 % of it wherever ``δ ≥ 1e-10``."""
    mu = math.sqrt(steps) / sigma
    floor = DpsgdCompositionFloor(1.0, sigma, steps)
    eps = np.linspace(-2.0, mu * mu / 2 + 7 * mu, 41)
    values = np.asarray(floor.delta(eps), dtype=float)
    for e, value in zip(eps, values, strict=True):
        exact = _gaussian_delta_mp(mu, float(e))
        assert value <= exact
        if exact >= 1e-10:
            assert value >= 0.85 * exact, (e, value, exact)


@pytest.mark.parametrize(("base", "k"), [("dpsgd(q=0.01, sigma=1.1, steps=1000)", 40),
                                         ("dpsgd(q=0.01, sigma=4, steps=100)", 3),
                                         ("dpsgd(q=0.1, sigma=1, steps=10)", 8)])
def test_the_floor_is_below_the_composition_and_close_to_it(base: str, k: int) -> None:
    """Against dp-accounting's pessimistic PLD of ``k T`` steps (the composition bound): below it at every ``ε``,
    negative ones too, and its ``ε`` at δ = 1e-6 within 6 % of the composition's."""
    composed, _ = symsel.parse_profile(base).self_composed(k)
    floor = composed.floor
    assert isinstance(floor, DpsgdCompositionFloor)
    top = composed.epsilon(1e-12)
    eps = np.linspace(-1.0, top, 81)
    assert np.all(np.asarray(floor.delta(eps)) <= np.asarray(composed.delta(eps)))
    assert 0.94 * composed.epsilon(1e-6) <= floor.epsilon(1e-6) <= composed.epsilon(1e-6)


def test_best_skips_the_composition_where_its_floor_rules_it_out() -> None:
    """40 runs of the usual DP-SGD run: the composition (ε = 12.95 at 1e-6) is far above ``interval`` (7.87), its
    floor says so at the envelope's ε, and its 40000-step PLD is never built; the answer is the smallest component's,
    each asked by name (to ``interval``'s search tolerance: ``best`` searches it down from the others' ε)."""
    law, base = symsel.parse_distribution("point(k=40)"), symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=1000)")
    best = symsel.bound(law, base, "best")
    answer = best.epsilon(1e-6)
    composition = next(part for part in best.profile.parts if part.method == "composition")
    assert composition.floor is not None
    assert "accountant" not in vars(composition.profile)  # the composed PLD was not built
    by_name = {m: symsel.bound(law, base, m).epsilon(1e-6) for m in best.details["components"].split(", ")}
    assert math.isclose(answer, min(by_name.values()), rel_tol=1e-5)  # interval: searched from above, or from 1
    assert by_name["composition"] > 12.9 and answer < 7.9


def test_best_still_takes_the_composition_where_it_wins() -> None:
    """A run whose privacy loss is tiny and heavy-tailed: the composition wins, and the floor does not stop it."""
    law, base = symsel.parse_distribution("point(k=3)"), symsel.parse_profile("dpsgd(q=1e-6, sigma=0.5, steps=10)")
    best = symsel.bound(law, base, "best")
    composition = symsel.bound(law, base, "composition").epsilon(1e-6)
    assert best.epsilon(1e-6) == composition
    assert best.certificate["wins_at_delta_1e-06"] == "composition"


def test_other_relations_get_no_floor() -> None:
    """The dominated pairs are those of add/remove; a replace-one run's composition is built as before."""
    base = symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=10, neighbouring='replace_one')")
    composed, _ = base.self_composed(3)
    assert composed.floor is None
