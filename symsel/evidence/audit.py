"""Monte Carlo privacy audit of private selection (Xiang, Wang & Wang, Section 4.1, Algorithm 1 and
Appendix A.3).

The distinguishing game is simulated on each side of a pair: draw ``K``, draw ``K`` outputs of the
base mechanism, release the best (``⊥`` when ``K = 0``). The best of ``K`` i.i.d. draws is sampled
exactly through its distribution function: the best output exceeds ``y`` with probability
``1 - F(y)^K``, so with ``U`` uniform, ``W = 1 - U^(1/K)`` (computed as ``-expm1(log(U)/K)``) is
the upper-tail probability of the best output, which is read off the base law's upper tail
without cancellation. ``method="direct"`` draws the ``K`` outputs one by one instead (slow, for
cross-checks).

Each test is a set ``S`` of outputs. With Clopper-Pearson bounds on ``A(S)`` and ``A'(S)`` --
Bonferroni over all tests and both directions, so that all hold together with the stated
confidence -- every test gives

    eps >= log((A_low(S) - delta) / A'_high(S))   and   eps >= log((A'_low(S) - delta) / A_high(S)),

Xiang et al.'s eq. (4) (the set and its complement give the two forms). ``epsilon_lower`` is the
largest of these (and 0). Tests are fixed before the counts are taken: for finite pairs with at
most ``max_subset_outcomes`` outputs, all subsets; otherwise the prefix sets of an ordering by
likelihood ratio estimated on a separate calibration sample; for continuous pairs, the threshold
sets ``{x > t}`` at quantiles of a calibration sample.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import beta

from symsel import validate
from symsel.errors import ParameterError
from symsel.evidence.exact import _check_delta
from symsel.pairs import Pair, as_pair
from symsel.pairs.finite import FinitePair
from symsel.pairs.location import LocationPair
from symsel.profiles import Profile


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit`.

    Attributes:
        epsilon_lower: the audited lower bound on ``eps`` at ``delta`` (holds with probability at
            least ``confidence`` over the simulation).
        delta, confidence, trials: the inputs (``trials`` per side, calibration included).
        n_tests: number of tests (sets), each used in both directions.
        best_test: description of the test attaining ``epsilon_lower``.
        best_counts: ``(count under X, count under X', evaluation trials)`` for that test.
        calibration_trials: trials per side spent on choosing the tests.
        seconds: wall time.
    """

    epsilon_lower: float
    delta: float
    confidence: float
    trials: int
    n_tests: int
    best_test: str
    best_counts: tuple[int, int, int]
    calibration_trials: int
    method: str
    seconds: float


