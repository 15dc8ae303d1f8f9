"""`symsel report`: the main job on built-in defaults."""

from __future__ import annotations

import click

from symsel.cli._app import emit, main, user_errors


@main.command("report")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@user_errors
def report_command(as_json: bool) -> None:
    """The main report on built-in defaults."""
    from symsel.report import default_report, format_report

    report = default_report()
    emit(report, as_json, format_report)
