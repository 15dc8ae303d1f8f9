"""Figures of the report, each drawn from its own rows of numbers (written beside it as CSV).

Every builder returns ``(rows, draw)``: the rows (a list of flat dicts, the figure's numbers) and a function
that draws them on a matplotlib figure. :func:`save_figure` writes ``NAME.png``, ``NAME.pdf`` and ``NAME.csv``.
The figure named after a paper figure uses its setting where the paper states it; docs/figures.md lists every
report figure beside the paper's, with the differences. The four core figures:

* ``candidates_vs_budget`` — the practitioner's view of the setting of Koskela et al. Figure 7 (DP-SGD on CIFAR-10,
  q = 16384/50000, σ = 21.1, 250 steps, δ = 1e-5, De et al. 2022): the largest mean number of candidates each
  method certifies for budgets ε, against dp-accounting's RDP ``RepeatAndSelectDpEvent`` (the paper's own view,
  ε against E[K], is ``cifar_epsilon_vs_mean`` in :mod:`symsel.report.figures_extra`);
* ``epsilon_vs_mean`` — symsel's own comparison: ε(δ = 1e-6) of the selection on a Gaussian base (σ = 4) against
  E[K] for geometric and Poisson K, every method and the certified lower bound; its cells run through
  :mod:`symsel.apps.sweep`;
* ``profiles`` — the privacy profile δ(ε) of the selection (geometric K, mean 30, Gaussian σ = 4) by every method,
  with the base's own profile (the view of Koskela et al. Figure 2, at one mean);
* ``laws_at_equal_mean`` — symsel's own comparison: ε(δ = 1e-6) of TNB laws (η = −0.5, 0, 0.5, 1) and Poisson at
  equal mean, ``rdp`` against ``envelope``.
"""

from __future__ import annotations

import csv
import functools
import math
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np

Rows = list[dict[str, Any]]
Draw = Callable[[Any], None]

FIG7: dict[str, Any] = {"q": 16384 / 50000, "sigma": 21.1, "steps": 250, "delta": 1e-5}
GAUSSIAN = "gaussian(sigma=4)"
DELTA = 1e-6
#: processes of the builders that spread their cells over joblib (its ``n_jobs``): -1, every core, when a builder
#: runs alone; :func:`symsel.report.main.write_report`'s workers set 1, the report already running one step per core.
JOBS = -1
METHOD_STYLE = {"paper": ("tab:orange", "--"), "fdp": ("tab:green", "-."), "envelope": ("tab:blue", "-"),
                "best": ("tab:cyan", "-"), "rdp": ("tab:red", ":"), "lower": ("black", "-"),
                "dp-accounting RDP": ("tab:purple", ":"), "base (one run)": ("gray", "-")}


def save_figure(name: str, rows: Rows, draw: Draw, folder: Path) -> list[Path]:
    """Draw and write ``name``.png/.pdf/.csv into ``folder``; returns the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}.pdf", folder / f"{name}.csv"]
    fig = draw_figure(draw)
    fig.savefig(paths[0], dpi=130, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    write_csv(rows, paths[2])
    return paths


def draw_figure(draw: Draw) -> Any:
    """A new matplotlib figure (Agg backend) with ``draw`` drawn on it and every axes' long legend moved beside it:
    the figure :func:`save_figure` writes, for a caller (a test) that inspects its artists. Close it with
    ``matplotlib.pyplot.close``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    draw(ax)
    for axes in fig.axes:  # the axes drawn on: ``ax`` itself, or the panels that replaced it (:func:`panels`)
        _legend_outside_when_long(fig, axes)
    fig.tight_layout()
    return fig


def panels(ax: Any, count: int, width: float = 5.0) -> list[Any]:
    """Replace ``ax`` by ``count`` side-by-side panels sharing the vertical axis, in a figure widened to ``width``
    inches per panel: a draw function's way to one panel per law."""
    fig = ax.figure
    ax.remove()
    fig.set_size_inches(width * count, fig.get_size_inches()[1])
    return list(np.atleast_1d(fig.subplots(1, count, sharey=True)))


