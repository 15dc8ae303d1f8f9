"""Shared pieces of :mod:`symsel.derive`: the symbols, the 50-digit precision, the parameter points at which
free symbols are instantiated, and the numeric law the engine evaluates at such a point."""

from __future__ import annotations

import contextlib
import functools
import itertools
import signal
import threading
from collections.abc import Iterator
from typing import Any

import sympy

import symsel
from symsel.derive.family import _simple
from symsel.distributions import Distribution, z
from symsel.errors import SpecError, SymselError

DPS = 50
EPS, EPS0, EPS1, DELTA1 = sympy.symbols("varepsilon varepsilon_0 varepsilon_1 delta_1", positive=True)
#: the Rényi order ``lambda > 1`` (P&S Lemma 7), the hat order of P&S Thm 2, the candidates ``c``, the tail ``k``.
LAM, LAM_HAT, EPS_HAT, DELTA_HAT = sympy.symbols(r"lambda \hat{\lambda} \hat{\varepsilon} \hat{\delta}", positive=True)
CAND, KK, TT = sympy.symbols("c k t", positive=True)
#: parameter points at which free symbols are instantiated for the 50-digit checks.
SAMPLE_VALUES = (sympy.Rational(1, 2), sympy.Rational(3), sympy.Rational(40), sympy.Rational(1, 5),
                 sympy.Rational(9, 10), sympy.Rational(7))
#: at most this many parameter points are checked, found among at most this many candidates.
MAX_POINTS, MAX_TRIED = 3, 40


#: what SymPy raises when it gives up on an expression (an undecidable sign, an uncomparable Max argument).
SYMPY_FAILURES = (ArithmeticError, TypeError, ValueError, NotImplementedError)


def at(expr: sympy.Expr, point: Any) -> sympy.Expr:
    """``expr`` at ``z = point``, by a one-sided limit where substitution gives ``nan``/``zoo``."""
    value = expr.subs(z, point)
    if value.has(sympy.nan, sympy.zoo) or value.is_finite is False:
        side = "-" if point == 1 else "+"
        try:
            value = sympy.limit(expr, z, point, side)
        except SYMPY_FAILURES:  # depends on a free parameter's range (z^a at 0): kept as a limit
            return sympy.Limit(expr, z, point, side)
    return _simple(value)


def free_points(phi: sympy.Expr) -> tuple[dict[sympy.Symbol, sympy.Expr], ...]:
    """Parameter points for the checks: up to :data:`MAX_POINTS` assignments of :data:`SAMPLE_VALUES` to the free
    symbols of ``phi`` at which the engine accepts ``phi`` as a PGF (``g`` in ``(1 - g) z/(1 - g z)`` must stay
    below 1, ``n`` in ``(1 - p + p z)^n`` must be an integer): first every symbol at the same value, then mixed
    values. :class:`SpecError` when none of the first :data:`MAX_TRIED` is a PGF."""
    free = tuple(sorted(phi.free_symbols - {z}, key=str))
    return _valid_points(phi, free) if free else ({},)


@functools.lru_cache(maxsize=32)
def _valid_points(phi: sympy.Expr, free: tuple[sympy.Symbol, ...]) -> tuple[dict[sympy.Symbol, sympy.Expr], ...]:
    same = ((v,) * len(free) for v in SAMPLE_VALUES)
    mixed = (c for c in itertools.product(SAMPLE_VALUES, repeat=len(free)) if len(set(c)) > 1)
    points = []
    for values in itertools.islice(itertools.chain(same, mixed), MAX_TRIED):
        try:
            _law_at(phi, tuple(zip(free, values, strict=True)))
        except SymselError:
            continue
        points.append(dict(zip(free, values, strict=True)))
        if len(points) == MAX_POINTS:
            break
    if not points:
        names = ", ".join(s.name for s in free)
        raise SpecError(f"derive: no values of the free parameters {names} among "
                        f"{', '.join(str(v) for v in SAMPLE_VALUES)} make this expression a PGF, so its claims cannot "
                        "be checked; bind the parameters (e.g. pgf(expr=..., g=0.9))")
    return tuple(points)


