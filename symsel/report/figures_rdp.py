"""Papernot–Steinke's Rényi-DP figures (ICLR 2022, Figures 2, 3, 4 and 8), built like :mod:`symsel.report.figures`: each
builder returns ``(rows, draw)``. The base is 0.1-zCDP throughout (``D_λ ≤ 0.1 λ``), as in the paper.

* ``rdp_vs_order_logarithmic`` — Figure 2: the selection's RDP curve ε(λ) for the logarithmic law (TNB η = 0) at
  several means by Corollary 4, beside the base curve and naive composition, with symsel's generic Lemma 7 (any
  PGF, certified sup over the base's privacy region) for comparison;
* ``rdp_vs_order_laws`` — Figure 3: ε(λ) for TNB η = −0.5, 0, 0.5, 1 (Theorem 2), Poisson (Theorem 6) at mean 10
  and naive composition of 10 runs;
* ``mean_vs_epsilon`` — Figure 4: E[K] (vertical) against the ε at δ = 1e-6 it costs, the RDP route converted
  (``rdp``, the paper's curves) beside symsel's ``envelope``, and naive composition;
* ``conditional_sampling`` — Figure 8 (App. C–D.2): conditional sampling's RDP on the three-point tight example,
  the upper bound of Corollary 16 (second inequality) against the exact ``D_λ(Q_S‖Q'_S)``, all at 50 digits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import mpmath
import numpy as np

from symsel.errors import ParameterError
from symsel.report.figures import Draw, Rows, decorate
from symsel.report.figures_extra import _latex_number, selection_epsilon

RHO = 0.1
BASE = f"zcdp(rho={RHO})"
FIG3_LAWS = {"TNB eta=-0.5": "tnb(eta=-0.5, mean={m})", "logarithmic (eta=0)": "logarithmic(mean={m})",
             "TNB eta=0.5": "tnb(eta=0.5, mean={m})", "geometric (eta=1)": "geometric(mean={m})",
             "Poisson": "poisson(mean={m})"}
COLOURS = ("tab:brown", "tab:olive", "tab:cyan", "tab:blue", "tab:red", "tab:purple", "tab:green")


def _orders(orders: Sequence[float]) -> np.ndarray:
    lam = np.asarray(orders, dtype=float)
    if lam.size == 0 or not np.all(lam > 1) or not np.all(np.isfinite(lam)):
        raise ParameterError("orders", list(orders), "finite Rényi orders > 1", "figures_rdp")
    return lam


def _curves(laws: dict[str, str], lam: np.ndarray, methods: Sequence[str]) -> Rows:
    """Rows ``law, order, <method>: ε(λ)`` of each law's selection on the 0.1-zCDP base."""
    from symsel.bounds.renyi.entry import renyi_selection_curve
    from symsel.spec import parse_distribution, parse_profile

    base = parse_profile(BASE)
    rows: Rows = []
    for label, spec in laws.items():
        dist = parse_distribution(spec)
        values = {method: renyi_selection_curve(dist, base, method)(lam) for method in methods}
        rows += [{"law": label, "order": float(x), **{k: float(v[i]) for k, v in values.items()}}
                 for i, x in enumerate(lam)]
    return rows


def _draw_curves(rows: Rows, laws: Sequence[str], methods: Sequence[str], naive: dict[str, float],
                 title: str) -> Draw:
    def draw(ax: Any) -> None:
        lam = sorted({r["order"] for r in rows})
        ax.plot(lam, [RHO * x for x in lam], color="gray", label="base algorithm (0.1-zCDP)")
        for label, runs in naive.items():
            ax.plot(lam, [runs * RHO * x for x in lam], color="gray", linestyle="--", label=label)
        for colour, law in zip(COLOURS, laws, strict=False):
            for method, line in zip(methods, ("-", ":"), strict=False):
                pts = [(r["order"], r[method]) for r in rows if r["law"] == law]
                ax.plot(*zip(*pts, strict=True), color=colour, linestyle=line,
                        label=f"{law}" + ("" if method in ("closed", "cor4") else f" ({method}, symsel)"))
        ax.set_ylim(0, max(r[m] for r in rows for m in methods) * 1.15)
        decorate(ax, r"order $\lambda$", r"Rényi DP $\varepsilon(\lambda)$", title, legend_size=7, title_size=9)

    return draw


