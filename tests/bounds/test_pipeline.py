"""The whole pipeline's bound: a selection, then the final run (symsel.bounds.pipeline, docs/composition.md,
"A selection and the final run").

References are independent of the code under test: exact compositions of finite pairs summed here at 50 digits
(every pair of outputs, both orders), the exact selection of every score order of a finite pair followed by the
final run (the pmf of the best of k written out by hand), and the exact μ√2 of two Gaussian runs.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np
import pytest

import symsel
from symsel.bounds.pipeline import PipelineProfile, chord, with_final_run
from symsel.errors import ParameterError
from symsel.profiles import GaussianProfile


def exact_composition_delta(first: tuple[list, list], second: tuple[list, list], eps: float) -> mpmath.mpf:
    """``H_{e^ε}(P₁×P₂ ‖ Q₁×Q₂)`` at 50 digits, by summing over every pair of outputs."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps))
        return mpmath.fsum(max(mpmath.mpf(0), p1 * p2 - e * q1 * q2)
                           for p1, q1 in zip(*first, strict=True) for p2, q2 in zip(*second, strict=True))


def exact(masses: list[float]) -> list:
    with mpmath.workdps(50):
        values = [mpmath.mpf(repr(float(m))) for m in masses]
        total = mpmath.fsum(values)
        return [v / total for v in values]


def two_sided(first_p, first_q, second_p, second_q, eps) -> mpmath.mpf:
    return max(exact_composition_delta((first_p, first_q), (second_p, second_q), eps),
               exact_composition_delta((first_q, first_p), (second_q, second_p), eps))


SYMMETRIC = ["randomized_response(eps=1, k=2)", "randomized_response(eps=0.5, k=4)",
             "pair(p=[0.25, 0.75], q=[0.75, 0.25])",
             "approx(eps=0.5, delta=0.001)",  # mass at infinite loss
             "randomized_response(eps=10, k=2)"]  # losses beyond ε + 8: the symmetry bound below the grid
ASYMMETRIC = ["pair(p=[0.5384092330932617, 0.4615907669067383], q=[0.14445972442626953, 0.8555402755737305])",
              "pair(p=[0.2, 0.3, 0.5], q=[0.45, 0.35, 0.2])"]


@pytest.mark.parametrize("spec", SYMMETRIC + ASYMMETRIC)
def test_a_finite_pair_then_itself_is_never_below_the_exact_composition(spec: str) -> None:
    """With the "selection" the pair's own exact profile the bound is at or above the exact two-run composition
    (both orders); for a symmetric pair the only slack is the chords between grid values, and it is within 2 % in δ
    wherever δ > 1e-12 (an asymmetric pair also pays for composing its two-sided profile with each direction of the
    final run). Replacing the chord by the value at either end of its interval, or by a log-linear interpolation,
    fails here."""
    base = symsel.parse_profile(spec)
    pipeline = with_final_run(base, base)
    p, q = (exact(m) for m in base.finite_pair())
    checked = 0
    for eps in np.linspace(0.05, 3.0, 15):
        truth = two_sided(p, q, p, q, float(eps))
        value = pipeline.delta(float(eps))
        assert value >= float(truth) * (1 - 1e-12), (spec, eps, value, truth)
        if truth > 1e-12 and spec in SYMMETRIC:
            assert value <= float(truth) * 1.02, (spec, eps, value, truth)
            checked += 1
    assert checked >= 5 or spec in ASYMMETRIC


@pytest.mark.parametrize("spec", SYMMETRIC[2:3] + ASYMMETRIC)
def test_a_pair_then_another_pair_never_below_the_exact_composition(spec: str) -> None:
    """Different mechanisms before and after (the final run is randomized response): at or above the exact value."""
    first, second = symsel.parse_profile(spec), symsel.parse_profile("randomized_response(eps=0.8, k=3)")
    pipeline = with_final_run(first, second)
    p1, q1 = (exact(m) for m in first.finite_pair())
    p2, q2 = (exact(m) for m in second.finite_pair())
    for eps in (0.1, 0.6, 1.3, 2.2):
        truth = two_sided(p1, q1, p2, q2, eps)
        assert pipeline.delta(eps) >= float(truth) * (1 - 1e-12), (spec, eps)


def selection_pmf(p: list, order: tuple[int, ...], k: int) -> list:
    """The output law of the best of ``k`` runs of a finite mechanism whose outputs are ranked by ``order`` (lowest
    first): ``P[best = o] = F(o)^k − F(o⁻)^k``."""
    out = [mpmath.mpf(0)] * len(p)
    below = mpmath.mpf(0)
    for o in order:
        out[o] = (below + p[o]) ** k - below**k
        below += p[o]
    return out


