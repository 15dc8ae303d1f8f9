"""`symsel plan`: how many candidates fit a budget, the budget a number of candidates needs, and how many steps
(or how little noise) each candidate may use."""

from __future__ import annotations

from typing import Any

import click

from symsel.cli._app import emit, main, user_errors


@main.command("plan")
@click.option("--base", "base_spec", required=True,
              help='The base run, e.g. "dpsgd(q=0.01, sigma=1.1, steps=1000)"; with {steps} or {sigma} in it, solve '
                   "for that knob instead.")
@click.option("--epsilon", type=float, default=None, help="Privacy budget epsilon (omit with --mean: report it).")
@click.option("--delta", type=float, default=None, help="Privacy budget delta (required but with --max-tpr).")
@click.option("--dist", "templates", multiple=True,
              help='Family of K with a {mean} placeholder (repeatable); default poisson and geometric. With a '
                   "{steps}/{sigma} base: a fixed law.")
@click.option("--method", "methods", multiple=True,
              help="Methods (repeatable); default best (symsel's tightest) and rdp (what dp-accounting runs).")
@click.option("--mean", "mean", type=float, default=None, help="Report the smallest epsilon at this mean of K.")
@click.option("--candidates", type=float, default=None,
              help="Also report the probability that the best of this many configurations is found.")
@click.option("--final-run", "final_run", is_flag=True,
              help="Plan the whole pipeline: the selection, then one more run of the chosen configuration (the base) "
                   "composed after it.")
@click.option("--tpr-at-fpr", "tpr_fpr", type=float, default=None,
              help="With --max-tpr: plan to an attack-risk budget instead of (epsilon, delta): the most trials ({k} in "
                   "--dist), or the least noise ({sigma} in --base), whose certified true-positive rate at this "
                   "false-positive rate is at most --max-tpr (docs/tradeoff.md).")
@click.option("--max-tpr", "max_tpr", type=float, default=None, help="The attack-risk budget (with --tpr-at-fpr).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def plan_command(base_spec: str, epsilon: float | None, delta: float | None, templates: tuple[str, ...],
                 methods: tuple[str, ...], mean: float | None, candidates: float | None, final_run: bool,
                 tpr_fpr: float | None, max_tpr: float | None, as_json: bool) -> None:
    """How many candidates (mean of K) fit a budget (epsilon, delta), per law of K and method; how many trials k
    ({k} in --dist: "point(k={k})" for a fixed number); or the epsilon a mean needs (--mean); or the most steps /
    least noise a base may use ({steps} or {sigma} in --base). With --final-run every answer is for the whole
    pipeline: tuning, then the final training run of the chosen configuration."""
    from symsel.bounds import METHODS
    from symsel.errors import ParameterError

    if tpr_fpr is not None or max_tpr is not None:
        emit(_risk_plan(base_spec, templates, methods or ("best",), tpr_fpr, max_tpr), as_json, _format_risk_plan)
        return
    if delta is None:
        raise click.UsageError("give --delta (the budget's delta), or --tpr-at-fpr with --max-tpr")
    methods = methods or ("best", "rdp")
    for m in methods:
        if m not in METHODS:
            raise ParameterError("method", m, " | ".join(METHODS), "plan")
    knob = "{steps}" in base_spec or "{sigma}" in base_spec
    trials = bool(templates) and all("{k}" in t for t in templates)
    if candidates is not None and (knob or trials or mean is not None):
        # only the largest mean of K reports the probability of finding the best of --candidates
        raise click.UsageError("--candidates applies to the largest mean of K ({mean} in --dist, with --epsilon); "
                               "not with a fixed number of trials ({k}), --mean or a {steps}/{sigma} base")
    if knob:
        payload = _solve_knob(base_spec, epsilon, delta, templates, methods, final_run)
    elif mean is not None:
        payload = _epsilon_at_mean(base_spec, delta, templates, methods, mean, final_run)
    elif templates and all("{k}" in t for t in templates):
        payload = _max_trials(base_spec, epsilon, delta, templates, methods, final_run)
    else:
        payload = _max_means(base_spec, epsilon, delta, templates, methods, candidates, final_run)
    if final_run:
        payload["final_run"] = True
    emit(payload, as_json, _format)


def _need_epsilon(epsilon: float | None) -> float:
    if epsilon is None:
        raise click.UsageError("give --epsilon (the budget), or --mean to report the epsilon a mean needs")
    return epsilon


