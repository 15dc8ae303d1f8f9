"""``symsel tune`` (σ-tuning of DP-SGD, Koskela et al. §6.2, Cor 6.2) and ``symsel ptr`` (tuning Generalized PTR,
§6.1, Thm 6.1): selections over candidates that differ in their own privacy, bounded through shared point-wise
thresholds."""

from __future__ import annotations

from typing import Any

import click

from symsel.cli._app import emit, main, user_errors

METHODS = ("paper", "best", "envelope", "polygon", "fdp")


MAX_SIGMAS = 50


def _pairs(values: tuple[str, ...], name: str, where: str) -> list[tuple[float, float]]:
    """``EPS,DELTA`` strings as float pairs (a one-line error naming the option otherwise)."""
    from symsel.errors import ParameterError

    pairs = []
    for text in values:
        parts = text.split(",")
        try:
            if len(parts) != 2:
                raise ValueError
            pairs.append((float(parts[0]), float(parts[1])))
        except ValueError:
            raise ParameterError(name, text, "EPS,DELTA (two numbers separated by a comma)", where) from None
    return pairs


@main.command("tune")
@click.option("--dist", "dist_spec", required=True, help="Law of K, e.g. \"geometric(mean=10)\".")
@click.option("--q", "rate", type=float, required=True, help="DP-SGD sampling rate of every candidate.")
@click.option("--sigma", "sigmas", type=float, multiple=True, required=True, help="A candidate noise level (repeat).")
@click.option("--threshold", "thresholds", multiple=True,
              help="A shared point-wise threshold EPS,DELTA (repeat); default: §6.2's two from --epsilon-q.")
@click.option("--epsilon-q", type=float, default=1.5, show_default=True,
              help="Budget of the reference Gaussian mechanism that picks the thresholds (§6.2).")
@click.option("--delta", type=float, default=1e-6, show_default=True, help="Target delta of the whole tuning.")
@click.option("--method", "methods", multiple=True, type=click.Choice(METHODS), help="Bound (repeat; default: "
              "paper = Cor 6.2, and best).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def tune_command(dist_spec: str, rate: float, sigmas: tuple[float, ...], thresholds: tuple[str, ...],
                 epsilon_q: float, delta: float, methods: tuple[str, ...], as_json: bool) -> None:
    """The longest DP-SGD run each noise level may use under shared thresholds, and the (ε, δ) of tuning over
    them (Koskela et al. §6.2, Cor 6.2 with method paper)."""
    from symsel.apps.tuning import corollary_6_2_thresholds, sigma_tuning
    from symsel.errors import ParameterError
    from symsel.spec import parse_distribution

    if len(sigmas) > MAX_SIGMAS:
        raise ParameterError("sigma", f"{len(sigmas)} values", f"at most {MAX_SIGMAS} noise levels", "tune")
    law = parse_distribution(dist_spec)
    chosen = _pairs(thresholds, "threshold", "tune") if thresholds else corollary_6_2_thresholds(law, epsilon_q, delta)
    result: dict[str, Any] = sigma_tuning(rate, sigmas, law, chosen, delta, methods=methods or ("paper", "best"))

    def text(r: dict[str, Any]) -> str:
        from symsel.rounding import format_upper

        lines = [f"tuning {r['law']} over DP-SGD candidates (q = {r['q']:g}), delta = {r['delta']:g}",
                 "thresholds: " + ", ".join(f"({e:.6g}, {d:.3g})" for e, d in r["thresholds"])]
        lines += [f"  sigma = {c['sigma']:g}: " + (f"at least {c['steps']} steps (the search limit)" if c["at_limit"]
                                                     else f"at most {c['steps']} steps") for c in r["candidates"]]
        lines += [f"  epsilon ({m}): {format_upper(v)}" for m, v in r["epsilon"].items()]
        return "\n".join(lines)

    emit(result, as_json, text)


@main.command("ptr")
@click.option("--dist", "dist_spec", required=True, help="Law of K, e.g. \"geometric(mean=10)\".")
@click.option("--guarantee", "guarantees", multiple=True, required=True,
              help="A point-wise (EPS,DELTA) guarantee of each candidate, e.g. Thm 6.1's pair (repeat).")
@click.option("--delta", type=float, default=1e-5, show_default=True, help="Target delta of the tuning.")
@click.option("--method", "methods", multiple=True, type=click.Choice(METHODS),
              help="Bound (repeat; default: paper = Thm 5.2, and envelope).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def ptr_command(dist_spec: str, guarantees: tuple[str, ...], delta: float, methods: tuple[str, ...],
                as_json: bool) -> None:
    """The (ε, δ) of tuning Generalized PTR candidates known only through point-wise guarantees (Koskela et al.
    §6.1, Thm 6.1 with Thm 5.2, and the envelope bound)."""
    from symsel.apps.ptr import ptr_tuning

    pairs = _pairs(guarantees, "guarantee", "ptr")
    result = ptr_tuning(dist_spec, pairs, delta, methods=methods or ("paper", "envelope"))
    from symsel.rounding import format_upper

    emit(result, as_json, lambda r: "\n".join([f"tuning {r['law']} over {r['base']}, delta = {r['delta']:g}"] + [
        f"  epsilon ({m}): {format_upper(v['epsilon'])}  [{v['theorem']}]" for m, v in r["epsilon"].items()]))
