"""The interval bound on bases with a dominating pair ordered by privacy loss (symsel.bounds.interval_pairs,
symsel.pairs.loss, docs/interval.md, Theorem 3 and Corollary 4).

References are independent of the code under test: exact selections of every score order of split atoms, summed
here at 50 digits with the PGF written out by hand; symsel's certified lower bounds (exact 50-digit selections of
explicit mechanisms, symsel.evidence.lower); the exact two-run worst case (the 2-fold composition); the analytic
Laplace profile at 40 digits; dp-accounting's own PLD accountant; and figures stated in the project's notes
(an independent bucketed-composition probe for DP-SGD and Laplace).
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest

import symsel
from symsel.bounds.interval_pairs import PairIntervalProfile, pair_interval_profile
from symsel.errors import NotApplicableError
from symsel.pairs.loss import DominatingPair, from_finite, from_loss_grid, laplace_pairs, loss_pair

PGFS = {  # φ written out by hand, for the exact sums
    "point(k=2)": lambda z: z**2,
    "point(k=3)": lambda z: z**3,
    "point(k=5)": lambda z: z**5,
    "binomial(n=4, p=1/2)": lambda z: ((1 + z) / 2) ** 4,
}


def exact_selection_delta(pieces_p, pieces_q, order, phi, eps) -> mpmath.mpf:
    """``H_{e^ε}`` of the best of ``K`` runs on the finite pair with score ``order`` (lowest first), at 50 digits:
    ``Σ_o [φ(Y + a_o) − φ(Y) − e^ε (φ(X + b_o) − φ(X))]_+`` with ``(X, Y)`` the masses below ``o``."""
    with mpmath.workdps(50):
        e = mpmath.exp(mpmath.mpf(eps))
        x = y = mpmath.mpf(0)
        total = mpmath.mpf(0)
        for o in order:
            a, b = pieces_p[o], pieces_q[o]
            total += max(mpmath.mpf(0), phi(y + a) - phi(y) - e * (phi(x + b) - phi(x)))
            x, y = x + b, y + a
        return total


def split(masses, pieces):
    with mpmath.workdps(50):
        return [mpmath.mpf(m) / pieces for m in masses for _ in range(pieces)]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("law", list(PGFS))
def test_never_below_any_score_order_of_split_atoms(seed: int, law: str) -> None:
    """Every order of every piece of a random 3-atom pair, atoms cut in 2 (6! = 720 orders), in both directions:
    the bound at three ε is at least the exact worst of them."""
    rng = np.random.default_rng(seed)
    p, q = rng.dirichlet(np.ones(3)), rng.dirichlet(np.ones(3))
    p, q = p / p.sum(), q / q.sum()
    base = symsel.parse_profile(f"pair(p={[float(x) for x in p]}, q={[float(x) for x in q]})")
    dist = symsel.parse_distribution(law)
    profile = pair_interval_profile(dist, base)
    with mpmath.workdps(50):
        exact_p = [mpmath.mpf(repr(float(x))) for x in base.finite_pair()[0]]
        exact_q = [mpmath.mpf(repr(float(x))) for x in base.finite_pair()[1]]
        exact_p = [x / mpmath.fsum(exact_p) for x in exact_p]
        exact_q = [x / mpmath.fsum(exact_q) for x in exact_q]
    for eps in (0.3, 1.2):
        worst = mpmath.mpf(0)
        for first, second in ((exact_p, exact_q), (exact_q, exact_p)):
            sp, sq = split(first, 2), split(second, 2)
            for order in itertools.permutations(range(6)):
                worst = max(worst, exact_selection_delta(sp, sq, order, PGFS[law], eps))
        assert profile.delta(eps) >= float(worst) * (1 - 1e-12), (law, seed, eps)


FINITE_CASES = [  # (base, law, delta, largest allowed bound / certified lower bound)
    ("randomized_response(eps=1, k=2)", "point(k=3)", 1e-6, 1.0005),
    ("randomized_response(eps=1, k=2)", "point(k=40)", 1e-6, 1.0005),
    ("randomized_response(eps=0.5, k=4)", "binomial(n=20, p=1/2)", 1e-6, 1.0005),
    ("pair(p=[0.5384092330932617, 0.4615907669067383], q=[0.14445972442626953, 0.8555402755737305])",
     "point(k=10)", 1e-6, 1.0005),
    ("pair(p=[0.5384092330932617, 0.4615907669067383], q=[0.14445972442626953, 0.8555402755737305])",
     "point(k=40)", 1e-10, 1.0015),  # the lower bound on 1000 slices is the looser side here
    ("pair(p=[0.2, 0.3, 0.5], q=[0.45, 0.35, 0.2])", "point(k=5)", 1e-6, 1.0005),
]


@pytest.mark.parametrize(("base", "law", "delta", "ratio"), FINITE_CASES)
def test_finite_pairs_between_the_certified_lower_bound_and_a_hair_above(base, law, delta, ratio) -> None:
    """Sound (at or above the exact ε of a real selection on the pair) and tight (within ``ratio`` of it): a change
    that moves the bound down by more than that gap, or up by more, fails here."""
    b, dist = symsel.parse_profile(base), symsel.parse_distribution(law)
    upper = symsel.bound(dist, b, "interval").epsilon(delta)
    lower = symsel.lower_bound(b, dist, delta, budget=40).epsilon
    assert lower <= upper <= lower * ratio, (upper, lower)


def test_two_runs_of_a_finite_pair_never_below_their_exact_composition() -> None:
    """For K = 2 on a symmetric finite pair the worst case is the 2-fold composition: exact at 50 digits here."""
    p = [mpmath.mpf(1) / 4, mpmath.mpf(3) / 4]
    base = symsel.parse_profile("pair(p=[0.25, 0.75], q=[0.75, 0.25])")
    profile = pair_interval_profile(symsel.point(k=2), base)
    with mpmath.workdps(50):
        for eps in (0.1, 0.7, 1.5, 2.1):
            e = mpmath.exp(eps)
            pp = [p[i] * p[j] for i in range(2) for j in range(2)]
            qq = [p[1 - i] * p[1 - j] for i in range(2) for j in range(2)]
            exact = mpmath.fsum(max(0, x - e * y) for x, y in zip(pp, qq, strict=True))
            assert profile.delta(eps) >= float(exact) * (1 - 1e-12)
            assert profile.delta(eps) <= float(exact) * 1.001 + 1e-15  # and meets it


def test_laplace_point40_inside_the_independent_bracket() -> None:
    """Laplace(1), 40 runs, δ = 1e-6: an independent probe (exact bucketed masses, best expanding-interval order;
    an upper estimate) put the truth in [30.762, 30.805]; composition gives 34.93."""
    value = symsel.bound(symsel.point(k=40), symsel.parse_profile("laplace(scale=1)"), "interval").epsilon(1e-6)
    assert 30.762 <= value <= 30.805


@pytest.mark.parametrize(("base", "k", "lower", "ratio"), [
    ("dpsgd(q=0.01, sigma=1.1, steps=1000)", 40, 7.842, 1.005),   # probe: 7.842 (add direction)
    ("dpsgd(q=0.01, sigma=1.1, steps=1000)", 2, 2.4669, 1.002),   # probe; composition 2.4676
    ("dpsgd(q=0.1, sigma=1.0, steps=10)", 40, 8.200, 1.005),      # probe: at least 8.20
])
def test_dpsgd_fixed_k_above_the_independent_lower_bound(base, k, lower, ratio) -> None:
    """δ = 1e-6, lower bounds of an independent probe (one step's outputs bucketed by loss with exact masses, the
    buckets composed by convolving their indices: a post-processing of the composed pair, then the best
    expanding-interval order, the larger direction)."""
    value = symsel.bound(symsel.point(k=k), symsel.parse_profile(base), "interval").epsilon(1e-6)
    assert lower <= value <= lower * ratio


def laplace_divergence(eps0: float, t: float) -> mpmath.mpf:
    """The Laplace pair's ``H_α`` (α = e^t) from its closed form at 40 digits: ``Q[L > t] − α Q'[L > t]`` with the
    loss ``L = clip(2x − ε₀, ±ε₀)`` (in units of the scale)."""
    with mpmath.workdps(40):
        e0, tt = mpmath.mpf(eps0), mpmath.mpf(t)
        if tt >= e0:
            return mpmath.mpf(0)
        if tt < -e0:
            return 1 - mpmath.exp(tt)
        x = (tt + e0) / 2  # loss above t: outputs above x
        q_tail = 1 - mpmath.exp(x - e0) / 2 if x < e0 else mpmath.exp(e0 - x) / 2
        qp_tail = mpmath.exp(-x) / 2
        return q_tail - mpmath.exp(tt) * qp_tail


def pair_divergence(pair, t: float) -> mpmath.mpf:
    """``H_{e^t}`` of a loss pair summed at 50 digits from its float masses."""
    with mpmath.workdps(50):
        alpha = mpmath.exp(mpmath.mpf(t))
        total = mpmath.mpf(pair.a_infinity)
        for a, b in zip(pair.a.tolist(), pair.b.tolist(), strict=True):
            total += max(mpmath.mpf(0), mpmath.mpf(a) - alpha * mpmath.mpf(b))
        return total


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_the_laplace_pairs_dominate_and_are_dominated(eps0: float) -> None:
    """Hockey-stick divergences of both tails (α = e^t for t of both signs, on and between the dominating pair's grid
    losses), summed at 50 digits from the float masses: the dominating pair's at or above the Laplace pair's closed
    form, the dominated pair's at or below, within the masses' float rounding (1e-14)."""
    dominating, dominated = laplace_pairs(eps0, 50)
    width = 2 * eps0 / 50
    for t in np.concatenate([np.linspace(-eps0 * 1.2, eps0 * 1.2, 41) + 0.31 * width,
                             np.arange(-25, 26) * width]):
        exact = laplace_divergence(eps0, t)
        assert pair_divergence(dominating, t) >= exact - 1e-14
        assert pair_divergence(dominated, t) <= exact + 1e-14


@pytest.mark.parametrize("eps0", [0.1, 1.0, 3.0])
def test_the_laplace_dominating_pair_is_off_by_the_square_of_its_width(eps0: float) -> None:
    """Each bin split onto the ends of its loss range: the largest excess of a hockey-stick divergence over the
    closed form falls about fourfold when the bins are halved (second order in the width), where carrying each bin at
    its largest loss (summed here from the bins' closed-form masses) is first order and, at 50 bins, more than 10
    times larger."""
    ts = np.linspace(-eps0 * 1.1, eps0 * 1.1, 121)
    exact = [laplace_divergence(eps0, t) for t in ts]

    def excess(pair) -> float:
        return float(max(pair_divergence(pair, t) - e for t, e in zip(ts, exact, strict=True)))

    def rounded_up(bins: int) -> float:
        with mpmath.workdps(40):
            e0 = mpmath.mpf(eps0)
            edges = [e0 * j / bins for j in range(bins + 1)]
            masses = [(mpmath.exp(edges[j + 1] - e0) - mpmath.exp(edges[j] - e0)) / 2 for j in range(bins)]
            tops = [2 * edges[j + 1] - e0 for j in range(bins)]
            worst = mpmath.mpf(0)
            for t, e in zip(ts, exact, strict=True):
                alpha = mpmath.exp(mpmath.mpf(t))
                value = mpmath.fsum(max(0, m - alpha * m * mpmath.exp(-top))
                                    for m, top in zip(masses, tops, strict=True))
                rays = max(0, mpmath.exp(-e0) / 2 - alpha / 2) + max(0, 1 / mpmath.mpf(2) - alpha * mpmath.exp(-e0) / 2)
                value += rays
                worst = max(worst, value - e)
            return float(worst)

    coarse, fine = excess(laplace_pairs(eps0, 50)[0]), excess(laplace_pairs(eps0, 100)[0])
    assert 0 < fine and 3.0 <= coarse / fine <= 5.0
    assert rounded_up(50) > 10 * coarse


def a_pld(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A random PLD on a 1e-4 loss grid: 150 atoms (losses, ``Q``-masses), 1e-3 of ``Q`` at ``+∞``."""
    rng = np.random.default_rng(seed)
    losses = np.round(np.sort(rng.normal(0.5, 1.0, 150)), 4)
    return losses, rng.dirichlet(np.ones(150)) * 0.999


def pld_divergence(losses: np.ndarray, probs: np.ndarray, t: float) -> mpmath.mpf:
    """``H_{e^t}`` of the PLD (``Q'``-mass ``p e^{−l}`` at each loss, 1e-3 at ``+∞``) at 50 digits."""
    with mpmath.workdps(50):
        alpha = mpmath.exp(mpmath.mpf(t))
        return mpmath.mpf("1e-3") + mpmath.fsum(
            max(mpmath.mpf(0), mpmath.mpf(p) * (1 - alpha * mpmath.exp(-mpmath.mpf(loss))))
            for loss, p in zip(losses.tolist(), probs.tolist(), strict=True))


@pytest.mark.parametrize("seed", [3, 4])
def test_a_pld_split_onto_a_coarser_grid_dominates_it(seed: int) -> None:
    """from_loss_grid's coarsening (each atom split between the two grid losses around it): every hockey-stick
    divergence of both tails, on and between the grid losses, at or above the fine PLD's within the masses' float
    rounding (1e-14), both summed at 50 digits."""
    losses, probs = a_pld(seed)
    coarse = from_loss_grid(losses, probs, 1e-3, 0.05, "remove", "test")
    assert coarse.n <= 3 + math.ceil((losses[-1] - losses[0]) / 0.05)
    for t in np.concatenate([np.linspace(-4, 4, 41), np.linspace(-4, 4, 41) + 0.0173]):
        assert pair_divergence(coarse, t) >= pld_divergence(losses, probs, t) - 1e-14


def test_a_pld_split_onto_a_grid_is_off_by_the_square_of_its_width() -> None:
    """The split's largest excess over the fine PLD falls about fourfold when the grid is halved, where rounding
    each atom up to the top of its group (summed here) is first order and more than 10 times larger."""
    losses, probs = a_pld(5)
    ts = np.linspace(-3, 3, 97) + 0.0031
    fine = [pld_divergence(losses, probs, t) for t in ts]

    def excess(width: float) -> float:
        coarse = from_loss_grid(losses, probs, 1e-3, width, "remove", "test")
        return float(max(pair_divergence(coarse, t) - f for t, f in zip(ts, fine, strict=True)))

    def rounded_up(width: float) -> float:
        tops = (np.floor((losses - losses[0]) / width) + 1) * width + losses[0]
        return float(max(pld_divergence(tops, probs, t) - f for t, f in zip(ts, fine, strict=True)))

    assert 3.0 <= excess(0.1) / excess(0.05) <= 5.0
    assert rounded_up(0.05) > 10 * excess(0.05)


@pytest.mark.parametrize("law", ["point(k=2)", "point(k=3)"])
def test_interval_on_a_split_coarsening_is_never_below_any_score_order_of_the_fine_pair(law: str) -> None:
    """A 3-atom pair given as a PLD and split onto a grid 0.25 wide (every atom at least 0.05 from a grid loss): the
    interval bound on the coarse pair at three ε is at least the exact worst of every order of the fine pair's atoms
    cut in 2 (720 orders, summed at 50 digits)."""
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.45, 0.35, 0.2])
    losses = np.log(p / q)
    assert np.min(np.abs(losses - np.round(losses / 0.25) * 0.25)) > 0.05
    profile = PairIntervalProfile(symsel.parse_distribution(law), [from_loss_grid(losses, p, 0.0, 0.25, "P,Q", "t")])
    with mpmath.workdps(50):
        fine_p = [mpmath.mpf(float(x)) for x in p]
        fine_q = [x * mpmath.exp(-mpmath.mpf(float(loss))) for x, loss in zip(fine_p, losses, strict=True)]
    for eps in (0.2, 0.6, 1.2):
        sp, sq = split(fine_p, 2), split(fine_q, 2)
        worst = max(exact_selection_delta(sp, sq, order, PGFS[law], eps) for order in itertools.permutations(range(6)))
        assert profile.delta(eps) >= float(worst) * (1 - 1e-12), (law, eps)


