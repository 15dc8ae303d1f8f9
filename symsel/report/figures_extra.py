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
  against E[K] for geometric K (Thm 5.1 vs Thm 5.2) and Poisson K (Thm 5.6 vs Cor 5.8), the RDP curves by the
  papers' route (:data:`DPSGD_CURVES`), symsel's variants beside them;
* ``cifar_epsilon_vs_mean`` — Koskela et al. Figure 7: the same for geometric K on the CIFAR-10 base of De et al.;
* ``geometric_delta_vs_epsilon`` — Koskela et al. Figure 2: the privacy profile δ(ε) for geometric K, m = 30, 300,
  3000, by Thm 5.1 (RDP, ``rdp``) and Thm 5.2 (``paper``), with the base's profile; ``envelope`` beside.
* ``binomial_vs_poisson`` — Koskela et al. Figure 4 (top): δ(ε) for K ~ Bin(n, m/n), m = 10, n = 15, 20, 1000
  (Thm 5.7, ``paper``) against K ~ Poisson(m) by the RDP bound of Thm 5.6 (δ̂ by conversion); ``envelope`` beside.
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

from symsel.report.figures import FIG7, Draw, Rows, _style, decorate

FIG6: dict[str, Any] = {"q": 256 / 60000, "sigma": 1.1, "steps": math.ceil(60 / (256 / 60000)), "delta": 1e-5}
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
    from symsel.bounds import bound
    from symsel.evidence.lower import lower_bound
    from symsel.spec import parse_distribution, parse_profile

    base = parse_profile(f"gaussian(sigma={sigma!r})")
    rows: Rows = []
    for m in means:
        dist = parse_distribution(f"geometric(mean={m!r})")
        row: dict[str, Any] = {"mean": m, **{k: float(bound(dist, base, k).epsilon(delta)) for k in methods}}
        row["cor_5_5"] = gdp_corollary_epsilon(m, sigma, delta)
        lower = lower_bound(base, dist, delta, budget=20, monotone=False) if m in lower_at else None
        row["lower"] = None if lower is None else float(lower.epsilon)
        rows.append(row)
    labels = {"rdp": "RDP bound, Thm 5.1", "paper": "HS bound, Thm 5.2", "envelope": "envelope (symsel)",
              "cor_5_5": "Cor 5.5 (GDP closed form)", "lower": "certified lower bound (symsel)"}

    def draw(ax: Any) -> None:
        for key in (*methods, "cor_5_5", "lower"):
            pts = [(r["mean"], r[key]) for r in rows if r.get(key) is not None]
            if pts:
                style = _style(ax, key if key != "cor_5_5" else "dp-accounting RDP")
                style.update(label=labels.get(key, key), marker="o" if key != "lower" else "x")
                if key == "lower":  # a few certified points, not a curve
                    style.update(linestyle="none", markersize=8)
                ax.plot(*zip(*pts, strict=True), **style)
        decorate(ax, r"$m = E[K]$", rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$",
                 rf"Geometric K, Gaussian $\sigma = {sigma:g}$ (Koskela et al. Fig. 3)", xscale="log")

    return rows, draw


# --------------------------------------------------------------------------- Koskela et al. Figures 6 and 7 (DP-SGD)

#: one curve of an ε-against-E[K] figure on a DP-SGD base: (column, the paper's legend or symsel's label, method,
#: base view). The base view ``"rdp"`` is the base known only through its RDP curve: every (ε̂, δ̂) an RDP theorem
#: needs (Thm 5.6 / P&S Thm 6 for Poisson K) then comes from the RDP→DP conversion, as in Opacus and dp-accounting,
#: the route of the papers' RDP curves; ``"tight"`` is the base's tight profile (dp-accounting's PLD).
DPSGD_CURVES = {
    "geometric": (("rdp", "RDP bound (Geom.), Thm 5.1", "rdp", "rdp"),
                  ("paper", "HS bound (Geom.), Thm 5.2", "paper", "tight"),
                  ("best", "symsel best (Geom.)", "best", "tight")),
    "poisson": (("rdp", "RDP bound (Poisson), Thm 5.6", "rdp", "rdp"),
                ("paper", "HS bound (Poisson), Cor 5.8", "paper", "tight"),
                ("rdp_tight_delta", "symsel rdp (Poisson), Thm 5.6 with the tight base's δ̂", "rdp", "tight"),
                ("best", "symsel best (Poisson)", "best", "tight")),
}
DPSGD_STYLE = {"rdp": ("-", "o"), "paper": ("--", "s"), "rdp_tight_delta": (":", None), "best": ("-.", None)}


