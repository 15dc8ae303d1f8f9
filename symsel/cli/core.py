"""The core commands: facts about a law, base profiles, bounds, verification, audits, Report Noisy Max."""

from __future__ import annotations

import math
import sys
from typing import Any

import click

from symsel.cli._app import _one_of, emit, main, user_errors
from symsel.validate import MAX_LOWER_BOUND_BUDGET

#: the largest exact-evaluation budget of ``verify``'s lower-bound search (each evaluation is exact): the one limit of
#: :func:`symsel.lower_bound`'s ``budget`` (:data:`symsel.validate.MAX_LOWER_BOUND_BUDGET`).
MAX_BUDGET = MAX_LOWER_BOUND_BUDGET
#: the most simulated games per side of an audit (memory and minutes grow linearly).
MAX_TRIALS = 10**8


def _refuse_ignored(names: tuple[str, ...], instead: str, where: str) -> None:
    """Refuse, naming it, the first option of ``names`` (parameter names) given on the command line although the
    command would ignore it (it is not silently dropped); ``instead`` says what was asked that makes it unused."""
    from click.core import ParameterSource

    from symsel.errors import ParameterError

    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name in names and ctx.get_parameter_source(param.name) not in (None, ParameterSource.DEFAULT):
            option = max(param.opts, key=len)
            raise ParameterError(option, ctx.params[param.name], f"no {option} with {instead}", where)


@main.command("dist")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--candidates", type=float, default=None, help="Also report the success probability for c candidates.")
@user_errors
def dist_command(spec: str, as_json: bool, candidates: float | None) -> None:
    """Facts about a distribution of K given as a SPEC, e.g. "geometric(mean=30)"."""
    from symsel.report.main import distribution_facts

    facts = distribution_facts(spec, candidates)
    emit(facts, as_json, lambda f: "\n".join(f"{k:>20}: {v}" for k, v in f.items()))


@main.command("profile")
@click.argument("spec")
@click.option("--delta", type=float, default=None, help="Report the smallest epsilon with delta(epsilon) <= DELTA.")
@click.option("--epsilon", type=float, default=None, help="Report delta(EPSILON).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def profile_command(spec: str, delta: float | None, epsilon: float | None, as_json: bool) -> None:
    """Privacy profile of a base mechanism SPEC, e.g. "gaussian(sigma=4)" or "dpsgd(q=0.01, sigma=1.1, steps=1000)"."""
    from symsel.spec import parse_profile
    from symsel.validate import probability, real

    _one_of(delta, epsilon)
    profile = parse_profile(spec)
    if delta is not None:
        delta = probability(delta, "delta", "profile")
        payload = {"spec": profile.spec, "delta": delta, "epsilon": float(profile.epsilon(delta))}
    else:
        epsilon = real(epsilon, "epsilon", "profile", lo=-math.inf, hi=math.inf, lo_open=True, hi_open=True,
                       allowed="a finite epsilon")
        payload = {"spec": profile.spec, "epsilon": epsilon, "delta": float(profile.delta(epsilon))}
    emit(payload, as_json, lambda p: f"{p['spec']}: " + _pair(p, "delta" if delta is not None else "epsilon"))


class _MethodOption(click.Option):
    """``--method``, whose help lists every member of :data:`symsel.METHODS` (read when the help is shown, so that
    the command line does not import the bounds to start)."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        from symsel.bounds import METHODS

        self.help = " | ".join((*METHODS, "all"))
        return super().get_help_record(ctx)


@main.command("bound")
@click.option("--dist", "dist_spec", required=True, help='Law of K, e.g. "geometric(mean=30)".')
@click.option("--base", "base_spec", required=True,
              help='Base mechanism, e.g. "gaussian(sigma=4)". A base given by a pair (pair, randomized_response, '
                   'dpsgd, ...) means: every ordered pair of neighbouring inputs is a post-processing of (P, P\') or '
                   'of (P\', P), the same for all K runs; both orders are computed (docs/setting.md).')
@click.option("--delta", type=float, default=None, help="Report epsilon at this delta.")
@click.option("--epsilon", type=float, default=None, help="Report delta at this epsilon (>= 0).")
@click.option("--method", default="best", show_default=True, cls=_MethodOption,
              help="The bound (one of symsel.METHODS), or all of them.")
@click.option("--compose-with", "compose_with", multiple=True,
              help='Also report the whole pipeline: the selection, then this mechanism (the final run, e.g. '
                   '"dpsgd(...)"), by symsel.with_final_run; repeatable (the runs one after the other).')
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def bound_command(dist_spec: str, base_spec: str, delta: float | None, epsilon: float | None, method: str,
                  compose_with: tuple[str, ...], as_json: bool) -> None:
    """Certified privacy of the best of K runs of a base mechanism."""
    from symsel.bounds import METHODS, bound_summary
    from symsel.errors import ParameterError
    from symsel.spec import parse_distribution, parse_profile

    _one_of(delta, epsilon)
    if method != "all" and method not in METHODS:
        raise ParameterError("method", method, " | ".join(METHODS) + " | all", "bound")
    dist, base = parse_distribution(dist_spec), parse_profile(base_spec)
    if method == "all":
        results = [_row_or_reason(dist, base, m, delta, epsilon) for m in METHODS]
    else:
        results = [bound_summary(dist, base, method, delta=delta, epsilon=epsilon)]
    payload: dict[str, Any] = (
        {"dist": dist.spec, "base": base.spec, "results": results} if method == "all" else results[0]
    )
    if compose_with:
        payload["composed"] = _composed(dist, base, method, compose_with, delta, epsilon)
    emit(payload, as_json, lambda p: _format_bounds(p, "delta" if delta is not None else "epsilon"))


def _row_or_reason(dist: Any, base: Any, method: str, delta: float | None, epsilon: float | None) -> dict[str, Any]:
    """One row of ``--method all``: the method's bound, or, when it fails (out of memory, too deep, an error of its
    own), a row that says why, as a method that does not apply says it: one method never takes the table down. The
    inputs are checked first, so an error of the user's is still one line."""
    from symsel.bounds import bound_summary
    from symsel.errors import SymselError
    from symsel.validate import probability, real

    if delta is not None:
        probability(delta, "delta", "bound")
    else:
        real(epsilon, "epsilon", "bound", lo=0.0, hi=math.inf, hi_open=True, allowed="a finite epsilon >= 0")
    try:
        return bound_summary(dist, base, method, delta=delta, epsilon=epsilon)
    except MemoryError:
        why = "not enough memory for these parameters"
    except RecursionError:
        why = "the input is nested too deeply to evaluate"
    except SymselError as exc:
        why = " ".join(str(exc).split())
    except (ValueError, ArithmeticError) as exc:
        why = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
    reason = why if why.startswith(f"method {method!r}") else f"method {method!r}: {why}"
    return {"method": method, "mean_K": float(dist.mean), "theorem": None, "epsilon": None, "delta": None,
            "reason": reason[:300]}


