"""Soundness as properties: no bound, plan, tuning or PTR answer of symsel is ever below an exact value.

"A bound is an upper bound." Every reference here is computed in this file or in ``reference_profiles.py``,
independently of the code under test:

* on finite pairs (random pure-DP ε, k-ary randomized response, random pairs ``PairProfile(p, q)``, the worst
  pair of several ``(ε_i, δ_i)`` guarantees) the exact selection law ``A(y) = φ(Q(≤y)) − φ(Q(<y))``,
  ``A(⊥) = φ(0)`` summed at 50 digits (:func:`reference_profiles.exact_selection_delta`), under a random score
  order: a selection that exists, so every certified ``δ(ε)`` must be at least its ``δ(ε)``, and every certified
  ``ε(δ)`` must have its ``δ`` at most the target;
* on Gaussian bases a thin binning of the Gaussian pair (masses by ``mpmath.ncdf`` at 50 digits; a binning is a
  post-processing, hence a valid base) ordered by slice insertion, evaluated by the same exact sum: a certified
  lower bound that every upper bound must clear.

The comparisons carry no tolerance: an exact value equal to a bound is allowed, one above it by any amount is a
failure. (Float masses perturb the binned Gaussian pair by ~1e-16 relative, far below the gap tested.)
"""

from __future__ import annotations

import itertools
import math
import os

import mpmath
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from reference_profiles import exact_selection_delta, random_pair

import symsel
from symsel.bounds import bound
from symsel.errors import NotApplicableError
from symsel.profiles import GaussianProfile, PairProfile, RandomizedResponseProfile, pure
from symsel.spec import parse_distribution

DPS = 50
# benchmarks/mutation.py sets SYMSEL_MUTATION: a failing example is reported at once (no shrinking, no database)
settings.register_profile("mutation", phases=[Phase.explicit, Phase.generate], database=None)
if os.environ.get("SYMSEL_MUTATION"):
    settings.load_profile("mutation")
SETTINGS = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: laws whose paper closed form exists (Koskela et al. Thm 5.2, 5.7, Cor 5.8).
PAPER_FAMILIES = ("geometric", "logarithmic", "tnb", "poisson", "binomial")


# ------------------------------------------------------------------------------------------ strategies
@st.composite
def laws(draw, finite_support: bool = False):
    """A law of K (spec string, its family name), parameters drawn; Poisson means go below 1 (the Rényi route
    counts the output of K = 0, see test_best_is_not_zero_for_a_poisson_law_of_mean_below_one)."""
    unbounded = [
        lambda: ("geometric", f"geometric(mean={draw(st.floats(1.5, 20.0)):.4f})"),
        lambda: ("poisson", f"poisson(mean={draw(st.floats(0.2, 15.0)):.4f})"),
        lambda: ("tnb", f"tnb(eta={draw(st.sampled_from([-0.5, 0.5, 2.0]))}, mean={draw(st.floats(2.0, 15.0)):.4f})"),
        lambda: ("logarithmic", f"logarithmic(mean={draw(st.floats(1.5, 15.0)):.4f})"),
    ]
    bounded = [
        lambda: ("binomial", f"binomial(n={(n := draw(st.integers(2, 12)))}, p={draw(st.floats(1 / n, 0.9)):.4f})"),
        lambda: ("point", f"point(k={draw(st.integers(2, 5))})"),
        lambda: ("two_point", f"two_point(L={draw(st.integers(2, 8))}, s={draw(st.floats(0.1, 0.9)):.4f})"),
        lambda: ("truncated", f"truncated(dist=geometric(mean={draw(st.floats(1.5, 10.0)):.4f}), "
                              f"k_max={draw(st.integers(3, 30))})"),
    ]
    family, spec = draw(st.sampled_from(bounded if finite_support else unbounded + bounded))()
    return family, spec


