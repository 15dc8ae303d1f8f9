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
from symsel.formula import (
    _parse,
    _shown,
    parse_expression,
)


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
