"""Rich display in Jupyter: what a law of ``K``, a derivation and a bound look like in a notebook.

The classes keep one-line methods that delegate here:

* :class:`~symsel.distributions.Distribution` -- ``_repr_latex_`` (:func:`distribution_latex`): the PGF
  ``φ(z)`` as math, ``E[K]``, ``P[K = 0]``, the support and whether it is bounded, the spec; ``__repr__``
  (:func:`distribution_repr`);
* :class:`~symsel.derive.Derivation` -- ``_repr_markdown_`` (:func:`derivation_markdown`): the derivation's
  steps as Markdown with ``$…$`` math;
* :class:`~symsel.bounds.SelectionBound` -- ``_repr_html_`` (:func:`bound_html`): ``ε`` at the standard ``δ`` of
  :data:`STANDARD_DELTAS`, the method, the theorem, a one-line certificate summary, and the attack risk that those
  three ``(ε, δ)`` points imply (:func:`risk_table_html`: the TPR and ``β(α)`` at :data:`STANDARD_FPRS`, the
  advantage); ``plot`` (:func:`plot_bound`): ``ε`` against ``δ`` on a log ``δ`` axis, with the certified lower bound
  when asked for (``lower=True``, where :func:`lower_bound_cost` finds it cheap), and ``plot_tradeoff``
  (:func:`plot_tradeoff`): ``β(α)``, each returning the matplotlib ``Axes``.

Numbers are evaluated when a display is asked for, never when the object is built; a display never searches for a
lower bound (minutes on a tiny noise or a law with a million trials) unless asked to. A displayed upper bound is
rounded up and a displayed lower bound down (:func:`format_upper`, :func:`format_lower`), so a rounded number
is still a bound. This module implements the display protocol of :mod:`symsel.rendering` (the displayed classes
reach it only through that protocol) and sits above everything it displays (docs/architecture.md).
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import sympy

from symsel.certified import Lower, Upper
from symsel.errors import NotApplicableError, ParameterError
from symsel.profiles.tradeoff import advantage_of_points, tradeoff_of_points

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from symsel.bounds.api import SelectionBound
    from symsel.derive.record import Derivation
    from symsel.distributions.core import Distribution
    from symsel.profiles import Profile

__all__ = [
    "DIGITS",
    "DISPLAY_RTOL",
    "LOWER_BOUND_BUDGET",
    "LOWER_BOUND_HINT",
    "LOWER_BOUND_MAX_ATOMS",
    "LOWER_BOUND_MAX_OPS",
    "LOWER_BOUND_SLICES",
    "PLOT_DELTAS",
    "PLOT_FPRS",
    "STANDARD_DELTAS",
    "STANDARD_FPRS",
    "bound_html",
    "certificate_summary",
    "derivation_markdown",
    "distribution_latex",
    "distribution_repr",
    "format_lower",
    "format_upper",
    "lower_bound_cost",
    "plot_bound",
    "plot_tradeoff",
    "risk_table_html",
]

#: the δ of a bound's HTML table (the ones ``best``'s certificate names its winners at).
STANDARD_DELTAS = (1e-3, 1e-6, 1e-10)
#: the false-positive rates of a bound's attack-risk table (one :meth:`~symsel.profiles.Profile.tradeoff_points` call:
#: the scan's sixteen evaluations of δ and 15-40 more per rate).
STANDARD_FPRS = (1e-3, 1e-2, 1e-1)
#: the relative tolerance of a displayed trade-off value (docs/tradeoff.md): a tenth of the digits shown, in fewer
#: evaluations than the default.
DISPLAY_RTOL = 1e-5
#: the false-positive rates that :func:`plot_tradeoff` evaluates by default.
PLOT_FPRS = (1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0)
#: the δ that :func:`plot_bound` evaluates by default (one ``ε(δ)`` each: a DP-SGD interval bound costs 1-4 s).
PLOT_DELTAS = (1e-12, 1e-10, 1e-8, 1e-6, 1e-4, 1e-2)
#: significant digits of a displayed ``ε``.
DIGITS = 6
#: the displayed lower bound is :func:`symsel.lower_bound` with this search budget and this many slices (the
#: defaults are 200 and 1000): about 0.2-1 s per ``δ`` on the bases :func:`lower_bound_cost` admits.
LOWER_BOUND_BUDGET = 40
LOWER_BOUND_SLICES = 200
#: a lower bound is displayed only for laws whose ``φ'`` has at most this many SymPy operations (each search step
#: evaluates it at hundreds of points) ...
LOWER_BOUND_MAX_OPS = 64
#: ... on bases whose dominating pair is a Gaussian or Laplace pair, or a finite pair of at most this many atoms.
LOWER_BOUND_MAX_ATOMS = 16
#: a PGF whose LaTeX is longer than this is shown abbreviated (a polynomial: its first and last terms).
LATEX_MAX_CHARS = 1500


# ------------------------------------------------------------------------------------ numbers
def format_upper(value: float) -> str:
    """An upper bound on ``ε`` for display: :data:`DIGITS` significant digits, rounded up (``inf`` as ``inf``;
    :func:`symsel.rounding.format_upper`)."""
    from symsel.rounding import format_upper as upper

    return upper(value, DIGITS)


def format_lower(value: float) -> str:
    """A lower bound on ``ε`` for display: :data:`DIGITS` significant digits, rounded down
    (:func:`symsel.rounding.format_lower`)."""
    from symsel.rounding import format_lower as lower

    return lower(value, DIGITS)


def format_certified(value: Upper | Lower) -> str:
    """A certified number rounded to its safe side, read from its type: an :class:`~symsel.certified.Upper` up, a
    :class:`~symsel.certified.Lower` down; a plain float, whose side is unknown, raises ``TypeError``."""
    if isinstance(value, Upper):
        return format_upper(value)
    if isinstance(value, Lower):
        return format_lower(value)
    raise TypeError(f"format_certified: {value!r} is a {type(value).__name__}, not a symsel.certified Upper or Lower")


# ------------------------------------------------------------------------------------ laws of K
def _z() -> sympy.Symbol:
    from symsel.distributions import z

    return z


def _abbreviated_latex(expr: sympy.Expr) -> str:
    """LaTeX of ``expr``; a long polynomial shows its first three and last two terms and its number of terms, any
    other long expression its number of operations (the full form is ``dist.pgf``)."""
    text = sympy.latex(expr)
    if len(text) <= LATEX_MAX_CHARS:
        return text
    z = _z()
    if expr.is_polynomial(z) and not expr.free_symbols - {z}:
        terms = sympy.Poly(expr, z).terms()
        for coefficient in (lambda c: c, lambda c: sympy.Float(c, 6)):  # exact, else 6 digits (huge rationals)
            shown = [sympy.latex(coefficient(c) * z ** e[0]) for e, c in terms[:3]] + [r"\cdots"] + [
                sympy.latex(coefficient(c) * z ** e[0]) for e, c in terms[-2:]]
            text = " + ".join(shown) + rf" \quad \text{{({len(terms)} terms)}}"
            if len(text) <= LATEX_MAX_CHARS:
                return text
    return rf"\text{{(an expression of {sympy.count_ops(expr)} operations: see dist.pgf)}}"


def _support(dist: Distribution) -> tuple[str, str]:
    """``(set, words)``: the support as LaTeX (a set containing it) and whether it is bounded."""
    lo = _lowest(dist)
    top: int | None = None if dist.support_max is None else int(dist.support_max)
    pgf = dist.pgf
    if top is None and pgf.is_polynomial(_z()):
        top = _degree_bound(pgf)
    if top is None:
        return rf"\lbrace {lo}, {lo + 1}, {lo + 2}, \dots \rbrace", "unbounded"
    if top == lo:
        return rf"\lbrace {lo} \rbrace", "bounded: a fixed number of runs"
    if top == lo + 1:
        return rf"\lbrace {lo}, {top} \rbrace", "bounded"
    return rf"\lbrace {lo}, \dots, {top} \rbrace", "bounded"


def _lowest(dist: Distribution, orders: int = 4) -> int:
    """The smallest ``k`` with ``P[K = k] > 0`` when the law's ``support_min`` does not say (a user PGF, where it is
    0): ``φ(0)``, ``φ'(0)``, … are tried exactly in turn, up to ``orders`` of them, for PGFs of at most 200 SymPy
    operations. Every order passed was proved zero, so ``K`` is at least the value returned."""
    lo = int(dist.support_min)
    if lo > 0 or dist.p0 > 0:
        return lo
    if dist.pgf.is_polynomial(_z()):
        return _degree_bound(dist.pgf, lowest=True)
    if sympy.count_ops(dist.pgf) > 200:
        return lo
    expr = dist.pgf
    for order in range(orders):
        if not sympy.simplify(expr.subs(_z(), 0)).is_zero:
            return order
        expr = sympy.diff(expr, _z())
    return orders


def _degree_bound(expr: sympy.Expr, lowest: bool = False) -> int:
    """A bound on the degree in ``z`` of a polynomial expression, read off its tree without expanding it
    (``(1 + z)**1000000`` costs nothing): an upper bound on the highest degree, or with ``lowest`` a lower bound on
    the lowest one (sums take the largest, or smallest, degree of their terms; products add; powers multiply)."""
    if expr.is_Add:
        degrees = [_degree_bound(a, lowest) for a in expr.args]
        return min(degrees) if lowest else max(degrees)
    if expr.is_Mul:
        return sum(_degree_bound(a, lowest) for a in expr.args)
    if expr.is_Pow and expr.exp.is_Integer and expr.exp >= 0:
        return _degree_bound(expr.base, lowest) * int(expr.exp)
    return 1 if expr == _z() else 0


def _mean_latex(dist: Distribution) -> str:
    exact = dist.mean_symbolic.subs(dist.values)
    if isinstance(exact, sympy.Rational) and len(sympy.latex(exact)) <= 40:
        return rf"\mathbb{{E}}[K] = {sympy.latex(exact)}"
    return rf"\mathbb{{E}}[K] \approx {format_upper(dist.mean)}"


def _text(value: str) -> str:
    """Text outside the math of a ``text/latex`` output: ``$`` (which would open math) escaped."""
    return value.replace("$", r"\$")


def distribution_latex(dist: Distribution) -> str:
    """The ``text/latex`` display of a law of ``K``: its spec, ``φ(z)``, ``E[K]``, ``P[K = 0]`` and the support
    (a set containing it, and whether it is bounded)."""
    support, bounded = _support(dist)
    p0 = dist.p0
    return (rf"$\displaystyle \varphi(z) = \mathbb{{E}}\left[z^K\right] = {_abbreviated_latex(dist.pgf)}$"
            rf" for $K \sim$ {_text(dist.spec)}:"
            rf" $\quad {_mean_latex(dist)}, \quad P[K = 0] = {format_upper(p0) if p0 else '0'},"
            rf" \quad K \in {support}$ ({bounded})")


def distribution_repr(dist: Distribution) -> str:
    """``Distribution(<spec>)``; a law built from an expression without a label (``symsel.from_pgf(expr,
    params)``) shows the expression too, which its spec alone would not name."""
    spec = dist.spec
    if dist.label is None and dist.name in ("pgf", "pmf"):
        expr = sympy.sstr(dist.pgf_symbolic if dist.name == "pgf" else dist.pmf_symbolic or dist.pgf_symbolic)
        if len(expr) > 200:
            expr = expr[:180] + " ... " + expr[-15:]
        args = ", ".join([f"expr={expr!r}", *(f"{n}={v!r}" for n, v in dist.parameters.items())])
        spec = f"{dist.name}({args})"
    return f"Distribution({spec})"


# ------------------------------------------------------------------------------------ derivations
_BRACES = {r"\{": r"\lbrace ", r"\}": r"\rbrace "}


#: a closed form of a derivation's display whose LaTeX is longer than this (about two lines) is shown by its
#: structure (:func:`structure_latex`); the record keeps it in full.
DERIVATION_LATEX_MAX = 240


def structure_latex(expr: sympy.Basic, where: str) -> str:
    """A long closed form in a line: its outermost operation and how many parts it has, its size, and where the
    full form is (``where``, the record's attribute)."""
    parts = len(expr.args)
    if isinstance(expr, sympy.Max | sympy.Min):
        shape = r"\max\{\ldots\}" if isinstance(expr, sympy.Max) else r"\min\{\ldots\}"
        what = f"{'largest' if isinstance(expr, sympy.Max) else 'smallest'} of {parts} pieces"
    elif isinstance(expr, sympy.Piecewise):
        shape, what = r"\ldots", f"piecewise, {parts} cases"
    elif isinstance(expr, sympy.Add):
        shape, what = r"\ldots + \ldots", f"a sum of {parts} terms"
    elif isinstance(expr, sympy.Mul):
        shape, what = r"\ldots \cdot \ldots", f"a product of {parts} factors"
    else:
        shape, what = r"\ldots", f"{type(expr).__name__}"
    return rf"{shape} \quad \text{{({what}, {sympy.count_ops(expr)} operations; in full: {where})}}"


def _shortened(value: Any, where: str) -> Any:
    """``value`` with every closed form (an ``Expression``: a LaTeX ``str`` carrying ``expr``) longer than
    :data:`DERIVATION_LATEX_MAX` replaced by its :func:`structure_latex` (same type, same ``expr``)."""
    if isinstance(value, str) and hasattr(value, "expr") and len(value) > DERIVATION_LATEX_MAX:
        return type(value)(value.expr, structure_latex(value.expr, where))
    if isinstance(value, dict):
        return {k: _shortened(v, f"{where}['{k}']") for k, v in value.items()}
    return value


def derivation_markdown(derivation: Derivation) -> str:
    """The ``text/markdown`` display of a derivation: its report (:meth:`~symsel.derive.Derivation.markdown`,
    ``$…$`` math from ``sympy.latex``; a closed form longer than about two lines shown by its structure,
    :func:`structure_latex`) with headings two levels down (a notebook's own headings stay above it) and set braces
    written ``\\lbrace``/``\\rbrace`` (GitHub's and some notebooks' Markdown drop the backslash of ``\\{``)."""
    import dataclasses

    shown = derivation
    if dataclasses.is_dataclass(derivation) and not isinstance(derivation, type):
        shown = dataclasses.replace(derivation, **{f.name: _shortened(getattr(derivation, f.name), f".{f.name}")
                                                   for f in dataclasses.fields(derivation) if f.init})
    text = re.sub(r"^(#+) ", lambda m: "#" * min(len(m.group(1)) + 2, 6) + " ", shown.markdown(),
                  flags=re.MULTILINE)
    return re.sub(r"\\[{}]", lambda m: _BRACES[m.group(0)], text)


# ------------------------------------------------------------------------------------ bounds
def certificate_summary(certificate: Mapping[str, Any], limit: int = 6) -> str:
    """One line: ``best``'s winners at each standard ``δ`` and how many component entries it carries, or the first
    ``limit`` entries of any other certificate (``"closed form"`` when empty)."""
    from symsel.bounds.api import BestCertificate

    if isinstance(certificate, BestCertificate):
        wins = [f"{key.removeprefix('wins_at_delta_')}: {value}" for key, value in certificate.items()
                if key.startswith("wins_at_delta_")]
        others = len(certificate) - len(wins)
        return f"smallest at delta {', '.join(wins)}; {others} entries from the components' certificates"
    if not certificate:
        return "closed form (no numerical step to certify)"
    items = [f"{key}={_short(value)}" for key, value in list(certificate.items())[:limit]]
    more = len(certificate) - limit
    return ", ".join(items) + (f", … ({more} more)" if more > 0 else "")


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "…"


def certificate_repr(name: str, items: Mapping[str, Any]) -> str:
    """``name({...})``: a certificate's repr, its entries as a dict (no object address)."""
    return f"{name}({dict(items)!r})"


def lower_bound_cost(dist: Distribution, base: Profile) -> str | None:
    """``None`` when a certified lower bound is cheap enough to display (about a second per ``δ`` at most), else
    why not. Decided by the kind and size of the base's dominating pair and the size of ``φ'`` alone (never by a
    clock): a Gaussian or Laplace pair, or a finite pair of at most :data:`LOWER_BOUND_MAX_ATOMS` atoms, and a
    ``φ'`` of at most :data:`LOWER_BOUND_MAX_OPS` operations."""
    from symsel.pairs import FinitePair, LocationPair

    pair = base.dominating_pair()
    if pair is None:
        return f"not computed here: {base.spec} has no dominating pair to search cheaply (call symsel.lower_bound)"
    if isinstance(pair, FinitePair) and pair.n > LOWER_BOUND_MAX_ATOMS:
        return (f"not computed here: the base's pair has {pair.n} atoms (more than {LOWER_BOUND_MAX_ATOMS}; "
                "call symsel.lower_bound)")
    if not isinstance(pair, FinitePair | LocationPair):
        return "not computed here (call symsel.lower_bound)"
    ops = sympy.count_ops(dist.dpgf)
    if ops > LOWER_BOUND_MAX_OPS:
        return (f"not computed here: phi' has {ops} operations (more than {LOWER_BOUND_MAX_OPS}; "
                "call symsel.lower_bound)")
    return None


def _lower(bound: SelectionBound, delta: float) -> float:
    from symsel.evidence.lower import lower_bound

    return lower_bound(bound.base, bound.dist, delta, budget=LOWER_BOUND_BUDGET, seed=0,
                       slices=LOWER_BOUND_SLICES).epsilon


#: what a bound's display says about the lower bound (a display computes none).
LOWER_BOUND_HINT = ("not computed in a display (a search can take minutes): call symsel.lower_bound(base, dist, "
                    "delta), or plot(lower=True)")


def bound_html(bound: SelectionBound) -> str:
    """The ``text/html`` display of a selection bound: a table of ``ε(δ)`` at :data:`STANDARD_DELTAS` (each from
    ``bound.epsilon(δ)``, rounded up), then the method, the theorem and a one-line certificate summary. No lower
    bound is searched for (a display computes nothing costly; :data:`LOWER_BOUND_HINT` says how to get one). Every
    text is escaped."""
    esc = html.escape
    head = "<tr><th>δ</th><th>ε (certified upper bound)</th></tr>"
    rows = []
    epsilons = [bound.epsilon(delta) for delta in STANDARD_DELTAS]
    for delta, eps in zip(STANDARD_DELTAS, epsilons, strict=True):
        cells = [f"{delta:g}", format_upper(eps)]
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    facts = [("method", bound.method), ("theorem", bound.theorem),
             ("certificate", certificate_summary(bound.certificate)), ("lower bound", LOWER_BOUND_HINT)]
    caption = f"Best of K ~ {bound.dist.spec} runs of {bound.base.spec}"
    return ("<div class=\"symsel-bound\">"
            f"<table><caption>{esc(caption)}</caption><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
            + risk_table_html(epsilons, list(STANDARD_DELTAS)) +
            "<table><tbody>"
            + "".join(f"<tr><th style=\"text-align:left\">{esc(k)}</th><td style=\"text-align:left\">{esc(v)}</td>"
                      "</tr>" for k, v in facts)
            + "</tbody></table></div>")


def risk_table_html(epsilons: Sequence[float], deltas: Sequence[float]) -> str:
    """The attack-risk table implied by certified points ``(ε_i, δ_i)`` of a profile (docs/tradeoff.md): at each of
    :data:`STANDARD_FPRS` the certified upper bound on the TPR (rounded up) and lower bound on ``β`` (rounded down),
    and the certified upper bound on the advantage, from those points alone
    (:func:`~symsel.profiles.tradeoff.tradeoff_of_points`): no further evaluation of the profile, so the display
    stays as cheap as its ``ε(δ)`` table. ``profile.tradeoff(alpha)`` searches the whole profile (tighter)."""
    esc = html.escape
    points = tradeoff_of_points(list(STANDARD_FPRS), epsilons, deltas)
    rows = [f"<tr><td>{esc(f'{fpr:g}')}</td><td>{esc(format_upper(float(tpr)))}</td>"
            f"<td>{esc(format_lower(float(beta)))}</td></tr>"
            for fpr, tpr, beta in zip(STANDARD_FPRS, points.tpr, points.beta, strict=True)]
    advantage = esc(format_upper(advantage_of_points(epsilons, deltas)))
    return ("<table><caption>Attack risk implied by the (ε, δ) above: any membership test on this output "
            "(tradeoff(alpha) searches the whole curve; docs/tradeoff.md)</caption><thead><tr>"
            "<th>FPR α</th><th>TPR (certified upper bound)</th><th>β(α) (certified lower bound)</th></tr></thead>"
            f"<tbody>{''.join(rows)}<tr><td>advantage</td><td>TPR − FPR ≤ {advantage}</td><td></td></tr>"
            "</tbody></table>")


def _checked_axis_points(values: Sequence[float] | None, default: Sequence[float], name: str, top_included: bool,
                         where: str) -> list[float]:
    """The points of a plot's log axis, sorted: ``default`` for ``None``, else a non-empty sequence of numbers in
    ``(0, 1]`` (``top_included``) or ``(0, 1)``; anything else a :class:`ParameterError` naming ``name``."""
    allowed = f"a non-empty sequence of numbers with 0 < {name[:-1]} {'<=' if top_included else '<'} 1 (a log axis)"
    if values is None:
        return list(default)
    try:
        points = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ParameterError(name, values, allowed, where) from None
    if not points or not all(0 < v < 1 or (top_included and v == 1) for v in points):
        raise ParameterError(name, values, allowed, where)
    return sorted(points)


def _axes(ax: Any, where: str) -> Axes:
    """``ax``, or a new figure's axes when ``None``; anything but a matplotlib ``Axes`` is a :class:`ParameterError`.
    matplotlib is imported here: a missing one raises an ``ImportError`` naming the ``notebooks`` extra."""
    try:
        import matplotlib.pyplot as plt
        from matplotlib.axes import Axes
    except ImportError as exc:
        raise ImportError(f"{where} needs matplotlib: pip install 'symsel[notebooks]' (the notebooks extra)") from exc
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    elif not isinstance(ax, Axes):
        raise ParameterError("ax", ax, "None or a matplotlib Axes", where)
    return ax


def plot_tradeoff(bound: SelectionBound, ax: Axes | None = None, fprs: Sequence[float] | None = None) -> Axes:
    """The certified trade-off curve: the lower bound on ``β(α)`` at ``fprs`` (default :data:`PLOT_FPRS`; one
    :meth:`~symsel.profiles.Profile.tradeoff_points` call) for the selection and for one run of the base, with the
    line ``β = 1 − α`` of a blind guess; log ``α`` axis. Draws on ``ax`` (a new figure when ``None``) and returns
    it (matplotlib: the ``notebooks`` extra)."""
    values = _checked_axis_points(fprs, PLOT_FPRS, "fprs", True, "plot_tradeoff")
    ax = _axes(ax, "SelectionBound.plot_tradeoff")
    ax.semilogx(values, bound.tradeoff_points(values, rtol=DISPLAY_RTOL).beta, "o-",
                label=f"{bound.method}: certified lower bound on β")
    ax.semilogx(values, bound.base.tradeoff_points(values, rtol=DISPLAY_RTOL).beta, ":", color="grey",
                label="one run of the base")
    ax.semilogx(values, [1 - v for v in values], "--", color="lightgrey", label="blind guess (β = 1 − α)")
    ax.set_xlabel("false-positive rate α")
    ax.set_ylabel("β(α): least false-negative rate")
    ax.set_title(f"best of K ~ {bound.dist.spec}\non {bound.base.spec}", fontsize=9)
    ax.legend(fontsize=8)
    return ax


def plot_bound(bound: SelectionBound, ax: Axes | None = None, deltas: Sequence[float] | None = None,
               lower: bool = False) -> Axes:
    """``ε`` against ``δ`` (log ``δ`` axis) at ``deltas`` (default :data:`PLOT_DELTAS`): the bound (each point
    ``bound.epsilon(δ)``), with ``lower=True`` the certified lower bound (a search per ``δ``; refused with
    :func:`lower_bound_cost`'s reason where it is not cheap), and one run of the base. Draws on ``ax`` (a new figure
    when ``None``) and returns it. matplotlib is imported here: a missing one raises an ``ImportError`` naming the
    ``notebooks`` extra."""

    values = _checked_axis_points(deltas, PLOT_DELTAS, "deltas", False, "SelectionBound.plot")
    if lower is not True and lower is not False:
        raise ParameterError("lower", lower, "True or False", "SelectionBound.plot")
    reason = lower_bound_cost(bound.dist, bound.base) if lower else None
    if reason is not None:
        raise NotApplicableError(f"SelectionBound.plot(lower=True): lower bound {reason}")
    ax = _axes(ax, "SelectionBound.plot")

    def finite(x: float) -> float:
        return x if math.isfinite(x) else math.nan

    ax.semilogx(values, [finite(bound.epsilon(d)) for d in values], "o-",
                label=f"{bound.method}: certified upper bound")
    if lower:
        ax.semilogx(values, [finite(_lower(bound, d)) for d in values], "v--", label="certified lower bound")
    ax.semilogx(values, [finite(bound.base.epsilon(d)) for d in values], ":", color="grey",
                label="one run of the base")
    ax.set_xlabel("δ")
    ax.set_ylabel("ε(δ)")
    ax.set_title(f"best of K ~ {bound.dist.spec}\non {bound.base.spec}", fontsize=9)
    ax.legend(fontsize=8)
    return ax