@pytest.mark.parametrize(("spec", "k"), [("randomized_response(eps=1, k=2)", 2),
                                         ("randomized_response(eps=0.5, k=3)", 3),
                                         ("pair(p=[0.2, 0.3, 0.5], q=[0.45, 0.35, 0.2])", 4)])
def test_best_of_k_then_the_final_run_never_below_any_score_order(spec: str, k: int) -> None:
    """The pipeline bound of ``symsel.bound(point(k), base)`` then one more run is at or above the exact pipeline of
    every deterministic score order of the outputs (both orders of the pair). (It can be well above them: the bound
    takes the selection's worst order at each ``ε − ℓ`` separately, as every composition of privacy profiles does;
    the composition's own slack is measured against exact values above and below.)"""
    base = symsel.parse_profile(spec)
    pipeline = with_final_run(symsel.bound(symsel.point(k=k), base))
    p, q = (exact(m) for m in base.finite_pair())
    for eps in (0.3, 1.0, 1.8):
        with mpmath.workdps(50):
            worst = mpmath.mpf(0)
            for order in itertools.permutations(range(len(p))):
                for first, second in ((p, q), (q, p)):
                    sel = (selection_pmf(first, order, k), selection_pmf(second, order, k))
                    worst = max(worst, exact_composition_delta(sel, (first, second), eps))
        value = pipeline.delta(eps)
        assert value >= float(worst) * (1 - 1e-12), (spec, k, eps, value, worst)


@pytest.mark.parametrize("sigma", [1.0, 2.0, 4.0])
def test_two_gaussian_runs_at_or_above_the_exact_mu_sqrt2_and_within_one_percent(sigma: float) -> None:
    """The Gaussian's own profile then one more Gaussian run: the exact pipeline is μ√2-GDP (closed form); the final
    run enters through dp-accounting's pessimistic PLD, so the bound is above, within 1 % of ε at δ = 1e-6."""
    g = GaussianProfile(sigma)
    pipeline = with_final_run(g, g)
    composed = GaussianProfile(sigma / np.sqrt(2))
    for eps in (0.2, 1.0, 2.5):
        assert pipeline.delta(eps) >= composed.delta(eps) * (1 - 1e-9)
    truth = composed.epsilon(1e-6)
    assert truth <= pipeline.epsilon(1e-6) <= truth * 1.01


def test_the_chord_lies_on_or_above_a_convex_curve_and_through_its_ends() -> None:
    """The chord in e^x between two points of e^{-2x}-like curves (convex in e^x) is at or above the curve."""
    g0, g1 = np.array([0.0]), np.array([0.5])
    for s in (0.5, 2.0, 10.0):
        b0, b1 = np.exp(-s * g0), np.exp(-s * g1)
        xs = np.linspace(0.0, 0.5, 11)
        values = chord(xs, np.repeat(g0, 11), np.repeat(g1, 11), np.repeat(b0, 11), np.repeat(b1, 11))
        curve = np.exp(-s * xs)  # e^{-s x} = γ^{-s}: convex in γ
        assert np.all(values >= curve * (1 - 1e-15))
        assert values[0] == pytest.approx(b0[0]) and values[-1] == pytest.approx(b1[0])


def test_refinement_is_counted_and_reused() -> None:
    """Values of the selection's bound are cached on the grid: a second evaluation at the same ε costs nothing."""
    base = symsel.parse_profile("randomized_response(eps=1, k=2)")
    pipeline = with_final_run(symsel.bound(symsel.point(k=3), base))
    pipeline.delta(1.0)
    spent = pipeline.evaluations
    assert spent > 0
    pipeline.delta(1.0)
    assert pipeline.evaluations == spent


def test_wrong_arguments_are_refused() -> None:
    base = symsel.parse_profile("randomized_response(eps=1, k=2)")
    with pytest.raises(ParameterError, match="selection"):
        PipelineProfile("not a profile", base)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="final"):
        with_final_run(base, 3)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="final"):
        with_final_run(base)  # a base profile has no base of its own
    with pytest.raises(ParameterError, match="selection"):
        with_final_run(None, base)  # type: ignore[arg-type]


