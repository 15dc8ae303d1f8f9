"""Tightness of symsel's selection bounds against dp-accounting's RDP route, on DP-SGD tuning settings.

Settings (Koskela, Redberg & Wang, ICML 2024, Section 6, Figures 6 and 7):

* ``fig6``: Poisson-subsampled Gaussian with ``q = 256/60000``, ``sigma = 1.1``, 60 epochs, i.e.
  ``steps = round(60 * 60000 / 256) = 14062`` (the MNIST experiment of Papernot & Steinke, ICLR 2022);
* ``fig7``: ``q = 16384/50000``, ``sigma = 21.1``, ``steps = 250`` (De et al. 2022, Table 18).

The extracted text of Section 6 does not state the ``delta`` of Figures 6 and 7; ``delta = 1e-5`` (below
``1/n`` for both data sets) is used by default (``--delta`` changes it).

Laws of ``K``: Poisson, geometric (TNB ``eta = 1``), logarithmic (``eta = 0``) and TNB ``eta = 0.5``, at
means 10, 30, 100. For each: ``epsilon(delta)`` from symsel's ``paper`` (Thm 5.2 / Cor 5.8), ``polygon``
and ``fdp`` (Thm 4.1) methods, from symsel's ``rdp`` method (Papernot & Steinke; when present), and from
dp-accounting's ``RdpAccountant`` on ``RepeatAndSelectDpEvent`` (the production baseline); also from
symsel's ``rdp_lemma7`` (Papernot & Steinke's Lemma 7 over the base's whole privacy region, any PGF; slow,
so only in the table, ``--no-lemma7`` skips it).

Candidates at equal privacy: the budget ``epsilon_B`` is dp-accounting's epsilon at mean 10; for each
method the largest mean with ``epsilon(mean) <= epsilon_B`` is found by a bracketing search in
``log(mean)`` (the reported value is the feasible end of the final bracket, relative width 1e-3), and the
ratio to dp-accounting's own mean at that budget is reported. Koskela et al. state that Thm 5.2 allows
"approximately 3 times as many models" in the Figure 7 setting.

The base profile is symsel's ``DpsgdProfile`` (dp-accounting PLD, pessimistic).

A soundness bracket closes the run: every bound must be at least the exact value of the papers' worst
cases (:mod:`symsel.evidence.examples`) and the
certified lower bound found by :func:`symsel.evidence.lower.lower_bound`.

Run: ``python benchmarks/bench_tightness.py [--delta D] [--workers 2]`` →
``benchmarks/results/bench_tightness.json``.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import cache
from typing import Any

from _common import (
    dpaccounting_shape,
    dpsgd_event,
    print_table,
    rdp_repeat_and_select,
    symsel_rdp_available,
    write_results,
)

from symsel.bounds import METHODS, bound
from symsel.errors import NotApplicableError
from symsel.profiles import DpsgdProfile
from symsel.spec import parse_distribution

SETTINGS: dict[str, dict[str, Any]] = {
    "fig6": {"q": 256 / 60000, "sigma": 1.1, "steps": round(60 * 60000 / 256),
             "source": "Koskela et al. Fig. 6; Papernot & Steinke MNIST: batch 256 of 60000, sigma 1.1, 60 epochs"},
    "fig7": {"q": 16384 / 50000, "sigma": 21.1, "steps": 250,
             "source": "Koskela et al. Fig. 7; De et al. 2022 Table 18: batch 16384 of 50000, sigma 21.1"},
}
#: (label, spec template, eta for dp-accounting's shape or None)
FAMILIES: tuple[tuple[str, str, float | None], ...] = (
    ("poisson", "poisson(mean={m})", None),
    ("geometric", "geometric(mean={m})", None),
    ("logarithmic", "logarithmic(mean={m})", None),
    ("tnb", "tnb(eta=0.5, mean={m})", 0.5),
)
MEANS = (10, 30, 100)
HS_METHODS = ("paper", "polygon", "fdp")
BUDGET_MEAN = 10.0
MEAN_RTOL = 1e-3
MEAN_LOW, MEAN_HIGH = 1.01, 1e7


def symsel_methods() -> tuple[str, ...]:
    """Methods of the candidates search: the hockey-stick ones and symsel's ``rdp`` (closed forms)."""
    return HS_METHODS + (("rdp",) if symsel_rdp_available() else ())


def table_methods(lemma7: bool) -> tuple[str, ...]:
    """Methods of the epsilon table: also ``rdp_lemma7``, P&S Lemma 7 over the base's whole privacy region
    (any PGF; about 12 s per evaluation on these bases, so not in the candidates search)."""
    return symsel_methods() + (("rdp_lemma7",) if lemma7 and "rdp_lemma7" in METHODS else ())


