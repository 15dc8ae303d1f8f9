"""More paper figures for the report, built like :mod:`symsel.report.figures`: each builder returns ``(rows, draw)``
(rows: flat dicts, the figure's numbers; draw: a function drawing them on a matplotlib axes), to be written
by :func:`symsel.report.figures.save_figure`.

* ``rnm_epsilon_vs_m`` — Koskela et al. Figure 1: Report Noisy Max over ``m`` sensitivity-1 queries with
  Gaussian noise (σ = 4), ε(δ = 1e-6) against ``m`` by Theorem 3.2 (privacy profile), Theorem 3.1 (RDP,
  Zhu & Wang 2022) and Corollary 3.4 (Gaussian tail); the numbers come from
  :func:`symsel.bounds.rnm.rnm_figure1_curves`.
* ``geometric_epsilon_vs_mean`` — Koskela et al. Figure 3: ε(δ = 1e-6) against m for geometric K on the Gaussian
  σ = 4 base, Thm 5.1 (``rdp``), Thm 5.2 (``paper``), ``envelope``, Cor 5.5's closed form and lower bounds.
* ``dpsgd_epsilon_vs_mean`` — Koskela et al. Figure 6: private selection over a Poisson-subsampled Gaussian
  DP-SGD base (q = 256/60000, σ = 1.1, T = 60/q steps, the Papernot–Steinke MNIST example), ε(δ = 1e-5)
  against E[K] for geometric K (Thm 5.1 vs Thm 5.2) and Poisson K (Thm 5.6 vs Cor 5.8); symsel's ``rdp``
  method stands for the RDP theorems, ``paper`` for the hockey-stick ones and ``envelope`` is shown beside.
* ``geometric_epsilon_vs_delta`` — Koskela et al. Figure 2: ε(δ) for geometric K, m = 30, 300, 3000, by
  Thm 5.1 (RDP, ``rdp``), Thm 5.2 (``paper``) and ``envelope``, Gaussian base σ = 4.
* ``binomial_vs_poisson`` — Koskela et al. Figure 4 (top): ε(δ) for K ~ Bin(n, m/n), m = 10, several n
  (Thm 5.7, ``paper``; ``envelope`` beside) and for K ~ Poisson(m) (Cor 5.8 and the RDP Thm 5.6), Gaussian
  base σ = 4.
* ``binomial_cdfs`` — Koskela et al. Figure 4 (bottom): the CDFs of Bin(n, m/n) and Poisson(m).
* ``utility_vs_epsilon`` — Papernot–Steinke Figures 5 and 6: the expected quantile of the best of K runs
  (eq. 8) or the probability of finding the one good candidate among 100 (App. A.2.1) against the final
  ε(δ = 1e-6), for TNB laws and Poisson, base 0.1-zCDP; ``rdp`` (their accounting) and ``envelope``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

from symsel.report.figures import Draw, Rows, _style, decorate

FIG6 = {"q": 256 / 60000, "sigma": 1.1, "steps": math.ceil(60 / (256 / 60000)), "delta": 1e-5}
RNM_LABELS = {"profile": "HS bound, Thm 3.2", "rdp": "RDP bound, Thm 3.1", "gaussian_tail": "Cor 3.4 (tail)"}
RNM_STYLE = {"profile": "envelope", "rdp": "rdp", "gaussian_tail": "paper"}


# --------------------------------------------------------------------------- Koskela et al. Figure 1 (RNM)


def rnm_epsilon_vs_m(m_values: Sequence[int], sigma: float = 4.0, delta: float = 1e-6) -> tuple[Rows, Draw]:
    """ε(δ) of Report Noisy Max with Gaussian noise against the number of queries ``m`` (Koskela et al.
    Section 3, Figure 1: σ = 4, δ = 1e-6, ``m`` from 10 to 1e5)."""
    from symsel.bounds.rnm import rnm_figure1_curves

    curves = rnm_figure1_curves(list(m_values), sigma=sigma, delta=delta)
    rows: Rows = [{"m": int(m), **{key: float(curves[key][i]) for key in RNM_LABELS}}
                  for i, m in enumerate(curves["m"])]

    def draw(ax: Any) -> None:
        for key, label in RNM_LABELS.items():
            style = _style(ax, RNM_STYLE[key])
            style["label"] = label
            ax.plot([r["m"] for r in rows], [r[key] for r in rows], **style)
        decorate(ax, r"number of queries $m$", rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$",
                 rf"Report Noisy Max, Gaussian noise $\sigma = {sigma:g}$ (Koskela et al. Fig. 1)", xscale="log")

    return rows, draw


# --------------------------------------------------------------------------- Koskela et al. Figure 3


def gdp_corollary_epsilon(mean: float, sigma: float, delta: float, eta: float = 1.0) -> float:
    """Koskela et al. Corollary 5.5 (a μ-GDP base, here Gaussian noise σ with sensitivity 1, TNB K with η ≥ 1),
    re-derived from its proof (Appendix C.3): with ε1 = 1/(2σ²) + sqrt(2 log(m/δ))/σ the Gaussian tail gives
    δ(ε1) ≤ δ/m, hence ε̂ ≤ ε1 in Thm 5.2 and ε = (η + 2) ε1 + 2δ. The extracted statement lost its formula;
    ``derivations`` and the tests check this form never comes out below Thm 5.2."""
    from symsel import validate

    where = "gdp_corollary_epsilon"
    mean = validate.real(mean, "mean", where, lo=1.0, lo_open=True)
    sigma = validate.positive(sigma, "sigma", where)
    delta = validate.probability(delta, "delta", where)
    eta = validate.real(eta, "eta", where, lo=1.0)
    eps1 = 1 / (2 * sigma**2) + math.sqrt(2 * math.log(mean / delta)) / sigma
    return (eta + 2) * eps1 + 2 * delta


def geometric_epsilon_vs_mean(means: Sequence[float], sigma: float = 4.0, delta: float = 1e-6,
                              methods: Sequence[str] = ("rdp", "paper", "envelope"),
                              lower_at: Sequence[float] = ()) -> tuple[Rows, Draw]:
    """ε(δ) of the selection against m = E[K] for geometric K on a Gaussian base (Koskela et al. Figure 3: σ = 4,
    δ = 1e-6, m from 10 to 1e5): the RDP bound (Thm 5.1, ``rdp``), Thm 5.2 (``paper``), ``envelope``, Cor 5.5's
    closed form, and the certified lower bound at the means in ``lower_at``."""
    import symsel
    from symsel.evidence.lower import lower_bound

    base = symsel.parse_profile(f"gaussian(sigma={sigma!r})")
    rows: Rows = []
    for m in means:
        dist = symsel.parse_distribution(f"geometric(mean={m!r})")
        row: dict[str, Any] = {"mean": m, **{k: float(symsel.bound(dist, base, k).epsilon(delta)) for k in methods}}
        row["cor_5_5"] = gdp_corollary_epsilon(m, sigma, delta)
        row["lower"] = float(lower_bound(base, dist, delta, budget=20).epsilon) if m in lower_at else None
        rows.append(row)
    labels = {"rdp": "RDP bound, Thm 5.1", "paper": "HS bound, Thm 5.2", "envelope": "envelope (symsel)",
              "cor_5_5": "Cor 5.5 (GDP closed form)", "lower": "certified lower bound"}

    def draw(ax: Any) -> None:
        for key in (*methods, "cor_5_5", "lower"):
            pts = [(r["mean"], r[key]) for r in rows if r.get(key) is not None]
            if pts:
                style = _style(ax, key if key != "cor_5_5" else "dp-accounting RDP")
                style.update(label=labels.get(key, key), marker="o" if key != "lower" else "x")
                ax.plot(*zip(*pts, strict=True), **style)
        decorate(ax, r"$m = E[K]$", rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$",
                 rf"Geometric K, Gaussian $\sigma = {sigma:g}$ (Koskela et al. Fig. 3)", xscale="log")

    return rows, draw


# --------------------------------------------------------------------------- Koskela et al. Figure 6 (DP-SGD)


def dpsgd_epsilon_vs_mean(means: Sequence[float], methods: Sequence[str] = ("paper", "envelope", "rdp"),
                          laws: Sequence[str] = ("geometric", "poisson"), q: float = FIG6["q"],
                          sigma: float = FIG6["sigma"], steps: int = FIG6["steps"],
                          delta: float = FIG6["delta"]) -> tuple[Rows, Draw]:
    """ε(δ) of the selection against E[K] on a DP-SGD base (Koskela et al. Figure 6 defaults). A method that
    does not apply to a law (or an invalid cell) is recorded as ``None`` with its one-line error."""
    import symsel

    base = symsel.parse_profile(f"dpsgd(q={q!r}, sigma={sigma!r}, steps={int(steps)})")
    rows: Rows = []
    for law in laws:
        for m in means:
            row: dict[str, Any] = {"law": law, "mean": m}
            for method in methods:
                try:
                    row[method] = float(symsel.bound(symsel.parse_distribution(f"{law}(mean={m!r})"), base,
                                                     method).epsilon(delta))
                except ValueError as exc:  # NotApplicableError / ParameterError: record, do not stop the figure
                    row[method], row[f"{method}_error"] = None, str(exc).splitlines()[0]
            rows.append(row)

    def draw(ax: Any) -> None:
        for law in laws:
            for method in methods:
                pts = [(r["mean"], r[method]) for r in rows if r["law"] == law and r.get(method) is not None
                       and math.isfinite(r[method])]
                if pts:
                    style = _style(ax, method)
                    style.update(label=f"{law}, {method}", marker="o" if law == "geometric" else "s")
                    ax.plot(*zip(*pts, strict=True), **style)
        ax.set_xlabel(r"$m = E[K]$")
        ax.set_ylabel(rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$")
        ax.set_title(rf"DP-SGD base q = {q:.3g}, $\sigma$ = {sigma:g}, T = {int(steps)} (Koskela et al. Fig. 6)",
                     fontsize=9)
        ax.legend(fontsize=7, ncol=2)
        ax.grid(True, alpha=0.3)

    return rows, draw


def _latex_number(x: float) -> str:
    exponent = math.log10(x)
    return rf"10^{{{round(exponent)}}}" if abs(exponent - round(exponent)) < 1e-12 else f"{x:g}"


# --------------------------------------------------------------------------- Koskela et al. Figure 4


def _fig4_laws(ns: Sequence[int], mean: float) -> dict[str, str]:
    laws = {f"Bin(n={n}, p={mean / n:.3g})": f"binomial(n={int(n)}, p={mean / n!r})" for n in ns}
    return {**laws, f"Poisson({mean:g})": f"poisson(mean={mean!r})"}


def binomial_vs_poisson(ns: Sequence[int], deltas: Sequence[float], mean: float = 10.0,
                        methods: Sequence[str] = ("paper", "envelope"), sigma: float = 4.0,
                        lower_at: Sequence[float] = ()) -> tuple[Rows, Draw]:
    """ε(δ) of the selection for binomial K of mean ``mean`` (Thm 5.7) and Poisson K (Cor 5.8; with the RDP
    bound of Thm 5.6 as ``rdp``) on a Gaussian base (Koskela et al. Figure 4, top); certified lower bounds at the
    δ in ``lower_at``.

    At n = 20 (p = 1/2) Thm 5.7 comes out above Cor 5.8: its validity condition ε1 ≥ log(1 + pδ(ε1)/(1 − p))
    forces ε1 ≥ 0.069 there, and the exact polygon supremum (method ``polygon``) agrees with it to 3e-5, so this
    is the theorem, not a loose implementation; the envelope bound and the lower bound are ordered the same way."""
    laws = {label: (spec, (*methods, "rdp") if spec.startswith("poisson") else tuple(methods))
            for label, spec in _fig4_laws(ns, mean).items()}
    title = rf"Binomial vs Poisson K, E[K] = {mean:g}, Gaussian $\sigma = {sigma:g}$ (Koskela et al. Fig. 4)"
    return _epsilon_vs_delta(laws, deltas, sigma, title, lower_at)


def geometric_epsilon_vs_delta(means: Sequence[float], deltas: Sequence[float],
                               methods: Sequence[str] = ("paper", "envelope", "rdp"),
                               sigma: float = 4.0, lower_at: Sequence[float] = ()) -> tuple[Rows, Draw]:
    """ε(δ) of the selection for geometric K (TNB η = 1) of means 30, 300, 3000 in the paper, by the RDP bound
    (Thm 5.1, ``rdp``) and the hockey-stick bound (Thm 5.2, ``paper``), Gaussian base σ = 4 (Koskela et al.
    Figure 2); certified lower bounds at the δ in ``lower_at``."""
    laws = {f"geometric, m={m:g}": (f"geometric(mean={m!r})", tuple(methods)) for m in means}
    title = rf"Geometric K, Gaussian $\sigma = {sigma:g}$ (Koskela et al. Fig. 2)"
    return _epsilon_vs_delta(laws, deltas, sigma, title, lower_at)


def _epsilon_vs_delta(laws: dict[str, tuple[str, tuple[str, ...]]], deltas: Sequence[float], sigma: float,
                      title: str, lower_at: Sequence[float] = ()) -> tuple[Rows, Draw]:
    """Rows ``law, delta, <method>: ε`` for each law ``label: (spec, methods)`` on the Gaussian base, with the
    certified lower bound (``lower``, else None) at the δ in ``lower_at``."""
    import symsel
    from symsel.evidence.lower import lower_bound

    base = symsel.parse_profile(f"gaussian(sigma={sigma!r})")
    rows: Rows = []
    for label, (spec, methods) in laws.items():
        dist = symsel.parse_distribution(spec)
        bounds = {method: symsel.bound(dist, base, method) for method in methods}
        for delta in deltas:
            lower = float(lower_bound(base, dist, delta, budget=20).epsilon) if delta in lower_at else None
            rows.append({"law": label, "delta": delta,
                         **{method: float(b.epsilon(delta)) for method, b in bounds.items()}, "lower": lower})

    def draw(ax: Any) -> None:
        colours = dict(zip(laws, ["tab:brown", "tab:olive", "tab:cyan", "tab:purple", "tab:green", "tab:red"],
                           strict=False))
        for label in laws:
            for method, line in (("paper", "--"), ("envelope", "-"), ("rdp", ":")):
                pts = [(r["delta"], r[method]) for r in rows if r["law"] == label and method in r]
                if pts:
                    ax.plot(*zip(*pts, strict=True), color=colours.get(label), linestyle=line, marker="o",
                            markersize=3, label=f"{label}, {method}")
            lows = [(r["delta"], r["lower"]) for r in rows if r["law"] == label and r["lower"] is not None]
            if lows:
                ax.plot(*zip(*lows, strict=True), color=colours.get(label), linestyle="none", marker="x",
                        markersize=8, label=f"{label}, certified lower bound")
        ax.set_xscale("log")
        ax.set_xlabel(r"$\delta$")
        ax.set_ylabel(r"$\varepsilon$")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=6, ncol=2)
        ax.grid(True, which="both", alpha=0.3)

    return rows, draw


def binomial_cdfs(ns: Sequence[int], mean: float = 10.0, k_max: int = 30) -> tuple[Rows, Draw]:
    """P[K <= k] for Bin(n, mean/n) and Poisson(mean), k = 0..k_max (Koskela et al. Figure 4, bottom)."""
    import symsel

    laws = {label: symsel.parse_distribution(spec) for label, spec in _fig4_laws(ns, mean).items()}
    rows: Rows = [{"k": k, **{label: float(dist.cdf(k)) for label, dist in laws.items()}} for k in range(k_max + 1)]

    def draw(ax: Any) -> None:
        for label in laws:
            ax.step([r["k"] for r in rows], [r[label] for r in rows], where="post", label=label)
        ax.set_xlabel(r"$k$")
        ax.set_ylabel(r"$P[K \leq k]$")
        ax.set_title(f"CDFs of K at E[K] = {mean:g} (Koskela et al. Fig. 4, bottom)", fontsize=10)
        ax.legend(fontsize=8)
        ax.grid(True, alpha=0.3)

    return rows, draw


# --------------------------------------------------------------------------- Papernot–Steinke Figures 5 and 6

UTILITY_FAMILIES = {"tnb eta=-0.5": "tnb(eta=-0.5, mean={m})", "logarithmic (eta=0)": "logarithmic(mean={m})",
                    "tnb eta=0.5": "tnb(eta=0.5, mean={m})", "geometric (eta=1)": "geometric(mean={m})",
                    "poisson": "poisson(mean={m})"}


def utility_vs_epsilon(means: Sequence[float], utility: str = "quantile", candidates: float = 100.0,
                       methods: Sequence[str] = ("envelope", "rdp"), base: str = "zcdp(rho=0.1)",
                       delta: float = 1e-6, families: dict[str, str] | None = None,
                       max_epsilon: float | None = None) -> tuple[Rows, Draw]:
    """Utility of the selection against its ε(δ) as E[K] varies: ``utility="quantile"`` is
    ``E[K/(K+1)]`` (Papernot–Steinke eq. 8, Figure 5), ``"success"`` is ``1 − φ(1 − 1/candidates)``
    (App. A.2.1, Figure 6). ``max_epsilon`` clips the drawn ε axis (the CSV keeps every row)."""
    import symsel
    from symsel.errors import ParameterError

    if utility not in ("quantile", "success"):
        raise ParameterError("utility", utility, "'quantile' or 'success'", "utility_vs_epsilon")
    profile = symsel.parse_profile(base)
    families = dict(UTILITY_FAMILIES if families is None else families)
    rows: Rows = []
    for label, template in families.items():
        for m in means:
            dist = symsel.parse_distribution(template.format(m=repr(m)))
            value = dist.expected_quantile() if utility == "quantile" else dist.success_probability(candidates)
            rows.append({"law": label, "mean": m, "utility": float(value),
                         **{method: float(symsel.bound(dist, profile, method).epsilon(delta)) for method in methods}})

    def draw(ax: Any) -> None:
        colours = dict(zip(families, ["tab:brown", "tab:olive", "tab:cyan", "tab:blue", "tab:red"], strict=False))
        for label in families:
            for method, line in zip(methods, ("-", ":", "--"), strict=False):
                pts = [(r[method], r["utility"]) for r in rows if r["law"] == label]
                ax.plot(*zip(*pts, strict=True), color=colours.get(label), linestyle=line, marker="o",
                        markersize=3, label=f"{label}, {method}")
        ax.set_xlabel(rf"final $\varepsilon$ at $\delta = {_latex_number(delta)}$")
        ax.set_ylabel("expected quantile E[K/(K+1)]" if utility == "quantile"
                      else f"success probability (1 good of {candidates:g})")
        figure = 5 if utility == "quantile" else 6
        ax.set_title(f"Utility against privacy, base {base} (Papernot–Steinke Fig. {figure})", fontsize=9)
        if max_epsilon is not None:
            ax.set_xlim(right=max_epsilon)
        ax.legend(fontsize=6, ncol=2)
        ax.grid(True, alpha=0.3)

    return rows, draw


BUILDERS = {"rnm_epsilon_vs_m": rnm_epsilon_vs_m, "dpsgd_epsilon_vs_mean": dpsgd_epsilon_vs_mean,
            "binomial_vs_poisson": binomial_vs_poisson, "binomial_cdfs": binomial_cdfs,
            "geometric_epsilon_vs_delta": geometric_epsilon_vs_delta, "utility_vs_epsilon": utility_vs_epsilon,
            "geometric_epsilon_vs_mean": geometric_epsilon_vs_mean,
            "success_vs_epsilon": functools.partial(utility_vs_epsilon, utility="success")}