def test_a_pld_coarsened_to_a_minimum_width_dominates_its_default_pairs() -> None:
    """pld_loss_pairs with ``min_width``: atoms on the multiples of that width (fewer atoms: each PLD atom is split
    onto its two neighbours, so at most the multiples from the one below the PLD's lowest loss to the one above its
    highest, and the atom at −∞), and every hockey-stick divergence (both tails, summed here from the pairs' masses)
    at or above that of the default pairs of the same PLD."""
    from symsel.profiles.dpaccounting import pld_arrays, pld_loss_pairs

    base = symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10)")
    fine = pld_loss_pairs(base.accountant, "fine", base.value_discretization_interval)
    coarse = pld_loss_pairs(base.accountant, "coarse", base.value_discretization_interval, min_width=0.01)
    arrays = dict(pld_arrays(base.accountant, base.value_discretization_interval).directions())
    for f, c in zip(fine, coarse, strict=True):
        assert c.direction == f.direction
        pmf = arrays[c.direction]
        live = pmf.losses[pmf.probs > 0]
        multiples = (math.floor(live.max() / 0.01) + 1) - math.floor(live.min() / 0.01) + 1
        assert c.n <= multiples + 1 and c.n < f.n / 5
        for t in np.linspace(-3, 6, 37):
            fine_value = float(np.sum(np.maximum(f.a - math.exp(t) * f.b, 0.0))) + f.a_infinity
            coarse_value = float(np.sum(np.maximum(c.a - math.exp(t) * c.b, 0.0))) + c.a_infinity
            assert coarse_value >= fine_value - 1e-14, t


