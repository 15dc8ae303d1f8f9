"""Xiang, Wang & Wang's DP-SGD tuning results (Table 4 at τ = 0.1, and Figure 6 in spirit), built like
:mod:`symsel.report.figures`.

The base is DP-SGD with N = 500 iterations at sampling ratio τ, its noise σ set so the run alone is
(ε_B, δ = 1e-5)-DP (:func:`sigma_for_base_budget`, from its PLD). Beside symsel's certified bounds on that run:

* ``gaussian_pair`` — the exact ε of the selection on the Gaussian pair N(μ, 1) vs N(0, 1) with the monotone
  score (:func:`symsel.evidence.continuous.selection_epsilon`), μ from the GDP central-limit approximation of DP-SGD
  (Dong et al.; Xiang et al. Cor 2): their ε_U-G. It is the exact value for that pair, but DP-SGD is only
  asymptotically μ-GDP, so it is an approximation of the run's selection, not a certified bound;
* ``rdp`` — the Papernot–Steinke route (their ε_U-P);
* ``audit`` (Figure 6) — a Clopper–Pearson lower bound from simulating the selection on the same Gaussian pair
  (their ε_L; :func:`symsel.evidence.audit.audit`).

* ``two_point_table`` — the τ = 0.1 rows of Table 4: the two-point law of eq. (21), P[K = 1] = s, P[K = L] = 1 − s,
  at the paper's five (L, s) and three ε_B, beside the values the paper prints (:data:`TABLE4_PAPER`);
* ``tnb_vs_base_budget`` — Figure 6 in spirit: TNB laws ξ_{η,ν} against the base's ε_B.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from scipy.stats import norm

from symsel import validate
from symsel.errors import ParameterError
from symsel.numeric import last_feasible
from symsel.report.figures import Draw, Rows, _style, decorate

STEPS = 500
DELTA = 1e-5
WHERE = "figures_xiang"


@functools.lru_cache(maxsize=64)
def sigma_for_base_budget(eps_base: float, rate: float = 0.1, steps: int = STEPS, delta: float = DELTA) -> float:
    """The DP-SGD noise σ at which ``steps`` iterations at ``rate`` are (ε_B, δ)-DP by their PLD: at most 1e-4 above
    the smallest such σ, and checked to meet the budget (ε(δ) of the discretized PLD is a step function of σ; Brent's
    method still brackets it, falling back to bisection steps: 12 PLDs per budget)."""
    from symsel.spec import parse_profile

    eps_base = validate.positive(eps_base, "eps_base", WHERE)

    def excess(sigma: float) -> float:
        profile = parse_profile(f"dpsgd(q={rate!r}, sigma={sigma!r}, steps={int(steps)})")
        return float(profile.epsilon(delta)) - eps_base

    lo, hi = 0.3, 1.0
    while excess(hi) > 0:
        lo, hi = hi, hi * 2
        if hi > 1e3:
            raise ParameterError("eps_base", eps_base, "a budget DP-SGD meets with noise below 1000", WHERE)
    if excess(lo) <= 0:
        raise ParameterError("eps_base", eps_base, f"a budget DP-SGD with noise {lo} does not already meet", WHERE)
    return last_feasible(excess, lo, hi, xtol=1e-4, rtol=0.0)  # checked: the run meets its budget


def gdp_mu(sigma: float, rate: float, steps: int) -> float:
    """μ of the GDP central-limit approximation of DP-SGD (Dong, Roth & Su; Xiang et al. Cor 2):
    μ = √2 c √(e^{1/σ²} Φ(1.5/σ) + 3Φ(−0.5/σ) − 2), c = τ √T."""
    c = rate * math.sqrt(steps)
    return math.sqrt(2) * c * math.sqrt(math.exp(sigma**-2) * norm.cdf(1.5 / sigma) + 3 * norm.cdf(-0.5 / sigma) - 2)


def _cells(cells: Sequence[tuple[str, float]], rate: float, methods: Sequence[str], audit_trials: int) -> Rows:
    """Every (law, ε_B) cell, in parallel over local cores (joblib); the noise levels are solved once first."""
    import joblib

    sigmas = {e: sigma_for_base_budget(e, rate) for e in sorted({e for _, e in cells})}
    jobs = (joblib.delayed(_cell)(law, e, sigmas[e], rate, tuple(methods), audit_trials) for law, e in cells)
    from symsel.report import figures

    return list(joblib.Parallel(n_jobs=figures.JOBS)(jobs))


def _cell(law: str, eps_base: float, sigma: float, rate: float, methods: Sequence[str],
          audit_trials: int) -> dict[str, Any]:
    from symsel.bounds import bound
    from symsel.evidence.continuous import selection_epsilon
    from symsel.pairs.location import GaussianPair
    from symsel.spec import parse_distribution, parse_profile

    base = parse_profile(f"dpsgd(q={rate!r}, sigma={sigma!r}, steps={STEPS})")
    dist = parse_distribution(law)
    mu = gdp_mu(sigma, rate, STEPS)
    row: dict[str, Any] = {"law": law, "eps_base": eps_base, "rate": rate, "sigma": sigma, "gdp_mu": mu,
                           **{m: float(bound(dist, base, m).epsilon(DELTA)) for m in methods},
                           "gaussian_pair": float(selection_epsilon(GaussianPair(mu), dist, DELTA))}
    if audit_trials:
        from symsel.evidence.audit import audit

        row["audit"] = float(audit(dist, GaussianPair(mu), trials=audit_trials, delta=DELTA, seed=0).epsilon_lower)
    return row


#: Xiang et al. Table 4's columns (L, s): the two-point laws of eq. (21) they tabulate.
TABLE4_COLUMNS = ((10, 0.1), (10, 0.01), (100, 0.01), (100, 0.001), (1000, 0.001))
#: the values Xiang et al. print in Table 4 for τ = 0.1 (N = 500, δ = 1e-5): ε_B → (ε_U-G, ε_U-O) per column of
#: :data:`TABLE4_COLUMNS` (ε_U-G: μ-GDP by the central limit, then their Algorithm 3, RDP converted to DP; ε_U-O:
#: the same with μ from their reduction).
TABLE4_PAPER = {1.0: ((1.13, 1.30, 2.59, 3.36, 5.44), (1.08, 1.24, 2.49, 3.23, 5.25)),
                2.0: ((2.40, 2.56, 4.48, 5.83, 8.57), (2.19, 2.36, 4.23, 5.50, 8.20)),
                4.0: ((4.96, 4.98, 6.15, 8.05, 10.27), (4.15, 4.16, 5.79, 7.63, 10.12))}


def two_point_table(eps_bases: Sequence[float] = (1.0, 2.0, 4.0),
                    columns: Sequence[tuple[int, float]] = TABLE4_COLUMNS, rate: float = 0.1,
                    methods: Sequence[str] = ("best", "rdp")) -> tuple[Rows, Draw]:
    """Xiang et al. Table 4 (τ = 0.1 by default): the selection's ε at δ = 1e-5 for the two-point law over DP-SGD
    (N = 500), by symsel's ``methods`` and the exact GDP Gaussian-pair value, with the paper's printed ε_U-G and
    ε_U-O where the cell is one of the paper's (τ = 0.1, ε_B ∈ {1, 2, 4}, (L, s) in :data:`TABLE4_COLUMNS`)."""
    if not eps_bases or not columns:
        raise ParameterError("eps_bases / columns", "empty", "at least one value each", WHERE)
    keys = [(e, int(L), s) for e in eps_bases for L, s in columns]
    cells = _cells([(f"two_point(L={L}, s={s!r})", e) for e, L, s in keys], rate, methods, 0)
    rows = []
    for (e, L, s), cell in zip(keys, cells, strict=True):
        paper = TABLE4_PAPER.get(float(e)) if rate == 0.1 and (L, s) in TABLE4_COLUMNS else None
        where = TABLE4_COLUMNS.index((L, s)) if paper else 0
        rows.append({"s": s, "L": L, **cell, "paper_eps_U_G": paper[0][where] if paper else None,
                     "paper_eps_U_O": paper[1][where] if paper else None})

    return rows, draw_two_point_table(rows, methods, rate)


