"""A selection followed by the final run: the privacy profile of the whole tuning pipeline.

A practitioner tunes (the best of ``K`` runs, bounded by any selection bound ``S``), then trains the chosen
configuration once more and releases that model too. The pipeline is the adaptive composition of the selection
with one more run ``M`` of the base, and its profile is bounded by (docs/composition.md, "A selection and the
final run", Proposition 5)

    δ(ε) ≤ max over directions d of  a_∞ + Σ_j a_j · S(ε − ℓ_j),

where ``(a_j, ℓ_j)`` are the ``Q``-masses and privacy losses of the final run's dominating pair in direction
``d`` (:meth:`symsel.profiles.Profile.loss_pairs`), ``a_∞`` its mass at loss ``+∞``, and ``S(x)`` the selection's
bound at every real ``x`` (for ``x < 0`` by the symmetry ``δ(x) = 1 − e^x + e^x δ(−x)``).

``S`` is evaluated only on a dyadic grid of ``x`` (its values cached, so the search of ``ε(δ)`` and a planner's
bisection reuse them); between two grid points the true curve, convex in ``e^x``, lies below the chord of the
two grid values, so every atom takes the chord's value (:func:`chord`). The grid starts at spacing
:data:`COARSE_SPACING`; the interval whose chords could lose the most is halved until the possible gain is below
:data:`REFINE_TOLERANCE` of the bound or :data:`MAX_EVALUATIONS` values of ``S`` are spent. Atoms above the grid's
top take its value there (the curve is non-increasing), atoms below :data:`X_FLOOR` the symmetry bound with
``S(−X_FLOOR)``. While ``ε(δ)`` is searched, the lowest atoms, of total mass at most :data:`BOTTOM_SHARE` of
``δ``, take ``S ≤ 1`` (the answer's ``δ`` moves by at most that fraction). Whether the bound at an ``ε`` is over
a target ``δ`` can be known early (:meth:`PipelineProfile.exceeds`): walking the coarse grid up, the atoms below a
point take at least the selection's value there in every refinement. Rounding: the masses' own allowances
(:class:`~symsel.pairs.loss.LossPair`) and the float sums' are carried outward, so the result never comes out below
the exact sum over the grid values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from symsel.errors import NotApplicableError, ParameterError
from symsel.memory import MIB, bounded_cache
from symsel.pairs.loss import UNIT, LossPair, gaussian_dominating_pair
from symsel.profiles import Profile

#: the first spacing of the grid of ``x`` on which the selection's bound is evaluated.
COARSE_SPACING = 1.0
#: intervals are not halved below this width.
MIN_SPACING = 2.0**-11
#: refinement stops when the chords could lose about this fraction of the bound (a 1 % change of δ moves ε by
#: about 1 % of ``1/|d log δ/dε|``, well under 0.1 % of ε where δ is small).
REFINE_TOLERANCE = 1e-2
#: at most this many values of the selection's bound per evaluation of the pipeline's ``δ(ε)``.
MAX_EVALUATIONS = 160
#: the coarse grid stops where the atoms above it carry at most this fraction of the bound.
TRUNCATION = 1e-4
#: atoms at ``x = ε − ℓ`` below this take the symmetry bound ``1 − e^x + e^x S(−X_FLOOR)``.
X_FLOOR = -8.0
#: the extrapolated crossing that :meth:`PipelineProfile.epsilon` tries before doubling is moved up by this fraction.
BRACKET_MARGIN = 0.02
#: the most coarse grid points (then the atoms above take the value at the last one).
MAX_COARSE = 256
#: a final run's pair with more than this mass at loss ``+∞`` beyond what the profiles themselves have there (losses
#: beyond float range, sent to ``+∞``) answers ``ε = ∞`` at every ``δ`` anyone asks: :func:`with_final_run` then
#: answers with the basic composition theorem instead.
LOST_AT_INFINITY = 1e-3
#: while ``ε(δ)`` is searched (a target ``δ``), the lowest atoms in ``x``, of total ``Q``-mass at most this fraction
#: of the target, take the trivial bound ``S ≤ 1`` instead of grid values: they move the answer by at most that
#: fraction of ``δ`` (a final run's largest losses carry little mass, and spared the grid points far below them).
BOTTOM_SHARE = 1e-4


def chord(x: np.ndarray, g0: np.ndarray, g1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """The chord in ``γ = e^x`` through ``(e^{g0}, b0)`` and ``(e^{g1}, b1)`` at ``x ∈ [g0, g1]``: ``b1 + (b0 − b1) w``
    with ``w = (e^{g1} − e^x)/(e^{g1} − e^{g0}) = expm1(x − g1)/expm1(g0 − g1)``. A hockey-stick curve is convex and
    non-increasing in ``γ``, so it lies below this chord of any two upper bounds on it at ``g0`` and ``g1``."""
    w = np.clip(np.expm1(x - g1) / np.expm1(g0 - g1), 0.0, 1.0)
    return b1 + (b0 - b1) * w


def _geometric(x: np.ndarray, g0: np.ndarray, g1: np.ndarray, b0: np.ndarray, b1: np.ndarray) -> np.ndarray:
    """Log-linear interpolation between the two grid values: not a bound, only the estimate of the curve from which
    refinement judges what the chords could still lose (its error is second order in the spacing, the chord's
    loss against the right end's value first order)."""
    t = (x - g0) / (g1 - g0)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.exp((1 - t) * np.log(b0) + t * np.log(b1))
    return np.where(b1 > 0, np.minimum(out, b0), 0.0)


#: above this ``μ = Δ/σ`` a Gaussian final run's pair is built from its closed-form loss: dp-accounting's PLD spans
#: ``μ²/2 + 8μ`` at its grid of 1e-4 (5 s at ``σ = 0.3``, 20 s at ``σ = 0.1``, and no pair at all below ``σ ≈ 0.07``).
GAUSSIAN_PLD_MAX_MU = 2.0


def final_run_pairs(final: Profile | tuple[Profile, ...]) -> tuple[LossPair, ...]:
    """The final run's dominating pairs ordered by privacy loss: the base's own (:meth:`Profile.loss_pairs`), the
    Gaussian's from dp-accounting's pessimistic PLD of ``GaussianDpEvent(σ/Δ)`` (above ``μ = Δ/σ =``
    :data:`GAUSSIAN_PLD_MAX_MU` from its closed-form loss, :func:`~symsel.pairs.loss.gaussian_dominating_pair`), and
    for any other profile the pessimistic connect-the-dots PLD of its profile (:func:`symsel.profiles.export.to_pld`),
    which dominates every mechanism with that profile. Several runs (a tuple): dp-accounting's composition of their
    pessimistic PLDs (:func:`symsel.profiles.export.compose`), which dominates their adaptive composition."""
    from symsel.profiles.dpaccounting import pld_loss_pairs

    if isinstance(final, tuple):
        if len(final) == 1:
            return final_run_pairs(final[0])
        from symsel.profiles.export import compose

        pairs = pld_loss_pairs(compose(list(final)), "composition of " + ", ".join(f.spec for f in final))
        if not pairs:
            raise NotApplicableError("with_final_run: no dominating pair known for the composition of the final runs")
        return pairs
    pairs = final.dominating_loss_pairs()
    if pairs:
        return pairs
    from symsel.profiles import GaussianProfile

    if isinstance(final, GaussianProfile) and final.mu > GAUSSIAN_PLD_MAX_MU:
        pairs = (gaussian_dominating_pair(final.mu),)
    elif isinstance(final, GaussianProfile):
        pairs = _gaussian_pld_pairs(final.mu)
    else:
        from symsel.profiles.export import to_pld_arrays

        pairs = pld_loss_pairs(to_pld_arrays(final), f"connect-the-dots PLD of {final.spec}")
    if not pairs:
        raise NotApplicableError(f"with_final_run: no dominating pair known for the final run {final.spec}")
    return pairs


@bounded_cache(max_entries=8, max_bytes=64 * MIB)
def _gaussian_pld_pairs(mu: float) -> tuple[LossPair, ...]:
    """The pairs of dp-accounting's pessimistic PLD of a Gaussian run of ``μ = Δ/σ``, built once per ``μ`` (half a
    second at ``μ = 1/4``): a planner's search over the number of trials, or an accountant asked again, composes the
    same final run at every step. Read only by :class:`_Atoms`, which copies what it keeps."""
    from dp_accounting import dp_event

    from symsel.profiles import PldProfile

    return PldProfile(dp_event.GaussianDpEvent(1.0 / mu)).dominating_loss_pairs()


class _Atoms:
    """One direction of the final run's pair as arrays: losses (finite, increasing), ``Q``-masses, and the
    allowances that the sum carries."""

    def __init__(self, pair: LossPair):
        live = pair.a > 0
        with np.errstate(divide="ignore"):
            self.loss = np.log(pair.a[live]) - np.log(pair.b[live])
        self.mass = pair.a[live]
        self.infinity = float(pair.a_infinity)
        self.relative = float(pair.relative_error)
        self.absolute = float(pair.mass_error)


class PipelineProfile(Profile):
    """The bound of the module docstring on the profile of ``selection`` followed by one run of ``final``.

    Args:
        selection: a bound on the selection's profile (e.g. ``symsel.bound(law, base)``), valid at every real ``ε``.
        final: the profile of the final run (the base, or any other mechanism) with a dominating pair
            (:func:`final_run_pairs`), or a tuple of profiles run one after the other.
    """

    family = "pipeline"

    def __init__(self, selection: Profile, final: Profile | tuple[Profile, ...]):
        finals = final if isinstance(final, tuple) else (final,)
        for name, value in (("selection", selection), *(("final", f) for f in finals)):
            if not isinstance(value, Profile):
                raise ParameterError(name, repr(value), "a symsel Profile", "with_final_run")
        self.selection = selection
        self.final = final
        self._directions = [_Atoms(p) for p in final_run_pairs(final)]
        self._values: dict[float, float] = {}
        self.evaluations = 0
        self._target: float | None = None  # while ε(δ) is searched: the δ that steers refinement

    @property
    def spec(self) -> str:
        finals = self.final if isinstance(self.final, tuple) else (self.final,)
        return f"pipeline(selection={self.selection.spec}, final={', '.join(f.spec for f in finals)})"

    @property
    def delta_at_infinity(self) -> float:
        top = self.selection.delta_at_infinity
        return min(1.0, max(d.infinity * (1 + d.relative) + d.absolute + top * (1 + d.relative)
                            for d in self._directions) * (1 + 8 * UNIT))

    # ------------------------------------------------------------------ the selection's bound on the grid
    def _known(self, points: np.ndarray) -> np.ndarray:
        """The selection's bound at grid points (evaluated once each, cached)."""
        new = sorted({float(p) for p in points} - self._values.keys())
        if new:
            values = np.asarray(self.selection.delta(np.asarray(new)), dtype=float)
            self._values.update(zip(new, values.tolist(), strict=True))
            self.evaluations += len(new)
        return np.array([self._values[float(p)] for p in points])

    def _floor_value(self) -> float:
        return float(self._known(np.array([-X_FLOOR]))[0])

    # ------------------------------------------------------------------ δ(ε)
    def _delta_finite(self, eps: np.ndarray) -> np.ndarray:
        return np.array([self.delta_within(float(e), self._target) for e in eps.ravel()]).reshape(eps.shape)

    def epsilon(self, delta: float) -> float:
        """The smallest ``ε`` with ``δ(ε) ≤ delta`` (:meth:`Profile.epsilon`), every ``δ(ε)`` on the way evaluated as
        :meth:`delta_within` ``(ε, target=delta)`` evaluates it: the question "does ``δ(ε)`` fit ``delta``?" is
        answered alike by the search of ``ε`` and by a planner's check at a budget's ``ε``, so the two never
        disagree on which side of the budget a pipeline is (up to the root finder's relative ``1e-12``)."""
        d = self._check_delta(delta)
        previous, self._target = self._target, (d if 0 < d < 1 else None)
        try:
            if self._target is None or float(self.delta_at_infinity) > d:
                return super().epsilon(d)
            return self._search(d)
        finally:
            self._target = previous

    def _search(self, delta: float) -> float:
        """:meth:`Profile.epsilon`'s search (double ``ε`` from 1 to a bracket, then
        :func:`~symsel.numeric.last_feasible` to a relative ``1e-12``, the upper end checked), except that before
        doubling past a point over ``delta`` it tries the crossing extrapolated in ``log δ`` from the last two points
        (plus :data:`BRACKET_MARGIN`): a doubling far past the crossing asks the selection's bound at grid points no
        later step needs. Only the work depends on the guess: both ends of the bracket are checked."""
        from symsel.numeric import last_feasible
        from symsel.profiles.base import EPSILON_RTOL, EPSILON_SEARCH_CAP

        log_target = math.log(delta)
        seen: dict[float, float] = {}

        def value(eps: float) -> float:  # log δ(ε), kept above log delta whenever δ(ε) > delta: a δ one ulp over
            if eps not in seen:  # the target can round to log delta itself
                found = self.delta_within(eps, delta)
                log_found = math.log(max(found, 1e-320))
                seen[eps] = math.nextafter(log_target, math.inf) if found > delta and log_found <= log_target \
                    else log_found
            return seen[eps]

        if value(0.0) <= log_target:
            return 0.0
        lo, hi, previous = 0.0, 1.0, None
        while value(hi) > log_target:
            if previous is not None and value(previous) > value(hi):
                slope = (value(hi) - value(previous)) / (hi - previous)
                guess = hi + (log_target - value(hi)) / slope * (1 + BRACKET_MARGIN)
                if hi < guess < 2 * hi and value(guess) <= log_target:
                    lo, hi = hi, guess
                    break
            previous, lo, hi = hi, hi, hi * 2.0
            if hi > EPSILON_SEARCH_CAP:
                return math.inf
        answer = last_feasible(lambda e: value(e) - log_target, lo, hi, xtol=EPSILON_RTOL, rtol=EPSILON_RTOL)
        loss = self.max_privacy_loss
        return answer if loss is None or not math.isfinite(loss) else min(answer, max(0.0, float(loss)))

    def delta_within(self, eps: float, target: float | None = None) -> float:
        """``δ(ε)`` of the pipeline (module docstring). With ``target``, refinement stops as soon as the bound is
        ``≤ target`` (it fits) or the chords' floor, the value no refinement can go below, exceeds it."""
        return max(self._one_direction(atoms, eps, target) for atoms in self._directions)

    def exceeds(self, eps: float, target: float) -> bool:
        """Whether :meth:`delta_within` ``(eps, target)`` is certainly over ``target``, known from the first values
        of the coarse grid: walking it up from the lowest atom, the atoms below each point take at least the
        selection's value there in every refinement (the floor), and once that floor passes ``target`` no grid
        could bring the bound back within it. ``False`` means not known (only then is the answer not decided);
        a question answered ``True`` costs the grid points up to that point only."""
        for atoms in self._directions:
            x, mass, certain = self._prepared(atoms, eps, target)
            if certain > target:
                return True
            if x.size and self._coarse_grid(x, mass, ceiling=target - certain)[1] > target - certain:
                return True
        return False

    def _prepared(self, atoms: _Atoms, eps: float, target: float | None) -> tuple[np.ndarray, np.ndarray, float]:
        """The atoms' ``x = ε − ℓ`` (increasing) and masses left to the grid, and the sum ``certain`` of the others:
        the mass at ``+∞``, with a target the lowest atoms (``S ≤ 1``), and those below :data:`X_FLOOR` (symmetry)."""
        x = eps - atoms.loss[::-1]  # increasing
        mass = atoms.mass[::-1]
        certain = atoms.infinity
        if target is not None:  # the lowest atoms, of mass at most BOTTOM_SHARE · target: S ≤ 1 there
            cut = int(np.searchsorted(np.cumsum(mass), BOTTOM_SHARE * target, side="right"))
            if cut:
                certain += float(np.sum(mass[:cut]))
                x, mass = x[cut:], mass[cut:]
        low = x < X_FLOOR
        if np.any(low):  # δ(x) = 1 − e^x + e^x δ(−x) ≤ 1 − e^x + e^x S(−X_FLOOR): δ(−x) ≤ δ(8) for −x ≥ 8
            xl = x[low]
            certain += float(np.dot(mass[low], np.minimum(1.0, -np.expm1(xl) + np.exp(xl) * self._floor_value())))
            x, mass = x[~low], mass[~low]
        return x, mass, certain

    def _one_direction(self, atoms: _Atoms, eps: float, target: float | None) -> float:
        x, mass, certain = self._prepared(atoms, eps, target)
        total_error = atoms.absolute + (atoms.relative + (x.size + 16) * UNIT) * 2.0
        if x.size == 0:
            return min(1.0, certain * (1 + total_error) + atoms.absolute)
        spent = self.evaluations
        grid = self._coarse_grid(x, mass)[0]
        budget = self.evaluations - spent + MAX_EVALUATIONS
        while True:
            upper, floor, gains = self._sums(x, mass, grid)
            upper = min(1.0, (certain + upper) * (1 + total_error) + atoms.absolute)
            floor = certain + floor
            possible = float(np.sum(gains))
            if target is not None and (upper <= target or floor > target):
                return upper
            if possible <= REFINE_TOLERANCE * upper:
                return upper
            widths = np.diff(grid)
            candidates = np.flatnonzero((gains > 0) & (widths > MIN_SPACING))
            if candidates.size == 0:
                return upper
            chosen = candidates[np.argsort(gains[candidates])[::-1][:8]]
            midpoints = (grid[chosen] + grid[chosen + 1]) / 2
            if self.evaluations - spent >= budget:
                return upper
            self._known(midpoints)
            grid = np.union1d(grid, midpoints)

    def _coarse_grid(self, x: np.ndarray, mass: np.ndarray, ceiling: float | None = None) -> tuple[np.ndarray, float]:
        """Grid points ``k · COARSE_SPACING`` from below the lowest atom up to where the atoms above carry at most
        :data:`TRUNCATION` of the sum below (or ``S`` is 0 there), at most :data:`MAX_COARSE` of them; and the floor
        sum of the atoms below the last point (each at the selection's value at the next point). With ``ceiling``,
        the walk stops as soon as that floor exceeds it (:meth:`exceeds`)."""
        start = math.floor(float(x[0]) / COARSE_SPACING)
        stop = math.floor(float(x[-1]) / COARSE_SPACING) + 1
        above = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])  # mass of the atoms at index >= i
        points: list[float] = []
        below, done = 0.0, 0  # the floor sum of the atoms below the last point, and how many they are
        step = 8 if ceiling is None else 1  # a walk that may stop early asks one value at a time
        for first in range(start, stop + 1, step):
            batch = np.arange(first, min(first + step, stop + 1, start + MAX_COARSE)) * COARSE_SPACING
            if batch.size == 0:
                break
            for g, value in zip(batch.tolist(), self._known(batch).tolist(), strict=True):
                points.append(g)
                i = int(np.searchsorted(x, g, side="left"))
                below += float(np.sum(mass[done:i])) * value  # each of them is at least S(g) (non-increasing)
                done = i
                if value == 0.0 or value * above[i] <= TRUNCATION * below:
                    return np.array(points), below
                if ceiling is not None and below > ceiling:
                    return np.array(points), below
        return np.array(points), below

    def _sums(self, x: np.ndarray, mass: np.ndarray, grid: np.ndarray
              ) -> tuple[float, float, np.ndarray]:
        """The chord sum (an upper bound), the floor sum (each atom at its interval's right end) and the possible
        gain per grid interval; atoms above the grid take its top value in both sums."""
        values = np.maximum.accumulate(self._known(grid)[::-1])[::-1]  # non-increasing upper envelope
        index = np.searchsorted(grid, x, side="right") - 1
        inside = (index >= 0) & (index < grid.size - 1)
        above = index >= grid.size - 1
        top = float(np.sum(mass[above])) * float(values[-1])
        i = index[inside]
        chords = chord(x[inside], grid[i], grid[i + 1], values[i], values[i + 1])
        floors = values[i + 1]
        gains = np.bincount(i, weights=mass[inside] * (chords - _geometric(x[inside], grid[i], grid[i + 1], values[i],
                                                                            values[i + 1])), minlength=grid.size - 1)
        return top + float(np.dot(mass[inside], chords)), top + float(np.dot(mass[inside], floors)), gains


