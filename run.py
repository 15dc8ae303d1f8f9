#!/usr/bin/env python3
"""One-command set-up and run for symsel, needing only python3 (>= 3.11) with venv and pip.

    python3 run.py report   # set up (first time only) and run `symsel report`
    python3 run.py test     # set up with the test extras (first time only) and run the test suite
    python3 run.py symsel ARGS...   # any symsel command inside the environment

The environment lives in ./.venv. It is (re)installed only when pyproject.toml changed since the
last install, so re-running is fast. The package is installed in editable mode: source edits need
no re-install.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PYTHON = BIN / ("python.exe" if os.name == "nt" else "python")
EXTRAS = {"report": "", "symsel": "", "test": "[dev]"}


def ensure_environment(extras: str) -> None:
    """Create ./.venv and install symsel with ``extras`` unless the same install is already there."""
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py is executed by whatever python3 the user has
        sys.exit(f"symsel needs Python >= 3.11; this is {sys.version.split()[0]}")
    fingerprint = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + extras.encode()).hexdigest()
    stamp = VENV / f".installed{extras.strip('[]').replace(',', '-') or '-core'}"
    if stamp.exists() and stamp.read_text() == fingerprint and PYTHON.exists():
        return
    if not PYTHON.exists():
        print("symsel: creating .venv", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    print(f"symsel: installing symsel{extras} into .venv (first run only)", file=sys.stderr)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-e", f"{ROOT}{extras}"], check=True)
    stamp.write_text(fingerprint)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in EXTRAS:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    ensure_environment(EXTRAS[command])
    if command == "test":
        args = [str(PYTHON), "-m", "pytest", *rest]
    elif command == "report":
        args = [str(BIN / "symsel"), "report", *rest]
    else:
        args = [str(BIN / "symsel"), *rest]
    return subprocess.call(args, cwd=ROOT)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