def _max_means(base_spec: str, epsilon: float | None, delta: float, templates: tuple[str, ...],
               methods: tuple[str, ...], candidates: float | None, final_run: bool) -> dict[str, Any]:
    from symsel.apps.plan import max_mean
    from symsel.spec import parse_profile

    epsilon = _need_epsilon(epsilon)
    base = parse_profile(base_spec)
    templates = templates or ("poisson(mean={mean})", "geometric(mean={mean})")
    rows = [{"dist": t, **max_mean(t, base, epsilon, delta, m, candidates=candidates, final_run=final_run)}
            for t in templates
            for m in methods]
    for row in rows:  # the gain over the peer's method, in every output
        peer = next((r for r in rows if r["dist"] == row["dist"] and r["method"] == "rdp"), None)
        if peer is not None and row.get("mean") and peer.get("mean"):
            row["gain_over_rdp"] = row["mean"] / peer["mean"]
    return {"base": base.spec, "epsilon": epsilon, "delta": delta, "plans": rows}


def _max_trials(base_spec: str, epsilon: float | None, delta: float, templates: tuple[str, ...],
                methods: tuple[str, ...], final_run: bool) -> dict[str, Any]:
    from symsel.apps.plan import max_trials
    from symsel.spec import parse_profile

    epsilon = _need_epsilon(epsilon)
    base = parse_profile(base_spec)
    rows = [{"template": t, **max_trials(t, base, epsilon, delta, m, final_run=final_run)} for t in templates
            for m in methods]
    return {"base": base.spec, "epsilon": epsilon, "delta": delta, "trials": rows}


def _epsilon_at_mean(base_spec: str, delta: float, templates: tuple[str, ...], methods: tuple[str, ...],
                     mean: float, final_run: bool) -> dict[str, Any]:
    from symsel.apps.plan import pipeline_epsilon
    from symsel.bounds import bound_summary
    from symsel.errors import ParameterError
    from symsel.spec import parse_distribution, parse_profile
    from symsel.validate import real

    mean = real(mean, "mean", "plan", lo=1.0, hi=1e10, allowed="a mean 1 <= mean <= 1e10")
    base = parse_profile(base_spec)
    templates = templates or ("poisson(mean={mean})", "geometric(mean={mean})")
    rows = []
    for t in templates:
        if "{k}" in t:  # a number of trials: --mean is that number
            if mean != int(mean):
                raise ParameterError("mean", mean, "a whole number of trials for a {k} template such as "
                                     "point(k={k})", "plan")
            law = parse_distribution(t.replace("{k}", str(int(mean))))
        else:
            law = parse_distribution(t.replace("{mean}", repr(mean)))
        for m in methods:
            record = bound_summary(law, base, m, delta=delta)
            if final_run and record.get("epsilon") is not None:
                record["epsilon"] = pipeline_epsilon(law, base, m, delta)
            rows.append({"dist": t, "method": m, "mean": float(law.mean), "epsilon": record["epsilon"],
                         **({"reason": record["reason"]} if record.get("reason") else {})})
    return {"base": base.spec, "delta": delta, "mean": mean, "epsilons": rows}


def _solve_knob(base_spec: str, epsilon: float | None, delta: float, templates: tuple[str, ...],
                methods: tuple[str, ...], final_run: bool) -> dict[str, Any]:
    from symsel.apps.plan import solve_base

    epsilon = _need_epsilon(epsilon)
    laws = templates or ("geometric(mean=10)",)
    rows = [solve_base(base_spec, law, epsilon, delta, m, final_run=final_run) for law in laws for m in methods]
    return {"base": base_spec, "epsilon": epsilon, "delta": delta, "solutions": rows}