@st.composite
def finite_bases(draw):
    """A base profile and one of its dominating pairs ``(p, r)``, written here: pure ε-DP (binary randomized
    response), k-ary randomized response, or a random pair held as ``PairProfile``."""
    kind = draw(st.sampled_from(["pure", "rr", "pair"]))
    eps = draw(st.floats(0.05, 2.0))
    if kind == "pure":
        e = math.exp(eps)
        return pure(eps), [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]
    if kind == "rr":
        k = draw(st.integers(3, 4))
        e = math.exp(eps)
        p = [e / (e + k - 1)] + [1 / (e + k - 1)] * (k - 1)
        r = [p[1], p[0], *p[2:]]
        return RandomizedResponseProfile(eps, k), p, r
    n = draw(st.integers(2, 4))
    p, r, _ = random_pair(draw(st.integers(0, 10_000)), n)
    return PairProfile([float(x) for x in p], [float(x) for x in r]), list(p), list(r)


def _exact(p, r, order, dist, eps) -> mpmath.mpf:
    return exact_selection_delta(p, r, order, dist, eps, dps=DPS)


def _distinct_losses(p, r) -> int:
    return len({round(math.log(a) - math.log(b), 12) for a, b in zip(p, r, strict=True) if a > 0 and b > 0})


def _methods(family: str, p, r) -> list[str]:
    methods = ["envelope", "fdp", "best"]
    if family in PAPER_FAMILIES:
        methods.append("paper")
    # composition on a pair with three or more distinct losses and a law of unbounded support either takes minutes
    # (exact compositions of ~1000 runs) or raises TypeError: see test_composition_of_a_four_loss_pair_run_300_times
    if family in ("binomial", "point", "two_point", "truncated") or _distinct_losses(p, r) <= 2:
        methods.append("composition")
    return methods


# ------------------------------------------------------------------------------------------ bounds
@SETTINGS
@given(base=finite_bases(), law=laws(), data=st.data(),
       eps=st.lists(st.floats(-0.5, 4.0), min_size=3, max_size=3), log_delta=st.floats(-8.0, -1.0))
def test_no_bound_is_below_the_exact_selection_on_a_finite_pair(base, law, data, eps, log_delta):
    """symsel.bound(dist, base, m) for m in envelope, fdp, paper (where it applies), composition and best: its
    δ(ε) is at least the exact δ(ε) of the selection on a dominating pair of the base under a random score order,
    at every ε drawn (negative ones included), and at its own ε(δ) the exact δ is at most δ."""
    profile, p, r = base
    family, spec = law
    dist = parse_distribution(spec)
    order = data.draw(st.permutations(range(len(p))))
    delta = 10.0**log_delta
    exact = {e: _exact(p, r, order, dist, e) for e in eps}
    for method in _methods(family, p, r):
        result = bound(dist, profile, method)
        for e in eps:
            assert mpmath.mpf(float(result.delta(e))) >= exact[e], (method, spec, profile.spec, e)
        eps_bound = result.epsilon(delta)
        if math.isfinite(eps_bound):
            assert _exact(p, r, order, dist, eps_bound) <= delta, (method, spec, profile.spec, eps_bound)


@pytest.mark.parametrize("method", ["rdp", "rdp_lemma7", "best"])
def test_a_mirrored_delta_is_rounded_up_to_one_minus_e_to_the_eps(method):
    """The counterexample a randomized run of the test above found (CI, stop 23): geometric(mean=2) on 3-ary
    randomized response. The selection is pure with ε ≈ 0.40, so δ(0.5) = 0 and by symmetry
    δ(−0.5) = 1 − e^{−0.5} exactly; float64 ``−expm1(−0.5)`` rounds 6.6e-19 below it, and the Rényi route (hence
    best) returned that. The exact selection on the dominating pair is the reference, at 50 digits."""
    eps_base = 0.1349340543105717
    profile = RandomizedResponseProfile(eps_base, 3)
    e = math.exp(eps_base)
    p = [e / (e + 2), 1 / (e + 2), 1 / (e + 2)]
    r = [p[1], p[0], p[2]]
    dist = parse_distribution("geometric(mean=2.0000)")
    result = bound(dist, profile, method)
    for eps in (-0.5, -1.0, -3.0, -1e-9):
        assert mpmath.mpf(float(result.delta(eps))) >= _exact(p, r, [0, 1, 2], dist, eps), eps
    for eps in (-0.5, -1.0, -3.0, -1e-9, -1e-300):
        with mpmath.workdps(DPS):
            assert mpmath.mpf(float(result.delta(eps))) >= -mpmath.expm1(mpmath.mpf(eps)), eps