def test_the_base_sets_the_mass_of_the_pieces() -> None:
    """A base's ``interval_piece_mass`` reaches the interval bound (default PIECE_MASS) and its certificate."""
    from symsel.bounds.interval_pairs import PIECE_MASS

    base = symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10)")
    assert pair_interval_profile(symsel.point(k=3), base).piece_mass == PIECE_MASS
    base.interval_piece_mass = 1e-3
    assert pair_interval_profile(symsel.point(k=3), base).piece_mass == 1e-3
    assert symsel.bound(symsel.point(k=3), base, "interval").certificate["piece_mass"] == 1e-3


def test_loss_pairs_are_sorted_and_keep_infinite_loss_apart() -> None:
    pair = loss_pair(np.array([0.2, 0.0, 0.5, 0.3]), np.array([0.4, 0.3, 0.3, 0.0]), DominatingPair, "x", "test")
    assert pair.a_infinity == pytest.approx(0.3)
    assert np.all(np.diff(pair.ratio) >= 0) and pair.ratio[0] == 0.0


def test_mass_at_infinite_loss_is_charged_its_top_increment() -> None:
    """A pair with Q-mass 1/2 where Q' = 0 ((1/2, 1/2) against (1, 0)): for two runs the selection puts that output
    on top, δ(ε) → φ(1) − φ(1/2) = 3/4 as ε grows."""
    pair = from_finite(np.array([0.5, 0.5]), np.array([1.0, 0.0]), DominatingPair, "P,P'", "test")
    profile = PairIntervalProfile(symsel.point(k=2), [pair])
    assert profile.delta(50.0) >= 0.75 and profile.delta(50.0) <= 0.75 * (1 + 1e-6)


