#!/usr/bin/env python3
"""One-command set-up and run for symsel, needing only python3 (>= 3.11) with venv and pip.

    python3 run.py report   # set up (first time only) and run `symsel report`
    python3 run.py test     # set up with the test extras (first time only) and run the test suite
    python3 run.py symsel ARGS...   # any symsel command inside the environment
    python3 run.py test-latest      # the test suite against the newest releases (in ./.venv-latest)
    python3 run.py docs [--out DIR] [-E] [-a] [-j N]  # set up with the docs extra (first time only), build the site
    python3 run.py test-opacus      # the Opacus accountant against the real Opacus and torch (in ./.venv-opacus)

The environment lives in ./.venv and holds the versions pinned in constraints.txt (the ones the suite
was last run with), so a fresh machine gets what passed. `test-latest` installs the newest releases
that pyproject.toml allows into ./.venv-latest instead, to see version drift before a user does. `test-opacus`
installs the `opacus` extra as well (Opacus and torch: PyPI's torch for Linux brings NVIDIA's CUDA libraries, about
3 GB of wheels) into ./.venv-opacus and runs tests_opacus/ (a tiny model trained on the CPU), which the default
suite leaves out. An
environment is (re)installed only when pyproject.toml or constraints.txt changed since its last
install (the test extras' install serves `report` too), so re-running is fast. The package is installed in
editable mode: source edits need no re-install. Nothing is compiled at install: each module's bytecode is written
when it is first imported, and the commands run without the caller's PYTHONDONTWRITEBYTECODE, so that later
processes reuse it.

The install itself is done by uv (a package installer written in Rust, pinned in constraints.txt and installed into
the environment by pip): the same packages in about 2 s where pip takes about 20 s, most of it pip parsing each
package's index page. uv is given pip's own configuration (indexes, all of them searched as pip does, find-links,
constraint files, certificate bundle); pip does the install whenever uv cannot: a pip setting uv is not given (a
proxy, a trusted host, pre-releases, binary or source-only rules), uv not installable, or uv failing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import NoReturn

ROOT = Path(__file__).resolve().parent
EXTRAS = {"report": "", "symsel": "", "test": "[dev]", "test-latest": "[dev]", "docs": "[docs]",
          "test-opacus": "[dev,opacus]"}
#: the environment of each command (default ./.venv)
VENVS = {"test-latest": ".venv-latest", "test-opacus": ".venv-opacus"}
#: an install with the key's extras holds everything an install with each of its values would (the dev extras add to
#: the core install): `run.py report` after `run.py test` finds its environment ready instead of asking pip again
COVERS = {"[dev]": ("",)}


def _bin(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def ensure_environment(extras: str, latest: bool = False, venv_name: str | None = None) -> Path:
    """Create the environment (``venv_name``, default ./.venv or ./.venv-latest) and install symsel with ``extras``
    unless the same install, or one that covers it (:data:`COVERS`), is already there; returns its ``bin`` folder.
    Pinned to constraints.txt unless ``latest``."""
    if sys.version_info < (3, 11):  # noqa: UP036 - run.py is executed by whatever python3 the user has
        sys.exit(f"symsel needs Python >= 3.11; this is {sys.version.split()[0]}")
    venv = ROOT / (venv_name or (".venv-latest" if latest else ".venv"))
    python = _bin(venv) / ("python.exe" if os.name == "nt" else "python")
    pins = b"" if latest else (ROOT / "constraints.txt").read_bytes()

    def stamp_of(installed: str) -> tuple[Path, str]:  # the file marking an install and what it must hold
        fingerprint = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + pins + installed.encode()).hexdigest()
        return venv / f".installed{installed.strip('[]').replace(',', '-') or '-core'}", fingerprint

    for installed in (extras, *(wider for wider, covered in COVERS.items() if extras in covered)):
        stamp, fingerprint = stamp_of(installed)
        if stamp.exists() and stamp.read_text() == fingerprint and python.exists():
            return _bin(venv)
    stamp, fingerprint = stamp_of(extras)
    if not python.exists():
        print(f"symsel: creating {venv.name}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    print(f"symsel: installing symsel{extras} into {venv.name} (first run only)", file=sys.stderr)
    constraint_args = [] if latest else ["-c", str(ROOT / "constraints.txt")]
    target = [*(["--upgrade"] if latest else []), *constraint_args, "-e", f"{ROOT}{extras}"]
    if not _installed_with_uv(str(python), constraint_args, target):
        # --no-compile: pip would compile all 8,000 modules of the environment (about 30 CPU-s); the suite imports a
        # third of them, and main() lets each be compiled once, when first imported (uv compiles nothing either)
        subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", "--no-compile",
                        *target], check=True)
    stamp.write_text(fingerprint)
    return _bin(venv)


#: reads pip's effective install options (its configuration files and PIP_* variables) as JSON
_PIP_OPTIONS = """
import json
from pip._internal.commands import create_command
options, _ = create_command("install").parse_args([])
print(json.dumps({name: getattr(options, name, None) for name in (
    "index_url", "extra_index_urls", "find_links", "constraints", "cert", "no_index", "proxy", "trusted_hosts",
    "client_cert", "pre", "prefer_binary")} | {"binary_rules": bool(options.format_control.no_binary
                                                                    or options.format_control.only_binary)}))