def test_composition_of_a_four_loss_pair_run_300_times():
    p, r = [0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4]
    dist = parse_distribution("point(k=300)")
    for method in ("composition", "best"):
        result = bound(dist, PairProfile(p, r), method)
        for eps in (1.0, 5.0):
            assert mpmath.mpf(float(result.delta(eps))) >= _exact(p, r, [0, 1, 2, 3], dist, eps)


@settings(max_examples=8, deadline=None)
@given(eps0=st.floats(0.05, 2.0), k=st.integers(2, 6), method=st.sampled_from(["fdp", "polygon", "envelope"]))
def test_fixed_k_runs_of_pure_dp_are_never_below_k_eps(eps0, k, method):
    """point(k) on pure ε0-DP: the best of k runs of binary randomized response has privacy loss exactly k ε0
    (the lowest outcome has masses t^k and s^k, s/t = e^ε0), so ε(δ = 0) is at least k ε0, with no tolerance. The
    ratio methods attain it (within their certificates, 1e-9); the envelope only promises its δ up to a floor of
    1e-45 (delta_floor), so at δ = 0 it is only checked from below."""
    dist, base = parse_distribution(f"point(k={k})"), pure(eps0)
    e = mpmath.exp(mpmath.mpf(eps0))
    p, r = [e / (1 + e), 1 / (1 + e)], [1 / (1 + e), e / (1 + e)]
    assert _exact(p, r, [0, 1], dist, k * eps0 * (1 - 1e-9)) > 0  # the loss k ε0 is attained
    value = bound(dist, base, method).epsilon(0.0)
    assert mpmath.mpf(value) >= k * mpmath.mpf(eps0)
    if method != "envelope":
        assert value <= k * eps0 * (1 + 1e-9)


# ------------------------------------------------------------------------------------------ Gaussian bases
def _binned_gaussian(sigma: float, slices: int = 160) -> tuple[list[float], list[float]]:
    """N(0, σ²) against N(1, σ²) binned into ``slices`` equal-width bins on [−8σ, 1 + 8σ] plus both tails
    (masses at 50 digits): a post-processing of the Gaussian mechanism, hence a valid base."""
    with mpmath.workdps(DPS):
        s = mpmath.mpf(sigma)
        cuts = [-8 * s + (1 + 16 * s) * i / slices for i in range(slices + 1)]
        edges = [-mpmath.inf, *cuts, mpmath.inf]
        p = [mpmath.ncdf(b / s) - mpmath.ncdf(a / s) for a, b in itertools.pairwise(edges)]
        r = [mpmath.ncdf((b - 1) / s) - mpmath.ncdf((a - 1) / s) for a, b in itertools.pairwise(edges)]
        return [float(x) for x in p], [float(x) for x in r]


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sigma=st.floats(1.0, 6.0), law=laws(), log_delta=st.floats(-8.0, -3.0))
def test_no_bound_on_a_gaussian_base_is_below_a_binned_gaussian_selection(sigma, law, log_delta):
    """Gaussian base: at every method's ε(δ), the exact δ of the selection on a binned Gaussian pair (slice
    insertion and expanding-interval orders for that ε, both directions) is at most δ (a certified lower bound on
    the worst case never exceeds an upper bound)."""
    # the constructions only choose a score order; the value is computed here at 50 digits
    from symsel.evidence.lower import expanding_interval_order, slice_insertion_order

    family, spec = law
    dist, base, delta = parse_distribution(spec), GaussianProfile(sigma), 10.0**log_delta
    p, r = _binned_gaussian(sigma)
    methods = ["envelope", "fdp", "composition", "interval", "best"] + (["paper"] if family in PAPER_FAMILIES else [])
    for method in methods:
        eps = bound(dist, base, method).epsilon(delta)
        if not math.isfinite(eps):
            continue
        for a, b in ((p, r), (r, p)):
            for construction in (slice_insertion_order, expanding_interval_order):
                order = construction(a, b, dist, eps)
                assert _exact(p, r, order, dist, eps) <= delta, (method, construction.__name__, spec, sigma, eps)