def rdp_vs_order_logarithmic(means: Sequence[float], orders: Sequence[float],
                             methods: Sequence[str] = ("cor4", "lemma7"), naive_runs: float = 10) -> tuple[Rows, Draw]:
    """P&S Figure 2: ε(λ) of the logarithmic law at each mean (Corollary 4, and symsel's generic Lemma 7)."""
    laws = {f"logarithmic, E[K]={m:g}": f"logarithmic(mean={m!r})" for m in means}
    rows = _curves(laws, _orders(orders), methods)
    title = "Logarithmic K, base 0.1-zCDP (Papernot–Steinke Fig. 2)"
    return rows, _draw_curves(rows, list(laws), methods, {f"naive composition, {naive_runs:g} runs": naive_runs},
                              title)


def rdp_vs_order_laws(orders: Sequence[float], mean: float = 10.0,
                      methods: Sequence[str] = ("closed", "lemma7")) -> tuple[Rows, Draw]:
    """P&S Figure 3: ε(λ) of TNB laws (Theorem 2) and Poisson (Theorem 6) at one mean, base 0.1-zCDP."""
    laws = {label: template.format(m=repr(mean)) for label, template in FIG3_LAWS.items()}
    rows = _curves(laws, _orders(orders), methods)
    title = f"Laws of K at mean {mean:g}, base 0.1-zCDP (Papernot–Steinke Fig. 3)"
    return rows, _draw_curves(rows, list(laws), methods, {f"naive composition, {mean:g} runs": mean}, title)


def mean_vs_epsilon(means: Sequence[float], delta: float = 1e-6, methods: Sequence[str] = ("rdp", "envelope"),
                    max_epsilon: float | None = 12.0) -> tuple[Rows, Draw]:
    """P&S Figure 4: the ε at ``delta`` that each mean of K costs (the mean on the vertical axis), the RDP route
    converted (``rdp``) beside ``envelope``; naive composition of ``m`` runs is m·ρ-zCDP converted optimally.
    ``max_epsilon`` clips the drawn ε axis (the CSV keeps every row)."""
    from symsel.spec import parse_profile

    rows: Rows = []
    for label, template in FIG3_LAWS.items():
        for m in means:
            spec = template.format(m=repr(m))
            rows.append({"law": label, "mean": m, **{k: selection_epsilon(spec, BASE, k, delta) for k in methods}})
    for m in means:
        naive = parse_profile(f"zcdp(rho={RHO * m!r})")
        rows.append({"law": "naive composition", "mean": m, **{k: float(naive.epsilon(delta)) for k in methods}})

    def draw(ax: Any) -> None:
        for colour, law in zip(COLOURS, [*FIG3_LAWS, "naive composition"], strict=False):
            for method in methods:
                if law == "naive composition" and method != methods[0]:
                    continue
                pts = [(r[method], r["mean"]) for r in rows if r["law"] == law]
                ours = method != "rdp"  # the papers' route is rdp; the others are symsel's, drawn thin
                ax.plot(*zip(*pts, strict=True), color="gray" if law.startswith("naive") else colour,
                        linestyle="--" if ours or law.startswith("naive") else "-", linewidth=1.0 if ours else 1.8,
                        label=law if law.startswith("naive") else
                        f"{law}, {'RDP (Papernot-Steinke)' if not ours else method + ' (symsel)'}")
        decorate(ax, rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$", r"$E[K]$",
                 "Repetitions against privacy, base 0.1-zCDP (Papernot–Steinke Fig. 4)", yscale="log",
                 legend_size=6, title_size=9)
        if max_epsilon is not None:
            ax.set_xlim(2, max_epsilon)

    return rows, draw


# --------------------------------------------------------------------------- Figure 8 (conditional sampling)


