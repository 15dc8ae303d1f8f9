"""Which side of `bench_every_base.py`'s widest fixed-K rows is loose: each side recomputed at finer resolutions.

    python benchmarks/diagnose_every_base.py           # the rows, δ = 1e-6 (a few minutes on one core)
    python benchmarks/diagnose_every_base.py --rows 0,3

For a fixed K the truth is the worst case of the best of K runs over every base with the profile, not the K-fold
composition's ε (that bounds it from above, and is far above it from K = 3 on): so both sides are certified numbers
of symsel, each recomputed on finer pairs, and the truth lies between the largest lower and the smallest upper value.

* **upper** (`interval` on the base's dominating pairs): the DP-SGD PLD coarsened to a loss grid by rounding every
  atom up to the top of its group (the former coarsening, rebuilt here) at widths 1e-3, 5e-4, 2.5e-4, beside the
  split onto the grid (`from_loss_grid`, what `interval` uses) at 1e-3 and on a PLD built on a 5 times finer
  grid; the Laplace pair split onto 2000 and 20000 bins.
* **lower** (certified, exact values of real selections): DP-SGD's dominated pairs with one step's buckets
  2e-3, 1e-3 and 5e-4 wide; Laplace's pair cut into 1000 slices equally spaced and with the ramp refined
  (`slice_cuts` searches both sets), and 2000 slices.
* **composition** (dp-accounting, for the record: *not* the truth of a selection, only an upper bound on it): the K
  T-step DP-SGD runs composed (pessimistic PLD); the K-fold Laplace composition, optimistic and pessimistic.

Writes benchmarks/results/diagnose_every_base.json.
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any

import numpy as np
from _common import write_results

import symsel
import symsel.evidence.lower as lower_module
from symsel.bounds.interval_pairs import PairIntervalProfile
from symsel.evidence.dpsgd_brackets import lower_tail, searched_lower_bound
from symsel.pairs.dpsgd import dpsgd_dominated_pairs
from symsel.pairs.loss import UNIT, DominatingPair, from_loss_grid, laplace_pairs, loss_pair

DELTA = 1e-6
ROWS = [
    ("dpsgd(q=0.01, sigma=1.1, steps=1000)", "point(k=40)"),
    ("dpsgd(q=0.1, sigma=1.0, steps=10)", "point(k=40)"),
    ("dpsgd(q=0.01, sigma=1.1, steps=1000)", "binomial(n=40, p=1/2)"),
    ("laplace(scale=1)", "point(k=40)"),
    ("dpsgd(q=0.01, sigma=1.1, steps=1000)", "point(k=10)"),
]


def rounded_up_pair(losses: np.ndarray, probs: np.ndarray, infinity: float, width: float,
                    direction: str) -> DominatingPair:
    """The PLD's atoms merged into groups of loss width ``width``, each group at its largest loss (dominating:
    losses rounded up; the former coarsening of `from_loss_grid`)."""
    keep = probs > 0
    losses, probs = losses[keep], probs[keep]
    group = np.floor((losses - losses[0]) / width).astype(np.int64)
    starts = np.flatnonzero(np.diff(group, prepend=-1))
    a = np.add.reduceat(probs.astype(np.longdouble), starts).astype(float)
    top = losses[np.append(starts[1:], losses.size) - 1]
    b = a * np.exp(-top)
    free = max(0.0, 1.0 - math.fsum(b.tolist()) * (1 + 64 * UNIT) - 4 * UNIT)
    missing = max(0.0, 1.0 - math.fsum(a.tolist()) - infinity)
    return loss_pair(np.append([0.0], a), np.append([free], b), DominatingPair, direction, "rounded up",
                     a_infinity=infinity + missing, relative_error=64 * UNIT)


def timed(fn: Any) -> tuple[float, float]:
    start = time.process_time()
    value = float(fn())
    return value, time.process_time() - start


def pair_upper(dist: Any, pairs: list[DominatingPair]) -> Any:
    return lambda: PairIntervalProfile(dist, pairs).epsilon(DELTA)


def dpsgd_arrays(base: Any) -> list[tuple[str, np.ndarray, np.ndarray, float]]:
    arrays = base._arrays  # the PLD's masses symsel built (the same floats as dp-accounting's)
    return [(direction, np.asarray(pmf.losses, dtype=float), np.asarray(pmf.probs, dtype=float),
             float(pmf.infinity_mass)) for direction, pmf in arrays.directions()]


def upper_side(spec: str, dist: Any) -> dict[str, tuple[float, float]]:
    base = symsel.parse_profile(spec)
    out: dict[str, tuple[float, float]] = {}
    if base.family == "dpsgd":
        arrays = dpsgd_arrays(base)
        for width in (1e-3, 5e-4, 2.5e-4):
            pairs = [rounded_up_pair(losses, probs, inf, width, d) for d, losses, probs, inf in arrays]
            out[f"rounded up, width {width:g}"] = timed(pair_upper(dist, pairs))
        for width in (1e-3, 5e-4):
            pairs = [from_loss_grid(losses, probs, inf, width, d, "split") for d, losses, probs, inf in arrays]
            out[f"split, width {width:g}"] = timed(pair_upper(dist, pairs))
        finer = symsel.parse_profile(spec[:-1] + ", value_discretization_interval=2e-05)")
        out["split, width 0.001, PLD grid 2e-5"] = timed(
            lambda: symsel.bound(dist, finer, "interval").epsilon(DELTA))
    else:
        eps0 = base.finite_loss_bound
        for bins in (2000, 20000):
            out[f"split, {bins} bins"] = timed(pair_upper(dist, [laplace_pairs(eps0, bins)[0]]))
    return out


def lower_side(spec: str, dist: Any, guess: float) -> dict[str, tuple[float, float]]:
    base = symsel.parse_profile(spec)
    out: dict[str, tuple[float, float]] = {}
    if base.family == "dpsgd":
        for width in (2e-3, 1e-3, 5e-4):
            labels = 12000 if width < 1e-3 else 6000

            def search(width: float = width, labels: int = labels) -> float:
                pairs = dpsgd_dominated_pairs(base.q, base.sigma, base.steps, width=width, max_labels=labels,
                                              tail=lower_tail(DELTA))
                return searched_lower_bound(pairs, dist, DELTA, guess).epsilon
            out[f"buckets {width:g}" + (f", {labels} labels" if labels != 6000 else "")] = timed(search)
    else:
        equal = lower_module.slice_cuts
        for name, cuts, slices in (("1000 slices, equally spaced", "equal", 1000),
                                   ("1000 slices, equal and ramp-refined sets", "ramp", 1000),
                                   ("2000 slices, equal and ramp-refined sets", "ramp", 2000)):
            if cuts == "equal":
                lower_module.slice_cuts = lambda pair, n, delta: equal(_NoRamp(pair), n, delta)
            out[name] = timed(lambda slices=slices: symsel.lower_bound(base, dist, DELTA, budget=40,
                                                                      slices=slices).epsilon)
            lower_module.slice_cuts = equal
    return out


class _NoRamp:
    """A location pair seen without its ramp (equally spaced slices)."""

    def __init__(self, pair: Any):
        self._pair = pair

    def ramp(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pair, name)


def composition_bracket(spec: str, k: int) -> dict[str, float]:
    """The K-fold composition's ε from dp-accounting: Laplace optimistic and pessimistic (1e-4 grid); DP-SGD
    pessimistic only (1e-3 grid; its optimistic PLD, privacy buckets, self-composed 40,000 times answered ε = 0, and
    10 times a 1000-step run 0.80, below the 1000-step run's own 1.25: not a bound)."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    base = symsel.parse_profile(spec)
    if base.family == "dpsgd":
        one = pld.from_gaussian_mechanism(base.sigma, sampling_prob=base.q, value_discretization_interval=1e-3)
        return {"pessimistic": float(one.self_compose(base.steps * k).get_epsilon_for_delta(DELTA))}
    out = {}
    for name, pessimistic in (("optimistic", False), ("pessimistic", True)):
        one = pld.from_laplace_mechanism(base.scale, value_discretization_interval=1e-4,
                                         pessimistic_estimate=pessimistic, use_connect_dots=pessimistic)
        out[name] = float(one.self_compose(k).get_epsilon_for_delta(DELTA))
    return out


def main() -> None:
    chosen = range(len(ROWS))
    if "--rows" in sys.argv:
        chosen = [int(i) for i in sys.argv[sys.argv.index("--rows") + 1].split(",")]
    rows = []
    for index in chosen:
        spec, law = ROWS[index]
        dist = symsel.parse_distribution(law)
        base = symsel.parse_profile(spec)
        best, best_s = timed(lambda dist=dist, base=base: symsel.bound(dist, base, "best").epsilon(DELTA))
        uppers = upper_side(spec, dist)
        lowers = lower_side(spec, dist, best)
        k = dist.support_max if law.startswith("point") else None
        composition = composition_bracket(spec, int(k)) if k else {}
        top = min(min(v for v, _ in uppers.values()), best)
        bottom = max(v for v, _ in lowers.values())
        row = {"base": spec, "law": law, "delta": DELTA, "best": best, "best_cpu_s": best_s,
               "upper": {name: {"epsilon": v, "cpu_s": t} for name, (v, t) in uppers.items()},
               "lower": {name: {"epsilon": v, "cpu_s": t} for name, (v, t) in lowers.items()},
               "truth_bracket": [bottom, top], "best_over_bracket_top": best / top,
               "composition_dp_accounting": composition}
        rows.append(row)
        print(f"## {law} on {spec}: best {best:.6f} ({best_s:.1f} s), truth in [{bottom:.6f}, {top:.6f}]")
        for side, values in (("upper", uppers), ("lower", lowers)):
            for name, (v, t) in values.items():
                print(f"  {side:5} {name:40} {v:.6f}  {t:5.1f} s")
        if composition:
            print(f"  composition (dp-accounting) {composition}")
        sys.stdout.flush()
    write_results("diagnose_every_base", {"rows": rows})


if __name__ == "__main__":
    main()