def _risk_plan(base_spec: str, templates: tuple[str, ...], methods: tuple[str, ...], fpr: float | None,
               max_tpr: float | None) -> dict[str, Any]:
    """The most trials, or the least noise, within an attack-risk budget (:func:`symsel.apps.plan.max_trials_for_risk`,
    :func:`symsel.apps.plan.min_sigma_for_risk`)."""
    from symsel.apps.plan import max_trials_for_risk, min_sigma_for_risk
    from symsel.bounds import METHODS
    from symsel.cli.core import _refuse_ignored
    from symsel.errors import ParameterError
    from symsel.spec import parse_profile

    if fpr is None or max_tpr is None:
        raise click.UsageError("give both --tpr-at-fpr and --max-tpr")
    _refuse_ignored(("epsilon", "delta", "mean", "candidates", "final_run"), "--max-tpr", "plan")
    for m in methods:
        if m not in METHODS:
            raise ParameterError("method", m, " | ".join(METHODS), "plan")
    if "{sigma}" in base_spec:
        laws = templates or ("geometric(mean=10)",)
        rows = [min_sigma_for_risk(base_spec, law, fpr, max_tpr, m) for law in laws for m in methods]
    else:
        if not templates or not all("{k}" in t for t in templates):
            raise ParameterError("dist", list(templates), 'templates with {k}, e.g. "point(k={k})", or {sigma} in '
                                 "--base", "plan")
        base = parse_profile(base_spec)
        rows = [{"template": t, **max_trials_for_risk(t, base, fpr, max_tpr, m)} for t in templates for m in methods]
    return {"base": base_spec, "fpr": fpr, "max_tpr": max_tpr, "risk_plans": rows}


def _format_risk_plan(p: dict[str, Any]) -> str:
    lines = [f"attack-risk budget: TPR <= {p['max_tpr']:g} at FPR {p['fpr']:g}"]
    for r in p["risk_plans"]:
        head = f"{r.get('template', r.get('law', '')):<32} {r['method']:<11} "
        if "trials" in r:
            lines.append(head + (f"{r['trials']} trials (TPR <= {r['tpr']:.4g})" if r["trials"] is not None
                                 else "n/a: " + r["reason"]))
        else:
            lines.append(head + (f"sigma = {r['sigma']:.6g} (TPR <= {r['tpr']:.4g})" if r["sigma"] is not None
                                 else "n/a: " + r["reason"]))
    return "\n".join(lines)


def _format(p: dict[str, Any]) -> str:
    body = _format_rows(p)
    if p.get("final_run"):
        return "whole pipeline (the selection, then one final run of the base):\n" + body
    return body


def _format_rows(p: dict[str, Any]) -> str:
    """Certified ``ε`` and ``δ`` rounded up, the largest mean ``K`` that fits rounded down, the least noise that fits
    rounded up (:mod:`symsel.rounding`); whole counts (trials, steps) as they are."""
    from symsel.rounding import format_lower, format_upper

    def knob(r: dict[str, Any]) -> str:
        value = r[r["knob"]]
        return str(value) if isinstance(value, int) else format_upper(value)

    if "plans" in p:
        lines = []
        for r in p["plans"]:
            head = f"{r['dist']:<32} {r['method']:<11} "
            if r.get("mean") is None:
                lines.append(head + "n/a: " + r["reason"])
                continue
            gain = f"  ({r['gain_over_rdp']:.3g}x rdp)" if "gain_over_rdp" in r and r["method"] != "rdp" else ""
            success = (f", P[found] = {r['success_probability']:.3f}" if "success_probability" in r else "")
            lines.append(head + f"mean K = {format_lower(r['mean'])} (epsilon {format_upper(r['epsilon'])}, "
                         f"expected quantile "
                         f"{r['expected_quantile']:.4f}{success}){gain}")
        return "\n".join(lines)
    if "trials" in p:
        return "\n".join(f"{r['template']:<32} {r['method']:<11} " + (
            f"{r['trials']} trials (epsilon {format_upper(r['epsilon'])}; {r['trials'] + 1} would need delta "
            f"{format_upper(r.get('next_delta_at_budget', float('nan')))} at epsilon {r['budget_epsilon']:g})"
            if r.get("trials") is not None else "n/a: " + r["reason"]) for r in p["trials"])
    if "epsilons" in p:
        return "\n".join(f"{r['dist']:<32} {r['method']:<11} " + (
            f"epsilon = {format_upper(r['epsilon'])} at mean {r['mean']:.4g}" if r.get("epsilon") is not None
            else "n/a: " + r.get("reason", "")) for r in p["epsilons"])
    return "\n".join(f"{r['law']:<32} {r['method']:<11} " + (
        f"{r['knob']} = {knob(r)} (epsilon {format_upper(r['epsilon'])})" if r.get(r["knob"]) is not None
        else "n/a: " + r["reason"]) for r in p["solutions"])
