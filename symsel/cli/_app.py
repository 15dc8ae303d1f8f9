"""The ``symsel`` command group and what every command shares: one JSON object or text, one-line errors.

Every command takes ``--json`` and then prints exactly one JSON object on stdout. A user mistake
(bad spec, parameter out of range) prints one line ``symsel: error: ...`` on stderr and exits
with status 2; with ``--json`` it also prints one JSON object ``{"error": ..., "kind": ..., "exit_status": 2}``
on stdout (and nothing else there), so a program reading stdout always gets JSON.
"""

from __future__ import annotations

import errno
import json
import math
import os
import re
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
    """Print ``payload`` as one JSON object, or as human-readable text; stdout that cannot take it (a full disk,
    ``/dev/full``, a closed pipe) is a :class:`SymselError` naming the reason (exit status 2)."""
    out = json.dumps(_finite_or_none(payload), indent=2, allow_nan=False) if as_json else text(payload)
    try:
        click.echo(out)
        sys.stdout.flush()  # here, not at exit: a write error must end in the one-line error, not a traceback
    except OSError as exc:
        _abandon_stdout()
        raise SymselError(f"cannot write the output to stdout: {exc.strerror or exc}") from None


def _abandon_stdout() -> None:
    """Point stdout at the null device: what is still buffered for it is dropped (Python's flush at exit would fail
    again and print a traceback), and no JSON error object is written there."""
    _JSON_ERRORS[0] = False
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError, AttributeError):  # no file descriptor behind sys.stdout (a test's capture)
        pass


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
            _fail(f"symsel: error: {_one_line(exc)}", 2)

    return wrapper


class _OneLineErrors(click.Group):
    """A group whose usage errors are one line on stderr with exit status 2 (no usage dump), and whose command
    list shows each command's whole first sentence (click cut them at "et al." or after 45 characters)."""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, first_sentence(command.help or "")))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        argv = kwargs.get("args", args[0] if args else None)
        _JSON_ERRORS[0] = "--json" in (sys.argv[1:] if argv is None else list(argv))
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            try:
                sys.stdout.flush()  # --help, --version: their text, written now
            except OSError as write_error:
                _abandon_stdout()
                _fail(f"symsel: error: cannot write the output to stdout: {write_error.strerror}", 2)
            sys.exit(exc.exit_code)
        except click.ClickException as exc:
            _fail(f"symsel: error: {exc.format_message()}", 2)
        except click.Abort:
            _fail("symsel: aborted", 1)
        except SymselError as exc:
            _fail(f"symsel: error: {exc}", 2)
        except RecursionError:
            _fail("symsel: error: the input is nested too deeply to evaluate", 2)
        except MemoryError:
            _fail("symsel: error: not enough memory for these parameters (try fewer steps, a smaller grid or "
                  "a smaller law)", 2)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EPIPE, errno.EDQUOT, errno.EIO):
                _fail(f"symsel: internal error: {type(exc).__name__}: {_one_line(exc)} (please report this)", 1)
            _abandon_stdout()  # a write that failed: stdout (--help's text) or a file a command writes
            _fail(f"symsel: error: cannot write: {exc.strerror}", 2)
        except ValueError as exc:
            if "integer string conversion" in str(exc):
                _fail("symsel: error: a number in the result has too many digits to print; use smaller "
                      "parameters", 2)
            _fail(f"symsel: error: {_one_line(exc)}", 2)
        except Exception as exc:  # a bug: still one line, never a traceback
            _fail(f"symsel: internal error: {type(exc).__name__}: {_one_line(exc)} (please report this)", 1)


#: words after which a period does not end a sentence.
_ABBREVIATIONS = {"al", "e.g", "i.e", "Sec", "Thm", "Cor", "Fig", "Eq", "vs", "cf", "etc", "App", "Def"}


def first_sentence(text: str) -> str:
    """The first sentence of a help text's first paragraph (a period after an abbreviation such as "et al." or
    "Sec." does not end it)."""
    paragraph = " ".join(text.split("\n\n")[0].split())
    for match in re.finditer(r"\.(\s|$)", paragraph):
        word = paragraph[: match.start()].rsplit(" ", 1)[-1].lstrip("(")
        if word not in _ABBREVIATIONS:
            return paragraph[: match.start() + 1]
    return paragraph


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


#: whether the command line asked for ``--json`` (set by the group's ``main`` before the command runs).
_JSON_ERRORS = [False]


def _fail(message: str, status: int) -> None:
    """One line on stderr, one JSON error object on stdout when ``--json`` was given, then exit."""
    click.echo(message, err=True)
    if _JSON_ERRORS[0]:
        kind, _, text = message.removeprefix("symsel: ").partition(": ")
        try:
            click.echo(json.dumps({"error": text or kind, "kind": kind if text else "error", "exit_status": status}))
            sys.stdout.flush()
        except OSError:  # stdout cannot take it either: the line on stderr is the error
            _abandon_stdout()
    sys.exit(status)


@click.group(cls=_OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="symsel")
def main() -> None:
    """symsel: privacy profiles of private selection (best of K runs of a DP mechanism)."""
    from symsel.memory import keep_freed_memory

    keep_freed_memory()  # large arrays freed and allocated again without a trip to the kernel (symsel/memory.py)


def _one_of(delta: float | None, epsilon: float | None) -> None:
    if (delta is None) == (epsilon is None):
        raise click.UsageError("give exactly one of --delta or --epsilon")
