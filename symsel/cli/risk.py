"""`symsel risk`: what a base or a selection bound says about membership attacks (docs/tradeoff.md)."""

from __future__ import annotations

from typing import Any

import click

from symsel.cli._app import emit, main, user_errors


@main.command("risk")
@click.option("--base", "base_spec", required=True, help='Base mechanism, e.g. "dpsgd(q=0.01, sigma=1.1, steps=1000)".')
@click.option("--dist", "dist_spec", default=None,
              help='Law of K, e.g. "point(k=20)": the risk of the selection (best of K runs); without it, of one run '
                   "of the base.")
@click.option("--method", default="best", show_default=True, help="The selection bound's method (with --dist).")
@click.option("--fpr", "fprs", type=float, multiple=True,
              help="A false-positive rate at which to bound the true-positive rate (repeatable; default 0.001, 0.01, "
                   "0.1).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def risk_command(base_spec: str, dist_spec: str | None, method: str, fprs: tuple[float, ...], as_json: bool) -> None:
    """Certified attack risk: the largest advantage TPR - FPR and the largest true-positive rate at each
    false-positive rate of any attack telling two neighbouring inputs apart (the trade-off curve of f-DP)."""
    from symsel.bounds import METHODS, bound, risk_summary
    from symsel.bounds.summary import DEFAULT_FPRS
    from symsel.errors import ParameterError
    from symsel.spec import parse_distribution, parse_profile

    base = parse_profile(base_spec)
    if dist_spec is None:
        if method != "best":
            raise ParameterError("--method", method, "no --method without --dist", "risk")
        profile = base
        record: dict[str, Any] = {"base": base.spec}
    else:
        if method not in METHODS:
            raise ParameterError("method", method, " | ".join(METHODS), "risk")
        dist = parse_distribution(dist_spec)
        profile = bound(dist, base, method)
        record = {"dist": dist.spec, "base": base.spec, "method": method}
    summary = risk_summary(profile, fprs or DEFAULT_FPRS)
    emit({**record, **{k: v for k, v in summary.items() if k != "spec"}}, as_json, _format_risk)


def _format_risk(payload: dict[str, Any]) -> str:
    lines = [f"advantage (TPR - FPR) <= {payload['advantage']:.6g}",
             f"{'FPR':>10} {'TPR <=':>14} {'beta >=':>14}"]
    lines += [f"{p['fpr']:>10.4g} {p['tpr']:>14.6g} {p['beta']:>14.6g}" for p in payload["points"]]
    return "\n".join(lines)
