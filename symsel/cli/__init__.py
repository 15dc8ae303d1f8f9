"""The ``symsel`` command line: a thin layer over the Python API.

Every command takes ``--json`` and then prints exactly one JSON object on stdout. A user mistake
(bad spec, parameter out of range) prints one line ``symsel: error: ...`` on stderr and exits
with status 2; nothing else is printed. Each command lives in its own module; importing the
module registers it on the group.
"""

from symsel.cli import core, derive, plan, report, risk, sweep, tune  # noqa: F401  (registers the commands)
from symsel.cli._app import main

__all__ = ["main"]