def _composed(dist: Any, base: Any, method: str, others: tuple[str, ...], delta: float | None,
              epsilon: float | None) -> dict[str, Any]:
    """The selection (``best`` when ``--method all``) followed by other mechanisms (the final run):
    :func:`symsel.bounds.pipeline.with_final_run`, the pipeline's one number."""
    from symsel.bounds import bound
    from symsel.bounds.pipeline import with_final_run
    from symsel.profiles.composition import BasicComposition
    from symsel.spec import parse_profile

    selection = bound(dist, base, "best" if method == "all" else method)
    finals = [parse_profile(spec) for spec in others]
    record: dict[str, Any] = {"with": list(others), "method": selection.method}
    pipeline = with_final_run(selection, finals)
    if isinstance(pipeline, BasicComposition):
        record["how"] = "basic composition (the final run's pair does not fit)"
    if delta is not None:
        record.update(delta=delta, epsilon=float(pipeline.epsilon(delta)))
    else:
        assert epsilon is not None  # the command line gives exactly one of delta and epsilon
        record.update(epsilon=epsilon, delta=float(pipeline.delta(epsilon)))
    return record


def _pair(row: dict[str, Any], given: str) -> str:
    """``epsilon = …, delta = …`` of a row where ``given`` (``"delta"`` or ``"epsilon"``) was asked about: the other
    one is a certified upper bound, printed rounded up (:func:`symsel.rounding.format_upper`)."""
    from symsel.rounding import format_upper

    eps = f"{row['epsilon']:g}" if given == "epsilon" else format_upper(row["epsilon"])
    delta = f"{row['delta']:g}" if given == "delta" else format_upper(row["delta"])
    return f"epsilon = {eps}, delta = {delta}"


def _format_bounds(payload: dict[str, Any], given: str) -> str:
    text = _format_bound_rows(payload, given)
    if "composed" in payload:
        c = payload["composed"]
        text += f"\nthen {', '.join(c['with'])} (the whole pipeline, {c['method']}): " + _pair(c, given)
    return text


