"""The main job, ``symsel report``: tables on built-in defaults.

1. The built-in distributions of K (Papernot & Steinke Section 2 and Appendix A.2; Xiang et al.
   eq. (21)) at a common mean: mean, variance, ``P[K=0]``, expected quantile of the best run and the
   success probability with one good candidate among ``c``.
2. Their certified selection bounds on a Gaussian base, by every method (Koskela et al. Thm 4.1:
   paper, polygon, f-DP; Papernot & Steinke: RDP).
3. The papers' worst cases: exact values against the bounds (a bound below an exact value would be
   a soundness bug and is flagged).
"""

from __future__ import annotations

from typing import Any

from symsel.bounds import METHODS
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


DEFAULT_BASE = "gaussian(sigma=4)"
DEFAULT_DELTA = 1e-6
DEFAULT_EXAMPLES = ("xiang-example-1", "xiang-example-1-approx", "ps-fixed-k", "liu-talwar", "ps-three-point")


def bounds_table(specs: tuple[str, ...] = DEFAULT_DISTRIBUTIONS, base_spec: str = DEFAULT_BASE,
                 delta: float = DEFAULT_DELTA) -> list[dict[str, Any]]:
    """epsilon(delta) of the selection for each law of K and each method (``None`` where a method
    does not apply)."""
    from symsel.bounds import bound_summary
    from symsel.spec import parse_profile

    base = parse_profile(base_spec)
    rows = []
    for spec in specs:
        dist = parse_distribution(spec)
        row: dict[str, Any] = {"spec": dist.spec, "mean": dist.mean}
        for method in METHODS:
            row[method] = bound_summary(dist, base, method, delta=delta)["epsilon"]
        rows.append(row)
    return rows


def examples_table(names: tuple[str, ...] = DEFAULT_EXAMPLES) -> list[dict[str, Any]]:
    """Exact value, paper's numbers and every bound for the papers' worst cases."""
    from symsel.verify import verify_example

    rows = []
    for name in names:
        record = verify_example(name)
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
    header = f"{'distribution':<52} " + " ".join(f"{m:>10}" for m in METHODS)
    lines += [header, "-" * len(header)]
    for row in bounds["rows"]:
        cells = " ".join(f"{_num(row[m]):>10}" for m in METHODS)
        lines.append(f"{row['spec']:<52} {cells}")
    lines += ["", "The papers' worst cases: exact epsilon (mpmath, 50 digits) against every bound", ""]
    header = f"{'example':<24} {'delta':>7} {'exact':>10} " + " ".join(f"{m:>10}" for m in METHODS) + "  sound"
    lines += [header, "-" * len(header)]
    for row in report["examples"]:
        cells = " ".join(f"{_num(row['bounds'].get(m)):>10}" for m in METHODS)
        lines.append(f"{row['example']:<24} {row['delta']:>7.0e} {_num(row['exact_epsilon']):>10} {cells}  "
                     f"{'yes' if row['sound'] else 'NO: ' + ', '.join(row['violations'])}")
    return "\n".join(lines)


def _num(value: Any) -> str:
    if value is None:
        return "n/a"
    return "inf" if value == float("inf") else f"{value:.4f}"