def dpsgd_epsilon_vs_mean(means: Sequence[float], laws: Sequence[str] = ("geometric", "poisson"),
                          q: float = FIG6["q"], sigma: float = FIG6["sigma"], steps: int = FIG6["steps"],
                          delta: float = FIG6["delta"], figure: str = "Fig. 6",
                          xscale: str | None = None) -> tuple[Rows, Draw]:
    """ε(δ) of the selection against m = E[K] on a DP-SGD base (Poisson-subsampled Gaussian, add/remove), with the
    curves of Koskela et al. Figures 6 and 7: the RDP bounds (Thm 5.1 for geometric K, Thm 5.6 for Poisson K) by the
    papers' route (:data:`DPSGD_CURVES`), the hockey-stick bounds (Thm 5.2, Cor 5.8, method ``paper``), and beside
    them, labelled, symsel's Thm 5.6 with δ̂ read off the tight profile and ``best``. A method that does not apply
    (or an invalid cell) is recorded as ``None`` with its one-line error."""
    from symsel.bounds import bound
    from symsel.spec import parse_distribution, parse_profile

    views = {"tight": parse_profile(f"dpsgd(q={q!r}, sigma={sigma!r}, steps={int(steps)})"),
             "rdp": parse_profile(f"rdp_subsampled_gaussian(q={q!r}, sigma={sigma!r}, steps={int(steps)})")}
    rows: Rows = []
    for law in laws:
        for m in means:
            dist = parse_distribution(f"{law}(mean={m!r})")
            row: dict[str, Any] = {"law": law, "mean": m}
            for column, _, method, view in DPSGD_CURVES[law]:
                try:
                    row[column] = float(bound(dist, views[view], method).epsilon(delta))
                except ValueError as exc:  # NotApplicableError / ParameterError: record, do not stop the figure
                    row[column], row[f"{column}_error"] = None, str(exc).splitlines()[0]
            rows.append(row)

    def draw(ax: Any) -> None:
        colours = {"geometric": "tab:blue", "poisson": "tab:red"}
        for law in laws:
            for column, label, _, _ in DPSGD_CURVES[law]:
                pts = [(r["mean"], r[column]) for r in rows if r["law"] == law and r.get(column) is not None
                       and math.isfinite(r[column])]
                if pts:
                    line, marker = DPSGD_STYLE[column]
                    ax.plot(*zip(*pts, strict=True), color=colours.get(law), linestyle=line, marker=marker,
                            markersize=2.5, linewidth=1.6 if column in ("rdp", "paper") else 1.0, label=label)
        decorate(ax, r"$m = E[K]$", rf"$\varepsilon$ at $\delta = {_latex_number(delta)}$",
                 rf"DP-SGD q = {q:.3g}, $\sigma$ = {sigma:g}, T = {int(steps)} (Koskela et al. {figure})",
                 xscale=xscale, legend_size=7, title_size=9)

    return rows, draw


def cifar_epsilon_vs_mean(means: Sequence[float], delta: float = FIG7["delta"]) -> tuple[Rows, Draw]:
    """Koskela et al. Figure 7: the same curves for geometric K on the CIFAR-10 DP-SGD base of De et al. (2022)
    (q = 16384/50000, σ = 21.1, T = 250), m on a log axis; the paper reads off it that Thm 5.2 allows about three
    times as many models as the RDP bound (Thm 5.1). δ = 1e-5 is not stated in the paper (De et al. use it)."""
    return dpsgd_epsilon_vs_mean(means, laws=("geometric",), q=FIG7["q"], sigma=FIG7["sigma"], steps=FIG7["steps"],
                                 delta=delta, figure="Fig. 7", xscale="log")


