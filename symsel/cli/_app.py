"""The ``symsel`` command group and what every command shares: one JSON object or text, one-line errors.

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


class _OneLineErrors(click.Group):
    """A group whose usage errors are one line on stderr with exit status 2 (no usage dump)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            click.echo(f"symsel: error: {exc.format_message()}", err=True)
            sys.exit(2)
        except click.Abort:
            click.echo("symsel: aborted", err=True)
            sys.exit(1)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symsel")
def main() -> None:
    """symsel: privacy profiles of private selection (best of K runs of a DP mechanism)."""


def _one_of(delta: float | None, epsilon: float | None) -> None:
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta or --epsilon")
