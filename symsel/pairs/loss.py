"""Discrete pairs ordered by privacy loss: the one protocol through which a base hands its dominating pair to
``interval`` and the lower bounds (docs/interval.md, "Every base with a dominating pair").

A :class:`LossPair` is a finite pair ``(Q, Q')`` on atoms sorted by their privacy loss ``log(a_i / b_i)``
(``a`` the ``Q``-masses, ``b`` the ``Q'``-masses), with its mass at loss ``+∞`` (``Q'``-mass 0) kept apart. Its
type says how it stands to the base, and so which side of the truth a number computed on it falls:

* :class:`DominatingPair`: every ordered neighbouring pair of the base (in the pair's *direction*) is a
  post-processing of it (Blackwell), so any upper bound computed on it holds for the base; ``interval`` takes only
  these;
* :class:`DominatedPair`: it is a post-processing of the base's pair, so the exact value of any selection on it is a
  lower bound on the worst case; the lower bounds take only these.

A consumer states which it takes with :func:`require`, so a pair of the wrong kind is refused at once
(:class:`~symsel.errors.PairDirectionError`) instead of giving a number on the wrong side.

``relative_error`` bounds the float64 rounding of every atom's masses (hence of every sum of them: all are
non-negative), ``mass_error`` an absolute error on top (mass the input lost, e.g. a PLD's negative round-off
entries): a consumer widens every interval mass ``m`` to ``m (1 ± relative_error) ± mass_error``.

The constructors here turn every kind of dominating pair symsel knows into this form: finite pairs (exactly, up to
float rounding), privacy-loss distributions on a loss grid (dp-accounting's pessimistic PLDs: losses rounded up,
coarsened further by splitting each atom between its two grid neighbours), and the Laplace pair (its continuous part
cut into bins, each bin split onto the ends of its loss range for the dominating pair, kept whole for the dominated
one).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import numpy as np

from symsel.errors import PairDirectionError, ParameterError

#: unit roundoff of float64.
UNIT = 2.0**-53


@dataclass(frozen=True, eq=False)
class LossPair:
    """Atoms sorted by privacy loss (module docstring); made as a :class:`DominatingPair` or a
    :class:`DominatedPair` (:func:`loss_pair`), never as a bare ``LossPair``.

    Attributes:
        a: ``Q``-masses of the atoms with ``b > 0``, in increasing order of ``a / b`` (``a = 0`` allowed: loss −∞).
        b: their ``Q'``-masses (all positive).
        a_infinity: the ``Q``-mass where ``Q' = 0`` (loss +∞).
        mass_error: absolute allowance on every sum of consecutive masses (module docstring).
        relative_error: relative allowance on every mass and every sum of masses.
        role: ``"dominating"`` or ``"dominated"``, from the type (for certificates).
        direction: which ordered pair of the base it stands for (``"remove"``, ``"add"``, ``"P,Q"``, …).
        source: how it was made (for certificates).
    """

    a: np.ndarray
    b: np.ndarray
    a_infinity: float
    mass_error: float
    relative_error: float
    direction: str
    source: str

    role: ClassVar[str] = ""

    @property
    def n(self) -> int:
        return int(self.a.size)

    @property
    def ratio(self) -> np.ndarray:
        """``a / b`` per atom, non-decreasing."""
        return self.a / self.b


class DominatingPair(LossPair):
    """A loss-ordered pair that dominates the base in its direction: upper bounds (``interval``) are computed on it."""

    role = "dominating"


class DominatedPair(LossPair):
    """A loss-ordered pair that the base dominates in its direction (a post-processing of the base's pair): lower
    bounds are computed on it."""

    role = "dominated"


Kind = TypeVar("Kind", bound=LossPair)


def require(pairs: Iterable[LossPair], kind: type[Kind], where: str) -> tuple[Kind, ...]:
    """``pairs`` as a tuple, each checked to be a ``kind`` (:class:`DominatingPair` for an upper bound,
    :class:`DominatedPair` for a lower bound); any other raises :class:`~symsel.errors.PairDirectionError`."""
    out = tuple(pairs)
    for pair in out:
        if not isinstance(pair, kind):
            raise PairDirectionError(where, kind.__name__, type(pair).__name__, getattr(pair, "source", "?"))
    return out  # type: ignore[return-value]


def loss_pair(a: np.ndarray, b: np.ndarray, kind: type[Kind], direction: str, source: str, a_infinity: float = 0.0,
              mass_error: float = 0.0, relative_error: float = 4 * UNIT) -> Kind:
    """A ``kind`` (:class:`DominatingPair` or :class:`DominatedPair`) from atoms in any order: atoms with ``b = 0``
    go to ``a_infinity``, atoms with ``a = b = 0`` are dropped, the rest are sorted by ``a / b`` (stable)."""
    if kind not in (DominatingPair, DominatedPair):
        raise ParameterError("kind", kind, "DominatingPair or DominatedPair", "loss_pair")
    a = np.asarray(a, dtype=float).ravel()
    b = np.asarray(b, dtype=float).ravel()
    if a.shape != b.shape or a.size == 0 or not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ParameterError("masses", f"{a.size} and {b.size} values", "two equal-length finite arrays", "loss_pair")
    if np.any(a < 0) or np.any(b < 0):
        raise ParameterError("masses", "negative entries", "non-negative masses", "loss_pair")
    at_infinity = (b == 0) & (a > 0)
    a_inf = float(a_infinity) + float(np.sum(a[at_infinity]))
    keep = b > 0
    a, b = a[keep], b[keep]
    with np.errstate(divide="ignore"):
        order = np.argsort(np.where(a > 0, np.log(a) - np.log(b), -np.inf), kind="stable")
    a, b = a[order], b[order]
    return kind(a, b, a_inf, max(float(mass_error), 0.0), max(float(relative_error), 4 * UNIT), direction, source)


def _free_mass(b: np.ndarray, relative_error: float) -> float:
    """``1 − Σ b`` from below (exactly rounded sum, moved up by its masses' allowance): the ``Q'``-mass freed by
    rounding losses up. Too little of it only makes the pair less private (every interval's ``Q'``-mass smaller),
    so the consumer's bound stays an upper bound."""
    return max(0.0, 1.0 - math.fsum(b.tolist()) * (1 + relative_error) - 4 * UNIT)


def from_finite(p: np.ndarray, q: np.ndarray, kind: type[Kind], direction: str, source: str) -> Kind:
    """The finite pair ``(p, q)`` itself (float64 masses, each within ``u`` of the exact one): it both dominates
    and is dominated by the base, so it is made as either ``kind``."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    return loss_pair(p, q, kind, direction, source, relative_error=4 * UNIT)


def split_between(mass: np.ndarray, loss: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``Q``-masses ``mass`` at losses at most ``loss`` split onto losses ``a < b``, keeping ``Q`` and ``Q'`` and
    rounding the loss up (connect-the-dots; Doroshenko et al., PETS 2022):
    ``p_a = m e^{a − l} (1 − e^{l − b}) / (1 − e^{a − b})``, ``p_b = m (1 − e^{a − l}) / (1 − e^{a − b})``, with ``l``
    the loss clipped to ``[a, b]`` (the masses' losses are known to lie there). Mass at loss ``l`` is the merge (a
    post-processing) of the two atoms, and so is every piece of a set of outputs whose losses lie in ``[a, b]``: the
    split is linear in ``(Q, Q')``. Each result is within a few ``u`` of its exact value (an ``exp``, an ``expm1`` and
    three products; no cancellation)."""
    level = np.clip(loss, a, b)
    denominator = -np.expm1(a - b)
    upper = mass * -np.expm1(a - level) / denominator
    lower = mass * np.exp(a - level) * -np.expm1(level - b) / denominator
    return lower, upper


def onto_loss_grid(mass: np.ndarray, loss: np.ndarray, width: float) -> list[tuple[np.ndarray, np.ndarray]]:
    """``Q``-masses at the (float) losses ``loss`` split onto the multiples of ``width`` around them
    (:func:`split_between`, the loss rounded up by a few ``u`` to cover the float grid points): the integer labels
    and masses of the lower and of the upper neighbour."""
    level = loss + 8 * UNIT * (1 + np.abs(loss))
    upper = np.floor(level / width).astype(np.int64) + 1
    upper = np.where(upper * width < level, upper + 1, upper)
    lower_mass, upper_mass = split_between(mass, level, (upper - 1) * width, upper * width)
    return [(upper - 1, lower_mass), (upper, upper_mass)]


def _grid_atoms(parts: list[tuple[np.ndarray, np.ndarray]], width: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Labelled masses summed per label: the grid losses with mass, their ``Q``-masses, and the most terms summed
    into one label (float64 sums of non-negative terms: each within ``(terms − 1) u``)."""
    labels = np.concatenate([label for label, _ in parts])
    masses = np.concatenate([mass for _, mass in parts])
    first = int(labels.min())
    a = np.bincount(labels - first, weights=masses)
    terms = int(np.bincount(labels - first).max())
    keep = a > 0
    return (np.flatnonzero(keep) + first) * width, a[keep], terms


def _at_most_one(losses: np.ndarray, a: np.ndarray, b: np.ndarray,
                 relative_error: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Atoms (increasing ``losses``, ``Q``-masses ``a``, ``Q'``-masses ``b = a e^{−l}`` within ``relative_error``)
    whose ``Q'``-mass is at most 1: unchanged when it is, else the lowest atoms' ``Q``-mass carried at the loss of
    the first atom ``k`` kept, the lowest ``k`` for which ``Σ_{i ≥ k} b_i + e^{−l_k} Σ_{i < k} a_i ≤ 1`` (that sum
    does not increase with ``k``), all sums taken from above; when none is (a PLD at loss 0 alone, its ``Q``-mass
    over 1 by round-off), one atom takes all the ``Q``-mass at the highest loss raised to ``log Σ a`` and a few ``u``.

    A PLD can carry more ``Q'``-mass than 1 though its ``Q``-mass is right: its masses are second differences of
    ``δ`` (connect-the-dots), whose round-off, negative parts set to 0, lies where the true mass is nil and is
    weighted by ``e^{−l}`` at very negative losses (one step of ``dpsgd(q=0.1, sigma=1)``, add direction: ``Q'``-mass
    ``1 + 9.2e-6``, from ``Q``-masses near ``1e-9`` at losses below −2; ten steps ``1 + 9.2e-5``). Such masses are no
    pair of distributions, and ``Q'``-mass in excess makes sets of low loss look likelier under ``Q'`` than they can
    be. Carrying ``Q``-mass at a higher loss is the PLD's own pessimistic rounding: every hockey-stick divergence
    ``δ(ε)`` at ``ε ≥ l_k`` is unchanged, and below ``l_k`` it is ``Σ a − e^ε Σ b ≥ 1 − e^ε``, the least any pair
    has there."""
    slack = relative_error + (a.size + 8) * UNIT
    above = np.cumsum(b[::-1])[::-1]  # Σ_{i ≥ k} b_i
    below = np.cumsum(a) - a  # Σ_{i < k} a_i
    with np.errstate(under="ignore"):
        total = (above + below * np.exp(-losses)) * (1 + slack)
    fits = np.flatnonzero(total <= 1.0 - 8 * UNIT)
    if fits.size and fits[0] == 0:
        return losses, a, b
    if not fits.size:
        mass = math.fsum(a.tolist())
        top = max(float(losses[-1]), math.log(mass) + 2 * slack + 16 * UNIT)
        return np.array([top]), np.array([mass]), np.array([mass * math.exp(-top)])
    k = int(fits[0])
    kept = a[k:].copy()
    kept[0] += math.fsum(a[:k].tolist())
    with np.errstate(under="ignore"):
        return losses[k:], kept, kept * np.exp(-losses[k:])


def from_loss_grid(losses: np.ndarray, probs: np.ndarray, infinity_mass: float, width: float, direction: str,
                   source: str) -> DominatingPair:
    """The dominating pair of a privacy-loss distribution given on a loss grid (dp-accounting's pessimistic PLD):
    ``Q``-mass ``probs[i]`` at loss ``losses[i]``, ``infinity_mass`` at ``+∞``.

    The PLD is first coarsened onto the multiples of ``width`` (when ``width > 0``): each atom is split between the
    two grid losses around it, its ``Q``- and ``Q'``-masses kept (:func:`split_between`). The atom is the merge of
    the two (a post-processing), so by Blackwell's theorem the coarse pair dominates the fine one, every hockey-stick
    divergence of both tails at or above it; unlike rounding each atom up to the top of its group, which moves every
    loss up by about half the width (and a selection of ``k`` runs by about ``k/2`` times that), the split moves the
    divergences only to second order in the width. The ``Q'``-mass freed by rounding (``1 − Σ b``, float round-off
    only) goes to an atom at loss −∞ (``Q``-mass 0), which changes no divergence. Negative masses (FFT round-off of
    the PLD) are set to 0 and their total is added to ``mass_error``; ``Q``-mass missing from 1 is put at ``+∞``
    (pessimistic); a PLD whose masses imply ``Q'``-mass over 1 has its lowest losses rounded up until they do not
    (:func:`_at_most_one`)."""
    losses = np.asarray(losses, dtype=float)
    probs = np.asarray(probs, dtype=float)
    negative = float(-np.sum(probs[probs < 0]))
    probs = np.maximum(probs, 0.0)
    live = probs > 0
    losses, probs = losses[live], probs[live]
    split_error = 0.0
    if width > 0 and losses.size:
        losses, a, terms = _grid_atoms(onto_loss_grid(probs, losses, width), width)
        split_error = (64 + terms) * UNIT  # the split's few u, then a float64 sum of `terms` non-negative masses
    else:
        a = probs
    with np.errstate(over="ignore"):
        b = a * np.exp(-losses)
    if not np.all(np.isfinite(b)):
        raise ParameterError("losses", float(losses.min()), "losses above -700 (e^-loss must be finite)", source)
    losses, a, b = _at_most_one(losses, a, b, 8 * UNIT + split_error)
    a_total = math.fsum(a.tolist()) + float(infinity_mass)
    free_b = _free_mass(b, 8 * UNIT + split_error)
    missing_a = max(0.0, 1.0 - a_total)
    a = np.append([0.0], a)
    b = np.append([free_b], b)
    return loss_pair(a, b, DominatingPair, direction, source, a_infinity=float(infinity_mass) + missing_a,
                     mass_error=negative, relative_error=8 * UNIT + split_error)


def laplace_pairs(epsilon0: float, bins: int) -> tuple[DominatingPair, DominatedPair]:
    """The dominating and the dominated discrete pair of the Laplace pair ``Lap(Δ, s)`` against ``Lap(0, s)``
    with ``ε₀ = Δ / s`` (the pair is symmetric: one direction).

    In units of ``s`` the loss of an output ``x`` is ``−ε₀`` for ``x ≤ 0``, ``2x − ε₀`` on ``[0, ε₀]`` and ``ε₀``
    above; the two outer rays are atoms of the loss with masses ``(e^{−ε₀}/2, 1/2)`` and ``(1/2, e^{−ε₀}/2)``. The
    middle is cut into ``bins`` bins of equal loss width ``w = 2ε₀/bins``, with exact masses
    ``Q[x_j, x_{j+1}] = (e^{x_{j+1}−ε₀} − e^{x_j−ε₀})/2`` and ``Q'[x_j, x_{j+1}] = (e^{−x_j} − e^{−x_{j+1}})/2``.
    Kept whole the bins are a post-processing of the pair (dominated). For the dominating pair each bin is split
    onto the two ends of its loss range (:func:`split_between`; its aggregate loss ``log(Q/Q') = x_j + x_{j+1} − ε₀``
    is the middle of the range), the ends widened by the float error of the losses, and each end onto the multiples
    of ``w`` (:func:`onto_loss_grid`), as are the two rays: every hockey-stick divergence at or above the Laplace
    pair's, and above it only to second order in ``w``."""
    e0 = float(epsilon0)
    edges = np.linspace(0.0, e0, int(bins) + 1)
    steps = np.diff(edges)
    q_mass = 0.5 * np.exp(edges[1:] - e0) * -np.expm1(-steps)  # no overflow for any ε₀
    q_prime_mass = 0.5 * np.exp(-edges[:-1]) * -np.expm1(-steps)
    outer_a = np.array([0.5 * math.exp(-e0), 0.5])
    outer_b = np.array([0.5, 0.5 * math.exp(-e0)])
    a = np.concatenate([outer_a[:1], q_mass, outer_a[1:]])
    b = np.concatenate([outer_b[:1], q_prime_mass, outer_b[1:]])
    source = f"laplace(epsilon0={e0!r}), {int(bins)} bins"
    dominated = loss_pair(a, b, DominatedPair, "P,Q", source, relative_error=16 * UNIT)
    width = 2.0 * e0 / int(bins)
    ends = 2.0 * edges - e0
    slack = 8 * UNIT * (1.0 + np.abs(ends) + e0)  # the float error of 2 x − ε₀ and of x_j + x_{j+1} − ε₀
    middle = edges[:-1] + edges[1:] - e0 + slack[1:]
    parts = [onto_loss_grid(mass, end, width)
             for mass, end in zip(split_between(q_mass, middle, ends[:-1] - slack[:-1], ends[1:] + slack[1:]),
                                  (ends[:-1] - slack[:-1], ends[1:] + slack[1:]), strict=True)]
    parts.append(onto_loss_grid(outer_a, np.array([-e0, e0]), width))
    losses, grid_a, terms = _grid_atoms([part for pair in parts for part in pair], width)
    with np.errstate(under="ignore"):
        grid_b = grid_a * np.exp(-losses)
    error = (160 + terms) * UNIT  # the masses' and the two splits' few u each, and the sums per grid loss
    free = _free_mass(grid_b, error)
    dominating = loss_pair(np.append([0.0], grid_a), np.append([free], grid_b), DominatingPair, "P,Q", source,
                           mass_error=16 * UNIT, relative_error=error)
    return dominating, dominated


_SMALLEST_NORMAL = 2.0**-1022
#: the Gaussian pair's standardized loss is cut at ``±GAUSSIAN_TAIL_Z``: below, its mass joins the lowest bin; above,
#: its mass (``Φ(−14) < 1e-44``) goes to loss ``+∞``.
GAUSSIAN_TAIL_Z = 14.0
#: the most bins of :func:`gaussian_dominating_pair` (the bins widen beyond ``width`` to keep to it).
GAUSSIAN_MAX_BINS = 200_000


def gaussian_dominating_pair(mu: float, width: float = 1e-3, groups: int = 10_000) -> DominatingPair:
    """A dominating pair of ``N(μ, 1)`` against ``N(0, 1)`` (the Gaussian mechanism, ``μ = Δ/σ``; symmetric: one
    direction) built from the closed-form law of its privacy loss, ``L = μ Z + μ²/2`` with ``Z ~ N(0, 1)`` under
    ``Q = N(μ, 1)`` (Dong, Roth, Su 2022; Balle & Wang 2018).

    ``Z`` is cut at float points ``z_0 < … < z_n`` spaced ``w/μ`` apart on ``[−14, 14]`` (loss width ``w``: at most
    ``width``, the loss range over ``groups`` when finer, widened to keep to :data:`GAUSSIAN_MAX_BINS` bins). The
    bin ``(z_{j−1}, z_j]`` (the first one from ``−∞``) is carried at a loss at least its largest, ``μ z_j + μ²/2``
    rounded up, with ``Q``-mass ``S̃_{j−1} − S̃_j`` where ``S̃_j ≥ Φ(−z_j)`` is the survival function rounded up
    (``scipy.special.ndtr`` to a few ulp, raised by ``16u``; each difference rounded up), and ``S̃_n`` at ``+∞``.
    That makes the pair's loss stochastically larger under ``Q`` than the true one: every ``Q``-tail mass
    ``Q(L ≥ l)`` is at least the truth's. Each hockey-stick divergence ``Σ_j a_j (1 − γ e^{−l_j})_+`` (``γ > 0``)
    integrates a non-decreasing function of the loss, so it can only grow, both tails included. ``Q'``-masses
    ``a_j e^{−l_j}`` are rounded down (their total is at most ``E_Q[e^{−L}] = 1``), the rest of ``Q'`` at loss
    ``−∞``; where ``a_j e^{−l_j}`` is below the normal floats (losses above about 700) the bin goes to loss ``+∞``
    (``Q'``-mass 0, which only raises every divergence). The lowest bin gives up any ``Q``-mass over 1 (that lowers
    no tail mass above it)."""
    from scipy import special

    mu = float(mu)
    if not (math.isfinite(mu) and mu > 0):
        raise ParameterError("mu", mu, "a finite mu > 0", "gaussian_dominating_pair")
    span = 2 * GAUSSIAN_TAIL_Z * mu
    w = max(min(float(width), span / groups), span / GAUSSIAN_MAX_BINS)
    n = math.ceil(span / w)
    cuts = np.linspace(-GAUSSIAN_TAIL_Z, GAUSSIAN_TAIL_Z, n + 1)
    survival = np.minimum(special.ndtr(-cuts) * (1 + 16 * UNIT), 1.0)  # S~_j >= Phi(-z_j), non-increasing
    survival = np.maximum.accumulate(survival[::-1])[::-1]  # non-increasing after the rounding
    upper = np.append([1.0], survival)  # S~ at the lower end of each bin (the first bin starts at -inf)
    masses = np.nextafter(upper[:-1] - survival, np.inf)  # each difference rounded up
    masses[0] = max(0.0, math.nextafter(1.0 - math.fsum(masses[1:].tolist()) - float(survival[-1]), -math.inf)
                    - 4 * UNIT)
    half_square = mu * mu / 2
    losses = mu * cuts + half_square
    losses = np.nextafter(losses + 8 * UNIT * (np.abs(mu * cuts) + half_square), np.inf)  # >= mu z_j + mu^2/2
    with np.errstate(under="ignore"):
        product = masses * np.exp(-losses)  # within 3u where it is a normal float
    b = np.where(product >= _SMALLEST_NORMAL, product * (1 - 8 * UNIT), 0.0)  # rounded down; 0: the atom goes to +inf
    free = _free_mass(b, 8 * UNIT)
    keep = masses > 0
    source = f"gaussian(mu={mu!r}), {n} bins of the closed-form loss"
    return loss_pair(np.append([0.0], masses[keep]), np.append([free], b[keep]), DominatingPair, "remove", source,
                     a_infinity=float(survival[-1]))


def hockey_stick_below(pair: LossPair, eps: np.ndarray) -> np.ndarray:
    """A lower bound on the pair's hockey-stick divergence ``H_{e^ε}(Q ‖ Q') = sup_S Q(S) − e^ε Q'(S)`` at each
    ``ε`` (any real; ``e^ε`` may overflow), for the masses known within the pair's allowances.

    Every set ``S`` of atoms gives ``H ≥ Q(S) − e^ε Q'(S)``; here ``S`` is the loss-``+∞`` mass and the atoms whose
    computed ratio ``a / b`` exceeds ``e^ε`` (a suffix: the atoms are sorted by ratio), which is the optimal set up
    to rounding (any set is valid). ``Q(S)`` is taken from below and ``Q'(S)`` from above: each sum moved by the
    pair's ``relative_error`` and ``mass_error``, and by ``(n + 8) u`` for the float64 suffix sums of ``n`` non-negative
    terms and the products; ``e^ε`` is rounded up. On a :class:`DominatedPair` (a post-processing of a mechanism's
    pair in its direction) the result is at most that direction's ``δ(ε)``."""
    eps = np.asarray(eps, dtype=float)
    slack = pair.relative_error + (pair.n + 8) * UNIT
    a_suffix = np.concatenate([np.cumsum(pair.a[::-1])[::-1], [0.0]])
    b_suffix = np.concatenate([np.cumsum(pair.b[::-1])[::-1], [0.0]])
    with np.errstate(over="ignore", divide="ignore"):
        e = np.exp(eps) * (1 + 4 * UNIT)
        first = np.searchsorted(pair.ratio, e, side="right")  # the atoms with ratio > e^ε: [first, n)
    gain = (a_suffix[first] + pair.a_infinity) * (1 - slack) - pair.mass_error
    cost_mass = b_suffix[first] * (1 + slack) + pair.mass_error
    with np.errstate(over="ignore", invalid="ignore"):
        cost = np.where(cost_mass > 0, e * cost_mass, 0.0)  # e^ε = inf times a mass 0 is no cost
    return np.maximum(gain - cost, 0.0) * (1 - 4 * UNIT)
