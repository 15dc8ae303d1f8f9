"""`symsel plan`: how many candidates fit a budget."""

from __future__ import annotations

import click

from symsel.cli._app import emit, main, user_errors


@main.command("plan")
@click.option("--base", "base_spec", required=True, help='The base run, e.g. "dpsgd(q=0.01, sigma=1.1, steps=1000)".')
@click.option("--epsilon", type=float, required=True, help="Privacy budget epsilon.")
@click.option("--delta", type=float, required=True, help="Privacy budget delta.")
@click.option("--dist", "templates", multiple=True,
              help='Family of K with a {mean} placeholder (repeatable); default poisson and geometric.')
@click.option("--method", "methods", multiple=True,
              help="Methods (repeatable); default best (symsel's tightest) and rdp (what dp-accounting runs).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def plan_command(base_spec: str, epsilon: float, delta: float, templates: tuple[str, ...], methods: tuple[str, ...],
                 as_json: bool) -> None:
    """How many candidates (mean of K) fit a budget (epsilon, delta), per law of K and method."""
    from symsel.bounds import METHODS
    from symsel.errors import ParameterError
    from symsel.plan import max_mean
    from symsel.spec import parse_profile

    base = parse_profile(base_spec)
    templates = templates or ("poisson(mean={mean})", "geometric(mean={mean})")
    methods = methods or ("best", "rdp")
    for m in methods:
        if m not in METHODS:
            raise ParameterError("method", m, " | ".join(METHODS), "plan")
    rows = [{"dist": t, **max_mean(t, base, epsilon, delta, m)} for t in templates for m in methods]
    payload = {"base": base.spec, "epsilon": epsilon, "delta": delta, "plans": rows}
    emit(payload, as_json, lambda p: "\n".join(
        f"{r['dist']:<32} {r['method']:<11} " + ("n/a: " + r["reason"] if r.get("mean") is None
                                                 else f"mean K = {r['mean']:.4g} (epsilon {r['epsilon']:.4f})")
        for r in p["plans"]))