def test_the_lowest_atoms_cut_in_a_search_are_charged_one(monkeypatch: pytest.MonkeyPatch) -> None:
    """While ``ε(δ)`` is searched, atoms of total mass at most ``BOTTOM_SHARE · target`` at the lowest ``x`` take
    ``S ≤ 1``: the value is at or above the same evaluation without the cut (the other atoms keep the same grid
    intervals), and above it by at most that mass. Dropping their charge fails here."""
    from symsel.bounds import pipeline as module

    g = GaussianProfile(1.0)
    target = 0.5  # far above δ(4): the lowest atoms' mass (up to 5e-5) is a large share of δ
    cut = with_final_run(g, g).delta_within(4.0, target)
    monkeypatch.setattr(module, "BOTTOM_SHARE", 0.0)
    whole = with_final_run(g, g).delta_within(4.0, target)
    assert whole < 1e-2
    assert whole <= cut <= whole + 1e-4 * target * (1 + 1e-9)
    assert cut > whole * (1 + 1e-3), (cut, whole)  # the cut is active in this case


@pytest.mark.parametrize("sigma", [0.9, 2.0])
def test_the_search_with_an_extrapolated_bracket_finds_the_same_crossing(sigma: float) -> None:
    """The pipeline's own search (extrapolated bracket) and the generic one (doubling) on the same targeted δ(ε)
    agree to the root finder's tolerance: the guess only changes the work, and the answer is checked within δ."""
    from symsel.profiles.base import Profile

    g = GaussianProfile(sigma)
    pipeline = with_final_run(g, g)
    found = pipeline.epsilon(1e-6)
    pipeline._target = 1e-6
    generic = Profile.epsilon(pipeline, 1e-6)
    pipeline._target = None
    assert found == pytest.approx(generic, rel=1e-9)
    assert pipeline.delta_within(found, 1e-6) <= 1e-6


def test_a_final_run_whose_pair_does_not_fit_falls_back_to_basic_composition() -> None:
    """``gaussian(sigma=1e-3)`` as the final run: its PLD would need tens of GiB, so the pipeline is bounded by the
    basic composition theorem. The answer is above the final run's own ε (the pipeline releases it: a lower bound)
    and at most the even split of δ between the two (the basic theorem at another split, certified as well)."""
    from symsel.profiles.composition import BasicComposition

    base = GaussianProfile(4.0)
    selection = symsel.bound(symsel.geometric(mean=3), base)
    final = GaussianProfile(1e-3)
    pipeline = with_final_run(selection, "gaussian(sigma=1e-3)")
    assert isinstance(pipeline, BasicComposition)
    eps = pipeline.epsilon(1e-6)
    assert final.epsilon(1e-6) < eps <= (selection.epsilon(5e-7) + final.epsilon(5e-7)) * (1 + 1e-9)
    assert eps <= final.epsilon(1e-6) * 1.001  # the proportional split: the final run's ε and little more


def test_exceeds_is_only_said_where_the_evaluation_is_over_the_target_and_costs_less() -> None:
    """``exceeds(ε, δ)`` (the coarse grid's floor walked up from the lowest atom) is a shortcut of
    ``delta_within(ε, δ) > δ``: never said where the evaluation fits, said on a pipeline far over the target, and
    there with fewer values of the selection's bound than the evaluation spends."""
    decided = fits = 0
    base = symsel.parse_profile("randomized_response(eps=2, k=4)")
    selection = symsel.bound(symsel.point(k=3), base)
    for eps, target in itertools.product((0.5, 2.0, 3.0), (1e-3, 0.3, 0.9)):
        fresh = with_final_run(selection, base)
        evaluation = with_final_run(selection, base)
        value = evaluation.delta_within(eps, target)
        if fresh.exceeds(eps, target):
            decided += 1
            assert value > target, (eps, target)
            assert fresh.evaluations < evaluation.evaluations
        fits += value <= target
    assert decided >= 3 and fits >= 3  # the shortcut is taken where the bound is far over the target, and both
    # sides occur


def test_gaussian_final_run_with_little_noise_has_a_pair():
    """σ = 0.05 (μ = 20): dp-accounting's PLD of the final run is too wide for its query grid; the pair comes from
    the closed-form loss instead, and the pipeline is at least the selection alone and the final run alone."""
    from symsel.bounds.pipeline import final_run_pairs

    base = GaussianProfile(0.05)
    (pair,) = final_run_pairs(base)
    assert "closed-form" in pair.source
    selection = symsel.bound(symsel.point(2), base, "composition")
    pipeline = with_final_run(selection, base)
    for eps in (300.0, 400.0):
        assert pipeline.delta(eps) >= max(float(selection.delta(eps)), float(base.delta(eps)))
