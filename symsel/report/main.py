"""The main job, ``symsel report``: tables and figures on built-in defaults, written to a report folder.

1. The built-in distributions of K (Papernot & Steinke Section 2 and Appendix A.2; Xiang et al.
   eq. (21)) at a common mean: mean, variance, ``P[K=0]``, expected quantile of the best run and the
   success probability with one good candidate among ``c``.
2. Their certified selection bounds on a Gaussian base, by every method (Koskela et al. Thm 4.1:
   paper, polygon, f-DP; Papernot & Steinke: RDP).
3. The papers' worst cases: exact values against the bounds (a bound below an exact value would be
   a soundness bug and is flagged).
4. :func:`write_report`: all of the above plus certified lower bounds, the candidates each method affords on
   Koskela et al.'s DP-SGD setting, the practitioner's fixed numbers of trials of one DP-SGD run
   (:func:`fixed_trials_row`), the attack risk of selections (:func:`attack_risk_row`: the trade-off curve,
   docs/tradeoff.md) and the figures of :mod:`symsel.report.figures` (PNG, PDF, CSV) with ``summary.md``,
   in one folder. ``quick=True`` is the one-minute version.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path
from typing import Any

from symsel.bounds import METHODS
from symsel.errors import SymselError
from symsel.report.figures import Rows
from symsel.spec import parse_distribution

DEFAULT_MEAN = 10
DEFAULT_CANDIDATES = 10
DEFAULT_DISTRIBUTIONS = (
    f"point(k={DEFAULT_MEAN})",
    f"poisson(mean={DEFAULT_MEAN})",
    f"binomial(n={2 * DEFAULT_MEAN}, p=0.5)",
    f"geometric(mean={DEFAULT_MEAN})",
    f"logarithmic(mean={DEFAULT_MEAN})",
    f"tnb(eta=0.5, mean={DEFAULT_MEAN})",
    f"tnb(eta=-0.5, mean={DEFAULT_MEAN})",
    f"negative_binomial(eta=2, mean={DEFAULT_MEAN})",
    f"beta_binomial(n={2 * DEFAULT_MEAN}, a=2, b=2)",
    f"two_point(L={2 * DEFAULT_MEAN - 1}, s=0.5)",
)


def distribution_facts(spec: str, candidates: float | None = None) -> dict[str, Any]:
    """The facts ``symsel dist`` prints for one distribution spec."""
    dist = parse_distribution(spec)
    facts: dict[str, Any] = {
        "spec": dist.spec,
        "family": dist.name,
        "parameters": dist.parameters,
        "mean": dist.mean,
        "variance": dist.variance,
        "p0": dist.p0,
        "expected_quantile": dist.expected_quantile(),
        "pgf": str(dist.pgf),
        "dpgf": str(dist.dpgf),
        "pgf_symbolic": str(dist.pgf_symbolic),
        "mean_symbolic": str(dist.mean_symbolic),
        "variance_symbolic": str(dist.variance_symbolic),
    }
    if candidates is not None:
        facts["candidates"] = candidates
        facts["success_probability"] = dist.success_probability(candidates)
    return facts


#: fixed numbers of runs (a grid, a tuner with n_trials = 40): the report shows them first, with the composition
#: bound beside the others and the bracket [lower, best].
FIXED_RUNS = ("point(k=2)", "point(k=3)", f"point(k={DEFAULT_MEAN})", "point(k=40)")
DEFAULT_BASE = "gaussian(sigma=4)"
DEFAULT_DELTA = 1e-6
DEFAULT_EXAMPLES = ("xiang-example-1", "xiang-example-1-approx", "ps-fixed-k", "liu-talwar", "ps-three-point")

#: the practitioner's case: a grid or a tuner with ``n_trials`` runs one DP-SGD training run
#: ``n_trials`` times and keeps the best; its ε at :data:`FIXED_TRIALS_DELTA` by symsel and by dp-accounting alone.
FIXED_TRIALS_Q, FIXED_TRIALS_SIGMA, FIXED_TRIALS_STEPS = 0.01, 1.1, 1000
FIXED_TRIALS_BASE = f"dpsgd(q={FIXED_TRIALS_Q}, sigma={FIXED_TRIALS_SIGMA}, steps={FIXED_TRIALS_STEPS})"
FIXED_TRIALS_DELTA = 1e-6
FIXED_TRIALS = (10, 40, 100)
#: CPU seconds of one row on one core: ``best`` (it takes ``interval``, 1.5-2 s) and,
#: in the full report only, the certified lower bound, which reuses ``best``'s ``interval`` as its starting point and
#: then costs 6, 11 and 15 s (the expanding-interval order over about 2300 atoms, then mpmath sums). They order the
#: jobs only.
FIXED_TRIALS_SECONDS = {10: (1.5, 7.5), 40: (1.5, 7.5), 100: (1.7, 7.3)}


def fixed_trials_row(n_trials: int, lower: bool = True) -> dict[str, Any]:
    """One row of the practitioner's table: the best of ``n_trials`` runs of :data:`FIXED_TRIALS_BASE` at
    :data:`FIXED_TRIALS_DELTA`.

    Keys: ``n_trials``; ``law`` (``point(k=n_trials)``); ``best`` and ``best_method``, the component of ``best``
    that gives its ε (the smallest component ε: ``best``'s ε is their minimum, so this costs nothing more);
    ``composition`` (releasing every trial: dp-accounting's PLD of all runs); ``dp_accounting_rdp``, dp-accounting's
    RDP accountant on the ``n_trials``-fold composition, what dp-accounting alone reports for releasing all trials;
    ``lower``, the certified lower bound (``symsel.lower_bound`` on DP-SGD's dominated pair, docs/lower-bounds.md),
    ``None`` unless ``lower``. One law and one base object serve every method, so the bounds' cache shares
    ``best``'s components with ``composition`` and with the lower bound's starting point (``interval``)."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    from symsel.bounds import bound
    from symsel.evidence.lower import lower_bound
    from symsel.spec import parse_profile

    base = parse_profile(FIXED_TRIALS_BASE)
    law = parse_distribution(f"point(k={int(n_trials)})")
    best = bound(law, base, "best")
    parts = getattr(best.profile, "parts", (best,))  # best's components (a single bound is its own component)
    epsilon, method = min((float(part.epsilon(FIXED_TRIALS_DELTA)), part.method) for part in parts)
    accountant = rdp_privacy_accountant.RdpAccountant()
    step = dp_event.PoissonSampledDpEvent(FIXED_TRIALS_Q, dp_event.GaussianDpEvent(FIXED_TRIALS_SIGMA))
    accountant.compose(dp_event.SelfComposedDpEvent(step, FIXED_TRIALS_STEPS * int(n_trials)))
    return {"n_trials": int(n_trials), "law": law.spec, "best": epsilon, "best_method": method,
            "composition": float(bound(law, base, "composition").epsilon(FIXED_TRIALS_DELTA)),
            "dp_accounting_rdp": float(accountant.get_epsilon(FIXED_TRIALS_DELTA)),
            "lower": float(lower_bound(base, law, FIXED_TRIALS_DELTA).epsilon) if lower else None}


#: the attack-risk table (docs/tradeoff.md): one run of :data:`DEFAULT_BASE` and the selections of these laws on it
#: (``best``), at these false-positive rates.
RISK_LAWS = {"full": (None, f"geometric(mean={DEFAULT_MEAN})", f"poisson(mean={DEFAULT_MEAN})",
                      f"point(k={DEFAULT_MEAN})"),
             "quick": (None, f"geometric(mean={DEFAULT_MEAN})")}
RISK_FPRS = (1e-3, 1e-2, 1e-1)


def attack_risk_row(spec: str | None) -> dict[str, Any]:
    """One row of the attack-risk table: for the best of ``K ~ spec`` runs of :data:`DEFAULT_BASE` (``None``: one
    run), the certified upper bound on the advantage ``TPR − FPR`` and, at each of :data:`RISK_FPRS`, the certified
    upper bound on the true-positive rate of any membership attack (``tpr_at_<fpr>``; ``β = 1 − TPR`` is the
    certified lower bound on the trade-off curve)."""
    from symsel.bounds import bound
    from symsel.spec import parse_profile

    base = parse_profile(DEFAULT_BASE)
    profile = base if spec is None else bound(parse_distribution(spec), base, "best")
    points = profile.tradeoff_points(list(RISK_FPRS))
    row: dict[str, Any] = {"law": "one run" if spec is None else parse_distribution(spec).spec,
                           "advantage": profile.advantage()}
    row.update({f"tpr_at_{fpr:g}": float(tpr) for fpr, tpr in zip(RISK_FPRS, points.tpr, strict=True)})
    return row


def bounds_table(specs: tuple[str, ...] = DEFAULT_DISTRIBUTIONS, base_spec: str = DEFAULT_BASE,
                 delta: float = DEFAULT_DELTA) -> list[dict[str, Any]]:
    """epsilon(delta) of the selection for each law of K and each method (``None`` where a method
    does not apply)."""
    from symsel.bounds import bound
    from symsel.bounds.api import _interval_may_help
    from symsel.errors import NotApplicableError
    from symsel.spec import parse_profile
    from symsel.validate import probability

    delta = probability(delta, "delta", "bound")
    base = parse_profile(base_spec)
    rows = []
    for spec in specs:
        dist = parse_distribution(spec)
        row: dict[str, Any] = {"spec": dist.spec, "mean": dist.mean}
        for method in METHODS:
            if method == "interval" and not _interval_may_help(dist, base):
                row[method] = None  # seconds per law, for nothing: on spread laws the envelope is tighter
                continue
            try:  # the epsilon alone: bound_summary's record would also fill best's certificate (every
                # component's epsilon at three more deltas, interval's included: most of this step's time)
                row[method] = float(bound(dist, base, method).epsilon(delta))
            except NotApplicableError:
                row[method] = None
        rows.append(row)
    return rows


def examples_table(names: tuple[str, ...] = DEFAULT_EXAMPLES) -> list[dict[str, Any]]:
    """Exact value, paper's numbers and every bound for the papers' worst cases."""
    from symsel.evidence.verify import verify_example

    rows = []
    for name in names:
        record = verify_example(name, details=False)  # the table shows each bound's epsilon only
        record.pop("details", None)
        rows.append(record)
    return rows


def default_report() -> dict[str, Any]:
    """The report on built-in defaults, as one JSON-ready dictionary."""
    return {
        "candidates": DEFAULT_CANDIDATES,
        "distributions": distributions_table(),
        "bounds": {"base": DEFAULT_BASE, "delta": DEFAULT_DELTA, "rows": bounds_table()},
        "examples": examples_table(),
    }


def distributions_table() -> list[dict[str, Any]]:
    """The facts of each default law of K."""
    rows = []
    for spec in DEFAULT_DISTRIBUTIONS:
        dist = parse_distribution(spec)
        rows.append(
            {
                "spec": dist.spec,
                "mean": dist.mean,
                "variance": dist.variance,
                "p0": dist.p0,
                "expected_quantile": dist.expected_quantile(),
                "success_probability": dist.success_probability(DEFAULT_CANDIDATES),
            }
        )
    return rows


def format_report(report: dict[str, Any]) -> str:
    """A plain-text table of :func:`default_report`."""
    lines = [f"Distributions of K (mean {DEFAULT_MEAN})", ""]
    header = (
        f"{'distribution':<52} {'mean':>8} {'variance':>10} {'P[K=0]':>10} {'E quantile':>10} "
        f"{'P[success], c=' + str(report['candidates']):>18}"
    )
    lines += [header, "-" * len(header)]
    for row in report["distributions"]:
        lines.append(
            f"{row['spec']:<52} {row['mean']:>8.3f} {row['variance']:>10.3f} {row['p0']:>10.3g} "
            f"{row['expected_quantile']:>10.4f} {row['success_probability']:>18.4f}"
        )
    bounds = report["bounds"]
    lines += ["", f"Selection epsilon at delta = {bounds['delta']:g}, base {bounds['base']} "
              "(n/a: the method does not apply; inf: vacuous)", ""]
    columns = [*METHODS, *(["lower"] if any("lower" in r for r in bounds["rows"]) else [])]
    header = f"{'distribution':<40} " + " ".join(f"{m:>10}" for m in columns)
    lines += [header, "-" * len(header)]
    for row in bounds["rows"]:
        cells = " ".join(f"{(_low if m == 'lower' else _num)(row.get(m)):>10}" for m in columns)
        lines.append(f"{row['spec']:<40} {cells}")
    if report.get("affordable"):
        lines += ["", f"Candidates affordable (largest certified mean of K) at epsilon = {CANDIDATE_BUDGET}, "
                  "DP-SGD base of Koskela et al. Fig. 7", ""]
        lines += [f"{r['law']:<16} {r['method']:<20} {'n/a' if not r['mean'] else _low(r['mean']):>10}"
                  for r in report["affordable"]]
    if report.get("fixed_trials"):
        table = report["fixed_trials"]
        lines += ["", f"A fixed number of trials: epsilon at delta = {table['delta']:g}, base {table['base']} "
                  "(lower: certified; n/a: full report only)", ""]
        header = (f"{'n_trials':>8} {'best':>10} {'method':<12} {'composition':>12} {'dp-acc RDP':>10} "
                  f"{'lower':>10}")
        lines += [header, "-" * len(header)]
        lines += [f"{r['n_trials']:>8} {_num(r['best']):>10} {r['best_method']:<12} {_num(r['composition']):>12} "
                  f"{_num(r['dp_accounting_rdp']):>10} {_low(r.get('lower')):>10}" for r in table["rows"]]
    lines += ["", "The papers' worst cases: exact epsilon (mpmath, 50 digits) against every bound", ""]
    header = f"{'example':<24} {'delta':>7} {'exact':>10} " + " ".join(f"{m:>10}" for m in METHODS) + "  sound"
    lines += [header, "-" * len(header)]
    for row in report["examples"]:
        cells = " ".join(f"{_num(row['bounds'].get(m)):>10}" for m in METHODS)
        lines.append(f"{row['example']:<24} {row['delta']:>7.0e} {_exact(row['exact_epsilon']):>10} {cells}  "
                     f"{'yes' if row['sound'] else 'NO: ' + ', '.join(row['violations'])}")
    return "\n".join(lines)


def _num(value: Any) -> str:
    """A certified upper bound as printed in the tables: rounded up (:func:`symsel.rounding.format_upper`)."""
    from symsel.rounding import format_upper

    return "n/a" if value is None else format_upper(value)


def _low(value: Any) -> str:
    """A certified lower bound (or a largest mean of K that fits) as printed: rounded down."""
    from symsel.rounding import format_lower

    return "n/a" if value is None else format_lower(value)


def _exact(value: Any) -> str:
    """An exact value (mpmath at 50 digits), to six significant digits."""
    return "n/a" if value is None else f"{float(value):.6g}"


# --------------------------------------------------------------------------- the report folder

def log_grid(lo: float, hi: float, count: int, integers: bool = False) -> tuple[float, ...]:
    """``count`` log-spaced points from ``lo`` to ``hi`` (both ends exact; rounded and deduplicated with
    ``integers``): the horizontal axis of a smooth figure."""
    ratio = math.log(hi / lo) / (count - 1)
    points = [lo, *(lo * math.exp(i * ratio) for i in range(1, count - 1)), hi]
    return tuple(sorted({round(x) for x in points})) if integers else tuple(float(f"{x:.6g}") for x in points)


def linear_grid(lo: float, hi: float, count: int) -> tuple[float, ...]:
    """``count`` equally spaced points from ``lo`` to ``hi``, rounded to 12 digits."""
    return tuple(round(lo + (hi - lo) * i / (count - 1), 12) for i in range(count))


PS_ORDERS = tuple(1.25 + 0.625 * i for i in range(63))  # Renyi orders 1.25 .. 40 of the Papernot-Steinke figures
FULL: dict[str, Any] = {
    "budgets": (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0),
    "fig7_laws": (("geometric", "geometric(mean={mean})", 1.0), ("logarithmic", "logarithmic(mean={mean})", 0.0),
                  ("tnb(eta=0.5)", "tnb(eta=0.5, mean={mean})", 0.5), ("poisson", "poisson(mean={mean})", math.inf)),
    "means": log_grid(2, 1000, 10, integers=True),
    "equal_means": log_grid(2, 1000, 12, integers=True),
    "table_laws": (*FIXED_RUNS, *DEFAULT_DISTRIBUTIONS[1:]),
    "examples": DEFAULT_EXAMPLES,
    "extra": (
        ("rnm_epsilon_vs_m", {"m_values": log_grid(10, 10**5, 25, integers=True)},
         "Koskela et al. Fig. 1: Report Noisy Max, epsilon against the number of queries"),
        ("geometric_delta_vs_epsilon", {"means": (30, 300, 3000), "epsilons": linear_grid(0.0, 4.0, 81),
                                        "lower_at": (1e-6,)},
         "Koskela et al. Fig. 2: geometric K, the privacy profile delta(epsilon), RDP against HS"),
        ("binomial_vs_poisson", {"ns": (15, 20, 1000), "epsilons": linear_grid(0.0, 2.5, 51), "lower_at": (1e-6,)},
         "Koskela et al. Fig. 4 (top): binomial K by Thm 5.7 against Poisson K by the RDP bound, delta(epsilon)"),
        ("binomial_cdfs", {"ns": (15, 20, 1000), "k_max": 20}, "Koskela et al. Fig. 4 (bottom): the laws' CDFs"),
        ("dpsgd_epsilon_vs_mean", {"means": tuple(range(2, 31))},
         "Koskela et al. Fig. 6: DP-SGD (MNIST setting), epsilon against E[K], RDP against HS"),
        ("cifar_epsilon_vs_mean", {"means": log_grid(1.5, 10**4, 25)},
         "Koskela et al. Fig. 7: DP-SGD (CIFAR-10 setting), epsilon against E[K] for geometric K, RDP against HS"),
        ("utility_vs_epsilon", {"means": log_grid(1.5, 1000, 20), "utility": "quantile", "max_epsilon": 10.0},
         "Papernot-Steinke Fig. 5: expected quantile against the final epsilon"),
        ("success_vs_epsilon", {"means": log_grid(1.5, 1000, 20), "max_epsilon": 10.0},
         "Papernot-Steinke Fig. 6: probability of finding the one good candidate in 100 against the final epsilon"),
        ("geometric_epsilon_vs_mean", {"means": log_grid(10, 10**5, 21, integers=True),
                                       "lower_at": (10, 1000, 10**5)},
         "Koskela et al. Fig. 3: geometric K, epsilon against the mean, with Cor 5.5 and certified lower bounds"),
        ("sigma_tuning_vs_mean", {"means": log_grid(10, 1000, 5, integers=True)},
         "Koskela et al. Fig. 8: tuning sigma of DP-SGD candidates, Cor 6.2 against per-candidate bounds"),
        ("ps_rdp_vs_order_logarithmic", {"means": (2, 10, 100, 1000), "orders": PS_ORDERS},
         "Papernot-Steinke Fig. 2: Renyi DP of the logarithmic law against the order (Cor 4; symsel's Lemma 7)"),
        ("ps_rdp_vs_order_laws", {"orders": PS_ORDERS},
         "Papernot-Steinke Fig. 3: Renyi DP of the laws at mean 10 against the order"),
        ("ps_mean_vs_epsilon", {"means": log_grid(1.5, 1000, 20)},
         "Papernot-Steinke Fig. 4: E[K] against the epsilon it costs (rdp and envelope), with naive composition"),
        ("ps_conditional_sampling", {"orders": tuple(2.5 + 0.5 * i for i in range(36))},
         "Papernot-Steinke Fig. 8: conditional sampling, Cor 16 against the exact Renyi divergence"),
        ("xiang_two_point_table", {},
         "Xiang et al. Table 4, its rows at sampling ratio 0.1: the two-point law over DP-SGD (N = 500), symsel's "
         "certified bounds and the exact GDP-pair value beside the paper's printed values"),
        ("xiang_tnb_vs_base_budget", {},
         "Xiang et al. Fig. 6 in spirit: TNB laws over DP-SGD against the base budget, certified bounds beside the "
         "GDP Gaussian-pair value and its audit"),
    ),
}
QUICK: dict[str, Any] = {
    "budgets": (2.5,),
    "fig7_laws": (("geometric", "geometric(mean={mean})", 1.0), ("poisson", "poisson(mean={mean})", math.inf)),
    "means": (2, 10, 50),
    "equal_means": (10, 100),
    "table_laws": (*FIXED_RUNS[:2], *DEFAULT_DISTRIBUTIONS[1:4]),
    "examples": DEFAULT_EXAMPLES[:2],
    "extra": (
        ("rnm_epsilon_vs_m", {"m_values": (10, 1000, 10**5)},
         "Koskela et al. Fig. 1: Report Noisy Max, epsilon against the number of queries"),
        ("binomial_cdfs", {"ns": (15, 20, 1000), "k_max": 20}, "Koskela et al. Fig. 4 (bottom): the laws' CDFs"),
        ("ps_conditional_sampling", {"orders": (2.5, 4, 6, 10, 15, 20)},
         "Papernot-Steinke Fig. 8: conditional sampling, Cor 16 against the exact Renyi divergence"),
        ("geometric_delta_vs_epsilon", {"means": (30,), "epsilons": linear_grid(0.0, 4.0, 41), "lower_at": ()},
         "Koskela et al. Fig. 2: geometric K, the privacy profile delta(epsilon), RDP against HS"),
        ("success_vs_epsilon", {"means": log_grid(1.5, 300, 10), "max_epsilon": 10.0},
         "Papernot-Steinke Fig. 6: probability of finding the one good candidate in 100 against the final epsilon"),
        ("utility_vs_epsilon", {"means": log_grid(1.5, 300, 10), "utility": "quantile", "max_epsilon": 10.0},
         "Papernot-Steinke Fig. 5: expected quantile against the final epsilon"),
    ),
}
TABLE_METHODS = ("rdp", "paper", "fdp", "envelope", "composition", "interval", "best")
FIGURE_METHODS = ("paper", "fdp", "envelope", "rdp")
CANDIDATE_BUDGET = 2.5


#: the CPU seconds each step takes on one core of the 2-core machine (measured with one thread per numerical library):
#: they set only the order in which the jobs start (longest first), never a
#: result. A step of several jobs shares its time out.
STEP_SECONDS = {
    "distributions": 0.4, "bounds": 11, "lower bounds": 12, "examples": 8.7, "attack risk": 20,
    "fixed trials": sum(full for _, full in FIXED_TRIALS_SECONDS.values()), "candidates_vs_budget": 31,
    "epsilon_vs_mean": 19, "profiles": 0.4, "laws_at_equal_mean": 4.1, "rnm_epsilon_vs_m": 0.5,
    "geometric_delta_vs_epsilon": 3.6, "binomial_vs_poisson": 4.0, "cifar_epsilon_vs_mean": 2.6, "binomial_cdfs": 0.3,
    "dpsgd_epsilon_vs_mean": 26, "utility_vs_epsilon": 7.6, "success_vs_epsilon": 0.3,
    "geometric_epsilon_vs_mean": 4.6, "sigma_tuning_vs_mean": 9.8,
    "ps_rdp_vs_order_logarithmic": 3.8, "ps_rdp_vs_order_laws": 4.0, "ps_mean_vs_epsilon": 0.3,
    "ps_conditional_sampling": 0.4, "xiang_two_point_table": 24, "xiang_tnb_vs_base_budget": 3.5,
}
#: steps that run in one job, in this order: the later ones reuse what the first computed in the same process
#: (the Xiang figures share the DP-SGD noise levels solved for the base budgets, about 40 s; Papernot-Steinke's
#: Figures 4, 5 and 6 the same bounds at the same means, :func:`symsel.report.figures_extra.selection_epsilon`).
TOGETHER = (("xiang_two_point_table", "xiang_tnb_vs_base_budget"),
            ("utility_vs_epsilon", "success_vs_epsilon", "ps_mean_vs_epsilon"))


#: the steps before the figures: the tables.
TABLE_STEPS = ("distributions", "bounds", "lower bounds", "examples", "fixed trials", "attack risk")


def report_steps(quick: bool = False) -> list[str]:
    """The steps of the report (each one progress line): the tables, then the figures in the summary's order."""
    extra = (QUICK if quick else FULL)["extra"]
    return [*TABLE_STEPS, "candidates_vs_budget", "epsilon_vs_mean", "profiles", "laws_at_equal_mean",
            *(name for name, _, _ in extra)]


#: the files the report writes beside its figures (the figures' cell table is a sweep's results file).
REPORT_TABLES = ("summary.md", "bounds.csv", "distributions.csv", "fixed_trials.csv", "epsilon_vs_mean-cells.csv",
                 "attack_risk.csv")


def report_files(quick: bool = False) -> list[str]:
    """The names of every file :func:`write_report` writes into its folder: each figure as PNG, PDF and CSV, and
    :data:`REPORT_TABLES`."""
    figures = report_steps(quick)[len(TABLE_STEPS):]
    return [f"{step}.{ext}" for step in figures for ext in ("png", "pdf", "csv")] + list(REPORT_TABLES)


def write_report(out: str | Path = "symsel-report", quick: bool = False,
                 progress: bool | None = None) -> dict[str, Any]:
    """Run the report and write its folder: ``summary.md``, one PNG/PDF/CSV per figure, the tables as CSV.
    Returns the tables and the paths written (JSON-ready).

    The folder is new, or one where every file the report writes (:func:`report_files`) is absent or was written by
    a report before: its ``.symsel-report`` marker lists them (:func:`symsel.outputs.output_folder`; the marker alone
    proves it, never a file's content); a user's own ``summary.md`` (even one that starts like symsel's), a device or
    a FIFO in its place, a marker that is a symbolic link, a file named ``out`` or an empty path are refused,
    untouched, before anything runs.

    The steps run as independent jobs on every core (:mod:`symsel.report.parallel`), the longest first; every
    result is assembled in the order of the steps, so the folder and the tables do not depend on the scheduling."""
    from tqdm import tqdm

    from symsel.outputs import add_to_marker, output_folder
    from symsel.report import figures
    from symsel.report.parallel import Job, run_jobs

    settings = QUICK if quick else FULL
    folder = output_folder(out, "--out", "report", report_files(quick))
    steps = report_steps(quick)
    figure_steps = steps[len(TABLE_STEPS):]
    laws, examples = tuple(settings["table_laws"]), tuple(settings["examples"])
    jobs = [Job(("distributions",), STEP_SECONDS["distributions"], distributions_table)]
    jobs += [Job(("bounds",), STEP_SECONDS["bounds"] / len(laws), _bounds_row, (spec,)) for spec in laws]
    jobs += [Job(("lower bounds",), STEP_SECONDS["lower bounds"] / len(laws), _lower_row, (spec,)) for spec in laws]
    jobs += [Job(("examples",), STEP_SECONDS["examples"] / len(examples), _example_row, (name,))
             for name in examples]
    jobs += [Job(("fixed trials",), FIXED_TRIALS_SECONDS[k][0 if quick else 1], fixed_trials_row, (k, not quick))
             for k in FIXED_TRIALS]
    risk_laws = RISK_LAWS["quick" if quick else "full"]
    jobs += [Job(("attack risk",), STEP_SECONDS["attack risk"] / len(risk_laws), attack_risk_row, (spec,))
             for spec in risk_laws]
    for group in _figure_groups(figure_steps):
        jobs.append(Job(group, sum(STEP_SECONDS[step] for step in group), _figures,
                        (group, quick, str(folder))))
    # a bar when stderr is a terminal, else one line per finished step (a log or CI sees the report move);
    # --no-progress: quiet
    terminal = sys.stderr.isatty()
    bar = tqdm(total=len(steps), desc="symsel report", unit="step",
               disable=not terminal if progress is None else not progress)
    lines = progress is not False and bar.disable
    left = {step: sum(step in job.steps for job in jobs) for step in steps}
    start = time.perf_counter()

    def finished(job: Job) -> None:
        for step in job.steps:
            left[step] -= 1
            if left[step]:
                continue
            bar.update(1)
            bar.set_postfix_str(step)
            if lines:  # progress only: the elapsed time shown never enters a result
                done = len(steps) - sum(map(bool, left.values()))
                print(f"symsel report: [{done}/{len(steps)}] {step} done ({time.perf_counter() - start:.0f} s)",
                      file=sys.stderr, flush=True)

    with bar:
        results = run_jobs(jobs, finished)
    by_step: dict[str, list[Any]] = {step: [] for step in steps}
    drawn: dict[str, tuple[Rows, list[str]]] = {}
    for job, result in zip(jobs, results, strict=True):
        if job.function is _figures:
            drawn.update(zip(job.steps, result, strict=True))
        else:
            by_step[job.steps[0]].append(result)
    report: dict[str, Any] = {"quick": quick, "out": str(folder), "candidates": DEFAULT_CANDIDATES,
                              "distributions": by_step["distributions"][0]}
    rows = [row for part in by_step["bounds"] for row in part]
    for row, lower in zip(rows, by_step["lower bounds"], strict=True):
        row["lower"] = lower
    report["bounds"] = {"base": DEFAULT_BASE, "delta": DEFAULT_DELTA, "rows": rows}
    report["examples"] = [row for part in by_step["examples"] for row in part]
    report["fixed_trials"] = {"base": FIXED_TRIALS_BASE, "delta": FIXED_TRIALS_DELTA, "rows": by_step["fixed trials"]}
    report["attack_risk"] = {"base": DEFAULT_BASE, "fprs": list(RISK_FPRS), "rows": by_step["attack risk"]}
    report["affordable"] = [r for r in drawn["candidates_vs_budget"][0] if r["epsilon"] == CANDIDATE_BUDGET]
    written = [path for step in figure_steps for path in drawn[step][1]]
    figures.write_csv(report["bounds"]["rows"], folder / "bounds.csv")
    figures.write_csv(report["distributions"], folder / "distributions.csv")
    figures.write_csv(report["fixed_trials"]["rows"], folder / "fixed_trials.csv")
    figures.write_csv(report["attack_risk"]["rows"], folder / "attack_risk.csv")
    summary = folder / "summary.md"
    summary.write_text(format_summary(report))
    report["files"] = [*written, *(str(folder / name) for name in ("bounds.csv", "distributions.csv",
                                                                   "fixed_trials.csv", "attack_risk.csv")),
                       str(summary)]
    add_to_marker(folder, report["files"])  # report_files() names them all; should a figure add one, it is listed
    return report


def _figure_groups(steps: list[str]) -> list[tuple[str, ...]]:
    """The figure steps as jobs: one step each, but those of a :data:`TOGETHER` group in one job."""
    groups: list[tuple[str, ...]] = []
    for step in steps:
        together = next((group for group in TOGETHER if step in group), (step,))
        mine = tuple(name for name in together if name in steps)
        if mine not in groups:
            groups.append(mine)
    return groups


def _bounds_row(spec: str) -> list[dict[str, Any]]:
    """The table's row of one law (a job)."""
    return bounds_table((spec,))


def _lower_row(spec: str) -> float | None:
    """The certified lower bound of one law of the table (a job)."""
    return _certified_lower(parse_distribution(spec).spec)


def _example_row(name: str) -> list[dict[str, Any]]:
    """One worst case of the papers (a job)."""
    return examples_table((name,))


def _figures(steps: tuple[str, ...], quick: bool, folder: str) -> list[tuple[Rows, list[str]]]:
    """Build and write the figures ``steps`` (a job): each one's rows and the paths written."""
    from symsel.report import figures

    settings, path = QUICK if quick else FULL, Path(folder)
    out = []
    for step in steps:
        if step == "candidates_vs_budget":
            budgets = tuple(sorted({*settings["budgets"], CANDIDATE_BUDGET}))
            rows, draw = figures.candidates_vs_budget(budgets, settings["fig7_laws"])
        elif step == "epsilon_vs_mean":
            rows, draw = figures.epsilon_vs_mean(settings["means"], (*FIGURE_METHODS, "best"), path)
        elif step == "profiles":
            rows, draw = figures.profiles(FIGURE_METHODS)
        elif step == "laws_at_equal_mean":
            rows, draw = figures.laws_at_equal_mean(settings["equal_means"])
        else:
            kwargs = next(k for name, k, _ in settings["extra"] if name == step)
            rows, draw = extra_builders()[step](**kwargs)
        out.append((rows, [str(p) for p in figures.save_figure(step, rows, draw, path)]))
    return out


def extra_builders() -> dict[str, Any]:
    """Every paper-figure builder the report can run, by the name of the figure it writes."""
    from symsel.report import figures_extra, figures_rdp, figures_tuning, figures_xiang

    return {**figures_extra.BUILDERS, **figures_tuning.BUILDERS, **figures_rdp.BUILDERS, **figures_xiang.BUILDERS}


def _certified_lower(spec: str) -> float | None:
    from symsel.evidence.lower import lower_bound
    from symsel.spec import parse_profile

    try:
        return float(lower_bound(parse_profile(DEFAULT_BASE), parse_distribution(spec), DEFAULT_DELTA,
                                 budget=20, monotone=False).epsilon)
    except SymselError:
        return None


FIXED_TRIALS_ONLY_FULL = ("The certified lower bounds of this table cost about 20 seconds of CPU (about 7 s a row) "
                          "and are computed by the full report only (`symsel report`, without `--quick`).")


def fixed_trials_summary(report: dict[str, Any]) -> list[str]:
    """The lines of ``summary.md``'s practitioner's table (:func:`fixed_trials_row`), starting with a blank line;
    none when the report has no such table."""
    table = report.get("fixed_trials")
    if not table:
        return []
    lines = ["", f"## A fixed number of trials of DP-SGD: ε at δ = {table['delta']:g}, base `{table['base']}`", "",
             "The practitioner's case (a grid, a tuner with `n_trials`): the best of `n_trials` runs of one DP-SGD "
             "training run. `best` names the method it takes; `composition` charges every trial (dp-accounting's PLD "
             "of all runs); `dp-accounting RDP` is dp-accounting's RDP accountant on the same composition, what "
             "dp-accounting alone reports for releasing all trials; `lower` is certified (`symsel.lower_bound` on "
             "DP-SGD's dominated pair, docs/lower-bounds.md).", "",
             "| n_trials | law of K | best | best's method | composition | dp-accounting RDP | lower | best / lower |",
             "|---|---|---|---|---|---|---|---|"]
    for row in table["rows"]:
        lower = row.get("lower")
        ratio = _num(row["best"] / lower) if lower else ""
        lines.append(f"| {row['n_trials']} | `{row['law']}` | {_num(row['best'])} | {row['best_method']} | "
                     f"{_num(row['composition'])} | {_num(row['dp_accounting_rdp'])} | "
                     f"{'full report only' if lower is None else _low(lower)} | {ratio} |")
    if any(row.get("lower") is None for row in table["rows"]):
        lines += ["", FIXED_TRIALS_ONLY_FULL]
    return lines


def attack_risk_summary(report: dict[str, Any]) -> list[str]:
    """The lines of ``summary.md``'s attack-risk table (:func:`attack_risk_row`), starting with a blank line; none
    when the report has no such table."""
    table = report.get("attack_risk")
    if not table:
        return []
    fprs = table["fprs"]
    lines = ["", f"## Attack risk: the trade-off curve on base `{table['base']}`", "",
             "What any membership attack can achieve against the released output (docs/tradeoff.md): certified upper "
             "bounds on its true-positive rate at each false-positive rate (the trade-off curve's certified lower "
             "bound is β = 1 − TPR), and on its advantage TPR − FPR; selections by `best`.", "",
             "| released | " + " | ".join(f"TPR at FPR {f:g}" for f in fprs) + " | advantage |",
             "|---|" + "---|" * (len(fprs) + 1)]
    from symsel.display import format_upper  # an upper bound shown rounded up

    for row in table["rows"]:
        lines.append(f"| {row['law']} | " + " | ".join(format_upper(row[f"tpr_at_{f:g}"]) for f in fprs)
                     + f" | {format_upper(row['advantage'])} |")
    return lines


def format_summary(report: dict[str, Any]) -> str:
    """``summary.md``: the side-by-side table, the candidates, the worst cases and the figures."""
    b = report["bounds"]
    lines = ["# symsel report" + (" (quick)" if report["quick"] else ""), "",
             "Certified bounds on the privacy of the best of K runs (private selection). Every number is an upper "
             "bound except `lower`, the exact ε of a real worst-case selection (docs/lower-bounds.md): the truth lies "
             "between `lower` and the smallest upper bound. `interval` is computed where `best` takes it (concentrated "
             "laws on a Gaussian base; n/a elsewhere).", "",
             f"## ε at δ = {b['delta']:g}, base `{b['base']}`", "",
             "| law of K | mean | " + " | ".join(TABLE_METHODS) + " | lower | best / lower |",
             "|---|---|" + "---|" * (len(TABLE_METHODS) + 2)]
    for row in b["rows"]:
        ratio = row["best"] / row["lower"] if row.get("lower") and row.get("best") else None
        lines.append(f"| `{row['spec']}` | {row['mean']:.4g} | " + " | ".join(_num(row.get(m)) for m in TABLE_METHODS)
                     + f" | {_low(row.get('lower'))} | {'' if ratio is None else _num(ratio)} |")
    from symsel.report.figures import FIG7

    lines += ["", f"## Candidates affordable at ε = {CANDIDATE_BUDGET}, δ = {FIG7['delta']:g}", "",
              f"DP-SGD base of Koskela et al. Figure 7 (q = {FIG7['q']:.5g}, σ = {FIG7['sigma']}, {FIG7['steps']} "
              "steps): the largest mean of K each method certifies; `dp-accounting RDP` is the peer's own "
              "RepeatAndSelectDpEvent.", "", "| law | method | mean of K |", "|---|---|---|"]
    for row in report.get("affordable", []):
        mean = "n/a" if not row["mean"] else _low(row["mean"])
        lines.append(f"| {row['law']} | {row['method']} | {mean} |")
    lines += fixed_trials_summary(report)
    lines += attack_risk_summary(report)
    lines += ["", "## The papers' worst cases (exact ε at 50 digits against every bound)", "",
              "| example | δ | exact | " + " | ".join(TABLE_METHODS) + " | sound |", "|---|---|---|" +
              "---|" * (len(TABLE_METHODS) + 1)]
    for row in report["examples"]:
        lines.append(f"| {row['example']} | {row['delta']:g} | {_exact(row['exact_epsilon'])} | " +
                     " | ".join(_num(row["bounds"].get(m)) for m in TABLE_METHODS) +
                     f" | {'yes' if row['sound'] else 'NO'} |")
    lines += ["", "## Figures", "",
              "A figure named after a paper's figure draws the paper's curves in its setting, quantity and baseline, "
              "with the paper's legend; curves marked \"(symsel)\" are symsel's stronger variants, drawn beside them. "
              "docs/figures.md sets every figure beside the paper's: the setting, what differs and why, and the "
              "numbers the papers state, recomputed.", ""]
    captions = [("candidates_vs_budget",
                 "the largest certified E[K] per budget, in the DP-SGD setting of Koskela et al. Fig. 7 (colour: the "
                 "law; line style and marker: the method; where two methods' curves coincide, a note under the axes "
                 "names the laws and which curve is drawn over which)"),
                ("epsilon_vs_mean", "ε against E[K], one panel per law: every method and the certified lower bound (a "
                 "curve drawn on another says so in the legend: \"best (≈ envelope)\")"),
                ("profiles", "the selection's privacy profile by every method"),
                ("laws_at_equal_mean", "laws of K at equal mean: envelope against rdp"),
                *((name, caption) for name, _, caption in (QUICK if report["quick"] else FULL)["extra"])]
    for name, caption in captions:
        lines += [f"![{caption}]({name}.png)", "", f"*{caption}* — numbers in `{name}.csv`, vector in `{name}.pdf`.",
                  ""]
    return "\n".join(lines)

