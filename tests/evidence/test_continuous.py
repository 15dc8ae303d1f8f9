"""Selection on continuous Gaussian and Laplace pairs (symsel.evidence.continuous).

References: the closed-form profile of the Gaussian mechanism (K = 1), closed-form Rényi
divergences of the Gaussian and Laplace pairs, and fine discretizations of the pair (a
post-processing, so never above the continuous value).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from symsel import distributions as dists
from symsel.errors import ParameterError
from symsel.evidence.continuous import discretize, selection_cdf, selection_delta, selection_epsilon, selection_renyi
from symsel.evidence.exact import selection_delta as finite_selection_delta
from symsel.evidence.exact import selection_epsilon as finite_selection_epsilon
from symsel.evidence.exact import selection_renyi as finite_selection_renyi
from symsel.pairs.location import GaussianPair, LaplacePair

GEOM10 = dists.geometric(mean=10)


@pytest.fixture(autouse=True)
def _reference_precision():
    with mpmath.workdps(60):
        yield


def gaussian_mechanism_epsilon(mu: float, delta: float) -> mpmath.mpf:
    """Invert delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) by bisection."""
    mu_, d = mpmath.mpf(mu), mpmath.mpf(repr(delta))

    def prof(e):
        return mpmath.ncdf(-e / mu_ + mu_ / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu_ - mu_ / 2)

    lo, hi = mpmath.mpf(0), mpmath.mpf(50)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if prof(mid) > d else (lo, mid)
    return hi


@pytest.mark.parametrize(("mu", "delta"), [(0.5, 1e-5), (1.0, 1e-3), (0.25, 1e-6)])
def test_single_run_is_the_gaussian_mechanism(mu, delta):
    """K = 1: the selection is the Gaussian mechanism, whose profile is known in closed form."""
    got = selection_epsilon(GaussianPair(mu), dists.point(1), delta, dps=30)
    assert abs(got - gaussian_mechanism_epsilon(mu, delta)) < 1e-25


def test_laplace_pure_epsilon_of_k_runs():
    """D_inf of one Laplace run is shift/scale; of k fixed runs it is k * shift/scale (the lower
    tail, where F'/F = e^(shift/scale) exactly)."""
    pair = LaplacePair(0.7, 1.3)
    assert abs(selection_epsilon(pair, dists.point(1), 0, 30) - mpmath.mpf(0.7) / mpmath.mpf(1.3)) < 1e-25
    assert abs(selection_epsilon(pair, dists.point(3), 0, 30) - 3 * mpmath.mpf(0.7) / mpmath.mpf(1.3)) < 1e-20
    assert selection_epsilon(GaussianPair(0.5), GEOM10, 0, 30) == mpmath.inf


@pytest.mark.parametrize(("pair", "span"), [(GaussianPair(0.5), (-12, 14)), (LaplacePair(1.0, 1.0), (-40, 40))],
                         ids=repr)
def test_discretizations_approach_the_continuous_value_from_below(pair, span):
    """Binning is post-processing: the discretized eps is below the continuous one and
    converges to it as the bins get finer."""
    delta = 1e-5
    cont = selection_epsilon(pair, GEOM10, delta, dps=30)
    values = []
    for n in (8, 40, 200):
        cuts = np.unique(np.concatenate([np.linspace(*span, n), np.linspace(-0.5, 1.5, n)]))
        disc = finite_selection_epsilon(discretize(pair, cuts), GEOM10, delta, 30)
        assert disc <= cont + 1e-20
        values.append(float(disc))
    assert values[0] < values[-1]
    assert float(cont) - values[-1] < 2e-3


def test_hockey_stick_matches_the_profile_and_dominates_discretizations():
    pair = GaussianPair(0.5)
    eps = selection_epsilon(pair, GEOM10, 1e-4, dps=30)
    # the reported eps errs low: the divergence there is still at least delta
    h = selection_delta(pair, GEOM10, eps, dps=30)
    assert h >= mpmath.mpf("1e-4") * (1 - mpmath.mpf(10) ** -20)
    assert abs(h / mpmath.mpf("1e-4") - 1) < 1e-20
    disc = discretize(pair, np.linspace(-8, 10, 60))
    for e in (-0.3, 0.0, 0.5, 1.5):
        assert selection_delta(pair, GEOM10, e, dps=30) >= finite_selection_delta(disc, GEOM10, e, 30) - 1e-25
    # negative eps: at least 1 - e^eps (any pair of laws)
    assert selection_delta(pair, GEOM10, -0.5, dps=30) >= 1 - mpmath.exp(-0.5)


def test_selection_cdf_is_phi_of_the_base_cdf():
    pair = LaplacePair(1.0, 2.0)
    with mpmath.workdps(30):
        x = mpmath.mpf("0.3")
        base = 1 - mpmath.exp(-x / 2) / 2  # side 1: Lap(0, 2)
        assert abs(selection_cdf(pair, dists.poisson(3), x, 1, 30) - mpmath.exp(3 * (base - 1))) < 1e-28
    assert selection_cdf(pair, dists.poisson(3), -mpmath.inf, 0, 30) == dists.poisson(3).phi_mp(0, 30)


def test_renyi_of_single_runs_in_closed_form():
    """K = 1: D_lambda of N(mu,1) vs N(0,1) is lambda mu^2 / 2; of Lap(a,1) vs Lap(0,1) it is
    log(lambda/(2 lambda - 1) e^((lambda-1) a) + (lambda-1)/(2 lambda - 1) e^(-lambda a)) / (lambda - 1)."""
    assert abs(selection_renyi(GaussianPair(0.5), dists.point(1), 3, dps=20) - mpmath.mpf(3) * 0.25 / 2) < 1e-15
    lam, a = 2.5, 1.0
    want = math.log(lam / (2 * lam - 1) * math.exp((lam - 1) * a) + (lam - 1) / (2 * lam - 1) * math.exp(-lam * a)) / (
        lam - 1)
    assert float(selection_renyi(LaplacePair(a, 1.0), dists.point(1), lam, dps=20)) == pytest.approx(want, rel=1e-12)


def test_renyi_of_a_selection_dominates_its_discretization():
    pair = GaussianPair(0.5)
    cont = selection_renyi(pair, GEOM10, 2, dps=20)
    disc = discretize(pair, np.linspace(-8, 10, 120))
    d = finite_selection_renyi(disc, GEOM10, 2, 30)
    assert d <= cont + 1e-15
    assert float(cont - d) < 5e-3


def test_bin_masses_float_match_mpmath_in_the_tails():
    """Float bin masses use log-space differences: accurate even for tiny far-tail bins."""
    for pair in (GaussianPair(0.3), LaplacePair(0.5, 1.0)):
        cuts = [-30.0, -29.999, -1.0, -1e-9, 1e-9, 2.0, 25.0, 25.001]
        fp, fq = pair.bin_masses_float(cuts)
        mp_, mq = pair.bin_masses_mp(cuts, 30)
        for got, want in zip([*fp, *fq], [*mp_, *mq], strict=True):
            if want > 1e-300:
                assert got == pytest.approx(float(want), rel=1e-9)


@pytest.mark.parametrize(
    ("make", "name"),
    [
        (lambda: GaussianPair(float("nan")), "shift"),
        (lambda: LaplacePair(1.0, 0.0), "scale"),
        (lambda: LaplacePair(1.0, -2.0), "scale"),
        (lambda: discretize(GaussianPair(1.0), [1.0, 0.5]), "cuts"),
        (lambda: selection_epsilon(GaussianPair(1.0), GEOM10, 1.5), "delta"),
        (lambda: selection_delta("not a pair", GEOM10, 0.0), "pair"),
        (lambda: selection_renyi(GaussianPair(1.0), GEOM10, 0.9), "order"),
    ],
)
def test_bad_inputs_raise_parameter_error(make, name):
    with pytest.raises(ParameterError) as info:
        make()
    assert info.value.name == name
