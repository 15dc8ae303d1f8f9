"""Koskela et al. Figure 8: tuning the noise σ of DP-SGD candidates under shared point-wise thresholds (§6.2).

The procedure of §6.2, per mean m of a geometric K (γ = 1/m):

1. the Gaussian mechanism adjusted to be (ε_Q, δ)-DP (:func:`symsel.apps.tuning.gaussian_sigma_for`) gives a reference
   profile δ_G;
2. ε1 minimises log(e^ε + ((1 − γ)/γ) δ_G(ε)) (Theorem 5.2's added term), δ1 = δ_G(ε1); ε̂ solves δ_G(ε̂) = δ/m
   (:func:`symsel.apps.tuning.corollary_6_2_thresholds`);
3. each candidate σ runs the most DP-SGD steps whose profile stays below (ε1, δ1) and (ε̂, δ/m)
   (:func:`symsel.apps.tuning.max_steps`);
4. the tuning's ε: Corollary 6.2's closed form (``paper`` on the two-threshold point-wise base,
   :func:`symsel.apps.tuning.tuning_bound`), symsel's ``best`` on the same base, and, for comparison, Thm 5.2 optimised
   for each candidate on its own full profile (``paper``; ``best`` beside it).

Any thresholds give a sound tuning bound (the admitted candidates are dominated by the point-wise base); the
procedure only chooses good ones. Paper setting: q = 0.01, ε_Q = 1.5, δ = 1e-6, σ ∈ {2, 3, 4}, reported
T ≈ 4000, 10000, 18000 iterations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from symsel.errors import ParameterError
from symsel.report.figures import Draw, Rows
from symsel.report.figures_extra import _latex_number

FIG8: dict[str, Any] = {"q": 0.01, "epsilon_q": 1.5, "delta": 1e-6, "sigmas": (2.0, 3.0, 4.0)}
WHERE = "sigma_tuning_vs_mean"


def sigma_tuning_vs_mean(means: Sequence[float], sigmas: Sequence[float] = FIG8["sigmas"], q: float = FIG8["q"],
                         epsilon_q: float = FIG8["epsilon_q"], delta: float = FIG8["delta"],
                         candidate_methods: Sequence[str] = ("paper", "best")) -> tuple[Rows, Draw]:
    """Figure 8's numbers: one row per (mean, σ) with the admitted steps, the candidate's own bounds, and the
    tuning bounds (Cor 6.2 as ``cor_6_2``, symsel's ``best`` on the thresholds as ``tuning_best``)."""
    from symsel.apps.tuning import corollary_6_2_thresholds, max_steps, tuning_bound
    from symsel.bounds import bound
    from symsel.spec import parse_distribution, parse_profile

    if not sigmas:
        raise ParameterError("sigmas", sigmas, "at least one noise level", WHERE)
    rows: Rows = []
    for m in means:
        law = parse_distribution(f"geometric(mean={m!r})")
        thresholds = corollary_6_2_thresholds(law, epsilon_q, delta)
        shared = {"cor_6_2": float(tuning_bound(law, thresholds, "paper").epsilon(delta)),
                  "tuning_best": float(tuning_bound(law, thresholds, "best").epsilon(delta)),
                  "eps1": thresholds[0][0], "delta1": thresholds[0][1], "eps_hat": thresholds[1][0]}
        for sigma in sigmas:
            steps = max_steps(q, sigma, thresholds)
            row: dict[str, Any] = {"mean": m, "sigma": sigma, "steps": steps, **shared}
            if steps:
                base = parse_profile(f"dpsgd(q={q!r}, sigma={sigma!r}, steps={steps})")
                for method in candidate_methods:
                    row[f"candidate_{method}"] = float(bound(law, base, method).epsilon(delta))
            rows.append(row)

    return rows, draw_sigma_tuning(rows, sigmas, candidate_methods, q, epsilon_q, delta)


#: each candidate σ's colour, marker and line style (in the order of ``sigmas``), so that no two share any of them.
SIGMA_STYLES = (("tab:orange", "o", "-"), ("tab:green", "s", "--"), ("tab:purple", "^", "-."), ("tab:brown", "D", ":"))


def draw_sigma_tuning(rows: Rows, sigmas: Sequence[float], candidate_methods: Sequence[str], q: float,
                      epsilon_q: float, delta: float) -> Draw:
    """Figure 8 drawn from its rows in panels: on top the two tuning bounds (Cor 6.2, symsel's ``best`` on the same
    thresholds) and, as a band, the range of the candidates' own bounds over σ (they lie within 0.02 of each other,
    one line at this scale); below, one panel per candidate method, each candidate σ's own bound minus the mean of
    the candidates' at that ``m``, where the σ are told apart (colour, marker and line style)."""

    def draw(ax: Any) -> None:
        fig = ax.figure
        ax.remove()
        fig.set_size_inches(6.4, 3.2 + 1.9 * len(candidate_methods))
        axes = fig.subplots(1 + len(candidate_methods), 1, sharex=True,
                            gridspec_kw={"height_ratios": [2.0] + [1.0] * len(candidate_methods)})
        top, lower = axes[0], axes[1:]
        ms = sorted({r["mean"] for r in rows})
        first = [next(r for r in rows if r["mean"] == m) for m in ms]
        top.plot(ms, [r["cor_6_2"] for r in first], color="black", marker="o", markersize=4, linewidth=1.8,
                 label="tuning bound, Cor 6.2")
        top.plot(ms, [r["tuning_best"] for r in first], color="tab:blue", marker="D", markersize=4, linewidth=1.8,
                 linestyle="--", label="tuning bound, symsel best (same thresholds)")
        for method, colour, hatch in zip(candidate_methods, ("tab:orange", "tab:green"), ("//", "\\\\"),
                                         strict=False):
            spread = [[r[f"candidate_{method}"] for r in rows if r["mean"] == m and f"candidate_{method}" in r]
                      for m in ms]
            kept = [(m, min(v), max(v)) for m, v in zip(ms, spread, strict=True) if v]
            if kept:
                xs, lows, highs = zip(*kept, strict=True)
                top.fill_between(xs, lows, highs, color=colour, alpha=0.35, hatch=hatch, linewidth=0.8,
                                 label=f"each candidate alone, {method} (range over σ)")
        top.set_ylabel(rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$")
        top.set_title(rf"Tuning $\sigma$ of DP-SGD, q = {q:g}, $\varepsilon_Q$ = {epsilon_q:g} (Koskela et al. Fig. 8)",
                      fontsize=9)
        top.legend(fontsize=6.5)
        for panel, method in zip(lower, candidate_methods, strict=True):
            key = f"candidate_{method}"
            centre = {m: sum(v) / len(v) for m in ms if (v := [r[key] for r in rows if r["mean"] == m and key in r])}
            for sigma, (colour, marker, line) in zip(sigmas, SIGMA_STYLES, strict=False):
                pts = [(r["mean"], r[key] - centre[r["mean"]]) for r in rows if r["sigma"] == sigma and key in r]
                if pts:
                    steps = next(r["steps"] for r in rows if r["sigma"] == sigma)
                    panel.plot(*zip(*pts, strict=True), color=colour, marker=marker, linestyle=line, markersize=4,
                               label=f"σ = {sigma:g} (T = {steps} at m = {ms[0]:g})")
            panel.set_ylabel(f"{method}: ε − mean over σ", fontsize=8)
            panel.axhline(0.0, color="black", linewidth=0.6)
            panel.legend(fontsize=6.5)
        for panel in axes:
            panel.set_xscale("log")
            panel.grid(True, which="both", alpha=0.3)
        axes[-1].set_xlabel(r"$m = E[K]$ (geometric)")

    return draw


BUILDERS = {"sigma_tuning_vs_mean": sigma_tuning_vs_mean}