def test_one_run_is_not_applicable() -> None:
    with pytest.raises(NotApplicableError, match="K >= 2"):
        pair_interval_profile(symsel.point(k=1), symsel.parse_profile("laplace(scale=1)"))


def test_best_takes_interval_for_fixed_k_on_every_base_with_a_pair() -> None:
    for base in ("laplace(scale=1)", "randomized_response(eps=1, k=2)", "dpsgd(q=0.1, sigma=1.0, steps=10)"):
        result = symsel.bound(symsel.point(k=10), symsel.parse_profile(base))
        assert "interval" in result.details["components"], base


def test_the_lower_sum_meets_the_exact_selection_and_moves_down_with_its_allowance() -> None:
    """selection_delta_below against the exact selection of a finite pair (symsel.evidence.exact, 50 digits) and
    against the sum written out here: equal with no allowance, below with one."""
    from symsel.evidence.pld_lower import selection_delta_below

    rng = np.random.default_rng(7)
    a, b = rng.dirichlet(np.ones(5)), rng.dirichlet(np.ones(5))
    order = np.array([2, 0, 4, 1, 3])
    for law in ("point(k=3)", "binomial(n=4, p=1/2)"):
        dist = symsel.parse_distribution(law)
        with mpmath.workdps(50):
            pa = [mpmath.mpf(float(x)) for x in a]
            pb = [mpmath.mpf(float(x)) for x in b]
        exact = exact_selection_delta(pa, pb, order, PGFS[law], 0.4)
        assert abs(selection_delta_below(a, b, order, dist, 0.4, 0.0) - exact) <= 1e-25
        assert selection_delta_below(a, b, order, dist, 0.4, 1e-6) < exact