def engine_law(spec: str, phi: sympy.Expr, point: dict, dist: Distribution | None) -> Distribution:
    """The numeric engine's :class:`Distribution` for ``phi`` at a parameter ``point`` (``dist`` when bound)."""
    if dist is not None:
        return dist
    return _law_at(phi, tuple(point.items()))


@functools.lru_cache(maxsize=64)
def _law_at(phi: sympy.Expr, point: tuple[tuple[sympy.Symbol, sympy.Expr], ...]) -> Distribution:
    """``phi`` at ``point`` as a validated ``pgf(expr=..., name=value, ...)`` law (cached: the checks reuse it)."""
    text = sympy.sstr(phi.subs({s: sympy.Symbol(s.name) for s, _ in point}))
    args = ", ".join(f"{s.name}={float(v)!r}" for s, v in point)
    return symsel.parse_distribution(f"pgf(expr={text!r}{', ' + args if args else ''})")


def n50(expr: sympy.Expr) -> sympy.Float:
    """``expr`` at 50 digits."""
    return sympy.N(expr, DPS)


def rel(a: Any, b: Any) -> float:
    """``|a - b| / max(1, |b|)`` as a float (the disagreement reported by a check)."""
    a, b = sympy.Float(a, DPS), sympy.Float(b, DPS)
    return float(abs(a - b) / max(sympy.Float(1), abs(b)))


def checked_simplify(expr: sympy.Expr, max_ops: int) -> sympy.Expr:
    """``sympy.simplify(expr)`` when ``expr`` has fewer than ``max_ops`` operations and the simplified form has the
    same value at a generic point (each free symbol at a distinct rational in (0, 1), 50 digits), else ``expr``
    unchanged. SymPy's simplify can pick a wrong branch of ``log`` on negative constants (``log(3/(e^3 - 1))``
    became complex); a form that is not the same number is never printed."""
    if sympy.count_ops(expr) >= max_ops:
        return expr
    simpler = sympy.simplify(expr)
    point = {s: sympy.Rational(13 + 7 * i, 100 + i) for i, s in enumerate(sorted(expr.free_symbols, key=str))}
    try:
        before, after = (complex(sympy.N(e.subs(point), DPS)) for e in (expr, simpler))
    except (TypeError, ValueError):  # not a number at the point (a pole, nan): keep the form as derived
        return expr
    return simpler if abs(before - after) <= 1e-30 * max(1.0, abs(before)) else expr


def tidy_log_ratio(num: sympy.Expr, den: sympy.Expr, eps: sympy.Symbol) -> sympy.Expr:
    """``log(num/den)`` in a readable form: with ``X = e^eps`` the ratio is cancelled and factored when it is
    rational in ``X`` (fast, exact); a small non-rational form is simplified; a large one is left alone."""
    x = sympy.Symbol("X", positive=True)
    ratio = sympy.together((num / den).subs(sympy.exp(eps), x))
    if not ratio.has(sympy.exp) and ratio.is_rational_function(x) and sympy.count_ops(ratio) < 400:
        ratio = sympy.factor(sympy.cancel(ratio))
        return sympy.expand_log(sympy.log(ratio), force=True).subs(x, sympy.exp(eps))
    log_r = sympy.log(num) - sympy.log(den)
    return checked_simplify(log_r, 100)


class SympyTimeoutError(Exception):
    """A SymPy step ran past its time budget (:func:`time_limit`)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`SympyTimeoutError` inside the block after ``seconds`` of this process's CPU time (SIGPROF;
    main thread on POSIX only, elsewhere no limit): heavy SymPy steps are skipped with a note rather than hanging.
    CPU time, not wall time, so that a loaded machine does not turn a derivation that closes into one that is
    skipped."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def _raise(signum: int, frame: Any) -> None:
        raise SympyTimeoutError(f"SymPy step exceeded {seconds:g} s")

    previous = signal.signal(signal.SIGPROF, _raise)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
