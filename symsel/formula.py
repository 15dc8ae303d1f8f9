"""Formula strings: the safe syntax of ``expr=`` in ``pgf``/``pmf`` specs and of :func:`parse_expression`.

The text is parsed with Python's :mod:`ast` into a syntax tree and interpreted node by node into SymPy, nothing ever
passed to ``eval``: numbers, the whitelisted functions and constants, the variables and parameters named by the
caller; ``^`` is read as ``**``. Sizes are limited before any work (length, depth, digits, exponents, whole
expressions: :func:`check_expression`). The ground floor: laws of ``K`` (:mod:`symsel.distributions`) read formulas
through it, and spec strings (:mod:`symsel.spec`) use its parser for whole specs.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

import sympy

from symsel.errors import ParameterError, SpecError

_FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "exp": sympy.exp,
    "log": sympy.log,
    "sqrt": sympy.sqrt,
    "sin": sympy.sin,
    "cos": sympy.cos,
    "tan": sympy.tan,
    "sinh": sympy.sinh,
    "cosh": sympy.cosh,
    "tanh": sympy.tanh,
    "atan": sympy.atan,
    "asin": sympy.asin,
    "acos": sympy.acos,
    "gamma": sympy.gamma,
    "factorial": sympy.factorial,
    "binomial": sympy.binomial,
    "beta": sympy.beta,
    "rf": sympy.rf,
    "ff": sympy.ff,
    "abs": sympy.Abs,
    "lambertw": sympy.LambertW,
    "erf": sympy.erf,
    "erfc": sympy.erfc,
}
_CONSTANTS: dict[str, sympy.Expr] = {"pi": sympy.pi, "E": sympy.E}
_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_MAX_SPEC_LENGTH = 20_000
#: deepest nesting of the syntax tree accepted (calls, operators, brackets, signs).
_MAX_DEPTH = 60
#: a power of two numbers is refused when its result would have more decimal digits than this.
_MAX_NUMBER_DIGITS = 2_000
#: the largest exponent of the variable in a formula (``z^n``, ``k^n``).
_MAX_EXPONENT = 10**7
#: factorial, gamma, binomial, rf, ff of numbers: arguments up to this size.
_MAX_COMBINATORIAL_ARGUMENT = 10**4
_COMBINATORIAL = frozenset({"factorial", "gamma", "binomial", "rf", "ff", "beta"})


def _shown(text: str) -> str:
    return text if len(text) <= 60 else text[:40] + "..."


def _parse(text: str, what: str) -> ast.expr:
    if not isinstance(text, str) or not text.strip():
        raise SpecError(f"empty {what} spec", text if isinstance(text, str) else repr(text))
    if len(text) > _MAX_SPEC_LENGTH:
        raise SpecError(f"{what} spec longer than {_MAX_SPEC_LENGTH} characters", _shown(text))
    undecodable = next((i for i, c in enumerate(text) if "\udc80" <= c <= "\udcff"), None)
    if undecodable is not None:  # a byte the locale could not decode (argv under LANG=C): Python keeps it as a
        # surrogate, which no parser takes
        byte = ord(text[undecodable]) - 0xDC00
        raise SpecError(f"{what} spec has a byte that is not text in this locale (0x{byte:02x}; is the terminal's "
                        "encoding UTF-8?)", _shown(text), undecodable + 1)
    try:
        tree = ast.parse(text.strip(), mode="eval").body
    except SyntaxError as exc:
        if "integer string conversion" in str(exc.msg):
            raise SpecError(f"{what} spec has a number with too many digits (at most {_MAX_NUMBER_DIGITS})",
                            _shown(text)) from None
        raise SpecError(f"syntax error ({exc.msg})", _shown(text), exc.offset) from None
    except (RecursionError, MemoryError):
        raise SpecError(f"{what} spec nested too deeply (at most {_MAX_DEPTH} levels)", _shown(text)) from None
    except ValueError as exc:
        if "integer string conversion" not in str(exc) and "digits" not in str(exc):
            raise SpecError(f"{what} spec cannot be read ({' '.join(str(exc).split())[:100]})", _shown(text)) from None
        raise SpecError(f"{what} spec has a number with too many digits (at most {_MAX_NUMBER_DIGITS})",
                        _shown(text)) from None
    if _depth(tree) > _MAX_DEPTH:
        raise SpecError(f"{what} spec nested too deeply (at most {_MAX_DEPTH} levels)", _shown(text))
    return tree


def _depth(tree: ast.AST) -> int:
    """Depth of the syntax tree, without recursion."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


