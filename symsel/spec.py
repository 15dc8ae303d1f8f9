"""Spec strings: one small, safe syntax shared by the command line and the Python API.

A spec is a call ``name(arg=value, ...)``, e.g. ``"tnb(eta=0.5, gamma=0.01)"``,
``"geometric(mean=30)"``, ``"pgf(expr='exp(mu*(z-1))', mu=10)"``, ``"gaussian(sigma=4)"``,
``"pointwise(points=[(1, 1e-6), (2, 1e-8)])"``,
``"truncated(dist=geometric(mean=30), k_max=200)"``.

The text is parsed with Python's :mod:`ast` into a syntax tree and *interpreted* node by node:
nothing is ever passed to ``eval``. Argument values may be numbers (with unary minus), strings,
``true``/``false``, lists or tuples of values, and nested specs. Formula strings (``expr=`` of
``pgf``/``pmf``) are converted to SymPy by the same interpreter with a whitelist of functions
and symbols; ``^`` is read as ``**``. Errors name the offending token, its column and the known
names.
"""

from __future__ import annotations

import ast
import inspect
import math
from collections.abc import Callable, Mapping
from typing import Any, cast

import sympy

from symsel.errors import ParameterError, SpecError, SymselError

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


def _value(node: ast.AST, text: str, families: Mapping[str, Callable[..., Any]]) -> Any:
    """Interpret an argument value: number, string, bool, list/tuple, or a nested spec call."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | str | bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand, text, families)
        if isinstance(inner, int | float):
            return -inner if isinstance(node.op, ast.USub) else inner
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div)
            and all(isinstance(n, ast.Constant) and type(n.value) is int for n in (node.left, node.right))):
        numerator, denominator = cast(ast.Constant, node.left).value, cast(ast.Constant, node.right).value
        if denominator == 0:
            raise SpecError("division by zero", text, node.col_offset + 1)
        return sympy.Rational(numerator, denominator)  # an exact fraction such as 9/10
    if isinstance(node, ast.Name) and node.id in {"true", "false", "True", "False"}:
        return node.id.lower() == "true"
    if isinstance(node, ast.Name) and node.id in {"inf", "infinity"}:
        return float("inf")
    if isinstance(node, ast.List | ast.Tuple):
        items = [_value(e, text, families) for e in node.elts]
        return items if isinstance(node, ast.List) else tuple(items)
    if isinstance(node, ast.Call):
        return _call(node, text, families)
    raise SpecError(
        f"unsupported value {ast.unparse(node)!r} (numbers, fractions a/b, strings, lists and nested specs only)",
        text,
        getattr(node, "col_offset", 0) + 1,
    )


def _call(node: ast.Call, text: str, families: Mapping[str, Callable[..., Any]]) -> Any:
    if not isinstance(node.func, ast.Name):
        raise SpecError(f"expected a name before '(' but found {ast.unparse(node.func)!r}", text, node.col_offset + 1)
    name = node.func.id
    if name not in families:
        raise SpecError(f"unknown name {name!r} (known: {', '.join(sorted(families))})", text, node.col_offset + 1)
    constructor = families[name]
    args = [_value(a, text, families) for a in node.args]
    kwargs = {}
    for kw in node.keywords:
        if kw.arg is None:
            raise SpecError("'**' is not allowed", _shown(text), kw.value.col_offset + 1)
        if kw.arg in kwargs:
            raise SpecError(f"{name}(): parameter {kw.arg!r} given twice", _shown(text), kw.value.col_offset + 1)
        kwargs[kw.arg] = _value(kw.value, text, families)
    _check_signature(constructor, name, args, kwargs, node, text)
    try:
        return constructor(*args, **kwargs)
    except ParameterError as exc:
        if getattr(exc, "spec_named", False) or exc.where == name:
            raise
        # name the family the user typed (``geometric``), not the constructor it delegates to (``tnb``)
        renamed = ParameterError(exc.name, exc.value, exc.allowed, name)
        renamed.spec_named = True
        raise renamed from None
    except SymselError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, OverflowError) as exc:
        if "integer string conversion" in str(exc):  # Python's own limit on printing an integer, not a user's word
            raise SpecError(f"{name}: a number in it has more than 4300 digits, too large to work with",
                            _shown(text), node.col_offset + 1) from None
        raise SpecError(f"{name}: {str(exc).splitlines()[0][:200]}", _shown(text), node.col_offset + 1) from None


def _check_signature(constructor: Callable, name: str, args: list, kwargs: dict, node: ast.Call, text: str) -> None:
    signature = inspect.signature(constructor)
    accepted = [p for p in signature.parameters if not p.startswith("_")]
    for kw in node.keywords:
        if kw.arg not in signature.parameters and not any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()
        ):
            raise SpecError(
                f"{name}() has no parameter {kw.arg!r} (parameters: {', '.join(accepted)})",
                text,
                kw.value.col_offset + 1 - len(cast(str, kw.arg)) - 1,
            )
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        raise SpecError(f"{name}(): {exc} (parameters: {', '.join(accepted)})", text, node.col_offset + 1) from None


def _check_user_law(kind: str, variable: str, expr: Any, params: dict[str, Any]) -> None:
    if not isinstance(expr, str):
        raise ParameterError("expr", expr, f"a quoted formula in {variable}, e.g. expr='...'", kind)
    if variable in params:
        raise ParameterError(variable, params[variable], f"none ({variable} is the variable of the {kind} and "
                             "takes no value)", kind)
    for name, value in params.items():
        if isinstance(value, bool) or not isinstance(value, int | float | sympy.Rational):
            raise ParameterError(name, value, "a number", kind)


def _support_bound(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | sympy.Integer) or (
            isinstance(value, float) and not (math.isfinite(value) and value.is_integer())):
        raise ParameterError(name, value, "an integer", "pmf")
    return int(value)


def _user_pgf(expr: str, **params: Any) -> Any:
    from symsel.distributions import from_pgf

    _check_user_law("pgf", "z", expr, params)
    parsed = parse_expression(expr, ("z",), tuple(params))
    label = "pgf(" + ", ".join([f"expr={expr!r}", *(f"{n}={v!r}" for n, v in params.items())]) + ")"
    return from_pgf(parsed, params, label=label)


def _user_pmf(expr: str, k_min: int = 0, k_max: int | None = None, **params: Any) -> Any:
    from symsel.distributions import from_pmf

    _check_user_law("pmf", "k", expr, params)
    k_min = _support_bound(k_min, "k_min")
    k_max = None if k_max is None else _support_bound(k_max, "k_max")
    parsed = parse_expression(expr, ("k",), tuple(params))
    parts = [f"expr={expr!r}", f"k_min={k_min}"] + ([f"k_max={k_max}"] if k_max is not None else [])
    label = "pmf(" + ", ".join(parts + [f"{n}={v!r}" for n, v in params.items()]) + ")"
    return from_pmf(parsed, params, k_min=k_min, k_max=k_max, label=label)


def _parse_call(text: str, families: Mapping[str, Callable[..., Any]], what: str) -> Any:
    tree = _parse(text, what)
    if not isinstance(tree, ast.Call):
        raise SpecError(
            f"expected a {what} spec like name(param=value, ...); known names: {', '.join(sorted(families))}", text, 1
        )
    return _call(tree, text, families)


def distribution_families() -> dict[str, Callable[..., Any]]:
    """Spec names of the distributions of K."""
    from symsel.distributions import FAMILIES

    return {**FAMILIES, "pgf": _user_pgf, "pmf": _user_pmf}


def parse_distribution(text: str) -> Any:
    """Build a :class:`~symsel.distributions.Distribution` from a spec string."""
    return _parse_call(text, distribution_families(), "distribution")


def profile_families() -> dict[str, Callable[..., Any]]:
    """Spec names of base-mechanism privacy profiles."""
    from symsel.profiles import FAMILIES

    return dict(FAMILIES)


def parse_profile(text: str) -> Any:
    """Build a base-mechanism :class:`~symsel.profiles.Profile` from a spec string."""
    return _parse_call(text, profile_families(), "profile")


def as_distribution(value: Any, name: str, where: str) -> Any:
    """``value`` as a :class:`~symsel.distributions.Distribution`: a Distribution as it is, a spec string parsed;
    anything else is a :class:`ParameterError` naming ``name``."""
    from symsel.distributions import Distribution

    if isinstance(value, Distribution):
        return value
    if isinstance(value, str):
        return parse_distribution(value)
    raise ParameterError(name, value, "a spec string like 'geometric(mean=10)' or a symsel.Distribution", where)


def as_profile(value: Any, name: str, where: str) -> Any:
    """``value`` as a base :class:`~symsel.profiles.Profile`: a Profile as it is, a spec string parsed; anything
    else is a :class:`ParameterError` naming ``name``."""
    from symsel.profiles import Profile

    if isinstance(value, Profile):
        return value
    if isinstance(value, str):
        return parse_profile(value)
    raise ParameterError(name, value, "a spec string like 'gaussian(sigma=4)' or a symsel.profiles.Profile", where)
