"""Fixed and concentrated K: the composition bound, the envelope, ``best`` and the certified lower bound.

For each fixed number of runs ``k`` (and the binomial laws of the issue), Gaussian bases σ ∈ {1, 4} and
δ ∈ {1e-6, 1e-10}, this script records ε of ``composition``, ``envelope`` and ``best`` beside the certified
lower bound (an exact worst-case selection, ``symsel.lower_bound``, budget 20) and the bracket ``best / lower``
(goal: ≤ 1.01). The peer: dp-accounting's PLD accountant on ``SelfComposedDpEvent(GaussianDpEvent,
k)`` in the same run, its ε and its time against symsel's composition (cold, one call each). It also measures
the head/tail split of docs/composition.md on binomial(60, 1/2), and the brackets of the huge laws Poisson(1e6)
and binomial(1e6, 1/2) (same goal).

Run from the repository root: ``python benchmarks/bench_composition.py [--quick]`` →
``benchmarks/results/bench_composition.json``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from _common import print_table, write_results

import symsel
from symsel.bounds import bound
from symsel.bounds.api import _computed
from symsel.bounds.composition import WeightedSum
from symsel.bounds.envelope import envelope_profile
from symsel.profiles.composition import composed

KS = (2, 3, 5, 10, 20, 40, 100)
SIGMAS = (1.0, 4.0)
DELTAS = (1e-6, 1e-10)
BINOMIALS = ("binomial(n=20, p=1/2)", "binomial(n=60, p=1/2)", "binomial(n=200, p=1/2)")
HUGE = ("poisson(mean=1000000)", "binomial(n=1000000, p=1/2)")


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def _peer_composition(sigma: float, k: int, delta: float) -> tuple[float, float]:
    """dp-accounting's PLD accountant on k Gaussian runs: (ε, seconds), cold."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    def run() -> float:
        accountant = pld_privacy_accountant.PLDAccountant()
        accountant.compose(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(sigma), k))
        return float(accountant.get_epsilon(delta))

    seconds, eps = _timed(run)
    return eps, seconds


def bracket_row(spec: str, sigma: float, delta: float, lower: bool = True) -> dict[str, Any]:
    dist, base = symsel.parse_distribution(spec), symsel.profiles.GaussianProfile(sigma)
    _computed.cache_clear()
    composed.cache_clear()
    try:
        t_comp, comp = _timed(lambda: bound(dist, base, "composition").epsilon(delta))
    except symsel.NotApplicableError:  # laws spread over more support points than composition sums
        t_comp, comp = None, None
    row: dict[str, Any] = {"law": spec, "sigma": sigma, "delta": delta, "composition": comp,
                           "composition_s": t_comp,
                           "envelope": bound(dist, base, "envelope").epsilon(delta)}
    row["best"] = bound(dist, base).epsilon(delta)
    if lower:
        t_low, low = _timed(lambda: symsel.lower_bound(base, dist, delta, budget=20).epsilon)
        row.update(lower=low, lower_s=t_low, bracket=row["best"] / low if low else None)
    if spec.startswith("point("):
        k = int(spec.split("=")[1].rstrip(")"))
        row["dpacc_composition"], row["dpacc_s"] = _peer_composition(sigma, k, delta)
        row["time_ratio"] = None if t_comp is None else t_comp / row["dpacc_s"]
    return row


def split_rows(spec: str = "binomial(n=60, p=1/2)", sigma: float = 4.0, delta: float = 1e-6,
               heads: tuple[int, ...] = (0, 10, 15, 20, 25, 30)) -> list[dict[str, Any]]:
    """The head/tail split at each ``k0``: Σ_{k ≤ k0} P[K=k] δ_{Q^⊗k} + P[K > k0] × envelope(K | K > k0)."""
    import sympy

    from symsel.distributions import Distribution
    from symsel.distributions.expressions import z

    dist, base = symsel.parse_distribution(spec), symsel.profiles.GaussianProfile(sigma)
    top = int(dist.support_max)
    masses = [dist.pmf_exact(i) for i in range(top + 1)]
    rows = []
    for k0 in heads:
        tail_mass = sympy.Add(*masses[k0 + 1:])
        pgf = sympy.Add(*[m * z**i for i, m in enumerate(masses) if i > k0]) / tail_mass
        tail = Distribution("tail", pgf, {}, support_min=k0 + 1, support_max=top, label=f"tail(k0={k0})")
        parts = [(float(masses[k]), composed(base, k)[0]) for k in range(1, k0 + 1)]
        parts.append((float(tail_mass) * (1 + 1e-15), envelope_profile(tail, base)))
        profile = WeightedSum(parts, 0.0, float(masses[0]), f"split(k0={k0})")
        rows.append({"law": spec, "k0": k0, "epsilon": profile.epsilon(delta)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="k = 2, 3, 10 at σ = 4, δ = 1e-6 only")
    args = parser.parse_args()
    ks, sigmas, deltas = ((2, 3, 10), (4.0,), (1e-6,)) if args.quick else (KS, SIGMAS, DELTAS)
    rows = [bracket_row(f"point(k={k})", s, d) for s in sigmas for d in deltas for k in ks]
    rows += [bracket_row(spec, s, d) for s in sigmas for d in deltas for spec in BINOMIALS[: 1 if args.quick else 3]]
    print_table("Fixed and concentrated K (Gaussian base): epsilon", [
        "law", "sigma", "delta", "composition", "envelope", "best", "lower", "best/lower", "dp-acc comp.",
        "symsel/dp-acc time"], [
        [r["law"], r["sigma"], r["delta"], r["composition"], r["envelope"], r["best"], r.get("lower"),
         r.get("bracket"), r.get("dpacc_composition"), r.get("time_ratio")] for r in rows])
    met = [r for r in rows if r.get("bracket") is not None and r["bracket"] <= 1.01]
    print(f"\nbest / lower <= 1.01 in {len(met)} of {len(rows)} rows")
    splits = split_rows()
    print_table("Head/tail split, binomial(60, 1/2), sigma = 4, delta = 1e-6", ["k0", "epsilon"],
                [[r["k0"], r["epsilon"]] for r in splits])
    huge = [] if args.quick else [bracket_row(spec, s, d) for s in sigmas for d in deltas for spec in HUGE]
    if huge:
        print_table("Huge laws (Gaussian base): epsilon", ["law", "sigma", "delta", "envelope", "best", "lower",
                                                           "best/lower"],
                    [[r["law"], r["sigma"], r["delta"], r["envelope"], r["best"], r["lower"], r["bracket"]]
                     for r in huge])
        print(f"best / lower <= 1.01 in {sum(r['bracket'] <= 1.01 for r in huge)} of {len(huge)} huge rows")
    path = write_results("bench_composition", {"rows": rows, "split": splits, "huge": huge,
                                               "goal_met_rows": len(met), "rows_total": len(rows),
                                               "quick": args.quick})
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
