"""Rich display in Jupyter: what a law of ``K``, a derivation and a bound look like in a notebook.

The classes keep one-line methods that delegate here:

* :class:`~symsel.distributions.Distribution` -- ``_repr_latex_`` (:func:`distribution_latex`): the PGF
  ``φ(z)`` as math, ``E[K]``, ``P[K = 0]``, the support and whether it is bounded, the spec; ``__repr__``
  (:func:`distribution_repr`);
* :class:`~symsel.derive.Derivation` -- ``_repr_markdown_`` (:func:`derivation_markdown`): the derivation's
  steps as Markdown with ``$…$`` math;
* :class:`~symsel.bounds.SelectionBound` -- ``_repr_html_`` (:func:`bound_html`): ``ε`` at the standard ``δ`` of
  :data:`STANDARD_DELTAS`, the method, the theorem, a one-line certificate summary and, where it is cheap
  (:func:`lower_bound_cost`), the certified lower bound beside each ``ε``; ``plot`` (:func:`plot_bound`): ``ε``
  against ``δ`` on a log ``δ`` axis, returning the matplotlib ``Axes``.

Numbers are evaluated when a display is asked for, never when the object is built. A displayed upper bound is
rounded up and a displayed lower bound down (:func:`format_upper`, :func:`format_lower`), so a rounded number
is still a bound. This module imports the rest of symsel inside its functions only: every floor may import it.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Mapping, Sequence
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from typing import TYPE_CHECKING, Any

import sympy

from symsel.errors import ParameterError, SymselError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from symsel.bounds.api import SelectionBound
    from symsel.derive.record import Derivation
    from symsel.distributions.core import Distribution
    from symsel.profiles import Profile

__all__ = [
    "DIGITS",
    "LOWER_BOUND_BUDGET",
    "LOWER_BOUND_MAX_ATOMS",
    "LOWER_BOUND_MAX_OPS",
    "LOWER_BOUND_SLICES",
    "PLOT_DELTAS",
    "STANDARD_DELTAS",
    "bound_html",
    "certificate_summary",
    "derivation_markdown",
    "distribution_latex",
    "distribution_repr",
    "format_lower",
    "format_upper",
    "lower_bound_cost",
    "plot_bound",
]

#: the δ of a bound's HTML table (the ones ``best``'s certificate names its winners at).
STANDARD_DELTAS = (1e-3, 1e-6, 1e-10)
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
def _directed(value: float, up: bool, digits: int = DIGITS) -> str:
    """``value`` at ``digits`` significant digits, rounded up (``up``) or down: a rounded bound stays a bound."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    exact = Decimal(value)  # the float's exact binary value
    step = Decimal(1).scaleb(exact.adjusted() - digits + 1)
    rounded = exact.quantize(step, rounding=ROUND_CEILING if up else ROUND_FLOOR)
    return f"{float(rounded):.{digits}g}"


def format_upper(value: float) -> str:
    """An upper bound on ``ε`` for display: :data:`DIGITS` significant digits, rounded up (``inf`` as ``inf``)."""
    return _directed(float(value), up=True)


def format_lower(value: float) -> str:
    """A lower bound on ``ε`` for display: :data:`DIGITS` significant digits, rounded down."""
    return _directed(float(value), up=False)


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
    return rf"\mathbb{{E}}[K] \approx {_directed(dist.mean, up=True)}"


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
            rf" $\quad {_mean_latex(dist)}, \quad P[K = 0] = {_directed(p0, up=True) if p0 else '0'},"
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


