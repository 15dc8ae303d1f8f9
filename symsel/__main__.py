"""``python -m symsel``: the same as the ``symsel`` command."""

from symsel.cli import main

main()