def test_dpsgd_certified_lower_bound_sits_below_interval_and_near_it() -> None:
    """The DP-SGD lower bound (a dominated pair: buckets by loss, labels summed; the add direction, where the worst
    case sits, one round from the upper bound's ε): near the independent probe's 8.20, below the certified upper
    bound, within 0.5 % of it. symsel.lower_bound itself (both directions, three rounds) is run by verify's test."""
    from symsel.evidence.pld_lower import loss_pair_lower_bound

    base = symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10)")
    upper = symsel.bound(symsel.point(k=40), base, "interval").epsilon(1e-6)
    add = [pair for pair in base.dominated_loss_pairs() if pair.direction == "add"]
    lower = loss_pair_lower_bound(tuple(add), symsel.point(k=40), 1e-6, upper, pieces=1, rounds=1).epsilon
    assert 8.18 <= lower <= upper <= lower * 1.005


def test_dpsgd_with_small_losses_is_bracketed_closely() -> None:
    """A weak DP-SGD run (losses of a few tenths), 40 runs, δ = 1e-6. Both sides were loose at fixed widths: a 1e-3
    coarsening of the PLD put ``interval`` at 0.41987, and one step's buckets 2e-3 wide put the lower bound at 0.3895.
    With widths that follow the losses (loss_pair_width, step_width) the bracket is within 0.5 %. The lower bound:
    the add direction's dominated pair (symsel.evidence.pld_lower), one round from the upper bound."""
    from symsel.evidence.pld_lower import loss_pair_lower_bound

    base = symsel.parse_profile("dpsgd(q=0.01, sigma=4, steps=100)")
    upper = symsel.bound(symsel.point(k=40), base, "interval").epsilon(1e-6)
    add = tuple(pair for pair in base.dominated_loss_pairs() if pair.direction == "add")
    lower = loss_pair_lower_bound(add, symsel.point(k=40), 1e-6, upper, pieces=1, rounds=1).epsilon
    assert 0.40 <= lower <= upper <= lower * 1.005


def test_a_weak_laplace_run_is_cut_finely() -> None:
    """laplace(scale=40) (ε₀ = 0.025), 40 runs, δ = 1e-6: with bins of 1e-3 (50 of them) ``interval`` gave 0.27302,
    0.40 % above symsel's certified lower bound (0.271936, exact selections of 1000 slices of the Laplace pair, not
    its bins); with LAPLACE_MIN_BINS bins it is within 0.3 %."""
    from symsel.evidence.lower import lower_bound
    from symsel.profiles.analytic import LAPLACE_MIN_BINS

    base = symsel.parse_profile("laplace(scale=40)")
    assert len(base.dominated_loss_pairs()[0].a) >= LAPLACE_MIN_BINS
    upper = symsel.bound(symsel.point(k=40), base, "interval").epsilon(1e-6)
    lower = lower_bound(base, symsel.point(k=40), 1e-6, budget=20).epsilon
    assert 0.2719 <= lower <= upper <= lower * 1.0035


def test_a_heavy_step_loss_tail_does_not_multiply_the_buckets() -> None:
    """``q = 1e-6, σ = 0.5``: a fifth of the step's spread is 1.5e-6, against losses up to 12, which would be 8 million
    buckets; the width is widened to the range over MAX_STEP_BUCKETS (and kept at most 2e-3), while the weak run of
    the test above keeps its fine buckets."""
    from symsel.pairs.dpsgd import MAX_STEP_BUCKETS, STEP_WIDTH, _step_buckets, step_width

    width = step_width(1e-6, 0.5)
    assert width == STEP_WIDTH
    assert _step_buckets(1e-6, 0.5, width)[0].size <= 2 * MAX_STEP_BUCKETS
    assert step_width(0.01, 4.0) < 6e-4


def test_the_coarsening_width_is_a_share_of_the_loss_range() -> None:
    """loss_pair_width: the range of the losses with mass over LOSS_PAIR_GROUPS, at most LOSS_PAIR_WIDTH, and 0
    (no coarsening) below two grid steps; atoms without mass do not widen the range."""
    from symsel.profiles.dpaccounting import LOSS_PAIR_GROUPS, LOSS_PAIR_WIDTH, loss_pair_width

    grid = 1e-5
    losses = np.arange(-1000, 200_001) * grid  # a range of 2.01
    probs = np.ones(losses.size)
    assert loss_pair_width(losses, probs, grid) == pytest.approx(2.01 / LOSS_PAIR_GROUPS)
    probs[losses > 0.5] = 0.0  # the range with mass: 0.51
    assert loss_pair_width(losses, probs, grid) == pytest.approx(0.51 / LOSS_PAIR_GROUPS)
    assert loss_pair_width(losses * 100, np.ones(losses.size), grid) == LOSS_PAIR_WIDTH
    probs[losses > 0.0] = 0.0  # 0.01 over the groups: below two grid steps
    assert loss_pair_width(losses, probs, grid) == 0.0
    assert loss_pair_width(losses, np.zeros(losses.size), grid) == 0.0