#: why symsel's certified ``best`` lies well above the paper's ε_U-G (docs/figures.md, the ``xiang_two_point_table``
#: row), printed under the table after the ratio: two lines.
WHY_ABOVE_PAPER = ("it is certified for every score function and every pair DP-SGD dominates;\n"
                   "ε_U-G takes DP-SGD as exactly μ-GDP with a monotone score on one Gaussian pair (an approximation)")


def best_over_paper(rows: Rows) -> list[float]:
    """``best`` over the paper's printed ε_U-G, for each row of :func:`two_point_table` that has both."""
    return [r["best"] / r["paper_eps_U_G"] for r in rows if r.get("best") and r.get("paper_eps_U_G")]


def draw_two_point_table(rows: Rows, methods: Sequence[str], rate: float) -> Draw:
    """The drawing of :func:`two_point_table`'s rows: the table, and under it the ratio of ``best`` to the paper's
    ε_U-G with the reason it is large (:data:`WHY_ABOVE_PAPER`)."""
    def draw(ax: Any) -> None:
        header = ["ε_B", "L", "s", *methods, "GDP pair", "paper ε_U-G", "paper ε_U-O"]
        text = [[f"{r['eps_base']:g}", str(r["L"]), f"{r['s']:g}", *(f"{r[m]:.3f}" for m in methods),
                 f"{r['gaussian_pair']:.3f}",
                 *("" if r[k] is None else f"{r[k]:.2f}" for k in ("paper_eps_U_G", "paper_eps_U_O"))]
                for r in rows]
        ax.axis("off")
        table = ax.table(cellText=text, colLabels=header, loc="center", cellLoc="center")
        table.auto_set_font_size(False)
        table.set_fontsize(7)
        table.scale(1, 1.1)
        ax.set_title(f"Two-point K over DP-SGD (N = {STEPS}, τ = {rate:g}), ε at δ = 1e-5 (Xiang et al. Table 4)",
                     fontsize=9)
        ratios = best_over_paper(rows)
        if ratios:
            middle = math.exp(sum(map(math.log, ratios)) / len(ratios))
            spread = f"{min(ratios):.1f}–{max(ratios):.1f}×" if len(ratios) > 1 else f"{ratios[0]:.2f}×"
            ax.text(0.5, 0.0, f"symsel's best ≈ {middle:.1f}× the paper's ε_U-G ({spread}): {WHY_ABOVE_PAPER}",
                    transform=ax.transAxes, ha="center", va="top", fontsize=6.5)

    return draw