def _format_bound_rows(payload: dict[str, Any], given: str) -> str:
    from symsel.rounding import format_upper

    rows = payload.get("results", [payload])
    lines = [f"{'method':<11} {'epsilon':>12} {'delta':>12} {'eps1':>10} {'log R':>10}  note"]
    for r in rows:
        if r.get("reason"):
            lines.append(f"{r['method']:<11} {'n/a':>12} {'':>12} {'':>10} {'':>10}  {r['reason']}")
            continue
        details = r.get("details", {})
        eps1 = "" if details.get("eps1") is None else f"{details['eps1']:.4f}"
        log_r = "" if details.get("log_ratio") is None else f"{details['log_ratio']:.6f}"
        eps = f"{r['epsilon']:g}" if given == "epsilon" else format_upper(r["epsilon"])
        delta = f"{r['delta']:g}" if given == "delta" else format_upper(r["delta"])
        lines.append(f"{r['method']:<11} {eps:>12} {delta:>12} {eps1:>10} {log_r:>10}  "
                     f"{r.get('theorem') or ''}")
    return "\n".join(lines)


@main.command("verify")
@click.option("--example", "example", default=None, help="A registered worst case (see --list).")
@click.option("--list", "list_examples", is_flag=True, help="List the registered examples.")
@click.option("--dist", "dist_spec", default=None, help="Law of K (with --base and --delta).")
@click.option("--base", "base_spec", default=None,
              help="Base mechanism with a known dominating pair (DP-SGD: its dominated pair of docs/lower-bounds.md).")
@click.option("--delta", type=float, default=None, help="delta at which epsilon is compared.")
@click.option("--budget", type=click.IntRange(1, MAX_BUDGET), default=200, show_default=True,
              help=f"Exact evaluations for the search (at most {MAX_BUDGET}).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Random seed (>= 0).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def verify_command(example: str | None, list_examples: bool, dist_spec: str | None, base_spec: str | None,
                   delta: float | None, budget: int, seed: int, as_json: bool) -> None:
    """Exact values / certified lower bounds against every upper bound. Exit status 3 if a bound is
    below an exact value (a soundness bug)."""
    from symsel.errors import ParameterError
    from symsel.evidence.examples import list_examples as names
    from symsel.evidence.verify import verify_example, verify_selection

    if list_examples:
        _refuse_ignored(("example", "dist_spec", "base_spec", "delta", "budget", "seed"), "--list (it only lists the "
                        "examples)", "verify")
        emit({"examples": names()}, as_json, lambda p: "\n".join(p["examples"]))
        return
    if example is not None:
        _refuse_ignored(("dist_spec", "base_spec", "delta", "budget", "seed"), "--example (a registered example "
                        "fixes its law, base and delta, and is exact: give --dist, --base and --delta instead)",
                        "verify")
        payload = verify_example(example)
    else:
        if dist_spec is None or base_spec is None or delta is None:
            raise click.UsageError("give --example NAME, or --dist, --base and --delta")
        from symsel.spec import parse_distribution, parse_profile
        from symsel.validate import probability

        if budget < 1:
            raise ParameterError("budget", budget, "an integer budget >= 1", "verify")
        payload = verify_selection(parse_distribution(dist_spec), parse_profile(base_spec),
                                   probability(delta, "delta", "verify"), budget=budget, seed=seed)
    payload.pop("details", None)
    emit(payload, as_json, _format_verify)
    if not payload["sound"]:
        click.echo(f"symsel: SOUNDNESS VIOLATION: bounds below the exact value: {payload['violations']}", err=True)
        sys.exit(3)


def _format_verify(p: dict[str, Any]) -> str:
    from symsel.rounding import format_lower, format_upper

    head = p.get("example") or f"{p['dist']} on {p['base']}"
    lines = [f"{head} at delta = {p['delta']:g}"]
    if "exact_epsilon" in p:
        lines.append(f"  exact epsilon      {p['exact_epsilon']}")
        if p.get("paper_exact") is not None:
            lines.append(f"  paper's exact      {p['paper_exact']}")
    else:
        monotone = p.get("monotone_order_epsilon")
        lines.append(f"  lower bound        {format_lower(p['lower_bound'])}  (monotone order "
                     f"{'n/a' if monotone is None else format_lower(monotone)})")
    for method, value in p["bounds"].items():
        lines.append(f"  {method:<18} {'n/a' if value is None else format_upper(value)}")
    if "ratio" in p:  # the tightest upper bound over the lower bound: itself an upper bound on the gap
        lines.append(f"  tightest UB / LB   {format_upper(p['ratio'])}")
    lines.append(f"  sound              {p['sound']}")
    return "\n".join(lines)


