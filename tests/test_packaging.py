"""The package carries what users of its field expect: a version, type information, a license, citation metadata,
complete project metadata, and an sdist with everything a clone has for testing and reading."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

import symsel

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def test_version_is_the_one_in_pyproject():
    assert symsel.__version__ == PROJECT["version"]
    assert "__version__" in dir(symsel)


def test_version_falls_back_to_pyproject_without_installed_metadata(monkeypatch):
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert symsel._version() == PROJECT["version"]


def test_py_typed_ships_as_package_data():
    assert (ROOT / "symsel" / "py.typed").is_file()
    assert "py.typed" in PYPROJECT["tool"]["setuptools"]["package-data"]["symsel"]


def test_license_is_spdx_with_its_full_text():
    assert PROJECT["license"] == "Apache-2.0"  # an SPDX expression, not the deprecated {text = ...} table
    assert PROJECT["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
    requires = " ".join(PYPROJECT["build-system"]["requires"])
    minimum = re.search(r"setuptools>=(\d+)", requires)
    assert minimum and int(minimum.group(1)) >= 77, "setuptools < 77 reads no SPDX license string"


def test_citation_cff_matches_the_package():
    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert citation["cff-version"] == "1.2.0"
    assert str(citation["version"]) == PROJECT["version"]
    assert citation["license"] == PROJECT["license"]
    assert citation["title"] and citation["abstract"] and citation["authors"]
    titles = {reference["title"] for reference in citation.get("references", [])}
    assert {"Privacy Profiles for Private Selection", "Hyperparameter Tuning with Renyi Differential Privacy"} <= titles


def test_project_metadata_is_complete():
    classifiers = set(PROJECT["classifiers"])
    for expected in ("Programming Language :: Python :: 3.11", "Operating System :: OS Independent",
                     "Intended Audience :: Science/Research", "Topic :: Security", "Typing :: Typed"):
        assert expected in classifiers
    assert not any(c.startswith("License ::") for c in classifiers), "license classifiers clash with an SPDX license"
    assert PROJECT["authors"] == [{"name": "The symsel developers"}]
    assert PROJECT["keywords"]
    assert PROJECT["requires-python"] == ">=3.11"


@pytest.mark.parametrize("path", ["tests", "docs", "benchmarks", "derivations", "notebooks", "README.md", "LICENSE",
                                  "CITATION.cff", "constraints.txt", "run.py"])
def test_the_sdist_carries(path):
    """MANIFEST.in names every folder and file a clone uses for testing and reading (a real `python -m build --sdist`
    needs the registry for its isolated build environment, so this reads the manifest's own lines)."""
    assert (ROOT / path).exists()
    covered = set()
    for line in (ROOT / "MANIFEST.in").read_text().splitlines():
        words = line.split()
        if words and words[0] in ("graft", "include"):
            covered.update(words[1:])
    assert path in covered


def _run_py():
    import importlib.util

    spec = importlib.util.spec_from_file_location("symsel_run_py", ROOT / "run.py")
    assert spec is not None and spec.loader is not None
    run_py = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run_py)
    return run_py


def test_run_py_passes_the_environment_on_without_pythondontwritebytecode(monkeypatch, tmp_path):
    """run.py compiles nothing at install; the commands it runs must write each module's bytecode when first imported
    (for the test workers, kernels and subprocesses after them), so the caller's PYTHONDONTWRITEBYTECODE is not
    passed on; every other variable is, and the command runs from the repository root."""
    run_py = _run_py()
    calls = []
    monkeypatch.setattr(run_py, "ensure_environment", lambda extras, latest=False, venv_name=None: tmp_path)
    monkeypatch.setattr(run_py.subprocess, "call", lambda args, **kwargs: calls.append((args, kwargs)) or 0)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("SYMSEL_RUN_PY_PROBE", "kept")
    assert run_py.main(["symsel", "--help"]) == 0
    (args, kwargs), = calls
    assert args == [str(tmp_path / "symsel"), "--help"] and kwargs["cwd"] == ROOT
    assert "PYTHONDONTWRITEBYTECODE" not in kwargs["env"] and kwargs["env"]["SYMSEL_RUN_PY_PROBE"] == "kept"
    install = (ROOT / "run.py").read_text()
    assert "--no-compile" in install and "compileall" not in install