#: relative gap under which two curves count as one where they meet (1 %: the agreement the report's tests ask of
#: symsel's rdp and dp-accounting's RDP; at 130 dpi two such points overlap).
COINCIDE_REL = 0.01


def agreement(first: Sequence[tuple[float, float]], second: Sequence[tuple[float, float]],
              rel: float = COINCIDE_REL) -> list[bool]:
    """Where two curves, as ``(x, y)`` points, are drawn on top of each other: at each abscissa both curves have, in
    increasing order, whether their ``y`` agree within ``rel`` (there the reader cannot tell them apart)."""
    second_at = dict(second)
    return [math.isclose(y, second_at[x], rel_tol=rel) for x, y in sorted(first) if x in second_at]


def where_agreeing(first: Sequence[tuple[float, float]], second: Sequence[tuple[float, float]], unit: str) -> str:
    """Whether one curve hides the other (:func:`agreement`), in words, for a figure to say so: ``"all"`` when they
    agree at every shared point, ``"at k of n <unit>"`` when they agree along a stretch (two neighbouring shared
    points) but not everywhere, else ``""`` (apart, or meeting at isolated points: curves that cross)."""
    flags = agreement(first, second)
    if flags and all(flags):
        return "all"
    if any(a and b for a, b in pairwise(flags)):
        return f"at {sum(flags)} of {len(flags)} {unit}"
    return ""


#: a legend with more entries than this is drawn beside the axes instead of over the data.
LEGEND_INSIDE_MAX = 6


def _legend_outside_when_long(fig: Any, ax: Any) -> None:
    """Move a long legend out of the axes to their right (widening the figure), so that it covers no curve."""
    legend = ax.get_legend()
    if legend is None or len(legend.get_texts()) <= LEGEND_INSIDE_MAX:
        return
    size = legend.get_texts()[0].get_fontsize()
    handles, labels = ax.get_legend_handles_labels()
    legend.remove()
    ax.legend(handles, labels, fontsize=size, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              ncol=1 if len(labels) <= 18 else 2)
    width, height = fig.get_size_inches()
    fig.set_size_inches(width + (3.0 if len(labels) <= 18 else 5.5), height)


def write_csv(rows: Rows, path: Path) -> None:
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row if k not in keys]
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=keys)
        writer.writeheader()
        writer.writerows(rows)


def decorate(ax: Any, xlabel: str, ylabel: str, title: str, xscale: str | None = None, yscale: str | None = None,
             legend_size: float = 8, title_size: float = 10) -> None:
    """The axes' labels, title, scales, legend and grid (every figure's common finish)."""
    if xscale:
        ax.set_xscale(xscale)
    if yscale:
        ax.set_yscale(yscale)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=title_size)
    ax.legend(fontsize=legend_size)
    ax.grid(True, which="both", alpha=0.3)


def _style(ax: Any, label: str) -> dict[str, Any]:
    colour, line = METHOD_STYLE.get(label, (None, "-"))
    return {"color": colour, "linestyle": line, "marker": "o", "markersize": 3, "label": label}


# --------------------------------------------------------------------------- Koskela et al. Figure 7


def candidates_vs_budget(budgets: Sequence[float], laws: Sequence[tuple[str, str, float]],
                         methods: Sequence[str] = ("best", "rdp")) -> tuple[Rows, Draw]:
    """Largest certified mean of K per budget ε on the Figure 7 DP-SGD base; ``laws`` are
    ``(label, template with {mean}, dp-accounting shape η)``."""
    import joblib

    tasks = [(label, template, shape, eps, method) for label, template, shape in laws for eps in budgets
             for method in (*methods, "dp-accounting RDP")]
    rows: Rows = joblib.Parallel(n_jobs=JOBS)(joblib.delayed(_fig7_cell)(*task) for task in tasks)
    return rows, draw_candidates_vs_budget(rows, [label for label, _, _ in laws], (*methods, "dp-accounting RDP"))