def test_best_is_not_zero_for_a_poisson_law_of_mean_below_one():
    dist, base, delta = parse_distribution("poisson(mean=0.5)"), GaussianProfile(1.0), 1e-3
    p, r = _binned_gaussian(1.0, slices=120)
    for method in ("best", "rdp", "rdp_lemma7"):
        eps = bound(dist, base, method).epsilon(delta)
        assert _exact(p, r, list(range(len(p))), dist, eps) <= delta, (method, eps)


@pytest.mark.parametrize(("spec", "sigma", "delta"), [("geometric(mean=30)", 4.0, 1e-6)])
def test_envelope_and_best_clear_the_certified_lower_bound_closely(spec, sigma, delta):
    """The certified lower bound (symsel.lower_bound: an exact worst case, rounded down) is below every method
    and within 0.1 % of the envelope bound: a mutation that lowers the envelope by more than that is caught."""
    dist, base = parse_distribution(spec), GaussianProfile(sigma)
    lower = symsel.lower_bound(base, dist, delta, budget=20).epsilon
    envelope = bound(dist, base, "envelope").epsilon(delta)
    assert lower <= bound(dist, base, "best").epsilon(delta)
    assert lower <= envelope <= lower * 1.001
    for method in ("fdp", "composition", "rdp"):
        assert bound(dist, base, method).epsilon(delta) >= lower, method
    try:
        assert bound(dist, base, "paper").epsilon(delta) >= lower
    except NotApplicableError:
        pass


# ------------------------------------------------------------------------------------------ several guarantees
def pointwise_vertices_mp(points, dps: int = DPS) -> list[tuple[mpmath.mpf, mpmath.mpf]]:
    """The lower boundary of the intersection of the ``(ε_i, δ_i)`` polygons (docs/setting.md), written here by
    brute force: every intersection of two constraint lines ``q' = e^{−ε}(q − δ)``, ``q' = 1 − δ − e^ε (1 − q)``,
    ``q' = 0`` that lies on their maximum, plus both ends, sorted; closed to ``(1, 1)``."""
    with mpmath.workdps(dps):
        lines = [(mpmath.mpf(0), mpmath.mpf(0))]  # (slope, intercept)
        for eps, delta in points:
            e, d = mpmath.exp(mpmath.mpf(eps)), mpmath.mpf(delta)
            lines += [(1 / e, -d / e), (e, 1 - d - e)]

        def lower(x):
            return max(a * x + b for a, b in lines)

        xs = {mpmath.mpf(0), mpmath.mpf(1)}
        for i, (a1, b1) in enumerate(lines):
            for a2, b2 in lines[i + 1:]:
                if a1 != a2:
                    x = (b2 - b1) / (a1 - a2)
                    if 0 < x < 1 and abs(a1 * x + b1 - lower(x)) <= mpmath.mpf(10) ** (5 - dps):
                        xs.add(x)
        vertices = [(x, lower(x)) for x in sorted(xs)]
        return [*vertices, (mpmath.mpf(1), mpmath.mpf(1))]


def pointwise_delta_mp(vertices, eps) -> mpmath.mpf:
    """``sup_q (q − e^ε q'_min(q))``: the max over the boundary's vertices (the objective is concave)."""
    with mpmath.workdps(DPS):
        g = mpmath.exp(mpmath.mpf(eps))
        return max(mpmath.mpf(0), max(x - g * y for x, y in vertices))