"""


def uv_command(python: str, pip_options: dict, target: list[str]) -> tuple[list[str], dict[str, str]] | None:
    """The ``uv pip install`` command (and the variables to add to its environment) that installs ``target`` as pip,
    with the options ``pip_options`` (:data:`_PIP_OPTIONS`), would; ``None`` when pip is configured in a way this
    does not pass on to uv."""
    if any(pip_options.get(name) for name in ("proxy", "trusted_hosts", "client_cert", "pre", "prefer_binary",
                                              "binary_rules")):
        return None
    # pip searches all its indexes for the best version; uv, by default, only the first index that has the package
    command = [python, "-m", "uv", "pip", "install", "--python", python, "-q", "--index-strategy", "unsafe-best-match"]
    if pip_options.get("no_index"):
        command.append("--no-index")
    elif pip_options.get("index_url"):
        command += ["--index-url", pip_options["index_url"]]
    for url in pip_options.get("extra_index_urls") or ():
        command += ["--extra-index-url", url]
    for link in pip_options.get("find_links") or ():
        command += ["--find-links", link]
    for constraint in pip_options.get("constraints") or ():
        command += ["-c", constraint]
    env = {"SSL_CERT_FILE": pip_options["cert"]} if pip_options.get("cert") else {}
    return [*command, *target], env


def _installed_with_uv(python: str, pins: list[str], target: list[str]) -> bool:
    """Install ``target`` with uv (module docstring); ``False`` when pip has to do it."""
    def quiet(args: list[str], extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(args, capture_output=True, text=True, env={**os.environ, **(extra_env or {})})

    probe = quiet([python, "-c", _PIP_OPTIONS])
    try:
        found = uv_command(python, json.loads(probe.stdout), target) if probe.returncode == 0 else None
    except (ValueError, TypeError, AttributeError):
        found = None
    if found is None:
        return False
    if quiet([python, "-m", "pip", "install", "--disable-pip-version-check", "-q", "--no-compile", *pins,
              "uv"]).returncode != 0:
        return False
    command, env = found
    result = quiet(command, env)
    if result.returncode != 0:
        print("symsel: uv could not install; pip will\n" + result.stderr[-2000:], file=sys.stderr)
        return False
    return True


#: where ``run.py docs`` builds by default (gitignored): the site in its ``html``, the notebooks' images in its
#: ``jupyter_execute`` (myst-nb writes them beside the site's folder); the API reference's generated pages go to
#: docs/_generated (docs/conf.py)
DOCS_BUILD = ROOT / "docs" / "_build"
#: what a build folder holds after a build
DOCS_BUILD_ENTRIES = ("html", "jupyter_execute")


class _DocsParser(argparse.ArgumentParser):
    """``run.py docs``'s options; a bad one is refused with one line and exit status 2, before any set-up."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"symsel: error: run.py docs: {message}\n")