def test_run_py_report_after_test_finds_its_environment_ready(monkeypatch, tmp_path):
    """An install with the test extras serves the report (the core install is part of it): no second pip run, until
    pyproject.toml or constraints.txt changes."""
    run_py = _run_py()
    monkeypatch.setattr(run_py, "ROOT", tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'probe'\n")
    (tmp_path / "constraints.txt").write_text("probe==1\n")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    installs = []

    def run(args, **kwargs):  # the installs of symsel (by pip: every other step fails, so pip does the install)
        if args[-2] == "-e":
            installs.append(args)
        return subprocess.CompletedProcess(args, 0 if args[-2] == "-e" else 1, "", "")

    monkeypatch.setattr(run_py.subprocess, "run", run)
    run_py.ensure_environment("[dev]")
    assert len(installs) == 1 and installs[0][-1] == f"{tmp_path}[dev]"
    run_py.ensure_environment("")  # the report after the tests
    run_py.ensure_environment("[dev]")
    assert len(installs) == 1
    (tmp_path / "constraints.txt").write_text("probe==2\n")
    run_py.ensure_environment("")  # the pins changed: the dev install no longer covers it
    assert len(installs) == 2 and installs[1][-1] == f"{tmp_path}"
    run_py.ensure_environment("")
    assert len(installs) == 2


MACHINE_PIP = {"index_url": "https://pypi.org/simple", "extra_index_urls": ["file:///opt/a/simple", "file:///opt/b"],
               "find_links": ["/opt/wheels"], "constraints": ["/etc/xdg/pip/constraints.txt"],
               "cert": "/etc/ssl/certs/ca-certificates.crt", "no_index": False, "proxy": "", "trusted_hosts": [],
               "client_cert": None, "pre": False, "prefer_binary": False, "binary_rules": False}


def test_uv_is_given_pip_s_configuration_and_left_out_when_it_cannot_be():
    """uv gets pip's indexes (all searched for the best version, as pip does), find-links, constraint files and
    certificate bundle; a pip setting it would not get (a proxy, a trusted host, a client certificate, pre-releases,
    binary rules) leaves the install to pip."""
    run_py = _run_py()
    target = ["-c", "constraints.txt", "-e", "/repo[dev]"]
    command, env = run_py.uv_command("/v/bin/python", MACHINE_PIP, target)
    assert command == ["/v/bin/python", "-m", "uv", "pip", "install", "--python", "/v/bin/python", "-q",
                       "--index-strategy", "unsafe-best-match", "--index-url", "https://pypi.org/simple",
                       "--extra-index-url", "file:///opt/a/simple", "--extra-index-url", "file:///opt/b",
                       "--find-links", "/opt/wheels", "-c", "/etc/xdg/pip/constraints.txt", *target]
    assert env == {"SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt"}
    command, env = run_py.uv_command("/p", MACHINE_PIP | {"no_index": True, "cert": None}, target)
    assert "--no-index" in command and "--index-url" not in command and env == {}
    for name, value in (("proxy", "http://proxy:3128"), ("trusted_hosts", ["mirror"]), ("client_cert", "/c.pem"),
                        ("pre", True), ("prefer_binary", True), ("binary_rules", True)):
        assert run_py.uv_command("/p", MACHINE_PIP | {name: value}, target) is None, name


def test_pip_s_options_are_read_from_this_pip():
    """The probe reads pip's effective options through pip's own (private) option parser: it must still work with
    the pip installed here (a newer pip that moved them makes this fail, and the install falls back to pip)."""
    run_py = _run_py()
    result = subprocess.run([sys.executable, "-c", run_py._PIP_OPTIONS], capture_output=True, text=True, check=True)
    options = json.loads(result.stdout)
    assert set(options) == set(MACHINE_PIP)
    assert isinstance(options["extra_index_urls"], list) and isinstance(options["constraints"], list)


@pytest.mark.parametrize("failing", ["probe", "pip install uv", "uv", None])
def test_the_install_is_left_to_pip_when_any_uv_step_fails(monkeypatch, tmp_path, failing):
    """Reading pip's options, installing uv with pip, installing symsel with uv: when any of them fails, pip installs
    symsel (without compiling, with the pins); when none fails, pip does not run for symsel."""
    run_py = _run_py()
    monkeypatch.setattr(run_py, "ROOT", tmp_path)
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'probe'\n")
    (tmp_path / "constraints.txt").write_text("probe==1\n")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    python = tmp_path / ".venv" / "bin" / "python"
    python.write_text("")
    calls = []

    def run(args, **kwargs):
        step = ("probe" if args[1] == "-c" else "uv" if args[1:3] == ["-m", "uv"]
                else "pip install uv" if args[-1] == "uv" else "pip")
        calls.append((step, args, kwargs))
        out = json.dumps(MACHINE_PIP) if step == "probe" else ""
        return subprocess.CompletedProcess(args, 1 if step == failing else 0, out, "")

    monkeypatch.setattr(run_py.subprocess, "run", run)
    run_py.ensure_environment("[dev]")
    steps = [step for step, _, _ in calls]
    expected = {"probe": ["probe", "pip"], "pip install uv": ["probe", "pip install uv", "pip"],
                "uv": ["probe", "pip install uv", "uv", "pip"], None: ["probe", "pip install uv", "uv"]}[failing]
    assert steps == expected
    pins = ["-c", str(tmp_path / "constraints.txt")]
    _, uv_install, _ = next(call for call in calls if call[0] == "pip install uv") if failing != "probe" else (
        None, None, None)
    if uv_install is not None:
        assert uv_install[-3:] == [*pins, "uv"]
    if failing is not None:
        _, pip_args, _ = calls[-1]
        assert pip_args[:3] == [str(python), "-m", "pip"] and "--no-compile" in pip_args
        assert pip_args[-4:] == [*pins, "-e", f"{tmp_path}[dev]"]
    else:
        _, uv_args, uv_kwargs = calls[-1]
        assert uv_args[-4:] == [*pins, "-e", f"{tmp_path}[dev]"]
        assert uv_kwargs["env"]["SSL_CERT_FILE"] == MACHINE_PIP["cert"]
    assert (tmp_path / ".venv" / ".installeddev").read_text()  # the install is stamped either way


def test_run_py_test_opacus_has_its_own_environment_and_tests(monkeypatch, tmp_path):
    """`run.py test-opacus` installs the opacus extra into ./.venv-opacus and runs tests_opacus/ only."""
    run_py = _run_py()
    seen, calls = [], []
    monkeypatch.setattr(run_py, "ensure_environment",
                        lambda extras, latest=False, venv_name=None: seen.append((extras, venv_name)) or tmp_path)
    monkeypatch.setattr(run_py.subprocess, "call", lambda args, **kwargs: calls.append(args) or 0)
    assert run_py.main(["test-opacus", "-q"]) == 0
    assert seen == [("[dev,opacus]", ".venv-opacus")]
    assert calls[0][1:] == ["-m", "pytest", "tests_opacus", "-n", "0", "-q"]


@pytest.mark.parametrize("args, names", [
    (["--no-such-option"], "unrecognized arguments: --no-such-option"),
    (["docs"], "unrecognized arguments: docs"),  # a positional argument would become sphinx-build's source folder
    (["--out", ""], "--out='' is empty"),
    (["--out", "notes.txt"], "--out='notes.txt' is not a folder"),
    (["--out", "notes.txt/site"], "which is not a folder"),
    (["--out", "mine"], "--out='mine' holds files that are not an earlier build"),
    (["-j", "0"], "--jobs='0' is out of range"),
    (["-j", "1000000"], "--jobs='1000000' is out of range"),
    (["--fresh"], "unrecognized arguments: --fresh"),  # no abbreviations
])
def test_run_py_docs_refuses_a_bad_option_in_one_line_before_any_set_up(monkeypatch, tmp_path, capsys, args, names):
    run_py = _run_py()
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("mine\n")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "index.html").write_text("my own page\n")
    monkeypatch.setattr(run_py, "ensure_environment", lambda *args, **kwargs: pytest.fail("set up before the check"))
    with pytest.raises(SystemExit) as exit_:
        run_py.main(["docs", *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("symsel: error: run.py docs: ") and names in err
    assert (tmp_path / "notes.txt").read_text() == "mine\n" and os.listdir(tmp_path / "mine") == ["index.html"]


@pytest.mark.parametrize("where", ["root", "above", "docs", "symsel"])
def test_run_py_docs_never_writes_the_site_among_the_repository_s_files(where):
    run_py = _run_py()
    out = {"root": ROOT, "above": ROOT.parent, "docs": ROOT / "docs", "symsel": ROOT / "symsel" / "site"}[where]
    with pytest.raises(SystemExit) as exit_:
        run_py.docs_options(["--out", str(out)])
    assert exit_.value.code == 2


def test_run_py_docs_builds_into_a_new_folder_an_earlier_site_or_docs_build(monkeypatch, tmp_path):
    run_py = _run_py()
    calls = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(run_py, "ensure_environment", lambda extras, latest=False, venv_name=None: tmp_path)
    monkeypatch.setattr(run_py.subprocess, "call", lambda args, **kwargs: calls.append(args) or 0)
    for folder in ("html", "jupyter_execute"):
        (tmp_path / "earlier" / folder).mkdir(parents=True)
    (tmp_path / "earlier" / "html" / "index.html").write_text("")
    for args in (["--out", "new/site", "-E", "-j", "auto"], ["--out", "earlier", "-a"], []):
        assert run_py.main(["docs", *args]) == 0
    new, earlier, default = calls
    assert new[-2:] == [str(ROOT), str(tmp_path / "new" / "site" / "html")] and "-E" in new and "auto" in new
    assert earlier[-1] == str(tmp_path / "earlier" / "html") and "-a" in earlier and "-E" not in earlier
    assert default[-1] == str(ROOT / "docs" / "_build" / "html")


@pytest.mark.parametrize("entry", ["file", "link"])
def test_run_py_docs_refuses_a_build_folder_with_more_than_an_earlier_build(monkeypatch, tmp_path, entry):
    """An html folder that is a file, or a symbolic link through which the build would write elsewhere."""
    run_py = _run_py()
    (tmp_path / "build").mkdir()
    (tmp_path / "mine").mkdir()
    if entry == "file":
        (tmp_path / "build" / "html").write_text("mine\n")
    else:
        (tmp_path / "build" / "html").symlink_to(tmp_path / "mine")
    with pytest.raises(SystemExit) as exit_:
        run_py.docs_options(["--out", str(tmp_path / "build")])
    assert exit_.value.code == 2


@pytest.mark.parametrize("argv", [[], ["tests"], ["--bogus"], ["Report"]])
def test_run_py_refuses_an_unknown_command_in_one_line_before_any_set_up(argv, monkeypatch, capsys):
    """A command run.py does not know is refused with one line naming it and the commands there are (exit 2), and
    nothing is installed; ``--help`` prints the commands (exit 0)."""
    run_py = _run_py()
    monkeypatch.setattr(run_py, "ensure_environment", lambda *a, **k: pytest.fail("set-up before the refusal"))
    assert run_py.main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("symsel: error: run.py: ")
    assert "report" in err and "test" in err and (argv[0] in err if argv else "no command" in err)
    assert run_py.main(["--help"]) == 0 and "python3 run.py report" in capsys.readouterr().out
