"""The ``symsel`` command group and what every command shares: one JSON object or text, one-line errors.

Every command takes ``--json`` and then prints exactly one JSON object on stdout. A user mistake
(bad spec, parameter out of range) prints one line ``symsel: error: ...`` on stderr and exits
with status 2; nothing else is printed.
"""

from __future__ import annotations

import json
import math
import sys
import warnings
from collections.abc import Callable
from functools import wraps
from typing import Any

import click
import numpy as np

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
        click.echo(json.dumps(_finite_or_none(payload), indent=2, allow_nan=False))
    else:
        click.echo(text(payload))


def user_errors(fn: Callable) -> Callable:
    """Turn symsel's errors into one line on stderr and exit status 2."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            with warnings.catch_warnings(), np.errstate(all="ignore"):
                # Answers are checked for NaN/inf on output; intermediate float warnings are not for the user.
                warnings.simplefilter("ignore", RuntimeWarning)
                return fn(*args, **kwargs)
        except SymselError as exc:
            click.echo(f"symsel: error: {_one_line(exc)}", err=True)
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
        except SymselError as exc:
            _fail(f"symsel: error: {exc}", 2)
        except RecursionError:
            _fail("symsel: error: the input is nested too deeply to evaluate", 2)
        except MemoryError:
            _fail("symsel: error: not enough memory for these parameters (try fewer steps, a smaller grid or "
                  "a smaller law)", 2)
        except ValueError as exc:
            if "integer string conversion" in str(exc):
                _fail("symsel: error: a number in the result has too many digits to print; use smaller "
                      "parameters", 2)
            _fail(f"symsel: error: {_one_line(exc)}", 2)
        except Exception as exc:  # a bug: still one line, never a traceback
            _fail(f"symsel: internal error: {type(exc).__name__}: {_one_line(exc)} (please report this)", 1)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


def _fail(message: str, status: int) -> None:
    click.echo(message, err=True)
    sys.exit(status)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symsel")
def main() -> None:
    """symsel: privacy profiles of private selection (best of K runs of a DP mechanism)."""


def _one_of(delta: float | None, epsilon: float | None) -> None:
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta or --epsilon")