def test_the_tagged_mixture_is_covered_by_the_profile_methods_not_by_the_pair_reading() -> None:
    """docs/setting.md: a base given by an asymmetric pair means a fixed order for all runs. The base that runs
    (P, Q) or (Q, P) at random and tags which one ran has a smaller two-sided profile, so the methods that read the
    profile (envelope) bound its selection, while the pair's own worst case (best, which takes composition and
    interval, both directions) need not. Its exact best of two is its 2-fold composition, summed here at 50
    digits: above best (meaning stated, not a soundness failure), below the envelope."""
    p = [0.5384092330932617, 0.4615907669067383]
    q = [0.14445972442626953, 0.8555402755737305]
    base = symsel.parse_profile(f"pair(p={p}, q={q})")
    eps = 0.82
    with mpmath.workdps(50):
        P = [mpmath.mpf(repr(x)) / 2 for x in p] + [mpmath.mpf(repr(x)) / 2 for x in q]  # tags 0 and 1
        Q = [mpmath.mpf(repr(x)) / 2 for x in q] + [mpmath.mpf(repr(x)) / 2 for x in p]
        e = mpmath.exp(mpmath.mpf(eps))
        tagged = max(mpmath.fsum(max(0, A[i] * A[j] - e * B[i] * B[j]) for i in range(4) for j in range(4))
                     for A, B in ((P, Q), (Q, P)))
    assert float(tagged) == pytest.approx(0.277287, abs=1e-6)  # the figure the hostile-input run found
    best = symsel.bound(symsel.point(k=2), base).delta(eps)
    envelope = symsel.bound(symsel.point(k=2), base, "envelope").delta(eps)
    assert best < float(tagged) <= envelope


@pytest.mark.parametrize("base", ["laplace(scale=1)", "laplace(scale=0.3)", "dpsgd(q=0.1, sigma=1.0, steps=10)",
                                  "randomized_response(eps=1, k=3)", "approx(eps=1, delta=1e-3)"])
def test_every_loss_pair_is_two_distributions(base: str) -> None:
    """Mass is conserved by every construction: Q sums to 1 (loss +∞ included) and Q' to at most 1 (the Q'-mass
    freed by rounding losses up is put at loss −∞ from below). Too much Q' anywhere would make the pair more private
    than the base and the bound unsound where the worst interval reaches it: dp-accounting's PLD of the add direction
    of ``dpsgd(q=0.1, sigma=1.0, steps=10)`` implies Q'-mass 1 + 9.2e-5 (round-off at very negative losses), which
    from_loss_grid cuts by rounding its lowest losses up. (That PLD also carries about 2e-7 of Q-mass too much; extra
    Q-mass only raises every bound, so it is kept.)"""
    b = symsel.parse_profile(base)
    for role in ("dominating", "dominated"):
        for pair in b.loss_pairs(role):
            q_total = math.fsum(pair.a.tolist()) + pair.a_infinity
            q_prime_total = math.fsum(pair.b.tolist())
            excess = 1e-6 if "PLD" in pair.source else 1e-12
            assert 1 - 1e-9 <= q_total <= 1 + excess, (role, pair.direction, q_total)
            assert 1 - 1e-9 <= q_prime_total <= 1 + 1e-12, (role, pair.direction, q_prime_total)
            assert np.all(pair.a >= 0) and np.all(pair.b > 0) and np.all(np.diff(pair.ratio) >= 0)


