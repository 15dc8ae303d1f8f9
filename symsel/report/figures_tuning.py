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
from symsel.report.figures import Draw, Rows, _style
from symsel.report.figures_extra import _latex_number

FIG8 = {"q": 0.01, "epsilon_q": 1.5, "delta": 1e-6, "sigmas": (2.0, 3.0, 4.0)}
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

    def draw(ax: Any) -> None:
        ms = sorted({r["mean"] for r in rows})
        first = [next(r for r in rows if r["mean"] == m) for m in ms]
        for key, label, style_key in (("cor_6_2", "Upper bound, Cor 6.2", "paper"),
                                      ("tuning_best", "Upper bound, symsel best (same thresholds)", "envelope")):
            style = _style(ax, style_key)
            style.update(label=label, marker="o", color="black" if key == "cor_6_2" else "tab:blue")
            ax.plot(ms, [r[key] for r in first], **style)
        colours = dict(zip(sigmas, ("tab:orange", "tab:green", "tab:purple", "tab:brown"), strict=False))
        for sigma in sigmas:
            for method, line in zip(candidate_methods, ("--", ":"), strict=False):
                pts = [(r["mean"], r[f"candidate_{method}"]) for r in rows
                       if r["sigma"] == sigma and f"candidate_{method}" in r]
                if pts:
                    steps = next(r["steps"] for r in rows if r["sigma"] == sigma)
                    ax.plot(*zip(*pts, strict=True), color=colours.get(sigma), linestyle=line, marker="s",
                            markersize=3, label=f"candidate σ = {sigma:g} (T = {steps} at m = {ms[0]:g}), {method}")
        ax.set_xscale("log")
        ax.set_xlabel(r"$m = E[K]$ (geometric)")
        ax.set_ylabel(rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$")
        ax.set_title(rf"Tuning $\sigma$ of DP-SGD, q = {q:g}, $\varepsilon_Q$ = {epsilon_q:g} (Koskela et al. Fig. 8)",
                     fontsize=9)
        ax.legend(fontsize=6)
        ax.grid(True, which="both", alpha=0.3)

    return rows, draw


BUILDERS = {"sigma_tuning_vs_mean": sigma_tuning_vs_mean}