def docs_options(rest: list[str]) -> argparse.Namespace:
    """The options of ``run.py docs`` (sphinx-build's own names for the ones passed on): ``--out`` resolved against
    the caller's working folder and checked by :func:`_docs_out_problem`, ``-j`` from 1 to the number of CPUs."""
    parser = _DocsParser(prog="python3 run.py docs", allow_abbrev=False,
                         description="Build the documentation site (sphinx-build, warnings as errors).")
    parser.add_argument("--out", default=str(DOCS_BUILD),
                        help="the build folder: new, empty or an earlier build (default docs/_build); the site goes "
                        "to its html folder")
    parser.add_argument("-E", "--fresh-env", action="store_true", help="read every page again")
    parser.add_argument("-a", "--write-all", action="store_true", help="write every page again")
    parser.add_argument("-j", "--jobs", default="1", help="processes to build with: 1 to the number of CPUs, or auto")
    options = parser.parse_args(rest)
    cpus = os.cpu_count() or 1
    if options.jobs != "auto" and not (options.jobs.isascii() and options.jobs.isdigit()
                                       and 1 <= int(options.jobs) <= cpus):
        parser.error(f"parameter --jobs={options.jobs!r} is out of range; allowed: 1 to {cpus} (the CPUs) or auto")
    try:
        problem = _docs_out_problem(options.out)
    except OSError as exc:  # a name too long, a folder that may not be read
        problem = f"cannot be used: {exc.strerror}"
    if problem:
        parser.error(f"parameter --out={options.out!r} {problem}")
    options.out = Path(options.out).resolve()
    return options


def _docs_out_problem(out: str) -> str | None:
    """Why the build cannot go to the folder ``out``, or ``None``. Refused: an empty name; something that is not a
    folder (a file, a device, a FIFO) or lies under a file; the repository itself (its root, a folder above it, or a
    folder in it other than docs/_build: the site would land among the sources); a folder that holds anything but the
    folders of an earlier build (:data:`DOCS_BUILD_ENTRIES`, not symbolic links), which the build would mix its own
    files into or write through."""
    allowed = "; allowed: a new or empty folder, or an earlier build, outside the repository or under docs/_build"
    if not out.strip():
        return "is empty" + allowed
    path = Path(out).resolve()
    existing = next(folder for folder in (path, *path.parents) if folder.exists())
    if existing != path and not existing.is_dir():
        return f"lies under {existing}, which is not a folder" + allowed
    if path.exists() and not path.is_dir():
        return "is not a folder" + allowed
    if path == ROOT or path in ROOT.parents or (path.is_relative_to(ROOT) and not path.is_relative_to(DOCS_BUILD)):
        return "would put the site among the repository's files" + allowed
    if path.is_dir() and any(entry.name not in DOCS_BUILD_ENTRIES or entry.is_symlink() or not entry.is_dir()
                             for entry in path.iterdir()):
        return "holds files that are not an earlier build of the site" + allowed
    return None


def docs_command(python: Path, options: argparse.Namespace) -> list[str]:
    """``sphinx-build`` of the documentation site into the ``html`` folder of ``options.out`` (:func:`docs_options`)
    with warnings as errors: the source folder is the repository (docs/conf.py reads the pages it lists), the
    configuration is docs/conf.py."""
    flags = [*(["-E"] if options.fresh_env else []), *(["-a"] if options.write_all else []), "-j", options.jobs]
    return [str(python), "-m", "sphinx", "-W", "--keep-going", "-q", "-c", str(ROOT / "docs"), *flags, str(ROOT),
            str(options.out / "html")]


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    if not argv or argv[0] not in EXTRAS:
        given = f"unknown command {argv[0]!r}" if argv else "no command given"
        print(f"symsel: error: run.py: {given} (choose from {', '.join(EXTRAS)}; run.py --help explains each)",
              file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    docs = docs_options(rest) if command == "docs" else None  # a bad option is refused before any set-up
    bin_dir = ensure_environment(EXTRAS[command], latest=command == "test-latest", venv_name=VENVS.get(command))
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    if command in ("test", "test-latest"):
        args = [str(python), "-m", "pytest", *rest]
    elif docs is not None:
        args = docs_command(python, docs)
    elif command == "test-opacus":  # its own folder, outside the default suite's testpaths
        args = [str(python), "-m", "pytest", "tests_opacus", "-n", "0", *rest]
    elif command == "report":
        args = [str(bin_dir / "symsel"), "report", *rest]
    else:
        args = [str(bin_dir / "symsel"), *rest]
    # the environment is run.py's own: its bytecode is written when a module is first imported (and reused by every
    # later process: the test workers, the notebooks' kernels, the CLI's subprocesses), even where the caller's
    # PYTHONDONTWRITEBYTECODE would have every process compile every module again
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    return subprocess.call(args, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