def _three_point(s: Any, t: Any, a: Any) -> tuple[list, list]:
    """P&S App. D.2's pair: Q = (a e^-s, a e^-s, 1 − 2a e^-s), Q' = (a e^-(s+t), a, 1 − a − a e^-(s+t))."""
    q = [a * mpmath.exp(-s), a * mpmath.exp(-s), 1 - 2 * a * mpmath.exp(-s)]
    qp = [a * mpmath.exp(-s - t), a, 1 - a - a * mpmath.exp(-s - t)]
    return q, qp


def _renyi(p: Sequence[Any], r: Sequence[Any], lam: Any) -> Any:
    return mpmath.log(mpmath.fsum(x**lam * y ** (1 - lam) for x, y in zip(p, r, strict=True))) / (lam - 1)


def conditional_sampling(orders: Sequence[float], scale: float = RHO, a: float = 0.25,
                         dps: int = 50) -> tuple[Rows, Draw]:
    """P&S Figure 8: for each order λ > 2, the three-point pair with ``D_λ(Q‖Q') = D_λ(Q'‖Q) = scale·λ``
    (s, t found at ``dps`` digits), Corollary 16's second bound
    ``D_λ(Q‖Q') + (λ−2)/(λ−1) D_{λ−1}(Q'‖Q) + 2/(λ−1) log(1/Q(S))`` and the exact ``D_λ(Q_S‖Q'_S)``."""
    lam_all = _orders(orders)
    if not np.all(lam_all > 2):
        raise ParameterError("orders", list(orders), "orders > 2 (the bound uses the order λ − 1 > 1)",
                             "conditional_sampling")
    rows: Rows = []
    with mpmath.workdps(dps):
        a_mp = mpmath.mpf(a)
        guess = (mpmath.mpf(1), mpmath.mpf(1))
        for lam in lam_all:
            lam_mp, target = mpmath.mpf(lam), scale * mpmath.mpf(lam)

            def equations(s: Any, t: Any, lam_mp: Any = lam_mp, target: Any = target) -> list:
                q, qp = _three_point(s, t, a_mp)
                return [_renyi(q, qp, lam_mp) - target, _renyi(qp, q, lam_mp) - target]

            s, t = mpmath.findroot(equations, guess)
            guess = (s, t)
            q, qp = _three_point(s, t, a_mp)
            q_s = q[0] + q[1]
            bound = (_renyi(q, qp, lam_mp) + (lam_mp - 2) / (lam_mp - 1) * _renyi(qp, q, lam_mp - 1)
                     + 2 / (lam_mp - 1) * mpmath.log(1 / q_s))
            exact = _renyi([q[0] / q_s, q[1] / q_s], [qp[0] / (qp[0] + qp[1]), qp[1] / (qp[0] + qp[1])], lam_mp)
            rows.append({"order": float(lam), "s": float(s), "t": float(t), "upper_cor16": float(bound),
                         "exact": float(exact)})

    def draw(ax: Any) -> None:
        lam = [r["order"] for r in rows]
        ax.plot(lam, [r["upper_cor16"] for r in rows], color="tab:red", linestyle="--",
                label="upper bound (Cor 16, second inequality)")
        ax.plot(lam, [r["exact"] for r in rows], color="black", label=r"exact $D_\lambda(Q_S\|Q'_S)$")
        ax.plot(lam, [scale * x for x in lam], color="gray", linestyle=":",
                label=rf"base: $D_\lambda(Q\|Q') = D_\lambda(Q'\|Q) = {scale:g}\lambda$")
        decorate(ax, r"order $\lambda$", r"Rényi divergence", "Conditional sampling, tight three-point example "
                 "(Papernot–Steinke Fig. 8)", title_size=9)

    return rows, draw


BUILDERS = {"ps_rdp_vs_order_logarithmic": rdp_vs_order_logarithmic, "ps_rdp_vs_order_laws": rdp_vs_order_laws,
            "ps_mean_vs_epsilon": mean_vs_epsilon, "ps_conditional_sampling": conditional_sampling}

