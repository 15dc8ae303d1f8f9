"""The main job, ``symsel report``: tables on built-in defaults.

For now the report describes the built-in distributions of K (Papernot & Steinke Section 2 and
Appendix A.2; Xiang et al. eq. (21)) at a common mean: their PGF, mean, variance, ``P[K=0]``,
expected quantile of the best run and success probability with one good candidate among ``c``.
"""

from __future__ import annotations

from typing import Any

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


def default_report() -> dict[str, Any]:
    """The report on built-in defaults, as one JSON-ready dictionary."""
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
    return {"candidates": DEFAULT_CANDIDATES, "distributions": rows}


def format_report(report: dict[str, Any]) -> str:
    """A plain-text table of :func:`default_report`."""
    lines = ["Distributions of K (mean 10 unless the family fixes it)", ""]
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
    return "\n".join(lines)