@cache
def base_profile(setting: str) -> Any:
    s = SETTINGS[setting]
    base = DpsgdProfile(s["q"], s["sigma"], s["steps"])
    start = time.perf_counter()
    base.accountant  # noqa: B018 - build the PLD once per worker
    base.build_seconds_measured = time.perf_counter() - start
    return base


@cache
def base_event(setting: str) -> Any:
    s = SETTINGS[setting]
    return dpsgd_event(s["q"], s["sigma"], s["steps"])


def family_of(label: str) -> tuple[str, float | None]:
    return next((spec, eta) for name, spec, eta in FAMILIES if name == label)


def epsilon_symsel(setting: str, family: str, mean: float, method: str, delta: float) -> float:
    spec, _ = family_of(family)
    dist = parse_distribution(spec.format(m=repr(float(mean))))
    return epsilon_of(dist, base_profile(setting), method, delta)


def epsilon_of(dist: Any, base: Any, method: str, delta: float) -> float:
    """``epsilon(delta)`` of a symsel method of :func:`symsel.bounds.bound`; NaN if the method does
    not apply to this law of K."""
    try:
        return float(bound(dist, base, method).epsilon(delta))
    except NotApplicableError:
        return math.nan


def epsilon_dpaccounting(setting: str, family: str, mean: float, delta: float) -> float:
    _, eta = family_of(family)
    shape = dpaccounting_shape("tnb" if eta is not None else family, eta)
    return rdp_repeat_and_select(base_event(setting), mean, shape, delta)[0]


def largest_mean(eps_of_mean: Callable[[float], float], budget: float) -> dict[str, Any]:
    """Largest mean with ``eps(mean) <= budget`` (``eps`` non-decreasing in the mean): grow or shrink a
    bracket from ``BUDGET_MEAN`` by factors of 3, then Illinois regula falsi in ``log(mean)`` until the
    bracket's relative width is ``MEAN_RTOL``; returns its feasible end."""
    calls = 0

    def f(log_mean: float) -> float:
        nonlocal calls
        calls += 1
        return eps_of_mean(math.exp(log_mean)) - budget

    lo = hi = math.log(BUDGET_MEAN)
    f_lo = f_hi = f(lo)
    if f_lo <= 0:
        while f_hi <= 0:
            lo, f_lo = hi, f_hi
            if hi >= math.log(MEAN_HIGH):
                return {"mean": MEAN_HIGH, "bracket": [MEAN_HIGH, math.inf], "calls": calls, "capped": True}
            hi = min(hi + math.log(3.0), math.log(MEAN_HIGH))
            f_hi = f(hi)
    else:
        while f_lo > 0:
            hi, f_hi = lo, f_lo
            if lo <= math.log(MEAN_LOW):
                return {"mean": None, "bracket": [0.0, MEAN_LOW], "calls": calls, "capped": True}
            lo = max(lo - math.log(3.0), math.log(MEAN_LOW))
            f_lo = f(lo)
    side = 0
    while hi - lo > math.log1p(MEAN_RTOL):
        x = (lo * f_hi - hi * f_lo) / (f_hi - f_lo) if f_hi != f_lo else 0.5 * (lo + hi)
        x = min(max(x, lo + 1e-3 * (hi - lo)), hi - 1e-3 * (hi - lo))  # stay strictly inside
        fx = f(x)
        if fx <= 0:
            lo, f_lo = x, fx
            if side == -1:
                f_hi *= 0.5
            side = -1
        else:
            hi, f_hi = x, fx
            if side == 1:
                f_lo *= 0.5
            side = 1
    return {"mean": math.exp(lo), "bracket": [math.exp(lo), math.exp(hi)], "calls": calls, "capped": False}


def run_task(task: tuple[str, str, float, bool]) -> dict[str, Any]:
    """One (setting, law of K): the epsilon table over MEANS and the candidates at equal privacy."""
    setting, family, delta, lemma7 = task
    start = time.perf_counter()
    base = base_profile(setting)
    out: dict[str, Any] = {"setting": setting, "family": family, "delta": delta, "rows": [], "candidates": {}}
    for mean in MEANS:
        row: dict[str, Any] = {"mean": mean, "dpaccounting_rdp": epsilon_dpaccounting(setting, family, mean, delta)}
        for method in table_methods(lemma7):
            t0 = time.perf_counter()
            row[method] = epsilon_symsel(setting, family, mean, method, delta)
            row[f"{method}_seconds"] = time.perf_counter() - t0
        out["rows"].append(row)
    budget = out["rows"][0]["dpaccounting_rdp"] if MEANS[0] == BUDGET_MEAN else epsilon_dpaccounting(
        setting, family, BUDGET_MEAN, delta)
    out["budget_epsilon"] = budget
    reference = largest_mean(lambda m: epsilon_dpaccounting(setting, family, m, delta), budget)
    out["candidates"]["dpaccounting_rdp"] = reference
    for method in symsel_methods():
        t0 = time.perf_counter()
        found = largest_mean(lambda m, meth=method: epsilon_symsel(setting, family, m, meth, delta), budget)
        found["seconds"] = time.perf_counter() - t0
        found["ratio"] = None if found["mean"] is None else found["mean"] / reference["mean"]
        out["candidates"][method] = found
    out["pld_build_seconds"] = getattr(base, "build_seconds_measured", None)
    out["seconds"] = time.perf_counter() - start
    return out