def pointwise_epsilon_mp(vertices, delta) -> mpmath.mpf:
    """The least ``ε ≥ 0`` with ``δ(ε) ≤ delta``: ``x_v − e^ε y_v ≤ delta`` at every vertex."""
    with mpmath.workdps(DPS):
        need = [mpmath.log((x - delta) / y) for x, y in vertices if x > delta and y > 0]
        if any(x > delta and y == 0 for x, y in vertices):
            return mpmath.inf
        return max([mpmath.mpf(0), *need])


def pointwise_pair_mp(vertices) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    """The worst pair of the guarantees: one outcome per boundary segment, masses ``(Δq, Δq')``."""
    p, r = [], []
    for (x0, y0), (x1, y1) in itertools.pairwise(vertices):
        if x1 - x0 > 0 or y1 - y0 > 0:
            p.append(x1 - x0)
            r.append(y1 - y0)
    return p, r


@st.composite
def guarantees(draw, count: int = 2):
    """``count`` guarantees ``(ε_i, δ_i)`` with increasing ε and decreasing δ (none redundant by construction)."""
    eps = sorted(draw(st.lists(st.floats(0.05, 3.0), min_size=count, max_size=count, unique=True)))
    logs = sorted(draw(st.lists(st.floats(-9.0, -2.0), min_size=count, max_size=count, unique=True)), reverse=True)
    return [(e, 10.0**d) for e, d in zip(eps, logs, strict=True)]


@settings(max_examples=10, deadline=None)
@given(points=guarantees(count=2), eps=st.lists(st.floats(-1.0, 4.0), min_size=4, max_size=4))
def test_ptr_profile_of_two_guarantees_is_the_intersection_of_their_polygons(points, eps):
    """ptr_profile([(ε1, δ1), (ε2, δ2)]): δ(ε) equals the hockey-stick of the intersected region (max over its
    vertices, 50 digits) to 1e-10 relative, is never below it, and is at most each single guarantee's curve."""
    from symsel.apps.ptr import ptr_profile

    profile = ptr_profile(points)
    vertices = pointwise_vertices_mp(points)
    singles = [ptr_profile([g]) for g in points]
    for e in eps:
        exact = pointwise_delta_mp(vertices, e)
        value = float(profile.delta(e))
        # rounded up (test_pointwise_profile_is_rounded_up); 1e-40 is the 50-digit reference's own error, which
        # shows where δ(ε_i) is exactly the guarantee's δ_i (the profile's cap there is exact)
        assert mpmath.mpf(value) >= exact * (1 - mpmath.mpf(10) ** -40), (points, e)
        assert value == pytest.approx(float(exact), rel=1e-10, abs=1e-300)  # the allowance: ~1e-15 of x + e^ε y
        assert all(value <= float(s.delta(e)) for s in singles)
    for q in (0.0, 1e-9, 0.3, 0.5, 0.9, 1 - 1e-9, 1.0):  # the boundary, rounded down, is at most the exact one
        assert mpmath.mpf(float(profile.region_lower(q))) <= profile.region_lower_mp(q, DPS), (points, q)
        assert float(profile.region_lower(q)) == pytest.approx(float(profile.region_lower_mp(q, DPS)), abs=1e-14)


def test_pointwise_profile_is_rounded_up():
    """Float64 vertices put δ(1.625) 1.6e-13 relative below the exact hockey-stick of the guarantees (two lines
    meeting at a shallow angle); δ is now evaluated at 40 digits and rounded up, the boundary rounded down."""
    points = [(1.640625, 1e-3), (2.0, 1e-4)]
    from symsel.apps.ptr import ptr_profile

    exact = pointwise_delta_mp(pointwise_vertices_mp(points), 1.625)
    assert mpmath.mpf(float(ptr_profile(points).delta(1.625))) >= exact
    assert mpmath.mpf(float(bound(parse_distribution("point(k=1)"), ptr_profile(points), "fdp").delta(1.625))) >= exact