def _checked_power(base: sympy.Expr, exponent: sympy.Expr, text: str, node: ast.AST) -> sympy.Expr:
    """``base ** exponent``, refused before SymPy evaluates a power too large to hold or to expand."""
    column = getattr(node, "col_offset", 0) + 1
    if exponent.is_Number and not (exponent.is_finite and abs(float(exponent)) <= _MAX_EXPONENT):
        raise SpecError(f"exponent {_shown(str(exponent))} too large (at most {_MAX_EXPONENT:.0e} in absolute value)",
                        _shown(text), column)
    if base.is_Number and exponent.is_Number and base not in (0, 1, -1):
        digits = abs(float(exponent)) * abs(math.log10(abs(float(base)))) if float(base) != 0 else 0.0
        if digits > _MAX_NUMBER_DIGITS:
            raise SpecError(f"the number {base}^{exponent} has about {digits:.3g} digits (at most "
                            f"{_MAX_NUMBER_DIGITS})", _shown(text), column)
    return base**exponent


#: the most nodes of a formula's expression tree (a spec of at most ``_MAX_SPEC_LENGTH`` characters has fewer; an
#: expression built in Python, e.g. a polynomial of 1e5 terms, is refused before SymPy recurses through it).
MAX_EXPRESSION_NODES = 50_000


def check_expression(expr: Any, symbols: tuple[str, ...], where: str) -> sympy.Expr:
    """``expr`` (a SymPy expression) if it is small enough to work with, else a :class:`ParameterError` naming
    ``expr``: at most :data:`MAX_EXPRESSION_NODES` nodes, and no power of a variable (``symbols``) whose exponent
    exceeds ``_MAX_EXPONENT`` *in the whole expression* (``(z**1000000)**1000000`` is ``z**1e12``: each power is
    within the limit, their product is not). The tree is walked without recursion."""
    if not isinstance(expr, sympy.Basic):
        raise ParameterError("expr", _shown(repr(expr)), "a SymPy expression or a formula string", where)
    variables = {sympy.Symbol(s) for s in symbols}
    stack, nodes = [expr], 0
    while stack:
        node = stack.pop()
        nodes += 1
        if nodes > MAX_EXPRESSION_NODES:
            raise ParameterError("expr", _shown(str(type(expr).__name__)), f"an expression of at most "
                                 f"{MAX_EXPRESSION_NODES} nodes", where)
        if (isinstance(node, sympy.Pow) and node.exp.is_Number and node.base.free_symbols
                and {str(s) for s in node.base.free_symbols} & {str(v) for v in variables}
                and not abs(float(node.exp)) <= _MAX_EXPONENT):
            raise ParameterError("expr", _shown(str(node)), f"powers of {', '.join(symbols)} with exponents at most "
                                 f"{_MAX_EXPONENT:.0e} in absolute value (the whole expression's degree)", where)
        stack.extend(node.args)
    return expr


def parse_expression(text: str, symbols: tuple[str, ...] = ("z",), params: tuple[str, ...] = ()) -> sympy.Expr:
    """Convert a formula string to SymPy. Allowed names: ``symbols``, ``params``, the whitelisted
    functions and ``pi``, ``E``. Anything else is a :class:`SpecError` naming the token."""
    # ``^`` means power in formulas; rewriting it before parsing keeps Python's precedence of ``**``.
    if not isinstance(text, str):
        raise SpecError(f"a formula must be a quoted string, e.g. expr='exp(mu*(z-1))'; got {text!r}")
    tree = _parse(text.replace("^", "**"), "expression")
    allowed = set(symbols) | set(params)

    def convert(node: ast.AST) -> sympy.Expr:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float) and not isinstance(node.value, bool):
            value = node.value
            return sympy.Integer(value) if isinstance(value, int) else sympy.Rational(repr(value))
        if isinstance(node, ast.Name):
            if node.id in allowed:
                return sympy.Symbol(node.id)
            if node.id in _CONSTANTS:
                return _CONSTANTS[node.id]
            raise SpecError(
                f"unknown name {node.id!r} (known: {', '.join(sorted(allowed | set(_CONSTANTS)))}; "
                f"give a parameter's value as name=value)",
                text,
                node.col_offset + 1,
            )
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return _checked_power(convert(node.left), convert(node.right), text, node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](convert(node.left), convert(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
            inner = convert(node.operand)
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            if node.func.id not in _FUNCTIONS:
                raise SpecError(
                    f"unknown function {node.func.id!r} (known: {', '.join(sorted(_FUNCTIONS))})",
                    text,
                    node.col_offset + 1,
                )
            args = [convert(a) for a in node.args]
            if node.func.id in _COMBINATORIAL:
                for a in args:
                    if a.is_Number and not abs(float(a)) <= _MAX_COMBINATORIAL_ARGUMENT:
                        raise SpecError(f"{node.func.id} of {_shown(str(a))} is too large to evaluate exactly "
                                        f"(arguments at most {_MAX_COMBINATORIAL_ARGUMENT})", _shown(text),
                                        node.col_offset + 1)
            return _FUNCTIONS[node.func.id](*args)
        raise SpecError(f"unsupported syntax {ast.unparse(node)!r}", text, getattr(node, "col_offset", 0) + 1)

    expr = convert(tree)
    try:
        return check_expression(expr, symbols, "expression")
    except ParameterError as exc:
        raise SpecError(f"expression too large: {exc.allowed}", _shown(text)) from None