# --------------------------------------------------------------------------- soundness bracket
def soundness_bracket(methods: tuple[str, ...]) -> list[dict[str, Any]]:
    """Exact values / certified lower bounds vs every bound; ``sound`` is False if a bound is below."""
    from symsel.evidence.examples import get_example
    from symsel.evidence.lower import lower_bound
    from symsel.profiles import GaussianProfile

    cases: list[tuple[str, Any, Any, float, float]] = []
    for name in ("xiang-example-1", "xiang-example-1-approx", "liu-talwar", "ps-fixed-k"):
        example = get_example(name)
        cases.append((name, example.dist, example.base_profile, example.delta, example.exact_epsilon()))
    for spec in ("geometric(mean=30)", "poisson(mean=30)", "pgf(expr='z*exp(mu*(z-1))', mu=29)"):
        dist = parse_distribution(spec)
        lower = lower_bound(GaussianProfile(4.0), dist, 1e-6, budget=200, seed=0)
        cases.append((f"gaussian(sigma=4) x {spec}: lower_bound", dist, GaussianProfile(4.0), 1e-6, lower.epsilon))
    rows = []
    for name, law, base, delta, exact in cases:
        record: dict[str, Any] = {"case": name, "delta": delta, "exact_or_lower": exact}
        for method in methods:
            value = epsilon_of(law, base, method, delta)
            record[method] = None if math.isnan(value) else value
        bounds = [v for k, v in record.items() if k in methods and v is not None]
        record["sound"] = all(v >= exact - 1e-9 for v in bounds)
        rows.append(record)
    return rows


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-lemma7", action="store_true", help="skip the (slow) rdp_lemma7 column")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    tasks = [(s, f[0], args.delta, not args.no_lemma7) for s in SETTINGS for f in FAMILIES]
    if args.workers > 1:
        with ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(run_task, tasks))
    else:
        results = [run_task(t) for t in tasks]
    methods = symsel_methods()
    columns = table_methods(not args.no_lemma7)

    rows = []
    for res in results:
        for row in res["rows"]:
            rdp = row["dpaccounting_rdp"]
            rows.append([res["setting"], res["family"], row["mean"], rdp, *(row[m] for m in columns),
                         row["fdp"] / rdp])
    print_table(f"epsilon at delta = {args.delta:g} (symsel methods vs dp-accounting RDP RepeatAndSelect)",
                ["setting", "K", "mean", "dp-acc RDP", *columns, "fdp / RDP"], rows)

    rows = []
    for res in results:
        cand = res["candidates"]
        rows.append([res["setting"], res["family"], res["budget_epsilon"], cand["dpaccounting_rdp"]["mean"],
                     *(cand[m]["mean"] for m in methods), *(cand[m]["ratio"] for m in methods)])
    print_table(
        f"largest mean number of candidates at the budget epsilon = dp-accounting's epsilon at mean {BUDGET_MEAN:g}",
        ["setting", "K", "budget eps", "dp-acc mean", *(f"{m} mean" for m in methods),
         *(f"{m} ratio" for m in methods)],
        rows,
    )

    bracket = soundness_bracket(columns)
    print_table("soundness bracket: every bound must be >= the exact value / certified lower bound",
                ["case", "delta", "exact/lower", *columns, "sound"],
                [[r["case"], r["delta"], r["exact_or_lower"], *(r[m] for m in columns), r["sound"]] for r in bracket])
    unsound = [r for r in bracket if not r["sound"]]
    if unsound:
        print("\n*** SOUNDNESS VIOLATION: a bound is below an exact value or certified lower bound ***")

    payload = {
        "delta": args.delta,
        "settings": SETTINGS,
        "means": MEANS,
        "budget_mean": BUDGET_MEAN,
        "methods": methods,
        "table_methods": columns,
        "results": results,
        "soundness": bracket,
        "unsound": bool(unsound),
        "workers": args.workers,
    }
    payload["wall_seconds"] = time.perf_counter() - start
    path = write_results("bench_tightness", payload)
    print(f"\nwrote {path} ({payload['wall_seconds']:.0f} s)")
    return 1 if unsound else 0


if __name__ == "__main__":
    sys.exit(main())
