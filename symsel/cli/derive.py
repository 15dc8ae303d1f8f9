"""``symsel derive SPEC [--base SPEC] [--latex | --markdown | --json]``: a law's closed forms, derived and checked."""

from __future__ import annotations

import click

from symsel.cli._app import emit, main, user_errors


@main.command("derive")
@click.argument("spec")
@click.option("--base", default=None, help="Base mechanism profile spec, e.g. \"approx(eps=1, delta=1e-6)\".")
@click.option("--delta", type=click.FloatRange(1e-300, 1.0, min_open=False), default=1e-5,
              help="delta at which the bound is checked against exact examples (with --base).")
@click.option("--latex", is_flag=True, help="Print the closed forms as a LaTeX align* block.")
@click.option("--markdown", is_flag=True, help="Print a Markdown report (default).")
@click.option("--json", "as_json", is_flag=True,
              help="Print one JSON object; each closed form is {\"latex\": ..., \"sympy\": ...} (sympy.sympify reads "
                   "the second back).")
@user_errors
def derive_command(spec: str, base: str | None, delta: float, latex: bool, markdown: bool, as_json: bool) -> None:
    """Derive phi', the mean, the family, the ratio's sup over the polygon and eps_hat for SPEC, each claim
    checked against the numeric engine (Koskela et al. Thm 4.1, 5.2, 5.7, Cor 5.8; docs/ratio-methods.md)."""
    chosen = [name for name, on in (("--latex", latex), ("--markdown", markdown), ("--json", as_json)) if on]
    if len(chosen) > 1:  # one output form: the last flag would otherwise win silently
        raise click.UsageError(f"give at most one of --latex, --markdown, --json (got {', '.join(chosen)})")
    from symsel.derive import derive
    from symsel.derive.record import render_latex, render_markdown

    payload = derive(spec, base, delta=delta).to_json()  # one record: the JSON object and both reports come from it
    emit(payload, as_json, render_latex if latex else render_markdown)