@main.command("audit")
@click.option("--example", "example", default=None, help="Audit a registered example's pair.")
@click.option("--dist", "dist_spec", default=None, help="Law of K (with --base).")
@click.option("--base", "base_spec", default=None, help="Base mechanism: its dominating pair, monotone score.")
@click.option("--delta", type=float, required=True)
@click.option("--trials", type=click.IntRange(1, MAX_TRIALS), default=1_000_000, show_default=True,
              help=f"Simulated games per side (at most {MAX_TRIALS:.0e}).")
@click.option("--confidence", type=float, default=0.95, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Random seed (>= 0).")
@click.option("--progress", is_flag=True, help="Show a progress bar.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def audit_command(example: str | None, dist_spec: str | None, base_spec: str | None, delta: float, trials: int,
                  confidence: float, seed: int, progress: bool, as_json: bool) -> None:
    """Monte Carlo audit (Xiang et al. Sec. 4.1): an empirical lower bound on epsilon with
    Clopper-Pearson confidence."""
    from dataclasses import asdict

    from symsel.evidence.audit import audit

    if example is not None:
        _refuse_ignored(("dist_spec", "base_spec"), "--example (the example fixes its law and pair: give --dist and "
                        "--base without --example instead)", "audit")
        from symsel.evidence.examples import get_example

        ex = get_example(example)
        dist, target = ex.dist, ex.pair
    else:
        if dist_spec is None or base_spec is None:
            raise click.UsageError("give --example NAME, or --dist and --base")
        from symsel.spec import parse_distribution, parse_profile

        dist, target = parse_distribution(dist_spec), parse_profile(base_spec)
    result = audit(dist, target, trials, delta, confidence=confidence, seed=seed, progress=progress)
    payload = {k: v for k, v in asdict(result).items()}
    emit(payload, as_json, lambda p: "\n".join(f"{k:>20}: {v}" for k, v in p.items()))


@main.command("rnm")
@click.option("--m", "m", type=int, required=True, help="Number of queries.")
@click.option("--base", "base_spec", required=True, help="Noise of one query at sensitivity 1, e.g. gaussian(sigma=4).")
@click.option("--delta", type=float, default=None, help="Report epsilon at this delta.")
@click.option("--epsilon", type=float, default=None, help="Report delta at this epsilon (>= 0).")
@click.option("--rounds", type=int, default=1, show_default=True, help="Adaptive rounds (Thm 3.3).")
@click.option("--monotone", is_flag=True, help="Queries move monotonically (sensitivity 1 instead of 2).")
@click.option("--method", default="all", show_default=True, help="profile | rdp | gaussian_tail | all")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def rnm_command(m: int, base_spec: str, delta: float | None, epsilon: float | None, rounds: int, monotone: bool,
                method: str, as_json: bool) -> None:
    """Report Noisy Max over M queries (Koskela et al. Sec. 3: Thm 3.2/3.3, Cor 3.4; Zhu-Wang RDP)."""
    from symsel.bounds.rnm import report_noisy_max_bound
    from symsel.errors import NotApplicableError, ParameterError
    from symsel.spec import parse_profile
    from symsel.validate import probability, real

    _one_of(delta, epsilon)
    methods = ("profile", "rdp", "gaussian_tail")
    if method != "all" and method not in methods:
        raise ParameterError("method", method, " | ".join(methods) + " | all", "rnm")
    base = parse_profile(base_spec)
    results: list[dict[str, Any]] = []
    for name in methods if method == "all" else (method,):
        try:
            bound = report_noisy_max_bound(m, base, rounds=rounds, monotone=monotone, method=name)
        except NotApplicableError as exc:
            results.append({"method": name, "epsilon": None, "delta": None, "reason": str(exc)})
            continue
        if delta is not None:
            d = probability(delta, "delta", "rnm")
            results.append({"method": name, "epsilon": float(bound.epsilon(d)), "delta": d})
        else:
            e = real(epsilon, "epsilon", "rnm", lo=0.0, hi=math.inf, hi_open=True, allowed="a finite epsilon >= 0")
            results.append({"method": name, "epsilon": e, "delta": float(bound.delta(e))})
    payload: dict[str, Any] = {"m": m, "base": base.spec, "rounds": rounds, "monotone": monotone}
    payload.update({"results": results} if method == "all" else results[0])
    given = "delta" if delta is not None else "epsilon"
    emit(payload, as_json, lambda p: "\n".join(
        f"{r['method']:<14} " + (_pair(r, given) if r.get("epsilon") is not None else f"n/a: {r.get('reason')}")
        for r in p.get("results", [p])))
