"""Every curve of ``epsilon_vs_mean`` and ``candidates_vs_budget`` can be told apart, read from the matplotlib figure
objects (Agg backend), not from pixels: at most 6 entries per legend, a distinct (colour, line style) for each curve
of an axes, and a note wherever two curves coincide. The quick report's own numbers (its CSV files) and a synthetic
full-size grid (the full report's four laws and seven budgets) are drawn."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_hex
from matplotlib.legend import Legend

from symsel.report.figures import (
    draw_candidates_vs_budget,
    draw_epsilon_vs_mean,
    draw_figure,
)

METHODS = ("paper", "fdp", "envelope", "rdp", "best", "lower")
FIG7_METHODS = ("best", "rdp", "dp-accounting RDP")


@pytest.fixture
def figures() -> Iterator[list[Any]]:
    """The figures a test draws, closed after it."""
    drawn: list[Any] = []
    yield drawn
    for fig in drawn:
        plt.close(fig)


def _number(value: str) -> float | None:
    return None if value == "" else float(value)


def _csv(path: Path, text: tuple[str, ...]) -> list[dict[str, Any]]:
    """The rows of a report CSV, numbers as floats (empty cells None), the ``text`` columns as they are."""
    with path.open(newline="") as handle:
        return [{k: v if k in text else _number(v) for k, v in row.items()} for row in csv.DictReader(handle)]


def _legends(fig: Any) -> list[Legend]:
    """Every legend of the figure: the figure's own and each axes' (a second legend added as an artist included)."""
    found = list(fig.legends)
    for ax in fig.axes:
        found += [child for child in ax.get_children() if isinstance(child, Legend)]
    return found


def _style(line: Any) -> tuple[str, str]:
    return to_hex(line.get_color()), line.get_linestyle()


def _assert_told_apart(fig: Any) -> None:
    """At most 6 entries in every legend, and no two curves of one axes with the same colour and line style."""
    assert _legends(fig)
    for legend in _legends(fig):
        assert 1 <= len(legend.get_texts()) <= 6, [t.get_text() for t in legend.get_texts()]
    for ax in fig.axes:
        styles = [_style(line) for line in ax.get_lines()]
        assert len(styles) == len(set(styles)), styles


def _labels(ax: Any) -> list[str]:
    return [text.get_text() for legend in _legends(ax.figure) if legend.axes is ax for text in legend.get_texts()]


def test_epsilon_vs_mean_one_panel_per_law_with_the_coinciding_curves_named(report, figures) -> None:
    """The quick report's numbers: one panel per law, each curve in its legend (6 entries), and the curves that lie
    on another say so: ``best`` on ``envelope`` for geometric K (where ``best`` takes ``envelope`` at every mean),
    ``fdp`` on ``paper`` for Poisson K (both ratio sups reach the same value), ``best`` on ``envelope`` for Poisson K
    at means 2 and 10 but not at 50 (where it takes ``interval``); ``envelope`` meets ``rdp`` at one mean only (they
    cross), which is not a curve hidden and is not noted."""
    rows = _csv(report[1] / "epsilon_vs_mean.csv", ("law",))
    laws = ("geometric", "poisson")
    fig = draw_figure(draw_epsilon_vs_mean(rows, laws, METHODS))
    figures.append(fig)
    _assert_told_apart(fig)
    assert len(fig.axes) == len(laws)
    for ax, law in zip(fig.axes, laws, strict=True):
        assert ax.get_title().startswith(law)
        assert len(ax.get_lines()) == len(_labels(ax)) == len(METHODS)
    geometric, poisson = (_labels(ax) for ax in fig.axes)
    assert geometric == ["rdp", "paper", "fdp", "envelope", "best (≈ envelope)", "certified lower bound"]
    assert poisson == ["rdp", "paper", "fdp (≈ paper)", "envelope", "best (≈ envelope at 2 of 3 means)",
                       "certified lower bound"]
    by = {(r["law"], r["mean"]): r for r in rows}
    assert by[("poisson", 50)]["best"] < 0.99 * by[("poisson", 50)]["envelope"]  # where best leaves envelope
    assert by[("poisson", 50)]["envelope"] == pytest.approx(by[("poisson", 50)]["rdp"], rel=0.01)  # the crossing


def test_candidates_vs_budget_colour_per_law_style_per_method_and_the_coincidence_noted(report, figures) -> None:
    """The quick report's numbers (geometric and Poisson K at ε = 2.5): a legend of laws and one of methods, each
    curve its own (colour, line style), and a note that symsel's ``rdp`` and dp-accounting's RDP coincide for the
    geometric law (the same theorem; within 0.02 %) but not for Poisson K (dp-accounting converts the base's RDP
    curve for δ̂, symsel reads its tight profile)."""
    rows = _csv(report[1] / "candidates_vs_budget.csv", ("law", "method"))
    fig = draw_figure(draw_candidates_vs_budget(rows, ["geometric", "poisson"], FIG7_METHODS))
    figures.append(fig)
    _assert_told_apart(fig)
    (ax,) = fig.axes
    assert len(_legends(fig)) == 2
    assert len(ax.get_lines()) == 2 * len(FIG7_METHODS) + 1  # and the search limit
    notes = [text.get_text() for text in ax.texts]
    assert notes == ["rdp and dp-accounting RDP coincide (within 1%) for geometric: dp-accounting RDP drawn over rdp"]


def test_candidates_vs_budget_at_the_full_report_size(figures) -> None:
    """The full report's four laws and seven budgets (synthetic numbers): 12 curves and the search limit, all told
    apart; the note names the laws whose two RDP curves agree within 1 % at every budget, and the one where they
    agree at all budgets but one with its count, not the one where they meet at a single budget (they cross)."""
    laws = ["geometric", "logarithmic", "tnb(eta=0.5)", "poisson"]
    budgets = (1.0, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0)
    rows = []
    for i, law in enumerate(laws):
        for eps in budgets:
            rdp = 10 ** (i + eps)
            peer = rdp * (1.004 if law != "poisson" else 0.6)
            if law == "logarithmic" and eps == 4.0:
                peer = rdp * 1.02  # apart at one budget
            if law == "poisson" and eps == 2.5:
                peer = rdp  # a crossing
            rows += [{"law": law, "epsilon": eps, "method": "best", "mean": 50 * rdp},
                     {"law": law, "epsilon": eps, "method": "rdp", "mean": rdp},
                     {"law": law, "epsilon": eps, "method": "dp-accounting RDP", "mean": peer}]
    fig = draw_figure(draw_candidates_vs_budget(rows, laws, FIG7_METHODS))
    figures.append(fig)
    _assert_told_apart(fig)
    (ax,) = fig.axes
    assert len(ax.get_lines()) == len(laws) * len(FIG7_METHODS) + 1
    assert sorted(len(legend.get_texts()) for legend in _legends(fig)) == [4, 4]
    assert [text.get_text() for text in ax.texts] == [
        "rdp and dp-accounting RDP coincide (within 1%) for geometric, logarithmic at 6 of 7 budgets, tnb(eta=0.5): "
        "dp-accounting RDP drawn over rdp"]


def _line_key(line: Any) -> tuple[str, str, str]:
    return to_hex(line.get_color()), line.get_linestyle(), str(line.get_marker())


def _assert_no_two_lines_alike_or_on_top_of_each_other(fig: Any) -> None:
    """No two curves of one axes share colour, line style and marker, nor lie within 1 % of each other at every
    point (one would hide the other)."""
    from symsel.report.figures import agreement

    for ax in fig.axes:
        lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 1]
        keys = [_line_key(line) for line in lines]
        assert len(keys) == len(set(keys)), keys
        for i, first in enumerate(lines):
            for second in lines[i + 1:]:
                flags = agreement(list(zip(first.get_xdata(), first.get_ydata(), strict=True)),
                                  list(zip(second.get_xdata(), second.get_ydata(), strict=True)))
                assert not (flags and all(flags)), (first.get_label(), second.get_label())


def test_geometric_profile_figure_tells_the_bounds_and_the_laws_apart(figures) -> None:
    """Koskela et al. Fig. 2: the colour is the law, the line the bound; the bounds' legend samples differ in their
    markers (a dash-dot and a solid sample looked alike at legend length) and each legend is short."""
    from symsel.report.figures_extra import geometric_delta_vs_epsilon

    _, draw = geometric_delta_vs_epsilon([30, 300], [0.5, 1.5, 2.5, 3.5], lower_at=())
    fig = draw_figure(draw)
    figures.append(fig)
    legends = _legends(fig)
    assert len(legends) == 2 and all(1 <= len(legend.get_texts()) <= 6 for legend in legends)
    bounds = next(legend for legend in legends if "bound" in legend.get_title().get_text())
    handles = bounds.legend_handles
    assert len({str(h.get_marker()) for h in handles}) == len(handles), [h.get_marker() for h in handles]
    assert len({h.get_linestyle() for h in handles}) == len(handles)
    _assert_no_two_lines_alike_or_on_top_of_each_other(fig)


def test_sigma_tuning_figure_shows_each_candidate_apart(figures) -> None:
    """Koskela et al. Fig. 8: the candidates' bounds lie within 0.02 of each other and of Cor 6.2; drawn in their own
    panels (minus their mean) each σ is a curve of its own, none hiding another (σ = 3 was invisible)."""
    from symsel.report.figures_tuning import draw_sigma_tuning

    table = {(10, 2.0): (4013, 2.7254, 2.1695), (10, 3.0): (9935, 2.7357, 2.1805), (10, 4.0): (18230, 2.7388, 2.1839),
             (100, 2.0): (3996, 3.5194, 2.8127), (100, 3.0): (9920, 3.5339, 2.8371),
             (100, 4.0): (18214, 3.5380, 2.8408)}
    shared = {10: (2.7424, 2.3389), 100: (3.5429, 3.2730)}
    rows = [{"mean": m, "sigma": s, "steps": t, "cor_6_2": shared[m][0], "tuning_best": shared[m][1],
             "candidate_paper": paper, "candidate_best": best} for (m, s), (t, paper, best) in table.items()]
    fig = draw_figure(draw_sigma_tuning(rows, (2.0, 3.0, 4.0), ("paper", "best"), 0.01, 1.5, 1e-6))
    figures.append(fig)
    assert len(fig.axes) == 3
    for ax in fig.axes[1:]:
        assert len([line for line in ax.get_lines() if not line.get_label().startswith("_")]) == 3  # one per σ
    assert all(1 <= len(legend.get_texts()) <= 6 for legend in _legends(fig))
    _assert_no_two_lines_alike_or_on_top_of_each_other(fig)
