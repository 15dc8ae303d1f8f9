"""The interval bound on any base with a dominating pair, through its pairs ordered by privacy loss
(docs/interval.md, "Every base with a dominating pair").

For a :class:`~symsel.pairs.loss.LossPair` that dominates the base (one per direction of the base), the worst
case of the selection over every base it dominates is, by Theorem 3 of docs/interval.md (Theorem 1 with the atoms
of the likelihood ratio split), at most

    Σ_j ∫_{atom j} sup_{l ≤ h} [ r_j φ'(Q[l, h]) − e^ε φ'(Q'[l, h]) ]_+ dQ'(h)  +  φ(1) − φ(1 − a_∞),

where positions run along the atoms in loss order, each atom a segment along which ``Q`` and ``Q'`` grow
linearly, ``r_j = a_j / b_j``, and ``a_∞`` is the mass at loss ``+∞`` (Corollary 4). Atoms with
``r_j ≤ max(1, e^{ε/D})`` (``D`` the largest ``k`` with ``P[K = k] > 0``) contribute nothing.

Certified evaluation. Every atom is cut into pieces of ``Q``- and ``Q'``-mass at most :data:`PIECE_MASS`; each
contributing piece is an ``h``-cell, charged its ``Q'``-mass times an upper bound on the integrand over it and over
every ``l``-cell. ``l``-cells are runs of :data:`L_COARSE` pieces, refined by branch and bound as
:data:`REFINEMENTS` says (single pieces at the finest). On a cell pair the bound is the smaller of the corner bound
and the linearized bound of :func:`_linear` (docs/interval.md, "Certified evaluation": ``φ'`` convex; the linear
form ``λ₁ A − λ₂ B`` is ``g(h) − g(l)`` with ``g`` piecewise linear whose slope on an atom has the sign of
``λ₁ r − λ₂``, so its extremes over a cell are at an end of the ``h``-piece and at the atom boundary where
``r`` crosses ``λ₂ / λ₁``). Interval masses are widened by the pair's ``mass_error``, ``φ'`` values by the law's
measured allowance, the sum by :data:`SUM_ALLOWANCE`; an overflow makes a bound ``+∞``, never NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import mpmath
import numpy as np

from symsel.bounds.interval import (
    CELL_BLOCK,
    SCRATCH,
    CellBoundProfile,
    branch_and_bound,
    chord_and_secant,
    coarse_then_fine,
    linearized_value,
    settle_share,
    upper_difference,
)
from symsel.bounds.precision import usable_float_error
from symsel.distributions import Distribution
from symsel.errors import NotApplicableError
from symsel.memory import Take, gather
from symsel.pairs.loss import DominatingPair, LossPair, require
from symsel.profiles import Profile

#: the largest ``Q``- or ``Q'``-mass of one piece of an atom.
PIECE_MASS = 2e-4
#: the most pieces one pair is cut into (atoms are cut more coarsely beyond it).
MAX_PIECES = 400_000
#: the most atoms of one direction of a base's pair that the interval bound takes on: its branch and bound grows with
#: the atoms (a DP-SGD run of a million steps has 190,000 and took minutes), beyond this it is not applicable and
#: ``best`` answers with the other methods (``composition`` was the tighter there anyway).
MAX_PAIR_ATOMS = 100_000
#: width of the coarse ``l``-cells, in pieces.
L_COARSE = 4096
#: refinements of the ``l``-axis (branch and bound, :meth:`PairIntervalProfile._row_bounds`): each cuts the cells
#: still in play into cells ``split`` times narrower (finest: one piece); the second entry is unused.
REFINEMENTS: tuple[tuple[int, int], ...] = ((8, 24), (8, 24), (8, 24), (8, 24))
#: the most cells of one row cut at each level (the largest bounds); the others keep their bound.
REFINE_CELLS = 24
#: relative allowance on the final sum, and on the ratios ``a / b``.
SUM_ALLOWANCE = 1e-9
RATIO_ALLOWANCE = 8 * 2.0**-53
#: below this value the bound is also computed on the base's pairs resolved deeper into the tail
#: (:meth:`~symsel.profiles.Profile.deep_dominating_loss_pairs`), where the main pairs' truncated mass (a
#: dp-accounting PLD's, about 1e-15) and round-off decide the value.
DEEP_DELTA = 1e-10
#: the search (:meth:`PairIntervalProfile.search_value`) takes a pair's value at a smaller ``ε`` for its value at
#: ``ε`` (the exact bound is non-increasing in ``ε``) when that value is at most this share of the target (and at most
#: the other pair's value at ``ε``) ...
COVER_SHARE = 0.9
#: ... and evaluates such a pair first this many Newton steps (and one search width) below the point asked, which
#: covers the probes around the Newton guess: one evaluation of the smaller pair per search instead of one per point.
COVER_NEWTON = 2.0
#: ``h``-cells evaluated at once.
CHUNK = 2048
#: the first pass charges runs of this many contributing pieces; the smallest runs keep that charge, the others are
#: charged piece by piece (:func:`~symsel.bounds.interval.coarse_then_fine`).
H_COARSE = 8


class _Pieces:
    """A :class:`LossPair` cut into pieces, with prefix sums (``A[i]``, ``B[i]``: masses of pieces ``< i``)."""

    def __init__(self, pair: LossPair, piece_mass: float):
        with np.errstate(divide="ignore", invalid="ignore"):  # a piece mass of 0 (a pair of almost no loss): one cut
            wanted = np.ceil(np.maximum(pair.a, pair.b) / piece_mass)
        # any number of equal pieces per atom is a valid cut: clipped before the cast, which turned inf into < 0
        counts = np.clip(np.nan_to_num(wanted, nan=1.0, posinf=MAX_PIECES), 1, MAX_PIECES).astype(np.int64)
        total = int(counts.sum())
        if total > MAX_PIECES:
            counts = np.maximum(1, np.floor(counts * (MAX_PIECES / total))).astype(np.int64)
        self.atom = np.repeat(np.arange(pair.n), counts)
        self.a = np.repeat(pair.a / counts, counts)
        self.b = np.repeat(pair.b / counts, counts)
        self.ratio = np.repeat(pair.ratio, counts)  # non-decreasing
        #: the first piece of each atom (and the number of pieces), and the atoms' ratios as computed and moved down
        #: and up by their rounding allowance: a search among the atoms, mapped to the first piece of the atom found,
        #: is the search among the pieces (:meth:`first_at_least`)
        self.atom_start = np.concatenate([[0], np.cumsum(counts)])
        self.atom_ratio = {side: np.asarray(pair.ratio, dtype=float) * (1 + side * RATIO_ALLOWANCE)
                           for side in (-1, 0, 1)}
        self.r = self.ratio * (1 + RATIO_ALLOWANCE)  # an upper bound on each piece's true ratio
        # prefix sums in extended precision: a difference of two is then within (n + 4) ε_ext of the total (absolute)
        # and one float64 rounding (relative) of its exact value
        # prefix sums in extended precision, kept as two float64 (head and tail): a difference of two is the
        # difference of the heads (one rounding, relative) plus that of the tails, within (n + 4) ε_ext of the total
        self.sums = {}
        for name, values in (("A", self.a), ("B", self.b)):
            extended_sums = np.concatenate([[0.0], np.cumsum(values.astype(np.longdouble))])
            head = extended_sums.astype(float)
            self.sums[name] = (head, (extended_sums - head).astype(float))
        #: the same prefix sums as rows (head, tail) of one side, and (head, tail of ``A``, head, tail of ``B``) of
        #: both: one gather of a row brings every number a mass needs (:meth:`mass`, :meth:`masses`)
        self._rows = {name: np.ascontiguousarray(np.stack(self.sums[name], axis=1)) for name in ("A", "B")}
        self._both = np.ascontiguousarray(np.concatenate([self._rows["A"], self._rows["B"]], axis=1))
        extended = float(np.finfo(np.longdouble).eps)
        mass_total = max(1.0, float(self.sums["A"][0][-1]), float(self.sums["B"][0][-1]))
        self.error = pair.mass_error + (self.a.size + 4) * extended * mass_total
        #: relative allowance on interval masses: the pair's, the split into pieces and the roundings of a difference
        self.relative = pair.relative_error + 8 * 2.0**-53
        self.n = int(self.a.size)

    def mass(self, hi: np.ndarray, lo: np.ndarray, which: str, take: Take | None = None) -> np.ndarray:
        """The float64 mass of pieces ``[lo, hi)`` of ``Q`` (``which="A"``) or ``Q'`` (``"B"``), within
        :attr:`relative` and :attr:`error` of the exact one (into an array of ``take`` when given: one-dimensional
        ``hi`` and ``lo``)."""
        head, tail = self.sums[which]
        if take is None:
            return (head.take(hi) - head.take(lo)) + (tail.take(hi) - tail.take(lo))
        difference = _row_difference(take, self._rows[which], hi, lo)
        return np.add(difference[:, 0], difference[:, 1], out=take(hi.size))

    def masses(self, hi: np.ndarray, lo: np.ndarray, take: Take) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`mass` of ``Q`` and of ``Q'`` over the same pieces ``[lo, hi)`` (the same floats), into arrays of
        ``take``."""
        difference = _row_difference(take, self._both, hi, lo)
        return (np.add(difference[:, 0], difference[:, 1], out=take(hi.size)),
                np.add(difference[:, 2], difference[:, 3], out=take(hi.size)))

    def first_at_least(self, target: np.ndarray, side: int = 0) -> np.ndarray:
        """``np.searchsorted(ratio · (1 + side · RATIO_ALLOWANCE), target, side="left")``: the first piece whose
        ratio (as computed, or moved down or up by its allowance) is at least ``target``, searched among the atoms."""
        return self.atom_start[np.searchsorted(self.atom_ratio[side], target, side="left")]

    def up(self, mass: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A :meth:`mass` from above (at most 1; into ``out`` when given)."""
        moved = np.add(np.multiply(mass, 1 + self.relative, out=out), self.error, out=out)
        return np.minimum(moved, 1.0, out=out)

    def down(self, mass: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A :meth:`mass` from below (at least 0; into ``out`` when given)."""
        moved = np.subtract(np.multiply(mass, 1 - self.relative, out=out), self.error, out=out)
        return np.maximum(moved, 0.0, out=out)


def _row_difference(take: Take, table: np.ndarray, hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """``table[hi] − table[lo]`` row by row (``table`` two-dimensional, C-ordered; every index valid), into an array
    of ``take``."""
    m, columns = hi.size, table.shape[1]
    top = table.take(hi, axis=0, out=take(m * columns).reshape(m, columns), mode="wrap")
    bottom = table.take(lo, axis=0, out=take(m * columns).reshape(m, columns), mode="wrap")
    return np.subtract(top, bottom, out=top)


class PairIntervalProfile(CellBoundProfile):
    """``δ(ε)`` of the interval bound for ``K ~ dist`` on a base given by :class:`DominatingPair`\\ s, the
    largest over the pairs (one per direction of the base; module docstring). A pair the base dominates
    (:class:`~symsel.pairs.loss.DominatedPair`) is refused: an upper bound on it need not bound the base."""

    def __init__(self, dist: Distribution, pairs: Sequence[DominatingPair], value_margin: float = 0.0,
                 piece_mass: float = PIECE_MASS, deeper: Callable[[], Sequence[DominatingPair]] | None = None):
        self.dist = dist
        self._deeper = deeper
        self._deep: PairIntervalProfile | None = None
        self.pairs = require(pairs, DominatingPair, "method 'interval'")
        self.value_margin = float(value_margin)
        self.piece_mass = float(piece_mass)
        self.support_max = None if dist.support_max is None else int(dist.support_max)
        self._pieces = [_Pieces(pair, self.piece_mass) for pair in self.pairs]
        self._cache: dict[float, float] = {}
        self._pair_cache: dict[tuple[int, float], float] = {}
        self._lead = 0  # the pair over the target last, or the largest where all were within: asked first

    @property
    def spec(self) -> str:
        return f"interval(dist={self.dist.spec}, pairs={[p.source for p in self.pairs]!r})"

    def _phi_increment_top(self, mass: float) -> float:
        """``φ(1) − φ(1 − mass)`` from above: the most the mass at loss ``+∞`` can add (it sits on top, and an
        increment of the convex ``φ`` over a length ``mass`` is largest at the top)."""
        if mass <= 0:
            return 0.0
        if mass >= 1:
            return 1.0
        with mpmath.workdps(40):
            one = mpmath.mpf(1)
            increment = self.dist.phi_mp(one, 40) - self.dist.phi_mp(one - mpmath.mpf(mass), 40)
        return min(1.0, float(increment) * (1 + 1e-12) + 1e-300)

    def delta_nonnegative(self, eps: float) -> float:
        """The certified bound at one ``ε ≥ 0``: the largest over the pairs; where that is below
        :data:`DEEP_DELTA` and the base has pairs resolved further into the tail (``deeper``), the smaller of it and
        the bound on those (both hold)."""
        eps = float(eps)
        if eps not in self._cache:
            value = max(self._pair_value(i, eps) for i in range(len(self.pairs)))
            deep = self._deep_profile() if value < DEEP_DELTA else None
            self._cache[eps] = value if deep is None else min(value, deep.delta_nonnegative(eps))
        return self._cache[eps]

    def delta_or_more_than(self, eps: float, target: float) -> float:
        """The pairs one at a time, the one that was largest last first (over ``target``, or the largest of all
        where every pair is within it): the first over ``target`` answers (the bound, their maximum, is at least its
        value); below :data:`DEEP_DELTA` the smaller of it and the deeper pairs' value when that is over ``target``
        too; else the bound itself."""
        eps = float(eps)
        if eps in self._cache:
            return self._cache[eps]
        for i in sorted(range(len(self.pairs)), key=lambda j: j != self._lead):
            value = self._pair_value(i, eps)
            if value > target:
                self._lead = i
                deep = self._deep_profile() if value < DEEP_DELTA else None
                if deep is None:
                    return value
                deeper = deep.delta_or_more_than(eps, target)
                # both over the target: the bound (the main maximum, or its minimum with the deeper value) is at
                # least the smaller; else the bound itself decides
                return min(value, deeper) if deeper > target else self.delta_nonnegative(eps)
        self._lead = max(range(len(self.pairs)), key=lambda j: self._pair_value(j, eps))
        return self.delta_nonnegative(eps)

    def search_value(self, eps: float, target: float) -> float:
        """:meth:`delta_or_more_than` for a target of at least :data:`DEEP_DELTA` on the main pairs alone: a point
        within the target there is feasible whatever the deeper pairs say, and a point over it is over
        :data:`DEEP_DELTA`, where they are not taken; so a search at such a ``δ`` never builds them."""
        if target < DEEP_DELTA or self._deeper is None:
            return self.delta_or_more_than(eps, target)
        eps = float(eps)
        if eps in self._cache:
            return self._cache[eps]
        values: list[float] = []
        for i in sorted(range(len(self.pairs)), key=lambda j: j != self._lead):
            values.append(self._far_pair_value(i, eps, target, values[0]) if values else self._pair_value(i, eps))
            if values[-1] > target:
                self._lead = i
                return values[-1]
        order = sorted(range(len(self.pairs)), key=lambda j: j != self._lead)
        self._lead = order[int(np.argmax(values))]
        return max(values)

    def search_estimate(self, eps: float, target: float) -> tuple[float, bool]:
        """The bound at ``eps`` when known, else the value of the pair asked first (the largest at the last point
        within the target), one evaluation instead of two: an estimate that steers the search from above
        (:meth:`~symsel.bounds.interval.CellBoundProfile.search_estimate`)."""
        eps = float(eps)
        if eps in self._cache:
            return self._cache[eps], True
        return self._pair_value(self._lead, eps), False

    def _far_pair_value(self, index: int, eps: float, target: float, lead: float) -> float:
        """A certified bound on pair ``index``'s exact value at ``eps`` for the search (:meth:`search_value`), from
        fewer evaluations where the pair is below the pair asked first (``lead``, its value at ``eps``): the other
        direction of a DP-SGD run on a random law, 1e-9 against 1e-6. The pair's exact value is non-increasing in
        ``ε`` (the integrand ``r φ'(Q) − e^ε φ'(Q')`` is), so its certified value at any ``ε' ≤ eps`` bounds it at
        ``eps``: the smallest of them is taken when it is at most ``ceiling``, the smaller of ``lead`` and
        :data:`COVER_SHARE` of ``target`` (the search's maximum is then ``lead``'s value, as with the pair
        evaluated). Else, at the pair's first evaluation in a search that a Newton guess steers
        (:attr:`~symsel.bounds.interval.CellBoundProfile.search_slope`, the hinted slope of ``log δ``), the pair is
        evaluated below the guess from ``lead``: :data:`COVER_NEWTON` times the Newton step plus one search width
        below ``eps`` (at most :data:`~symsel.bounds.interval.NEWTON_MAX_STEP` of ``eps``), where its value covers
        the probes around the guess; if that is not below ``ceiling``, at ``eps``.

        The margin of :data:`COVER_SHARE` keeps the profile's own value consistent with the search: a point the
        search accepts on a cover has the pair's certified value at ``eps`` (within a fraction of a percent of the
        exact one, itself at most the cover's) within the target too. Only the work depends on the hint; every value
        is a certified bound."""
        ceiling = min(COVER_SHARE * target, lead)
        known = [(at, value) for (i, at), value in self._pair_cache.items() if i == index]
        cover = min((value for at, value in known if at <= eps), default=math.inf)
        if cover <= ceiling:
            return cover
        lower = self._cover_point(eps, target, lead) if not known else None
        if lower is not None and self._pair_value(index, lower) <= ceiling:
            return self._pair_value(index, lower)
        return self._pair_value(index, eps)

    def _cover_point(self, eps: float, target: float, lead: float) -> float | None:
        """Where :meth:`_far_pair_value` evaluates a pair first: :data:`COVER_NEWTON` Newton steps of ``lead``'s
        ``log δ`` along the hinted slope, plus one search width, below ``eps``; ``None`` without a hint, with
        ``lead`` over the target, or with the step over :data:`~symsel.bounds.interval.NEWTON_MAX_STEP` of ``eps``
        (the search will not probe there)."""
        from symsel.bounds.interval import NEWTON_MAX_STEP

        slope = self.search_slope
        if slope is None or not (math.isfinite(slope) and slope < 0) or not 0 < lead <= target:
            return None
        step = math.log(target / lead) / -slope
        if step > NEWTON_MAX_STEP * eps:
            return None
        return max(eps * (1 - NEWTON_MAX_STEP), eps - COVER_NEWTON * step - self._width(eps))

    def _deep_profile(self) -> PairIntervalProfile | None:
        """The same bound on the deeper pairs (built on first use), or ``None`` without them."""
        if self._deeper is None:
            return None
        if self._deep is None:
            self._deep = PairIntervalProfile(self.dist, self._deeper(), self.value_margin, self.piece_mass)
        return self._deep

    def _pair_value(self, index: int, eps: float) -> float:
        key = (index, eps)
        if key not in self._pair_cache:
            self._pair_cache[key] = self._evaluate(self.pairs[index], self._pieces[index], eps)
        return self._pair_cache[key]

    def _evaluate(self, pair: LossPair, pieces: _Pieces, eps: float) -> float:
        e = math.exp(min(eps, 700.0))
        threshold = 1.0
        if self.support_max is not None:
            threshold = max(1.0, math.exp(min(eps / max(self.support_max, 1), 700.0)))
        first = int(np.searchsorted(pieces.r, threshold, side="right"))  # the contributing pieces: [first, n)
        total = 0.0
        if first < pieces.n:
            # a first pass on runs of H_COARSE pieces; the smallest runs keep their (valid) coarse charge, the others
            # are charged piece by piece (coarse_then_fine)
            starts = np.arange(first, pieces.n, H_COARSE)
            ends = np.minimum(starts + H_COARSE, pieces.n)
            coarse = self._charges(pieces, starts, ends, e)

            def fine_total(refine: np.ndarray) -> float:
                fine = (starts[refine, None] + np.arange(H_COARSE)[None, :]).ravel()
                fine = fine[fine < ends[refine].repeat(H_COARSE)]
                return float(np.sum(self._charges(pieces, fine, fine + 1, e)))

            total = coarse_then_fine(coarse, fine_total)
        top = pair.a_infinity * (1 + pair.relative_error) + pair.mass_error
        return min(1.0, total * (1 + SUM_ALLOWANCE) + self._phi_increment_top(top))

    def _charges(self, pieces: _Pieces, starts: np.ndarray, ends: np.ndarray, e: float) -> np.ndarray:
        """For each ``h``-run of pieces ``[starts, ends)``: its ``Q'``-mass (from above) times an upper bound on the
        integrand over it (0 where that bound is negative; ``+inf`` where it overflowed)."""
        out = np.empty(starts.size)
        for s in range(0, starts.size, CHUNK):
            j0, j1 = starts[s:s + CHUNK], ends[s:s + CHUNK]
            bound = self._row_bounds(pieces, j0, j1, e)
            # the run's Q'-mass summed directly (non-negative terms: a relative error only, no prefix-sum error)
            run_mass = np.zeros(j0.size)
            for offset in range(int(np.max(j1 - j0))):
                inside = j0 + offset < j1
                run_mass += np.where(inside, pieces.b[np.minimum(j0 + offset, pieces.n - 1)], 0.0)
            run_mass *= 1 + pieces.relative + (H_COARSE + 2) * 2.0**-53
            with np.errstate(invalid="ignore", over="ignore"):
                charge = np.where(bound > 0, run_mass * bound, 0.0)
            out[s:s + CHUNK] = np.where(np.isnan(charge), np.inf, charge)
        return out

    # ------------------------------------------------------------------ cells
    def _row_bounds(self, pieces: _Pieces, j0: np.ndarray, j1: np.ndarray, e: float) -> np.ndarray:
        """For each ``h``-run of pieces ``[j0, j1)``, an upper bound on the positive part of the integrand over the
        run and every ``l ≤ h`` (0 where it is negative throughout): :func:`~symsel.bounds.interval.branch_and_bound`
        over ``l``-cells of pieces, from :data:`L_COARSE` pieces down to single ones (:data:`REFINEMENTS`, at most
        :data:`REFINE_CELLS` cells of a row cut at each level)."""
        return branch_and_bound(
            j1, L_COARSE, [split for split, _ in REFINEMENTS], REFINE_CELLS,
            lambda row, lo, hi, floor: self._cells(pieces, j0, j1, row, lo, hi, e, floor),
            lambda row, lo: self._point_values(pieces, j1, row, lo, e),
            settle=settle_share(self.search_rtol), least=0.0)

    def _point_values(self, pieces: _Pieces, j1: np.ndarray, row: np.ndarray, lo: np.ndarray, e: float) -> np.ndarray:
        """The integrand (float64, uncertified: it only steers the branch and bound) at ``l`` the start of piece
        ``lo`` and ``h`` the end of the run ``row`` (ending at ``j1[row]``): ``r φ'(Q[l, h]) − e^ε φ'(Q'[l, h])`` with
        ``r`` the run's last ratio; ``−inf`` where it is not a number. In blocks of
        :data:`~symsel.bounds.interval.CELL_BLOCK` cells whose working arrays are
        :data:`~symsel.bounds.interval.SCRATCH`'s."""

        def fill(part: slice, take: Take, out: np.ndarray) -> None:
            h, low = gather(take, j1, row[part]), lo[part]
            last = gather(take, pieces.ratio, np.subtract(h, 1, out=take(h.size, h.dtype)))
            mass_a, mass_b = pieces.masses(h, low, take)
            with np.errstate(over="ignore", invalid="ignore"):
                np.subtract(np.multiply(last, self._dphi(mass_a, take), out=last),
                            np.multiply(e, self._dphi(mass_b, take), out=take(h.size)), out=out)
            np.copyto(out, -np.inf, where=np.isnan(out))

        return SCRATCH.blocks(row.size, CELL_BLOCK, fill)

    def _cells(self, pieces: _Pieces, j0: np.ndarray, j1: np.ndarray, row: np.ndarray, lo: np.ndarray,
               hi: np.ndarray, e: float, floor: np.ndarray | None = None) -> np.ndarray:
        """An upper bound on ``r(h) φ'(Q[l, h]) − e^ε φ'(Q'[l, h])`` over ``h`` in the run of pieces
        ``[j0[row], j1[row])`` and ``l`` in the run ``[lo, hi)`` (``l ≤ h``); ``−inf`` for runs entirely above the
        ``h``-run. ``r(h)`` is at most the ratio of the run's last piece. The linearized bound is computed only where
        the corner bound is above ``floor`` (:func:`~symsel.bounds.interval.branch_and_bound` drops the others
        whatever their bound). In blocks of :data:`~symsel.bounds.interval.CELL_BLOCK` cells whose working arrays
        are :data:`~symsel.bounds.interval.SCRATCH`'s."""
        grow, shrink = 1 + self.value_margin, 1 - self.value_margin

        def fill(part: slice, take: Take, out: np.ndarray) -> None:
            rows, low, high = row[part], lo[part], hi[part]
            n = rows.size
            start, end = gather(take, j0, rows), gather(take, j1, rows)
            r = gather(take, pieces.r, np.subtract(end, 1, out=take(n, end.dtype)))
            lo_c = np.minimum(low, start, out=take(n, start.dtype))  # a run reaching above j0: masses stay >= 0
            hi_c = np.minimum(high, start, out=take(n, start.dtype))
            apart = np.less_equal(high, start, out=take(n, bool))
            # both masses over the l-run's widest and narrowest reach: the corner bound takes A from the first and
            # B from the second, the linearized bound the other two
            a_hi, b_hi_all = pieces.masses(end, lo_c, take)
            pieces.up(a_hi, out=a_hi)
            a_lo_all, b_lo = pieces.masses(start, hi_c, take)
            pieces.down(b_lo, out=b_lo)
            np.copyto(b_lo, 0.0, where=np.logical_not(apart, out=take(n, bool)))
            d_hi = np.multiply(self._dphi(a_hi, take), grow, out=take(n))
            d_b_lo = np.multiply(self._dphi(b_lo, take), shrink, out=take(n))
            with np.errstate(over="ignore", invalid="ignore"):
                upper_difference(np.multiply(r, d_hi, out=take(n)), np.multiply(e, d_b_lo, out=take(n)), out=out)
            if floor is not None:
                np.logical_and(apart, np.greater(out, floor[part], out=take(n, bool)), out=apart)
            i = np.flatnonzero(apart)
            if i.size:
                h0, h1, l0, l1 = (gather(take, index, i) for index in (start, end, lo_c, hi_c))
                a_lo = pieces.down(gather(take, a_lo_all, i), out=take(i.size))
                b_hi = pieces.up(gather(take, b_hi_all, i), out=take(i.size))
                linear = self._linear(pieces, h0, h1, l0, l1, gather(take, r, i), e,
                                      (a_lo, gather(take, a_hi, i), gather(take, d_hi, i)),
                                      (gather(take, b_lo, i), b_hi, gather(take, d_b_lo, i)), take)
                out[i] = np.minimum(gather(take, out, i), linear, out=linear)
            np.copyto(out, -np.inf, where=np.logical_not(np.less(low, end, out=take(n, bool)), out=take(n, bool)))

        return SCRATCH.blocks(row.size, CELL_BLOCK, fill)

    def _linear(self, pieces: _Pieces, j0: np.ndarray, j1: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                r: np.ndarray, e: float, a_side: tuple, b_side: tuple, take: Take) -> np.ndarray:
        """The linearized bound of docs/interval.md on cells whose ``l``-run lies below the ``h``-run: ``φ'(A)``
        below its chord over ``[A_lo, A_hi]``, ``φ'(B)`` above a tangent at ``B_lo`` (slope: a secant to its left),
        so the integrand is at most ``c + λ₁ A − λ₂ B = c + g(h) − g(l)``. ``g`` is piecewise linear with slope
        of the sign of ``λ₁ r − λ₂`` (``r`` non-decreasing: falling, then rising), so its maximum over the ``h``-run
        is at an end and its minimum over the ``l``-run at the boundary ``l*`` where the ratio first reaches
        ``λ₂ / λ₁``. One-dimensional arrays; into an array of ``take``."""
        a_lo, a_hi, _ = a_side
        b_lo, _, d_b_lo = b_side
        m = j0.size
        d_a_lo, chord, steep, secant = chord_and_secant(self, a_side, b_side, take)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            slope_a = np.multiply(r, chord, out=take(m))
            target = np.divide(np.multiply(e, secant, out=take(m)), slope_a, out=take(m))
            np.copyto(target, np.inf, where=np.logical_not(np.greater(slope_a, 0, out=take(m, bool)),
                                                           out=take(m, bool)))
        # the true crossing lies between the crossings of the ratios moved down and up by their rounding; between
        # them g is linear (one atom) or flat to rounding, so its minimum is at one of the two. One search finds
        # the crossing of the ratios as computed; where a neighbouring ratio is within rounding of the target the
        # two moved crossings are searched as well.
        np.nan_to_num(target, copy=False, nan=np.inf)
        found = pieces.first_at_least(target)
        n = pieces.ratio.size
        index = take(m, found.dtype)
        below = gather(take, pieces.ratio, np.clip(np.subtract(found, 1, out=index), 0, n - 1, out=index))
        above = gather(take, pieces.ratio, np.clip(found, 0, n - 1, out=index))
        near, near_above, inside = take(m, bool), take(m, bool), take(m, bool)
        np.logical_and(np.greater(found, 0, out=inside),
                       np.greater_equal(np.multiply(below, 1 + RATIO_ALLOWANCE, out=below), target, out=near), out=near)
        np.logical_and(np.less(found, n, out=inside),
                       np.less(np.multiply(above, 1 - RATIO_ALLOWANCE, out=above), target, out=near_above),
                       out=near_above)
        np.logical_or(near, near_above, out=near)
        crossings = [np.clip(found, lo, hi, out=take(m, found.dtype))]
        if np.any(near):
            for side in (-1, 1):
                moved = take(m, found.dtype)
                np.copyto(moved, found)
                moved[near] = pieces.first_at_least(target[near], side)
                crossings.append(np.clip(moved, lo, hi, out=moved))
        best = take(m)
        best.fill(-np.inf)
        a, b = take(m), take(m)
        for h, l_star in ((h, l_star) for h in (j0, j1) for l_star in crossings):
            mass_a, mass_b = pieces.masses(h, l_star, take)
            np.clip(pieces.up(mass_a, out=a), a_lo, a_hi, out=a)
            np.maximum(pieces.down(mass_b, out=b), b_lo, out=b)
            np.maximum(best, linearized_value(r, e, (a, a_lo, d_a_lo, chord), (b, b_lo, d_b_lo, secant), take),
                       out=best)
        np.copyto(best, np.inf, where=steep)
        return best


def pair_interval_profile(dist: Distribution, base: Profile) -> PairIntervalProfile:
    """The interval bound of ``dist`` on ``base`` through its dominating loss-ordered pairs, cut into pieces of at
    most the base's :attr:`~symsel.profiles.Profile.interval_piece_mass` (default :data:`PIECE_MASS`).

    Raises:
        NotApplicableError: the base hands out no dominating pair, one with more than :data:`MAX_PAIR_ATOMS` atoms,
            or ``P[K ≥ 2] = 0``.
    """
    pairs = base.dominating_loss_pairs()
    if not pairs:
        raise NotApplicableError(f"method 'interval': {base.spec} hands out no dominating pair")
    if dist.support_max is not None and int(dist.support_max) < 2:
        raise NotApplicableError(f"method 'interval': needs P[K >= 2] > 0, and {dist.spec} has K <= 1")
    atoms = max(pair.n for pair in pairs)
    if atoms > MAX_PAIR_ATOMS:
        raise NotApplicableError(f"method 'interval': the dominating pair of {base.spec} has {atoms} atoms, more than "
                                 f"the {MAX_PAIR_ATOMS} the interval bound takes on")
    deeper = base.deep_dominating_loss_pairs if base.has_deep_loss_pairs else None
    piece_mass = PIECE_MASS if base.interval_piece_mass is None else base.interval_piece_mass
    return PairIntervalProfile(dist, pairs, usable_float_error(dist, "interval"), piece_mass=piece_mass, deeper=deeper)