def test_a_pair_of_almost_no_loss_is_cut_without_overflow() -> None:
    """dpsgd(q=0.004, sigma=1e4, steps=5000), the easy end of the planner's σ range: the piece mass underflows to 0
    and every atom asked for infinitely many pieces (the cast to int64 made that negative). Each atom is now cut into
    at most MAX_PIECES pieces, and the bound stays below dp-accounting's PLD of the 20 runs composed (the best of 20
    is a post-processing of them)."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    base = symsel.parse_profile("dpsgd(q=0.004, sigma=10000.0, steps=5000)")
    ours = symsel.bound(symsel.point(20), base, "interval").epsilon(1e-5)
    event = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.004, dp_event.GaussianDpEvent(1e4)), 5000)
    composed = pld_privacy_accountant.PLDAccountant().compose(event, 20).get_epsilon(1e-5)
    assert 0 < ours <= composed


def test_dpsgd_interval_far_below_the_pld_tail_sits_on_the_certified_lower_bound() -> None:
    """δ = 1e-20, far below the mass (about 1e-15) that dp-accounting's PLD truncates: on the PLD's pairs alone the
    bound is vacuous; with the base's deep pairs (symsel.pairs.dpsgd_dominating, taken below DEEP_DELTA) it is
    finite, above the certified lower bound of the dominated pairs (an independent construction: buckets by loss,
    labels summed, exact selections), and within 1 % of it."""
    from symsel.bounds.interval_pairs import PairIntervalProfile
    from symsel.evidence.pld_lower import loss_pair_lower_bound

    base = symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10)")
    dist = symsel.point(k=4)
    assert PairIntervalProfile(dist, base.dominating_loss_pairs()).epsilon(1e-20) == math.inf
    bound = symsel.bound(dist, base, "interval")
    bound.epsilon(1e-6)
    assert "_deep_pairs" not in base.__dict__  # a query at delta >= DEEP_DELTA never builds them
    upper = bound.epsilon(1e-20)
    assert "_deep_pairs" in base.__dict__
    lower = loss_pair_lower_bound(base.dominated_loss_pairs(), dist, 1e-20, upper, pieces=1, rounds=1).epsilon
    assert lower <= upper <= lower * 1.01, (lower, upper)


def test_replace_one_dpsgd_interval_is_finite_at_every_delta() -> None:
    """Replace-one DP-SGD: ``interval`` on the deep pairs (the replace-one PLD rebuilt from queries carries round-off
    that left it vacuous) is finite from 1e-6 to 1e-30, increasing as δ falls, and at 1e-30 never below the certified
    lower bound for the replace-one relation (symsel.lower_bound: exact selections of pairs the base dominates),
    within 1 % of it."""
    base = symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10, neighbouring='replace_one')")
    dist = symsel.point(k=4)
    bound = symsel.bound(dist, base, "interval")
    deltas = (1e-6, 1e-15, 1e-30)
    values = [bound.epsilon(d) for d in deltas]
    assert all(math.isfinite(v) for v in values) and values == sorted(values)
    lower = symsel.lower_bound(base, dist, 1e-30).epsilon  # 22.689; interval 22.703
    assert lower <= values[-1] <= lower * 1.01, (lower, values[-1])


def test_an_export_lowered_by_interval_takes_the_deep_pairs_bit_for_bit(monkeypatch) -> None:
    """An export asks ``interval`` only for a value or something over the cheaper curve
    (:meth:`~symsel.bounds.interval_pairs.PairIntervalProfile.delta_or_more_than`); with the deep pairs at work below
    DEEP_DELTA every point still comes out as the minimum with the full bound, bit for bit, and the deep pairs
    lower some of them."""
    from symsel.profiles import export

    monkeypatch.setattr(export, "COSTLY_POINTS", 10**6)  # every point inside [1e-15, 0.5]
    best = symsel.bound(symsel.geometric(mean=100), symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=10)"), "best")
    cheap, costly = export.split_costly(best)
    grid = np.linspace(0.0, 8.0, 50)
    deltas = np.asarray(cheap.delta(grid), dtype=float)
    lowered = export.lowered_at_some_points(grid, deltas, costly)
    inside = (deltas >= 1e-15) & (deltas <= 0.5)
    # the full bound and the main pairs' alone at the points inside only (those compared; a point outside costs as
    # much as one inside)
    full = np.minimum(deltas[inside], np.clip(np.asarray(costly[0].delta(grid[inside]), dtype=float), 0.0, 1.0))
    np.testing.assert_array_equal(lowered[inside], full)
    main = PairIntervalProfile(best.dist, costly[0].profile.pairs, costly[0].profile.value_margin)
    main_only = np.minimum(deltas[inside], np.clip(np.asarray(main.delta(grid[inside]), dtype=float), 0.0, 1.0))
    assert inside.sum() >= 15 and np.any(lowered[inside] < main_only)  # the deep pairs lower some points


def test_a_pair_with_too_many_atoms_is_not_taken_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """A base whose pair has more atoms than ``MAX_PAIR_ATOMS`` (a DP-SGD run of a million steps) is refused by name
    before any branch and bound, and ``best`` answers with its other components, as it does without ``interval``."""
    from symsel.bounds import interval_pairs

    base = symsel.parse_profile("dpsgd(q=0.01, sigma=1.1, steps=10)")
    atoms = max(pair.n for pair in base.dominating_loss_pairs())
    monkeypatch.setattr(interval_pairs, "MAX_PAIR_ATOMS", atoms - 1)
    with pytest.raises(NotApplicableError, match=f"{atoms} atoms"):
        pair_interval_profile(symsel.point(k=2), base)
    answer = symsel.bound(symsel.point(k=2), base).epsilon(1e-6)
    assert math.isfinite(answer)
    assert answer <= symsel.bound(symsel.point(k=2), base, "composition").epsilon(1e-6)


def test_every_interval_mass_is_within_its_allowance_when_one_side_has_little_finite_mass() -> None:
    """``_Pieces.mass`` of any run of pieces is within ``relative`` and ``error`` of its exact sum (exact rationals
    here). Adversarial: ``Q'`` puts 0.3 first and then 200 atoms of 3/4 of an extended ulp at 0.3, so every one of
    the prefix sums rounds up (a quarter ulp each, 50 ulps over the run), while ``Q`` keeps only 2e-3 of its mass
    finite (the rest at +∞). The allowance must scale with the larger side's total, not with the smaller one."""
    from fractions import Fraction

    from symsel.bounds.interval import SCRATCH
    from symsel.bounds.interval_pairs import _Pieces

    step = float(0.75 * np.spacing(np.longdouble(0.3)))
    b = np.array([0.3, *([step] * 200), 0.7 - 200 * step])
    ratio = np.array([1e-3, *([2e-3] * 200), 3e-3])  # increasing: the atoms stay in this order
    a = b * ratio
    pair = loss_pair(a, b, DominatingPair, "remove", "adversarial prefix sums", a_infinity=1.0 - float(a.sum()))
    assert np.array_equal(pair.b, b) and float(pair.a.sum()) < 3e-3
    pieces = _Pieces(pair, piece_mass=1.0)  # one piece per atom
    assert pieces.n == b.size
    for name, masses in (("A", pair.a), ("B", pair.b)):
        exact = [Fraction(0)]
        for m in masses.tolist():
            exact.append(exact[-1] + Fraction(m))
        lo, hi = np.triu_indices(masses.size + 1, k=1)
        with SCRATCH.frame() as take:  # the block path: masses gathered as rows of the prefix-sum tables
            both = pieces.masses(hi, lo, take)[0 if name == "A" else 1].copy()
            one = pieces.mass(hi, lo, name, take).copy()
        for computed in (pieces.mass(hi, lo, name), one, both):
            for i, j, value in zip(lo.tolist(), hi.tolist(), computed.tolist(), strict=True):
                truth = exact[j] - exact[i]
                allowance = Fraction(pieces.relative) * truth + Fraction(pieces.error)
                assert abs(Fraction(value) - truth) <= allowance, (name, i, j)