def derivation_markdown(derivation: Derivation) -> str:
    """The ``text/markdown`` display of a derivation: its report (:meth:`~symsel.derive.Derivation.markdown`,
    ``$…$`` math from ``sympy.latex``) with headings two levels down (a notebook's own headings stay above it)
    and set braces written ``\\lbrace``/``\\rbrace`` (GitHub's and some notebooks' Markdown drop the backslash of
    ``\\{``)."""
    text = re.sub(r"^(#+) ", lambda m: "#" * min(len(m.group(1)) + 2, 6) + " ", derivation.markdown(),
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


def bound_html(bound: SelectionBound) -> str:
    """The ``text/html`` display of a selection bound: a table of ``ε(δ)`` at :data:`STANDARD_DELTAS` (each from
    ``bound.epsilon(δ)``, rounded up), beside the certified lower bound where :func:`lower_bound_cost` allows it
    (rounded down), then the method, the theorem and a one-line certificate summary. Every text is escaped."""
    esc = html.escape
    reason = lower_bound_cost(bound.dist, bound.base)
    head = "<tr><th>δ</th><th>ε (certified upper bound)</th>"
    head += "<th>certified lower bound</th></tr>" if reason is None else "</tr>"
    rows = []
    for delta in STANDARD_DELTAS:
        cells = [f"{delta:g}", format_upper(bound.epsilon(delta))]
        if reason is None:
            try:
                cells.append(format_lower(_lower(bound, delta)))
            except SymselError as exc:
                cells.append(f"not available: {exc}")
        rows.append("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in cells) + "</tr>")
    facts = [("method", bound.method), ("theorem", bound.theorem),
             ("certificate", certificate_summary(bound.certificate))]
    if reason is not None:
        facts.append(("lower bound", reason))
    caption = f"Best of K ~ {bound.dist.spec} runs of {bound.base.spec}"
    return ("<div class=\"symsel-bound\">"
            f"<table><caption>{esc(caption)}</caption><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>"
            "<table><tbody>"
            + "".join(f"<tr><th style=\"text-align:left\">{esc(k)}</th><td style=\"text-align:left\">{esc(v)}</td>"
                      "</tr>" for k, v in facts)
            + "</tbody></table></div>")


def _checked_deltas(deltas: Sequence[float] | None) -> list[float]:
    allowed = "a non-empty sequence of numbers with 0 < delta < 1 (a log axis)"
    if deltas is None:
        return list(PLOT_DELTAS)
    try:
        values = [float(d) for d in deltas]
    except (TypeError, ValueError):
        raise ParameterError("deltas", deltas, allowed, "SelectionBound.plot") from None
    if not values or not all(0 < d < 1 for d in values):
        raise ParameterError("deltas", deltas, allowed, "SelectionBound.plot")
    return sorted(values)


def plot_bound(bound: SelectionBound, ax: Axes | None = None, deltas: Sequence[float] | None = None) -> Axes:
    """``ε`` against ``δ`` (log ``δ`` axis) at ``deltas`` (default :data:`PLOT_DELTAS`): the bound (each point
    ``bound.epsilon(δ)``), the certified lower bound where :func:`lower_bound_cost` allows it, and one run of the
    base. Draws on ``ax`` (a new figure when ``None``) and returns it. matplotlib is imported here: a missing one
    raises an ``ImportError`` naming the ``notebooks`` extra."""
    values = _checked_deltas(deltas)
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError("SelectionBound.plot needs matplotlib: pip install 'symsel[notebooks]' "
                          "(the notebooks extra)") from exc
    from matplotlib.axes import Axes

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    elif not isinstance(ax, Axes):
        raise ParameterError("ax", ax, "None or a matplotlib Axes", "SelectionBound.plot")

    def finite(x: float) -> float:
        return x if math.isfinite(x) else math.nan

    ax.semilogx(values, [finite(bound.epsilon(d)) for d in values], "o-",
                label=f"{bound.method}: certified upper bound")
    if lower_bound_cost(bound.dist, bound.base) is None:
        ax.semilogx(values, [finite(_lower(bound, d)) for d in values], "v--", label="certified lower bound")
    ax.semilogx(values, [finite(bound.base.epsilon(d)) for d in values], ":", color="grey",
                label="one run of the base")
    ax.set_xlabel("δ")
    ax.set_ylabel("ε(δ)")
    ax.set_title(f"best of K ~ {bound.dist.spec}\non {bound.base.spec}", fontsize=9)
    ax.legend(fontsize=8)
    return ax
