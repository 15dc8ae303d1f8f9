"""`symsel report`: the main job on built-in defaults, written to a report folder."""

from __future__ import annotations

import click

from symsel.cli._app import emit, main, user_errors


@main.command("report")
@click.option("--out", default="symsel-report", show_default=True, help="Folder for summary.md, figures and CSVs.")
@click.option("--quick", is_flag=True, help="The one-minute version (fewer laws, budgets and points).")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr (default: when a terminal).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the tables and the files written).")
@user_errors
def report_command(out: str, quick: bool, progress: bool | None, as_json: bool) -> None:
    """The papers' standard settings: every method side by side with certified lower bounds, the candidates each
    method affords on DP-SGD, the worst cases, and the figures; printed, and written to --out."""
    from symsel.report.main import format_report, write_report

    report = write_report(out, quick=quick, progress=progress)
    emit(report, as_json, lambda r: format_report(r) + f"\n\nWritten to {r['out']}/: summary.md, "
         f"{len([f for f in r['files'] if f.endswith('.png')])} figures (PNG, PDF, CSV), tables as CSV.")
