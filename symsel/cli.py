"""The ``symsel`` command line: a thin layer over the Python API.

Every command takes ``--json`` and then prints exactly one JSON object on stdout. A user mistake
(bad spec, parameter out of range) prints one line ``symsel: error: ...`` on stderr and exits
with status 2; nothing else is printed.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from symsel.errors import SymselError


def _finite_or_none(value: Any) -> Any:
    """JSON has no inf/NaN: infinities become the strings "inf"/"-inf" (NaN never reaches here)."""
    if isinstance(value, float) and not math.isfinite(value):
        if math.isnan(value):
            raise SymselError("internal error: a NaN reached the output")
        return "inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite_or_none(v) for v in value]
    return value


def emit(payload: dict[str, Any], as_json: bool, text: Callable[[dict[str, Any]], str]) -> None:
    """Print ``payload`` as one JSON object, or as human-readable text."""
    if as_json:
        click.echo(json.dumps(_finite_or_none(payload), indent=2))
    else:
        click.echo(text(payload))


def user_errors(fn: Callable) -> Callable:
    """Turn symsel's errors into one line on stderr and exit status 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except SymselError as exc:
            click.echo(f"symsel: error: {exc}", err=True)
            sys.exit(2)

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symsel")
def main() -> None:
    """symsel: privacy profiles of private selection (best of K runs of a DP mechanism)."""


@main.command("dist")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--candidates", type=float, default=None, help="Also report the success probability for c candidates.")
@user_errors
def dist_command(spec: str, as_json: bool, candidates: float | None) -> None:
    """Facts about a distribution of K given as a SPEC, e.g. "geometric(mean=30)"."""
    from symsel.report import distribution_facts

    facts = distribution_facts(spec, candidates)
    emit(facts, as_json, lambda f: "\n".join(f"{k:>20}: {v}" for k, v in f.items()))


@main.command("report")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def report_command(as_json: bool) -> None:
    """The main report on built-in defaults."""
    from symsel.report import default_report, format_report

    report = default_report()
    emit(report, as_json, format_report)


def _run() -> None:  # pragma: no cover - console entry for `python -m symsel`
    main()