#: one colour per law of K in the figures that tell laws apart by colour (methods by line style).
LAW_COLOURS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown")
#: ``candidates_vs_budget``'s style per method: a line style and a marker of its own (the law gives the colour).
#: ``dp-accounting RDP``, thin and dotted with crosses, is drawn over symsel's ``rdp`` (wide, pale, dashed): for the
#: TNB laws the two are the same theorem and coincide, and the crosses inside the squares show both.
CANDIDATE_METHOD_STYLE: dict[str, dict[str, Any]] = {
    "best": {"linestyle": "-", "marker": "o", "linewidth": 1.8, "markersize": 4},
    "rdp": {"linestyle": "--", "marker": "s", "linewidth": 3.0, "markersize": 7, "alpha": 0.45},
    "dp-accounting RDP": {"linestyle": ":", "marker": "x", "linewidth": 1.4, "markersize": 6},
}


def draw_candidates_vs_budget(rows: Rows, laws: Sequence[str], methods: Sequence[str]) -> Draw:
    """The drawing of :func:`candidates_vs_budget`'s rows: one colour per law, one line style and marker per method
    (:data:`CANDIDATE_METHOD_STYLE`), a legend of the laws and one of the methods beside the axes, and a note
    naming the laws whose curves of two methods coincide (:func:`agreement`), drawn one over the other."""
    from matplotlib.lines import Line2D

    from symsel.apps.plan import MAX_MEAN

    colours = dict(zip(laws, LAW_COLOURS * (1 + len(laws) // len(LAW_COLOURS)), strict=False))
    curves = {(law, method): sorted((r["epsilon"], r["mean"]) for r in rows if r["law"] == law
                                    and r["method"] == method and r["mean"])
              for law in laws for method in methods}

    def draw(ax: Any) -> None:
        ax.figure.set_size_inches(8.8, 4.6)
        for law in laws:
            for method in methods:
                if curves[law, method]:
                    style = {"linestyle": "-", "marker": "o", **CANDIDATE_METHOD_STYLE.get(method, {})}
                    ax.plot(*zip(*curves[law, method], strict=True), color=colours[law], label=f"{law}, {method}",
                            **style)
        ax.axhline(MAX_MEAN, color="0.5", linestyle="-", linewidth=0.8, label="search limit")
        ax.set_yscale("log")
        ax.set_xlabel(r"budget $\varepsilon$ ($\delta = 10^{-5}$)")
        ax.set_ylabel(r"largest certified $E[K]$")
        ax.set_title("Largest certified E[K] per budget, DP-SGD in the CIFAR-10 setting of Koskela et al. Fig. 7",
                     fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        law_handles = [Line2D([], [], color=colours[law], linewidth=2.5, label=law) for law in laws]
        method_handles = [Line2D([], [], color="0.3", label=method,
                                 **{"linestyle": "-", "marker": "o", **CANDIDATE_METHOD_STYLE.get(method, {})})
                          for method in methods]
        method_handles.append(Line2D([], [], color="0.5", linewidth=0.8,
                                     label=r"search limit $10^{10}$ (a point on it: at least this)"))
        first = ax.legend(handles=law_handles, title="law of K (colour)", fontsize=7, title_fontsize=7,
                          loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        ax.add_artist(first)
        ax.legend(handles=method_handles, title="method (line style)", fontsize=7, title_fontsize=7,
                  loc="lower left", bbox_to_anchor=(1.02, 0.0), borderaxespad=0.0)
        notes = coincidence_notes(curves, laws, methods)
        if notes:
            ax.text(0.0, -0.14, "\n".join(notes), transform=ax.transAxes, ha="left", va="top", fontsize=7)

    return draw


def coincidence_notes(curves: dict[tuple[str, str], list[tuple[float, float]]], laws: Sequence[str],
                      methods: Sequence[str], unit: str = "budgets") -> list[str]:
    """One line per pair of methods whose curves coincide (:func:`agreement`) for some laws, naming the laws (with
    "at k of n budgets" where they meet at some points only): the note a figure prints where one curve hides
    another."""
    notes = []
    for i, first in enumerate(methods):
        for second in methods[i + 1:]:
            where = {law: where_agreeing(curves.get((law, first), []), curves.get((law, second), []), unit)
                     for law in laws}
            same = [law if text == "all" else f"{law} {text}" for law, text in where.items() if text]
            if same:
                notes.append(f"{first} and {second} coincide (within {COINCIDE_REL:.0%}) for {', '.join(same)}: "
                             f"{second} drawn over {first}")
    return notes


def _fig7_cell(label: str, template: str, shape: float, eps: float, method: str) -> dict[str, Any]:
    """One point of Figure 7: the largest certified mean for one law, budget and method (a joblib task)."""
    from symsel.apps.plan import max_mean
    from symsel.spec import parse_profile

    if method == "dp-accounting RDP":
        mean = _dp_accounting_mean(eps, shape)
    else:
        base = parse_profile(f"dpsgd(q={FIG7['q']!r}, sigma={FIG7['sigma']}, steps={FIG7['steps']})")
        mean = max_mean(template, base, eps, FIG7["delta"], method).get("mean")
    return {"law": label, "epsilon": eps, "method": method, "mean": mean}


def _dp_accounting_mean(eps: float, shape: float, hi: float | None = None) -> float | None:
    """The peer: the largest mean in ``[1, hi]`` whose ε by dp-accounting's RDP ``RepeatAndSelectDpEvent`` is within
    ``eps`` (``None`` if mean 1 is not), to 1e-12 in log mean: Brent's method on that ε, which grows continuously
    with the mean (:func:`symsel.numeric.last_feasible`, 8-15 accountants where a bisection built 46), each by
    :func:`_repeat_and_select_epsilon`."""
    from symsel.apps.plan import MAX_MEAN
    from symsel.numeric import last_feasible

    hi = MAX_MEAN if hi is None else hi
    run = _fig7_run_rdp()

    def over_budget(minus_log_mean: float) -> float:  # non-increasing in -log(mean): feasible (<= 0) towards mean 1
        return _repeat_and_select_epsilon(run, math.exp(-minus_log_mean), shape, FIG7["delta"]) - eps

    if over_budget(0.0) > 0:
        return None
    if over_budget(-math.log(hi)) <= 0:
        return hi
    return math.exp(-last_feasible(over_budget, -math.log(hi), 0.0, xtol=1e-12, rtol=0.0))


@functools.lru_cache(maxsize=1)
def _fig7_run_rdp() -> tuple[Any, Any]:
    """One Figure 7 training run as a dp-accounting event, and an RDP accountant holding it (its RDP at
    dp-accounting's orders)."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    run = dp_event.SelfComposedDpEvent(
        dp_event.PoissonSampledDpEvent(FIG7["q"], dp_event.GaussianDpEvent(FIG7["sigma"])), FIG7["steps"])
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(run)
    return run, accountant


def _repeat_and_select_epsilon(run: tuple[Any, Any], mean: float, shape: float, delta: float) -> float:
    """``RdpAccountant().compose(RepeatAndSelectDpEvent(event, mean, shape)).get_epsilon(delta)`` (dp-accounting's
    public API: the run's RDP is computed again for each mean). ``run`` is ``(event, an accountant holding it)``."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    event, _ = run
    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(event, mean, shape))
    return accountant.get_epsilon(delta)


# --------------------------------------------------------------------------- ε against E[K] (sweep)


def epsilon_vs_mean(means: Sequence[float], methods: Sequence[str], folder: Path,
                    laws: Sequence[str] = ("geometric", "poisson"), lower: bool = True) -> tuple[Rows, Draw]:
    """ε(δ = 1e-6) against E[K] on the Gaussian σ = 4 base; the cells run through the sweep engine (resumable:
    the cell table is ``folder/epsilon_vs_mean-cells.csv``)."""
    from symsel.apps.sweep import Cell, run_sweep

    cells = [Cell(f"{law}(mean={m!r})", GAUSSIAN, "delta", DELTA, method)
             for law in laws for m in means for method in methods]
    table = folder / "epsilon_vs_mean-cells.csv"
    run_sweep(cells, table, jobs=JOBS, keep_other_cells=True)  # the file is shared by the full and quick reports
    with table.open(newline="") as handle:
        done = {(r["dist"], r["method"]): r for r in csv.DictReader(handle)}
    rows: Rows = []
    for law in laws:
        for m in means:
            spec = f"{law}(mean={m!r})"
            row: dict[str, Any] = {"law": law, "mean": m}
            for method in methods:
                value = done.get((spec, method), {}).get("epsilon")
                row[method] = float(value) if value not in (None, "") else None
            if lower:
                row["lower"] = _lower(spec)
            rows.append(row)

    return rows, draw_epsilon_vs_mean(rows, laws, (*methods, *(["lower"] if lower else [])))


#: ``epsilon_vs_mean``'s style per method (colour, line style, marker, width), drawn in this order: the wide curves
#: first, ``best`` (thin, dashed, over them) last but the lower bound's crosses, so that ``best`` shows on the curve
#: it takes.
EPSILON_METHOD_STYLE: dict[str, dict[str, Any]] = {
    "rdp": {"color": "tab:red", "linestyle": ":", "marker": "v", "linewidth": 1.6},
    "paper": {"color": "tab:orange", "linestyle": "-", "marker": "s", "linewidth": 3.0, "alpha": 0.5},
    "fdp": {"color": "tab:green", "linestyle": "-.", "marker": "^", "linewidth": 1.4},
    "envelope": {"color": "tab:blue", "linestyle": "-", "marker": "o", "linewidth": 3.0, "alpha": 0.5},
    "best": {"color": "black", "linestyle": "--", "marker": ".", "linewidth": 1.0},
    "lower": {"color": "tab:purple", "linestyle": "none", "marker": "x", "markersize": 8},
}


def draw_epsilon_vs_mean(rows: Rows, laws: Sequence[str], keys: Sequence[str]) -> Draw:
    """The drawing of :func:`epsilon_vs_mean`'s rows: one panel per law, one colour, line style and marker per
    method (:data:`EPSILON_METHOD_STYLE`), a legend of at most the methods in each panel; a curve that coincides with
    one drawn before it (:func:`agreement`) is drawn over it and says so in the legend ("best (≈ envelope)", or
    "best (≈ envelope at 4 of 10 means)" where they meet at some means only)."""
    order = sorted(keys, key=lambda k: list(EPSILON_METHOD_STYLE).index(k) if k in EPSILON_METHOD_STYLE else -1)

    def draw(ax: Any) -> None:
        for i, (law, panel) in enumerate(zip(laws, panels(ax, len(laws)), strict=True)):
            drawn: dict[str, list[tuple[float, float]]] = {}
            for key in order:
                pts = [(r["mean"], r[key]) for r in rows if r["law"] == law and r.get(key) is not None
                       and math.isfinite(r[key])]
                if not pts:
                    continue
                label = "certified lower bound" if key == "lower" else key
                where = {name: where_agreeing(pts, earlier, "means") for name, earlier in drawn.items()}
                same = [name if text == "all" else f"{name} {text}" for name, text in where.items()
                        if text and key != "lower"]
                if same:
                    label += f" (≈ {', '.join(same)})"
                style = {"markersize": 4, **EPSILON_METHOD_STYLE.get(key, {"linestyle": "-", "marker": "o"})}
                panel.plot(*zip(*pts, strict=True), label=label, **style)
                drawn[key] = pts
            _epsilon_against_mean_axes(panel, f"{law} K, best of $K$ runs of a Gaussian ($\\sigma = 4$)", 7, ncol=1)
            if i:
                panel.set_ylabel("")

    return draw


def _epsilon_against_mean_axes(ax: Any, title: str, legend_size: int, ncol: int = 2) -> None:
    """Log scales on both axes: ε spans 1 to 100 across the methods, and a linear axis would flatten the
    methods that matter (within a few percent of the lower bound) into one line."""
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # plain numbers, at 1, 2 and 5 times a power of ten only (no crowded labels)
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(FuncFormatter(_one_two_five))
    ax.set_xlabel(r"$E[K]$")
    ax.set_ylabel(r"$\varepsilon$ at $\delta = 10^{-6}$")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=legend_size, ncol=ncol)
    ax.grid(True, which="both", alpha=0.3)


def _one_two_five(value: float, _: Any) -> str:
    """A log axis' minor tick label at 2 and 5 times a power of ten (plain numbers), none elsewhere."""
    if value <= 0:
        return ""
    leading = value / 10 ** math.floor(math.log10(value) + 1e-12)
    return f"{value:g}" if min(abs(leading - 2), abs(leading - 5)) < 1e-9 else ""


def _lower(spec: str) -> float:
    from symsel.evidence.lower import lower_bound
    from symsel.spec import parse_distribution, parse_profile

    # the monotone order's value is not shown: its exact evaluation (a third of the time) is skipped
    found = lower_bound(parse_profile(GAUSSIAN), parse_distribution(spec), DELTA, budget=20, monotone=False)
    return float(found.epsilon)


# --------------------------------------------------------------------------- profiles


def profiles(methods: Sequence[str], law: str = "geometric(mean=30)") -> tuple[Rows, Draw]:
    """δ(ε) of the selection by every method, and of one run of the base."""
    from symsel.bounds import bound
    from symsel.errors import NotApplicableError
    from symsel.spec import parse_distribution, parse_profile

    dist, base = parse_distribution(law), parse_profile(GAUSSIAN)
    eps = np.linspace(0.0, 4.0, 81)
    curves = {"base (one run)": np.asarray(base.delta(eps))}
    for method in methods:
        try:
            curves[method] = np.asarray(bound(dist, base, method).delta(eps))
        except NotApplicableError:
            continue
    rows = [{"epsilon": float(e), **{name: float(v[i]) for name, v in curves.items()}} for i, e in enumerate(eps)]

    def draw(ax: Any) -> None:
        for name, values in curves.items():
            style = _style(ax, name)
            style.update(marker=None, label=name)
            ax.plot(eps, np.maximum(values, 1e-30), **style)
        ax.set_ylim(1e-12, 1.5)
        decorate(ax, r"$\varepsilon$", r"$\delta(\varepsilon)$",
                 f"Selection's privacy profile: {law}, Gaussian $\\sigma = 4$", yscale="log", legend_size=7)

    return rows, draw


# --------------------------------------------------------------------------- laws at equal mean


def laws_at_equal_mean(means: Sequence[float], methods: Sequence[str] = ("envelope", "rdp")) -> tuple[Rows, Draw]:
    """ε(δ = 1e-6) of TNB laws (η = −0.5, 0, 0.5, 1) and Poisson against their common mean."""
    from symsel.bounds import bound
    from symsel.spec import parse_distribution, parse_profile

    base = parse_profile(GAUSSIAN)
    families = {"tnb eta=-0.5": "tnb(eta=-0.5, mean={m})", "logarithmic (eta=0)": "logarithmic(mean={m})",
                "tnb eta=0.5": "tnb(eta=0.5, mean={m})", "geometric (eta=1)": "geometric(mean={m})",
                "poisson": "poisson(mean={m})"}
    rows: Rows = []
    for label, template in families.items():
        for m in means:
            law = parse_distribution(template.format(m=m))
            row: dict[str, Any] = {"law": label, "mean": m}
            for method in methods:
                row[method] = float(bound(law, base, method).epsilon(DELTA))
            rows.append(row)

    def draw(ax: Any) -> None:
        colours = dict(zip(families, ["tab:brown", "tab:olive", "tab:cyan", "tab:blue", "tab:red"], strict=True))
        for label in families:
            for method, line in zip(methods, ("-", ":"), strict=False):
                pts = [(r["mean"], r[method]) for r in rows if r["law"] == label]
                ax.plot(*zip(*pts, strict=True), color=colours[label], linestyle=line, marker="o", markersize=3,
                        label=f"{label}, {method}")
        _epsilon_against_mean_axes(ax, r"Laws of $K$ at equal mean, Gaussian $\sigma = 4$", 6)

    return rows, draw