FinalRuns = Profile | str | Sequence[Profile | str] | None


def with_final_run(selection: Profile, final: FinalRuns = None) -> Profile:
    """The whole pipeline's bound, the one number for "a selection, then the final run of the chosen configuration"
    (docs/composition.md, Proposition 5): ``selection`` (a :class:`~symsel.bounds.SelectionBound` or any profile
    bound), then one run of ``final`` (default: the selection's own base; a spec string is parsed; a list: those
    runs one after the other). Every front-end answers the pipeline with it: ``plan --final-run``
    (:mod:`symsel.apps.plan`), :class:`~symsel.apps.accounting.SelectionAccountant` with a run composed after a
    selection, ``bound --compose-with`` and the Opacus accountant (:mod:`symsel.apps.opacus`).

    Its ``ε(δ)`` is certified (an upper bound) and within about 0.1 % of the same sum with the selection's bound
    evaluated at every atom (:data:`REFINE_TOLERANCE`). Where a final run's dominating pair cannot be built (a PLD
    too large for memory, or no pair known), or puts more than :data:`LOST_AT_INFINITY` of mass at loss ``+∞``
    that the profiles do not have (a nearly non-private final run), the answer is the basic composition theorem on
    the profiles (:class:`~symsel.profiles.composition.BasicComposition`): certified, looser."""
    if not isinstance(selection, Profile):
        raise ParameterError("selection", repr(selection), "a symsel Profile (a selection bound)", "with_final_run")
    if final is None:
        final = getattr(selection, "base", None)
        if final is None:
            raise ParameterError("final", None, "the final run's profile (the selection has no base)", "with_final_run")
    finals = list(final) if isinstance(final, list | tuple) else [final]
    if not finals:
        raise ParameterError("final", repr(final), "at least one final run", "with_final_run")
    parsed = []
    for one in finals:
        if isinstance(one, str):
            from symsel.spec import parse_profile

            one = parse_profile(one)
        if not isinstance(one, Profile):
            raise ParameterError("final", repr(one), "a symsel Profile or a base spec string", "with_final_run")
        parsed.append(one)
    from symsel.profiles.composition import BasicComposition

    names = ", ".join(p.spec for p in parsed)
    basic = BasicComposition([selection, *parsed], f"basic composition of {selection.spec} and {names}")
    try:
        pipeline = PipelineProfile(selection, parsed[0] if len(parsed) == 1 else tuple(parsed))
    except (MemoryError, NotApplicableError):
        # the final run's pair cannot be built (a noise so small that its PLD does not fit in memory, or no pair
        # known): the basic composition theorem still certifies the pipeline, from the profiles alone
        return basic
    at_infinity = float(pipeline.delta_at_infinity)
    if at_infinity > LOST_AT_INFINITY and at_infinity > 2 * float(basic.delta_at_infinity):
        # the pair sent its losses beyond float range to +∞ (a nearly non-private final run): ε = ∞ at every δ
        # below that mass, where the profiles themselves have a finite ε
        return basic
    return pipeline