@settings(max_examples=6, deadline=None)
@given(points=guarantees(count=2), mean=st.floats(2.0, 30.0), log_slack=st.floats(0.0, 2.0), data=st.data())
def test_ptr_tuning_is_never_below_the_exact_selection_of_the_worst_candidate(points, mean, log_slack, data):
    """ptr_tuning over candidates satisfying two Thm 6.1 guarantees, geometric K: at each method's ε the exact
    selection on the worst pair of the guarantees (a candidate that satisfies both), in a random score order,
    has δ at most the target; and the paper ε is Thm 5.2 by hand: min over ε1 of 2 log(e^ε1 + (m − 1) δ(ε1))
    (piecewise linear in e^ε1 between the boundary's slopes, so the minimum sits at one of them) plus ε(δ/m),
    pinned to 1e-6 relative and never below it."""
    from symsel.apps.ptr import ptr_tuning

    law = parse_distribution(f"geometric(mean={mean!r})")
    delta = min(0.5, mean * max(d for _, d in points) * 10.0**log_slack * 1.01)
    out = ptr_tuning(law, points, delta, methods=("paper", "envelope"))["epsilon"]
    vertices = pointwise_vertices_mp(points)
    p, r = pointwise_pair_mp(vertices)
    order = data.draw(st.permutations(range(len(p))))
    for method in ("paper", "envelope"):
        eps = out[method]["epsilon"]
        if math.isfinite(eps):
            assert _exact(p, r, order, law, eps) <= delta, (method, points, mean, eps)
    with mpmath.workdps(DPS):
        m = mpmath.mpf(law.mean)
        slopes = [(x1 - x0) / (y1 - y0) for (x0, y0), (x1, y1) in itertools.pairwise(vertices)
                  if y1 > y0]
        candidates = [mpmath.mpf(1), *(s for s in slopes if s >= 1)]
        log_ratio = min(2 * mpmath.log(s + (m - 1) * pointwise_delta_mp(vertices, mpmath.log(s))) for s in candidates)
        paper = log_ratio + pointwise_epsilon_mp(vertices, delta / m)
    assert mpmath.mpf(out["paper"]["epsilon"]) >= paper
    assert out["paper"]["epsilon"] == pytest.approx(float(paper), rel=1e-6)


@settings(max_examples=6, deadline=None)
@given(base=finite_bases(), law=laws(), data=st.data(), method=st.sampled_from(["paper", "envelope", "fdp"]),
       log_delta=st.floats(-7.0, -2.0))
def test_tuning_bound_dominates_every_admitted_candidate(base, law, data, method, log_delta):
    """tuning_bound(law, thresholds): thresholds read off a random pair's own exact profile (so the pair is
    admitted) and the worst pair the thresholds admit: the exact selection on either, in a random score order, is
    never above the tuning bound."""
    from symsel.apps.tuning import admits, tuning_bound

    _, p, r = base
    family, spec = law
    if method == "paper" and family not in PAPER_FAMILIES:
        method = "envelope"
    dist = parse_distribution(spec)
    eps1 = sorted(data.draw(st.lists(st.floats(0.0, 2.5), min_size=2, max_size=2, unique=True)))

    def two_sided(e):  # the pair's own profile at 50 digits
        with mpmath.workdps(DPS):
            g = mpmath.exp(mpmath.mpf(e))
            one = mpmath.fsum(max(mpmath.mpf(a) - g * mpmath.mpf(b), 0) for a, b in zip(p, r, strict=True))
            two = mpmath.fsum(max(mpmath.mpf(b) - g * mpmath.mpf(a), 0) for a, b in zip(p, r, strict=True))
            return max(one, two)

    thresholds = [(e, min(1.0, float(two_sided(e)) * (1 + 1e-9) + 1e-300)) for e in eps1]
    assert admits(PairProfile([float(x) for x in p], [float(x) for x in r]), thresholds)
    result = tuning_bound(dist, thresholds, method)
    worst_p, worst_r = pointwise_pair_mp(pointwise_vertices_mp(thresholds))
    delta = 10.0**log_delta
    eps_bound = result.epsilon(delta)
    for a, b in ((p, r), (worst_p, worst_r)):
        order = data.draw(st.permutations(range(len(a))))
        for e in (0.0, 0.5, 1.5):
            assert mpmath.mpf(float(result.delta(e))) >= _exact(a, b, order, dist, e), (method, spec, thresholds, e)
        if math.isfinite(eps_bound):
            assert _exact(a, b, order, dist, eps_bound) <= delta, (method, spec, thresholds, eps_bound)