# --------------------------------------------------------------------- samplers
def _best_tail_prob(k: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Upper-tail probability ``1 - U^(1/K)`` of the best of ``K`` draws (``nan`` where ``K = 0``)."""
    u = rng.random(len(k))
    with np.errstate(divide="ignore", invalid="ignore"):
        w = -np.expm1(np.log(u) / k)
    return np.where(k > 0, w, np.nan)


class _FiniteSampler:
    """Best outcome of ``K`` draws from a finite law; outputs outcome indices, ``n`` for ``⊥``."""

    def __init__(self, pair: FinitePair):
        self.pair = pair
        self.n = pair.n
        self.order = np.asarray(pair.order)

    def sample(self, side: int, k: np.ndarray, rng: np.random.Generator, method: str) -> np.ndarray:
        masses = (self.pair.p_float if side == 0 else self.pair.q_float)[self.order]
        out = np.full(len(k), self.n, dtype=np.int64)
        pos = k > 0
        if method == "direct":
            kk = k[pos]
            draws = rng.choice(self.n, size=int(kk.sum()), p=masses)
            starts = np.concatenate(([0], np.cumsum(kk)[:-1]))
            best_rank = np.maximum.reduceat(draws, starts) if len(kk) else np.empty(0, dtype=np.int64)
        else:
            # tail[r] = P(rank > r); the best rank is the smallest r with tail[r] <= W
            tail = np.concatenate((np.cumsum(masses[::-1])[::-1][1:], [0.0]))
            w = _best_tail_prob(k[pos], rng)
            best_rank = np.searchsorted(-tail, -w, side="left")
            best_rank = np.minimum(best_rank, self.n - 1)
        out[pos] = self.order[best_rank]
        return out


class _ContinuousSampler:
    """Best of ``K`` draws from one side of a location pair; ``-inf`` for ``⊥``."""

    def __init__(self, pair: LocationPair):
        self.pair = pair

    def sample(self, side: int, k: np.ndarray, rng: np.random.Generator, method: str) -> np.ndarray:
        out = np.full(len(k), -np.inf)
        pos = k > 0
        if method == "direct":
            kk = k[pos]
            u = rng.random(int(kk.sum()))
            draws = self.pair.isf_float(u, side)
            starts = np.concatenate(([0], np.cumsum(kk)[:-1]))
            out[pos] = np.maximum.reduceat(draws, starts) if len(kk) else np.empty(0)
        else:
            out[pos] = self.pair.isf_float(_best_tail_prob(k[pos], rng), side)
        return out


def _as_target(pair_or_base: Any) -> Pair:
    """A :data:`~symsel.pairs.Pair` itself; a Profile's dominating pair; or the ``pair`` field of an
    object that carries one (a :class:`~symsel.evidence.lower.LowerBoundResult`, an
    :class:`~symsel.evidence.examples.Example`)."""
    inner = getattr(pair_or_base, "pair", None)
    if not isinstance(pair_or_base, Pair | Profile) and isinstance(inner, Pair):
        return inner
    try:
        return as_pair(pair_or_base, "audit")
    except ParameterError as exc:
        raise ParameterError("pair_or_base", exc.value, exc.allowed + ", or a result or example with a .pair",
                             "audit") from None


def _chunks(total: int, size: int) -> Iterator[int]:
    while total > 0:
        step = min(size, total)
        yield step
        total -= step


# --------------------------------------------------------------------- Clopper-Pearson
def clopper_pearson(count: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """One-sided Clopper-Pearson bounds ``(lower, upper)``, each valid with probability ``1 - alpha``."""
    c = np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore"):
        lo = np.where(c > 0, beta.ppf(alpha, c, n - c + 1), 0.0)
        hi = np.where(c < n, beta.ppf(1 - alpha, c + 1, n - c), 1.0)
    return np.nan_to_num(lo, nan=0.0), np.nan_to_num(hi, nan=1.0)


def epsilon_from_counts(count_x: np.ndarray, count_xp: np.ndarray, n: int, delta: float,
                        alpha: float) -> tuple[float, int]:
    """Largest ``eps`` certified by the tests (Xiang et al. eq. (4) with Clopper-Pearson bounds at
    one-sided level ``alpha`` each): returns ``(eps, index of the best test)``."""
    lo_x, hi_x = clopper_pearson(count_x, n, alpha)
    lo_xp, hi_xp = clopper_pearson(count_xp, n, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        e1 = np.where((lo_x > delta) & (hi_xp > 0), np.log((lo_x - delta) / hi_xp), -np.inf)
        e2 = np.where((lo_xp > delta) & (hi_x > 0), np.log((lo_xp - delta) / hi_x), -np.inf)
    e = np.maximum(e1, e2)
    if len(e) == 0:
        return 0.0, -1
    best = int(np.argmax(e))
    return max(0.0, float(e[best])), best


# --------------------------------------------------------------------- the audit
def audit(dist: Any, pair_or_base: Any, trials: int, delta: float, confidence: float = 0.95, seed: int = 0,
          progress: bool = False, chunk_size: int = 250_000, thresholds: int = 48,
          calibration: float = 0.2, max_subset_outcomes: int = 8, method: str = "inverse") -> AuditResult:
    """Audit the selection with ``K ~ dist`` on a pair by simulation (Xiang et al., Section 4.1).

    Args:
        dist: the :class:`~symsel.distributions.Distribution` of ``K``.
        pair_or_base: a :data:`~symsel.pairs.Pair`: a :class:`~symsel.pairs.FinitePair` (with its
            score order) or a :class:`~symsel.pairs.GaussianPair`/``LaplacePair`` (monotone
            score); a :class:`~symsel.profiles.Profile` (its dominating pair); or an object with a
            ``pair`` field holding a Pair (a lower-bound result, an example).
        trials: simulated games per side (``>= 1``).
        delta: the ``delta`` of the lower bound.
        confidence: probability that ``epsilon_lower`` is valid (Bonferroni over all tests).
        seed: seed of the numpy ``Generator``.
        progress: show a tqdm progress bar over chunks.
        chunk_size: games per side simulated at once.
        thresholds: number of threshold tests for continuous pairs.
        calibration: fraction of the trials used to choose the tests, when they are data-driven.
        max_subset_outcomes: finite pairs with at most this many outputs (``⊥`` included) are
            tested on all subsets.
        method: ``"inverse"`` (exact sampling of the best of ``K``) or ``"direct"``.
    """
    where = "audit"
    trials = validate.integer(trials, "trials", where, lo=1)
    _check_delta(delta, where)
    confidence = validate.real(confidence, "confidence", where, lo=0, hi=1, lo_open=True, hi_open=True)
    validate.choice(method, "method", where, ("inverse", "direct"))
    calibration = validate.real(calibration, "calibration", where, lo=0, hi=1, lo_open=True, hi_open=True)
    chunk_size = validate.integer(chunk_size, "chunk_size", where, lo=1)
    target = _as_target(pair_or_base)
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    trials = int(trials)
    finite = isinstance(target, FinitePair)
    sampler = _FiniteSampler(target) if isinstance(target, FinitePair) else _ContinuousSampler(target)

    def simulate(side: int, size: int) -> np.ndarray:
        return sampler.sample(side, dist.rvs(size, rng), rng, method)

    # ---- choose the tests
    n_out = target.n + 1 if isinstance(target, FinitePair) else 0  # used for finite pairs only
    all_subsets = finite and n_out <= max_subset_outcomes
    n_cal = 0 if all_subsets else max(1, min(trials - 1, round(calibration * trials)))
    if isinstance(target, FinitePair):
        if all_subsets:
            masks = np.array([[(s >> j) & 1 for j in range(n_out)] for s in range(1, 2**n_out - 1)], dtype=float)
            names = [_subset_name(row, target) for row in masks]
        else:
            cal = [np.bincount(simulate(s, n_cal), minlength=n_out) for s in (0, 1)]
            with np.errstate(divide="ignore"):
                lr = np.log(cal[0] + 0.5) - np.log(cal[1] + 0.5)
            ranking = np.argsort(-lr, kind="stable")
            masks = np.zeros((n_out - 1, n_out))
            for i in range(n_out - 1):
                masks[i, ranking[: i + 1]] = 1.0
            names = [_subset_name(row, target) for row in masks]
    else:
        scores = np.concatenate([simulate(s, n_cal) for s in (0, 1)])
        scores = scores[np.isfinite(scores)]
        if scores.size == 0:
            cuts = np.array([0.0])
        else:
            levels = 1 / (1 + np.exp(-np.linspace(-math.log(scores.size), math.log(scores.size), thresholds)))
            cuts = np.unique(np.quantile(scores, levels))
        names = [f"x > {c:.6g}" for c in cuts]
    n_eval = trials - n_cal

    # ---- count
    counts = []
    chunk_list = list(_chunks(n_eval, chunk_size))
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=2 * len(chunk_list), desc="audit", unit="chunk")
    for side in (0, 1):
        if finite:
            hist = np.zeros(n_out)
            for size in chunk_list:
                hist += np.bincount(simulate(side, size), minlength=n_out)
                if bar is not None:
                    bar.update(1)
            counts.append(masks @ hist)
        else:
            hist = np.zeros(len(cuts) + 1)
            for size in chunk_list:
                x = simulate(side, size)
                hist += np.bincount(np.searchsorted(cuts, x, side="right"), minlength=len(cuts) + 1)
                if bar is not None:
                    bar.update(1)
            # count of {x > cuts[j]} = number of samples in bins j+1 ..
            counts.append(np.cumsum(hist[::-1])[::-1][1:])
    if bar is not None:
        bar.close()
    n_tests = len(names)
    alpha = (1 - confidence) / (4 * n_tests)
    eps, best = epsilon_from_counts(counts[0], counts[1], n_eval, float(delta), alpha)
    best_name = names[best] if best >= 0 else ""
    best_counts = (int(counts[0][best]), int(counts[1][best]), n_eval) if best >= 0 else (0, 0, n_eval)
    return AuditResult(
        epsilon_lower=eps, delta=float(delta), confidence=float(confidence), trials=trials, n_tests=n_tests,
        best_test=best_name, best_counts=best_counts, calibration_trials=n_cal, method=method,
        seconds=time.perf_counter() - start,
    )


def _subset_name(row: np.ndarray, pair: FinitePair) -> str:
    members = [("⊥" if j == pair.n else str(j)) for j in np.flatnonzero(row)]
    return "{" + ", ".join(members) + "}"


__all__ = ["AuditResult", "audit", "clopper_pearson", "epsilon_from_counts"]