def _latex_number(x: float) -> str:
    exponent = math.log10(x)
    return rf"10^{{{round(exponent)}}}" if abs(exponent - round(exponent)) < 1e-12 else f"{x:g}"


# --------------------------------------------------------------------------- Koskela et al. Figures 2 and 4


def _fig4_laws(ns: Sequence[int], mean: float) -> tuple[dict[str, str], tuple[str, str]]:
    """The laws of Figure 4: ``{label: spec}`` of Bin(n, m/n) for each n, and (label, spec) of Poisson(m)."""
    binomials = {f"Bin(n={n}, p={mean / n:.3g})": f"binomial(n={int(n)}, p={mean / n!r})" for n in ns}
    return binomials, (f"Poisson({mean:g})", f"poisson(mean={mean!r})")


#: a curve of a δ(ε) figure: (column, legend suffix, method, base view as in :data:`DPSGD_CURVES`, symsel's own?)
ProfileCurve = tuple[str, str, str, str, bool]


def binomial_vs_poisson(ns: Sequence[int], epsilons: Sequence[float], mean: float = 10.0, sigma: float = 4.0,
                        lower_at: Sequence[float] = ()) -> tuple[Rows, Draw]:
    """Koskela et al. Figure 4 (top): the selection's privacy profile δ(ε) for K ~ Bin(n, m/n) by Thm 5.7
    (``paper``) and for K ~ Poisson(m) by the RDP bound of Thm 5.6 taken the papers' way (δ̂ from the RDP→DP
    conversion); beside them, labelled as symsel's, Thm 5.6 with the tight δ̂ for Poisson and ``envelope`` for
    every law (Cor 5.8, the paper's hockey-stick bound for Poisson K, is not in the paper's figure; it lies on
    Thm 5.7's n = 1000 curve); certified lower bounds at the δ in ``lower_at``. Gaussian base, m = 10, σ = 4.

    At n = 20 (p = 1/2) Thm 5.7 comes out above Cor 5.8: its validity condition ε1 ≥ log(1 + pδ(ε1)/(1 − p))
    forces ε1 ≥ 0.069 there, and the exact polygon supremum (method ``polygon``) agrees with it to 3e-5, so this
    is the theorem, not a loose implementation; the envelope bound and the lower bound are ordered the same way."""
    binomial: tuple[ProfileCurve, ...] = (("paper", "HS bound, Thm 5.7", "paper", "tight", False),
                                          ("envelope", "envelope (symsel)", "envelope", "tight", True))
    poisson: tuple[ProfileCurve, ...] = (("rdp", "RDP bound, Thm 5.6", "rdp", "rdp", False),
                                         ("rdp_tight_delta", "Thm 5.6, tight δ̂ (symsel)", "rdp", "tight", True),
                                         ("envelope", "envelope (symsel)", "envelope", "tight", True))
    binomials, (poisson_label, poisson_spec) = _fig4_laws(ns, mean)
    laws = {label: (spec, binomial) for label, spec in binomials.items()}
    laws[poisson_label] = (poisson_spec, poisson)
    title = rf"Binomial vs Poisson K, m = {mean:g}, Gaussian $\sigma = {sigma:g}$ (Koskela et al. Fig. 4, top)"
    return _delta_vs_epsilon(laws, epsilons, sigma, title, lower_at, floor=1e-10)