# ------------------------------------------------------------------------------------------ planning
TEMPLATES = ("geometric(mean={mean})", "poisson(mean={mean})", "tnb(eta=0.5, mean={mean})")


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=finite_bases(), template=st.sampled_from(TEMPLATES), method=st.sampled_from(["paper", "fdp"]),
       budget=st.floats(0.3, 4.0), log_delta=st.floats(-7.0, -2.0), data=st.data())
def test_the_planned_mean_fits_the_budget_and_a_larger_one_does_not(base, template, method, budget, log_delta,
                                                                    data):
    """plan.max_mean: (i) the law at the reported mean, re-evaluated from scratch, has δ(ε_budget) ≤ δ and
    ε(δ) ≤ ε_budget, and the exact selection on the base's pair at ε_budget has δ at most the budget's; (ii) the
    mean is the edge: the law at mean·(1 + MEAN_RTOL) breaks the budget, unless the search stopped at its stated
    cap MAX_MEAN (then the mean is above MAX_MEAN/2 and flagged); (iii) when no mean fits, even min_mean breaks
    it."""
    from symsel.apps.plan import MAX_MEAN, MEAN_RTOL, max_mean

    profile, p, r = base
    delta = 10.0**log_delta
    plan = max_mean(template, profile, budget, delta, method)

    def law(mean):
        return parse_distribution(template.replace("{mean}", repr(mean)))

    def fits(mean):
        result = bound(law(mean), profile, method)
        return float(result.delta(budget)) <= delta and result.epsilon(delta) <= budget

    if plan["mean"] is None:
        assert not fits(1.0 + 1e-6)
        return
    mean = plan["template_mean"]
    assert fits(mean) and plan["epsilon"] <= budget and plan["delta_at_budget"] <= delta
    order = data.draw(st.permutations(range(len(p))))
    assert _exact(p, r, order, law(mean), budget) <= delta
    if plan.get("capped"):
        assert MAX_MEAN / 2 < mean <= MAX_MEAN
    else:
        assert not fits(mean * (1 + MEAN_RTOL)), plan


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law=laws(), method=st.sampled_from(["paper", "fdp", "envelope"]), budget=st.floats(0.5, 4.0),
       log_delta=st.floats(-8.0, -3.0))
def test_the_solved_sigma_fits_and_less_noise_does_not(law, method, budget, log_delta):
    """plan.solve_base on gaussian(sigma={sigma}): the bound at the σ found fits the budget (re-evaluated), a
    binned Gaussian selection at that σ (exact, slice insertion order) stays within it, and σ·(1 − 2e-3) (the
    search's xtol is 1e-3 in log σ) breaks it; when no σ is found, even the largest σ searched breaks it."""
    from symsel.apps.plan import BASE_KNOBS, solve_base
    from symsel.evidence.lower import slice_insertion_order

    family, spec = law
    if method == "paper" and family not in PAPER_FAMILIES:
        method = "fdp"
    dist, delta = parse_distribution(spec), 10.0**log_delta
    sigma = solve_base("gaussian(sigma={sigma})", spec, budget, delta, method)["sigma"]
    if sigma is None:  # e.g. fdp with P[K = 1] = 0 on a Gaussian base is vacuous: even the most noise fails
        most = bound(dist, GaussianProfile(BASE_KNOBS["sigma"][1]), method)
        assert float(most.delta(budget)) > delta or most.epsilon(delta) > budget
        return
    result = bound(dist, GaussianProfile(sigma), method)
    assert float(result.delta(budget)) <= delta and result.epsilon(delta) <= budget
    p, r = _binned_gaussian(sigma)
    for a, b in ((p, r), (r, p)):
        assert _exact(p, r, slice_insertion_order(a, b, dist, budget), dist, budget) <= delta
    less = bound(dist, GaussianProfile(sigma * (1 - 2e-3)), method)
    assert float(less.delta(budget)) > delta or less.epsilon(delta) > budget