def tnb_vs_base_budget(eps_bases: Sequence[float] = (1.0, 2.0, 4.0),
                       laws: Sequence[str] = ("tnb(eta=0, gamma=0.01)", "tnb(eta=1, gamma=0.001)"),
                       rate: float = 0.1, methods: Sequence[str] = ("best", "rdp"),
                       audit_trials: int = 200_000) -> tuple[Rows, Draw]:
    """Figure 6 in spirit: ε of the selection at δ = 1e-5 against the base's ε_B for TNB laws ξ_{η,ν} (the paper
    does not state its laws' parameters; τ = 0.1 is one of its ratios, and shares the table's noise levels)."""
    if not eps_bases or not laws:
        raise ParameterError("eps_bases / laws", "empty", "at least one value each", WHERE)
    audit_trials = validate.integer(audit_trials, "audit_trials", WHERE, lo=0)
    rows = _cells([(law, e) for law in laws for e in eps_bases], rate, methods, audit_trials)

    def draw(ax: Any) -> None:
        markers = dict(zip(laws, "os^v", strict=False))
        keys = (*methods, "gaussian_pair", *(["audit"] if audit_trials else []))
        labels = {"best": "symsel best (certified)", "rdp": "ε_U-P (Papernot–Steinke)",
                  "gaussian_pair": "ε_U-G (GDP Gaussian pair, approximate)", "audit": "ε_L (audit, 95 %)"}
        styles = {"gaussian_pair": "paper", "audit": "lower"}
        for law in laws:
            for key in keys:
                pts = [(r["eps_base"], r[key]) for r in rows if r["law"] == law]
                style = _style(ax, styles.get(key, key))
                style.update(marker=markers[law], label=f"{law}: {labels.get(key, key)}")
                ax.plot(*zip(*pts, strict=True), **style)
        decorate(ax, r"base budget $\varepsilon_B$ (DP-SGD alone, $\delta = 10^{-5}$)",
                 r"$\varepsilon$ of the selection at $\delta = 10^{-5}$",
                 f"TNB K over DP-SGD (N = {STEPS}, τ = {rate:g}) (Xiang et al. Fig. 6, in spirit)", legend_size=6,
                 title_size=9)

    return rows, draw


BUILDERS = {"xiang_two_point_table": two_point_table, "xiang_tnb_vs_base_budget": tnb_vs_base_budget}