def geometric_delta_vs_epsilon(means: Sequence[float], epsilons: Sequence[float], sigma: float = 4.0,
                               lower_at: Sequence[float] = ()) -> tuple[Rows, Draw]:
    """Koskela et al. Figure 2: the privacy profile δ(ε) of the selection for geometric K (TNB η = 1) of means
    30, 300, 3000 in the paper, by the RDP bound (Thm 5.1, ``rdp``) and the hockey-stick bound (Thm 5.2,
    ``paper``), with the base's own profile; ``envelope`` beside, labelled; certified lower bounds at the δ in
    ``lower_at``. Gaussian base σ = 4, sensitivity 1."""
    curves: tuple[ProfileCurve, ...] = (("rdp", "RDP bound, Thm 5.1", "rdp", "tight", False),
                                        ("paper", "HS bound, Thm 5.2", "paper", "tight", False),
                                        ("envelope", "envelope (symsel)", "envelope", "tight", True))
    laws = {f"m={m:g}": (f"geometric(mean={m!r})", curves) for m in means}
    title = rf"Geometric K, Gaussian $\sigma = {sigma:g}$ (Koskela et al. Fig. 2)"
    return _delta_vs_epsilon(laws, epsilons, sigma, title, lower_at, base_curve=True)


#: the line of each bound of a δ(ε) figure: its style and marker tell the bounds apart (the colour is the law's).
PROFILE_LINES: dict[str, dict[str, Any]] = {
    "paper": {"linestyle": "-", "linewidth": 1.8},
    "rdp": {"linestyle": "--", "linewidth": 1.8, "marker": "^", "markersize": 4.5},
    "rdp_tight_delta": {"linestyle": "-.", "linewidth": 1.2, "marker": "v", "markersize": 4},
    "envelope": {"linestyle": ":", "linewidth": 1.4, "marker": "s", "markersize": 3.5, "fillstyle": "none"},
}


def _profile_line(column: str, ours: bool) -> dict[str, Any]:
    """The line keywords of a δ(ε) curve (:data:`PROFILE_LINES`; markers spaced along the curve, not at each point)."""
    style = dict(PROFILE_LINES.get(column, {"linestyle": ":" if ours else "-", "linewidth": 1.2}))
    if "marker" in style:
        style["markevery"] = 0.08
    return style


#: δ below this is not drawn in a δ(ε) figure unless it says otherwise (the CSV keeps every value).
DELTA_FLOOR = 1e-14