# ------------------------------------------------------------------------------------------ σ-tuning
def gaussian_sigma_mp(epsilon: float, delta: float) -> mpmath.mpf:
    """The σ of the sensitivity-1 Gaussian mechanism with δ(ε) = delta exactly (Balle & Wang 2018: δ(ε) =
    Φ(1/(2σ) − εσ) − e^ε Φ(−1/(2σ) − εσ)), by bisection at 50 digits (δ falls with σ)."""
    with mpmath.workdps(DPS):
        eps, target = mpmath.mpf(epsilon), mpmath.mpf(delta)

        def gap(s):
            return mpmath.ncdf(1 / (2 * s) - eps * s) - mpmath.exp(eps) * mpmath.ncdf(-1 / (2 * s) - eps * s) - target

        lo, hi = mpmath.mpf("1e-3"), mpmath.mpf(1)
        while gap(hi) > 0:
            lo, hi = hi, 2 * hi
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if gap(mid) > 0 else (lo, mid)
        return hi


@settings(max_examples=12, deadline=None)
@given(epsilon=st.floats(0.05, 8.0), log_delta=st.floats(-14.0, -2.0))
def test_gaussian_sigma_for_is_never_below_the_exact_root(epsilon, log_delta):
    """tuning.gaussian_sigma_for: the σ returned makes the Gaussian mechanism (ε, δ)-DP — it is never below the
    50-digit root of its profile — and is within 1e-8 relative of that root (brentq's xtol plus the nudges)."""
    from symsel.apps.tuning import gaussian_sigma_for

    delta = 10.0**log_delta
    sigma = gaussian_sigma_for(epsilon, delta)
    exact = gaussian_sigma_mp(epsilon, delta)
    assert mpmath.mpf(sigma) >= exact
    assert sigma <= float(exact) * (1 + 1e-8)


@pytest.mark.parametrize("method", ["composition", "best"])
def test_composition_on_a_pointwise_base_is_never_below_the_exact_two_fold_composition(method):
    """point(k=2) on the guarantees whose float hull was 1.6e-13 off: the bound is at least the exact δ of the
    two-fold product of the guarantees' worst pair, summed at 50 digits over all pairs of outcomes (both
    directions), at ε around the product's losses. The smallest margin is 2e-12 relative (at ε ≈ 4.0), which is
    composition's allowance: without it (ROUNDING = 0) both cases fail. The base's finite pair now comes from the
    40-digit boundary; the float hull's pair (masses up to 1e-13 off) was still covered by that allowance."""
    from symsel.apps.ptr import ptr_profile

    points = [(1.640625, 1e-3), (2.0, 1e-4)]
    p, r = pointwise_pair_mp(pointwise_vertices_mp(points))
    result = bound(parse_distribution("point(k=2)"), ptr_profile(points), method)
    with mpmath.workdps(DPS):
        product = [(a * b, c * d) for a, c in zip(p, r, strict=True) for b, d in zip(p, r, strict=True)]
        for eps in (0.5, 1.5, 3.25, 3.5, 4.0, 4.025, 5.0):
            g = mpmath.exp(mpmath.mpf(eps))
            exact = max(mpmath.fsum(max(0, x - g * y) for x, y in product),
                        mpmath.fsum(max(0, y - g * x) for x, y in product))
            assert mpmath.mpf(float(result.delta(eps))) >= exact, (method, eps)