FAR_BASE = "dpsgd(q=0.05, sigma=1.0, steps=100)"  # its second direction is far below the first at these targets


@pytest.mark.parametrize("order", [(4.9, 4.6, 4.3), (4.3, 4.6, 4.9)])
def test_a_far_pair_is_bounded_only_from_a_smaller_epsilon(order) -> None:
    """The search's value of a pair below the other one (:meth:`PairIntervalProfile._far_pair_value`) is the pair's
    certified value at some ``ε' ≤ ε`` (the exact value is non-increasing in ``ε``): asked going down and going up,
    it is never below the certified value at ``ε`` itself from a fresh profile (the pair's ``δ`` falls by a factor
    of 4 to 10 over 0.1 here, so a value taken from a larger ``ε`` would be far below it)."""
    law, base, target = symsel.poisson(mean=10), symsel.parse_profile(FAR_BASE), 1e-3
    profile = pair_interval_profile(law, base)
    for eps in order:
        reference = pair_interval_profile(law, base)._pair_value(1, eps)
        value = profile._far_pair_value(1, eps, target, target)
        assert reference * (1 - 1e-9) <= value <= 0.1 * target
        assert reference < 0.5 * pair_interval_profile(law, base)._pair_value(1, eps - 0.1)  # the pair does fall


def test_a_far_pair_is_first_evaluated_below_the_newton_guess() -> None:
    """Within a search steered by a hinted slope, the pair's first evaluation is below the point asked, by twice the
    Newton step of the other pair's value plus one search width: its value is at least the fresh certified value at
    the point asked, and covers the points between."""
    law, base, target = symsel.poisson(mean=10), symsel.parse_profile(FAR_BASE), 1e-3
    profile = pair_interval_profile(law, base)
    profile.search_rtol, profile.search_slope = 1e-3, -10.0
    eps, lead = 4.6, 0.5 * target
    value = profile._far_pair_value(1, eps, target, lead)
    (at,) = [at for index, at in profile._pair_cache if index == 1]
    assert at == pytest.approx(eps - 2 * math.log(2) / 10 - (1e-6 + 1e-3 * eps))
    assert value >= pair_interval_profile(law, base)._pair_value(1, eps)
    assert profile._far_pair_value(1, eps - 0.1, target, lead) == value  # covered: no new evaluation
    assert len(profile._pair_cache) == 1


@pytest.mark.parametrize("delta", [1e-3, 1e-6])
def test_the_search_bounds_a_far_pair_from_one_evaluation_and_finds_the_same_epsilon(delta: float) -> None:
    """The search from above as ``best`` runs it (:meth:`epsilon_below` with a slope hint: here 1.5 times the
    profile's own, from a fresh profile, so that the Newton guess lands above the crossing and the search checks
    several points within ``delta``) with the smaller pair bounded from a smaller ``ε`` against the same search with
    every pair evaluated at every point: the same ``ε`` within the search's bracket, the profile's full certified
    value there within ``delta``, and the smaller pair evaluated once instead of once per feasible point."""
    law, base = symsel.poisson(mean=10), symsel.parse_profile(FAR_BASE)

    class EveryPair(PairIntervalProfile):
        def _far_pair_value(self, index: int, eps: float, target: float, lead: float) -> float:
            return self._pair_value(index, eps)

    slow_profile = pair_interval_profile(law, base)
    slow_profile.__class__ = EveryPair
    fast_profile = pair_interval_profile(law, base)
    for profile in (slow_profile, fast_profile):
        profile.search_rtol = 1e-3
    plain = pair_interval_profile(law, base).epsilon(delta)
    upper = plain * 1.02
    fresh = pair_interval_profile(law, base)
    slope = 1.5 * (math.log(fresh.delta_nonnegative(upper)) - math.log(fresh.delta_nonnegative(0.99 * upper))) / (
        0.01 * upper)
    slow = slow_profile.epsilon_below(delta, upper, slope)
    fast = fast_profile.epsilon_below(delta, upper, slope)
    assert fast == pytest.approx(slow, rel=1.1e-3)
    assert pair_interval_profile(law, base).delta_nonnegative(fast) <= delta
    far = [key for key in fast_profile._pair_cache if key[0] == 1]
    assert len(far) == 1 < len([key for key in slow_profile._pair_cache if key[0] == 1])