def _delta_vs_epsilon(laws: dict[str, tuple[str, tuple[ProfileCurve, ...]]], epsilons: Sequence[float],
                      sigma: float, title: str, lower_at: Sequence[float] = (),
                      base_curve: bool = False, floor: float = DELTA_FLOOR) -> tuple[Rows, Draw]:
    """Rows ``law, epsilon, <column>: δ`` for each law ``label: (spec, curves)`` on the Gaussian base (and, with
    ``base_curve``, the base's own profile as law ``base``); the certified lower bound ε_L at each δ in
    ``lower_at`` as rows ``law, delta, lower`` (the true profile passes through or above the point (ε_L, δ))."""
    import numpy as np

    from symsel.bounds import bound
    from symsel.evidence.lower import lower_bound
    from symsel.spec import parse_distribution, parse_profile

    views = {"tight": parse_profile(f"gaussian(sigma={sigma!r})"),
             "rdp": parse_profile(f"rdp_gaussian(sigma={sigma!r})")}
    grid = np.asarray(epsilons, dtype=float)
    rows: Rows = []
    for label, (spec, curves) in laws.items():
        dist = parse_distribution(spec)
        values = {column: np.asarray(bound(dist, views[view], method).delta(grid), dtype=float)
                  for column, _, method, view, _ in curves}
        rows += [{"law": label, "epsilon": float(e), **{c: float(v[i]) for c, v in values.items()}}
                 for i, e in enumerate(grid)]
        rows += [{"law": label, "delta": d, "lower": float(lower_bound(views["tight"], dist, d, budget=20,
                                                          monotone=False).epsilon)}
                 for d in lower_at]
    if base_curve:
        base = np.asarray(views["tight"].delta(grid), dtype=float)
        rows += [{"law": "base", "epsilon": float(e), "base": float(base[i])} for i, e in enumerate(grid)]

    def draw(ax: Any) -> None:
        from matplotlib.lines import Line2D

        colours = dict(zip(laws, ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"], strict=False))
        kinds: dict[str, tuple[str, bool]] = {}  # column -> (its legend text, symsel's own?), in drawing order
        for label, (_, curves) in laws.items():
            for column, suffix, _, _, ours in curves:
                pts = [(r["epsilon"], r[column]) for r in rows
                       if r["law"] == label and column in r and r[column] >= floor]
                if pts:
                    ax.plot(*zip(*pts, strict=True), color=colours.get(label), **_profile_line(column, ours))
                    kinds.setdefault(column, (suffix, ours))
            lows = [(r["lower"], r["delta"]) for r in rows if r["law"] == label and "lower" in r]
            if lows:
                ax.plot(*zip(*lows, strict=True), color=colours.get(label), linestyle="none", marker="x",
                        markersize=7)
                kinds.setdefault("lower", ("certified lower bound", True))
        if base_curve:
            pts = [(r["epsilon"], r["base"]) for r in rows if r["law"] == "base" and r["base"] >= floor]
            ax.plot(*zip(*pts, strict=True), color="gray", linewidth=2.6, alpha=0.6)
        ax.set_yscale("log")
        ax.set_ylim(bottom=floor, top=1.5)
        ax.set_xlabel(r"$\varepsilon$")
        ax.set_ylabel(r"$\delta(\varepsilon)$")
        ax.set_title(title, fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        # two legends beside the axes: the line (style and marker) says the bound, the colour says the law
        bounds = [Line2D([], [], color="black", linestyle="none", marker="x", markersize=7, label=text)
                  if column == "lower" else Line2D([], [], color="black", label=text, **_profile_line(column, ours))
                  for column, (text, ours) in kinds.items()]
        colour_keys = [Line2D([], [], color=colours[label], linewidth=3, label=label) for label in laws]
        if base_curve:
            colour_keys.append(Line2D([], [], color="gray", linewidth=2.6, alpha=0.6,
                                      label="Priv. profile of base mechanism"))
        first = ax.legend(handles=bounds, fontsize=6.5, title="bound (line)", title_fontsize=7, handlelength=4.5,
                          loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        ax.add_artist(first)
        first.set_clip_on(False)  # added as an artist it would be clipped to the axes, and left out of a tight bbox
        ax.legend(handles=colour_keys, fontsize=6.5, title="law of K (colour)", title_fontsize=7, handlelength=2.5,
                  loc="lower left", bbox_to_anchor=(1.02, 0.0), borderaxespad=0.0)
        ax.figure.set_size_inches(8.8, 4.6)  # room for the legends beside the axes

    return rows, draw


def binomial_cdfs(ns: Sequence[int], mean: float = 10.0, k_max: int = 30) -> tuple[Rows, Draw]:
    """P[K <= k] for Bin(n, mean/n) and Poisson(mean), k = 0..k_max (Koskela et al. Figure 4, bottom)."""
    from symsel.spec import parse_distribution

    binomials, (poisson_label, poisson_spec) = _fig4_laws(ns, mean)
    specs = {**binomials, poisson_label: poisson_spec}
    laws = {label: parse_distribution(spec) for label, spec in specs.items()}
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


@functools.lru_cache(maxsize=4096)
def selection_epsilon(law: str, base: str, method: str, delta: float) -> float:
    """``ε(δ)`` of the selection bound ``method`` (:func:`symsel.bound`) for the law and base given by their specs,
    computed once per process for each set of values. Papernot–Steinke's Figures 4, 5 and 6 (``ps_mean_vs_epsilon``,
    ``utility_vs_epsilon``, ``success_vs_epsilon``) ask for the same laws, means and methods on the same base; the
    report runs them in one job (:data:`symsel.report.main.TOGETHER`), so each bound is computed once for the
    three. The bounds' own cache is keyed on the law and base objects, which each figure parses anew."""
    from symsel.bounds import bound

    return float(bound(_law(law), _profile(base), method).epsilon(delta))


@functools.lru_cache(maxsize=8)
def _profile(spec: str) -> Any:
    """One profile object per spec (a profile caches what its bounds read off it)."""
    from symsel.spec import parse_profile

    return parse_profile(spec)


@functools.lru_cache(maxsize=512)
def _law(spec: str) -> Any:
    """One law object per spec (laws are immutable; parsing one solves for its parameters)."""
    from symsel.spec import parse_distribution

    return parse_distribution(spec)


def utility_vs_epsilon(means: Sequence[float], utility: str = "quantile", candidates: float = 100.0,
                       methods: Sequence[str] = ("rdp", "envelope"), base: str = "zcdp(rho=0.1)",
                       delta: float = 1e-6, families: dict[str, str] | None = None,
                       max_epsilon: float | None = None) -> tuple[Rows, Draw]:
    """Utility of the selection against its ε(δ) as E[K] varies: ``utility="quantile"`` is
    ``E[K/(K+1)]`` (Papernot–Steinke eq. 8, Figure 5), ``"success"`` is ``1 − φ(1 − 1/candidates)``
    (App. A.2.1, Figure 6). ``max_epsilon`` clips the drawn ε axis (the CSV keeps every row)."""
    from symsel.errors import ParameterError

    if utility not in ("quantile", "success"):
        raise ParameterError("utility", utility, "'quantile' or 'success'", "utility_vs_epsilon")
    families = dict(UTILITY_FAMILIES if families is None else families)
    rows: Rows = []
    for label, template in families.items():
        for m in means:
            spec = template.format(m=repr(m))
            dist = _law(spec)
            value = dist.expected_quantile() if utility == "quantile" else dist.success_probability(candidates)
            rows.append({"law": label, "mean": m, "utility": float(value),
                         **{method: selection_epsilon(spec, base, method, delta) for method in methods}})

    def draw(ax: Any) -> None:
        colours = dict(zip(families, ["tab:brown", "tab:olive", "tab:cyan", "tab:blue", "tab:red"], strict=False))
        for label in families:
            for method in methods:
                ours = method != "rdp"  # the papers' route is rdp; the others are symsel's, drawn thin
                pts = [(r[method], r["utility"]) for r in rows if r["law"] == label]
                ax.plot(*zip(*pts, strict=True), color=colours.get(label), linestyle="--" if ours else "-",
                        linewidth=1.0 if ours else 1.8,
                        label=f"{label}, {method + ' (symsel)' if ours else 'RDP (Papernot-Steinke)'}")
        figure = 5 if utility == "quantile" else 6
        decorate(ax, rf"final $\varepsilon$ at $\delta = {_latex_number(delta)}$",
                 "expected quantile E[K/(K+1)]" if utility == "quantile"
                 else f"success probability (1 good of {candidates:g})",
                 f"Utility against privacy, base {base} (Papernot–Steinke Fig. {figure})", legend_size=6,
                 title_size=9)
        if max_epsilon is not None:
            ax.set_xlim(2, max_epsilon)
        if utility == "quantile":
            ax.set_ylim(0.5, 1.0)

    return rows, draw


BUILDERS = {"rnm_epsilon_vs_m": rnm_epsilon_vs_m, "dpsgd_epsilon_vs_mean": dpsgd_epsilon_vs_mean,
            "binomial_vs_poisson": binomial_vs_poisson, "binomial_cdfs": binomial_cdfs,
            "geometric_delta_vs_epsilon": geometric_delta_vs_epsilon,
            "cifar_epsilon_vs_mean": cifar_epsilon_vs_mean, "utility_vs_epsilon": utility_vs_epsilon,
            "geometric_epsilon_vs_mean": geometric_epsilon_vs_mean,
            "success_vs_epsilon": functools.partial(utility_vs_epsilon, utility="success")}
