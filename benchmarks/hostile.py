"""A counted hostile-input run: every CLI command and the public Python APIs, fed malformed, hostile and
enormous arguments, each case in its own process with a per-case CPU limit, in a sandbox whose files are watched.

For each case it records, and the summary counts:

* ``traceback``: any output with ``Traceback``, a CLI exit status other than 0 or 2, an error that is not one line
  ``symsel: error: …``, or a Python API raising anything but a ``ValueError`` subclass from :mod:`symsel.errors`;
* ``hang``: the case ran out of its CPU limit (``--cpu``, default 60 s: the point is a hang, not slowness) or its wall
  limit (``--wall``, default 120 s: a process blocked on a FIFO uses no CPU);
* ``accepted_invalid``: exit 0 (or a value returned) for an input that is not valid (a non-law, an out-of-range
  number, a device or a directory as an output file …);
* ``bad_output``: a valid input answered with output that is not strict JSON, or with a NaN/negative where a number
  in range is due;
* ``damaged``: any file of the sandbox outside the case's requested outputs created, changed, removed or its mtime
  moved (``sentinel/`` holds files with fixed mtimes; the working folder is watched too), or a device file of the
  sandbox no longer a character device;
* ``memory_blowup``: the case ran into its memory cap (``--memory``, default 3072 MiB: ``RLIMIT_DATA``, the memory a
  process can write, heap and anonymous mappings, so an allocation beyond it fails), that is, it reported a
  ``MemoryError`` or a failed allocation (``symsel: error: not enough memory …`` included), was killed by ``SIGKILL``
  before its CPU limit (the kernel's out-of-memory killer), or its peak resident set (``ru_maxrss`` of the case's
  process and of the processes it waited for, from ``wait4``; recorded for every case as ``peak_rss_mib``) passed
  the cap. ``RLIMIT_AS`` would count address space never written as well: the 64 MiB reservations of each thread's
  malloc arena and the shared libraries, which grow with the number of cores; a normal case's peak virtual size is
  350–560 MiB against a resident peak of 120–270 MiB, the largest (a DP-SGD run of 10⁶ steps) 1.4 GiB against 1.1
  GiB. The cap, like the CPU limit, holds for each process of the case (a sweep's workers have one each), and the
  peak is that of the largest process, not their sum.

The sandbox (a temporary folder) has ``sentinel/`` (files that no case may touch), ``work/`` (the cases' working
folder, with a small grid file), a FIFO, and its own ``dev/null`` and ``dev/full``: character devices made with
``mknod`` (same major/minor numbers as the system's), so that a case that would *replace* a device replaces the
sandbox's copy and never the machine's (the run may be root). Without ``mknod`` the device cases are skipped and
the JSON says so.

Usage (from the repository root, inside its virtual environment)::

    python benchmarks/hostile.py                       # every case; summary table; benchmarks/results/hostile.json
    python benchmarks/hostile.py --only cli: --list     # the CLI cases' names
    python benchmarks/hostile.py --only api:accountant  # the cases whose name starts so
    python benchmarks/hostile.py --only cli:docs: --json /tmp/docs.json  # a partial run, written elsewhere
    python benchmarks/hostile.py --only cli:docs: --merge benchmarks/results/hostile.json  # joined to a full run

The documentation build's cases (``cli:docs:…``) run ``python3 run.py docs`` (its options are refused before any
set-up) and, for the one valid build, the same command in this environment (``docs_command`` of run.py).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import math
import os
import resource
import shutil
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SYMSEL = str(Path(sys.executable).with_name("symsel"))
NON_LAW = "pgf(expr='exp(2*(z-1)) + (z**30-z**40)/100')"
#: bound options that are valid: δ = 1e-30 answers a finite ε, δ = 0 answers ε = inf (no finite ε has δ = 0).
VALID_BOUND = ("delta_1e-30", "delta_0")
SMALL_GRID = "laws: ['geometric(mean=3)']\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\nmethods: [paper]\n"
LONG = "geometric(mean=" + "9" * 100_000 + ")"
PWNED = "PWNED"  # a file a code-injection case would create in the working folder
MIB = 2**20


@dataclass
class Case:
    name: str  # "cli:…" or "api:…"
    args: list[str] | str  # argv after `symsel` (CLI) or Python source setting RESULT (API)
    invalid: bool  # True: the input is not valid and must be refused
    outputs: tuple[str, ...] = ()  # sandbox-relative paths the case may create or change
    files: dict[str, str] = field(default_factory=dict)  # work-relative files written before the case
    links: dict[str, str] = field(default_factory=dict)  # work-relative symbolic links (name: target) made before it
    env: dict[str, str] = field(default_factory=dict)  # environment variables set for the case
    needs_devices: bool = False
    program: tuple[str, ...] = ()  # a CLI case's program before its args (default: the symsel command)
    cpu: int = 0  # a valid case's own CPU limit in seconds where it is known to be slow, not hung (0: --cpu)


# ------------------------------------------------------------------------------------------------ the cases
def cli_cases() -> list[Case]:
    c: list[Case] = []

    def add(name: str, args: list[str], invalid: bool = True, **kw: Any) -> None:
        c.append(Case("cli:" + name, [*args, "--json"] if "--help" not in args else args, invalid, **kw))

    g, b = "geometric(mean=30)", "gaussian(sigma=4)"
    # dist
    for i, spec in enumerate([NON_LAW, "pgf(expr='1.2*z^100 - 0.2*z^101')", "geometric(mean=nan)",
                              "geometric(mean=inf)",
                              "geometric(mean=-1)", "geometric(mean=2e300)", "poisson(mean=2e300)", "", "   ",
                              "géométrique(mean=3)", "geometric(mean=\uff13)", "(" * 10_000, LONG,
                              "point(k=" + "9" * 5000 + ")", "pgf(expr='z**(10**10)')", "pgf(expr='z**(9**9**9)')",
                              "binomial(n=10**12, p=1/2)", "pgf(expr='__import__(\"os\").system(\"touch PWNED\")')",
                              "geometric(mean=__import__('pathlib').Path('PWNED').touch())",
                              "pmf(p=[0.5, 0.6])", "point(k=-1)", "point(k=0.5)", "mixture(dists=[], weights=[])",
                              "\x1b[31mgeometric(mean=3)", "geometric(mean=3)\n--delta"]):
        add(f"dist:{i}", ["dist", spec])
    add("dist:valid_huge_mean", ["dist", "geometric(mean=1e6)"], invalid=False)
    add("dist:valid_mean_1e300", ["dist", "geometric(mean=1e300)"], invalid=False)  # its mean rounds below 1e300
    add("dist:valid_poisson_1e300", ["dist", "poisson(mean=1e300)"], invalid=False)
    add("dist:candidates_nan", ["dist", g, "--candidates", "nan"])
    add("dist:candidates_negative", ["dist", g, "--candidates", "-5"])
    # bound
    for name, extra in [("delta_1e-30", ["--delta", "1e-30"]), ("delta_0", ["--delta", "0"]),
                        ("delta_nan", ["--delta", "nan"]), ("delta_neg", ["--delta", "-1e-6"]),
                        ("delta_inf", ["--delta", "inf"]), ("delta_2", ["--delta", "2"]),
                        ("delta_1e300", ["--delta", "1e300"]), ("epsilon_nan", ["--epsilon", "nan"]),
                        ("epsilon_neg", ["--epsilon", "-1"]), ("epsilon_text", ["--epsilon", "one"]),
                        ("method_bogus", ["--delta", "1e-6", "--method", "bogus"]),
                        ("method_empty", ["--delta", "1e-6", "--method", ""]),
                        ("compose_bogus", ["--delta", "1e-6", "--compose-with", "bogus(x=1)"]),
                        ("compose_nan", ["--delta", "1e-6", "--compose-with", "gaussian(sigma=nan)"])]:
        add(f"bound:{name}", ["bound", "--dist", g, "--base", b, *extra], invalid=name not in VALID_BOUND)
    for name, law in [("non_law", NON_LAW), ("long", LONG), ("mean_2e300", "geometric(mean=2e300)"),
                      ("empty", "")]:
        add(f"bound:{name}", ["bound", "--dist", law, "--base", b, "--delta", "1e-6"])
    for name, base in [("sigma_nan", "gaussian(sigma=nan)"), ("sigma_neg", "gaussian(sigma=-1)"),
                       ("sigma_inf", "gaussian(sigma=inf)"), ("scale_zero", "laplace(scale=0)"),
                       ("q_2", "dpsgd(q=2, sigma=1, steps=10)"), ("steps_1e12", "dpsgd(q=0.01, sigma=1, steps=10**12)"),
                       ("rr_k1", "randomized_response(eps=1, k=1)"), ("approx_delta2", "approx(eps=1, delta=2)")]:
        add(f"bound:base_{name}", ["bound", "--dist", g, "--base", base, "--delta", "1e-6"])
    add("bound:valid_epsilon_1e300", ["bound", "--dist", g, "--base", b, "--epsilon", "1e300"], invalid=False)
    add("bound:valid_mean_1e6", ["bound", "--dist", "geometric(mean=1e6)", "--base", b, "--delta", "1e-6",
                                 "--method", "paper"], invalid=False)
    # profile
    add("profile:valid_delta_0", ["profile", b, "--delta", "0"], invalid=False)  # epsilon inf: the right answer
    # δ(ε) at ε < 0 is defined (the hockey-stick divergence; 1 - e^ε (1 - δ(-ε)) for a symmetric profile): answered
    add("profile:valid_epsilon_negative", ["profile", b, "--epsilon", "-3"], invalid=False)
    for name, args in [("base_non_base", [NON_LAW]), ("delta_nan", [b, "--delta", "nan"]),
                       ("epsilon_nan", [b, "--epsilon", "nan"]),
                       ("dpsgd_huge", ["dpsgd(q=0.01, sigma=1.1, steps=1e12)", "--delta", "1e-6"]),
                       ("empty", ["", "--delta", "1e-6"])]:
        add(f"profile:{name}", ["profile", *args])
    add("profile:valid_delta_1e-30", ["profile", b, "--delta", "1e-30"], invalid=False)
    # verify / audit / derive
    add("verify:budget_0", ["verify", "--dist", g, "--base", b, "--delta", "1e-6", "--budget", "0"])
    add("verify:budget_huge", ["verify", "--dist", g, "--base", b, "--delta", "1e-6", "--budget", "10**9"])
    add("verify:non_law", ["verify", "--dist", NON_LAW, "--base", b, "--delta", "1e-6"])
    add("verify:example_bogus", ["verify", "--example", "../../etc/passwd"])
    add("verify:delta_nan", ["verify", "--dist", g, "--base", b, "--delta", "nan"])
    add("audit:trials_0", ["audit", "--example", "xiang-example-1", "--delta", "0", "--trials", "0"])
    add("audit:trials_1e12", ["audit", "--example", "xiang-example-1", "--delta", "0", "--trials", "1000000000000"])
    add("audit:confidence_2", ["audit", "--example", "xiang-example-1", "--delta", "0", "--confidence", "2"])
    add("audit:confidence_nan", ["audit", "--example", "xiang-example-1", "--delta", "0", "--confidence", "nan"])
    add("audit:seed_negative", ["audit", "--example", "xiang-example-1", "--delta", "0", "--seed", "-1"])
    add("audit:non_law", ["audit", "--dist", NON_LAW, "--base", b, "--delta", "1e-6", "--trials", "1000"])
    add("derive:non_law", ["derive", NON_LAW])
    add("derive:long", ["derive", LONG])
    add("derive:delta_nan", ["derive", g, "--delta", "nan"])
    add("derive:delta_nan_with_base", ["derive", g, "--base", b, "--delta", "nan"])
    add("derive:base_bogus", ["derive", g, "--base", "bogus(x=1)"])
    # plan
    plan_g = "geometric(mean={mean})"
    for name, args in [("epsilon_1e300", ["--epsilon", "1e300", "--delta", "1e-6", "--dist", plan_g]),
                       ("epsilon_nan", ["--epsilon", "nan", "--delta", "1e-6", "--dist", plan_g]),
                       ("delta_nan", ["--epsilon", "2", "--delta", "nan", "--dist", plan_g]),
                       ("no_placeholder", ["--epsilon", "2", "--delta", "1e-6", "--dist", g]),
                       ("non_law_template", ["--epsilon", "2", "--delta", "1e-6", "--dist",
                                             "pgf(expr='exp({mean}*(z-1)) - z**40/100')"]),
                       ("mean_nan", ["--mean", "nan", "--delta", "1e-6"]),
                       ("mean_1e300", ["--mean", "1e300", "--delta", "1e-6"]),
                       ("mean_negative", ["--mean", "-4", "--delta", "1e-6"]),
                       ("candidates_nan", ["--epsilon", "2", "--delta", "1e-6", "--dist", plan_g, "--candidates",
                                           "nan"]),
                       ("two_knobs", ["--epsilon", "2", "--delta", "1e-6", "--dist", g])]:
        add(f"plan:{name}", ["plan", "--base", b, *args])
    add("plan:base_two_knobs", ["plan", "--base", "dpsgd(q=0.01, sigma={sigma}, steps={steps})", "--epsilon", "2",
                                "--delta", "1e-6", "--dist", g])
    # a δ = 0 budget: no mean fits a Gaussian base (mean null, with the reason): the right answer
    add("plan:valid_delta_0", ["plan", "--base", b, "--epsilon", "2", "--delta", "0", "--dist", plan_g],
        invalid=False)
    add("plan:valid_delta_1e-30", ["plan", "--base", b, "--epsilon", "20", "--delta", "1e-30", "--dist", plan_g,
                                   "--method", "paper"], invalid=False)
    # rnm
    # M = 1e12 and 1e30 queries are valid (the bounds grow with log M; answered in seconds)
    add("rnm:valid_m_1e12", ["rnm", "--m", "1000000000000", "--base", b, "--delta", "1e-6"], invalid=False)
    add("rnm:valid_m_1e30", ["rnm", "--m", "1" + "0" * 30, "--base", b, "--delta", "1e-6"], invalid=False)
    for name, args in [("m_0", ["--m", "0"]), ("m_negative", ["--m", "-5"]), ("m_text", ["--m", "many"]),
                       ("rounds_0", ["--m", "10", "--rounds", "0"]), ("base_bogus", ["--m", "10", "--base", "x"])]:
        add(f"rnm:{name}", ["rnm", *args, "--delta", "1e-6"] + ([] if "--base" in args else ["--base", b]))
    # ptr / tune
    for name, guarantee in [("nan", "nan,1e-6"), ("delta_2", "1,2"), ("text", "abc"), ("one", "1"), ("empty", ""),
                            ("inf", "inf,1e-6"), ("negative", "-1,1e-6")]:
        add(f"ptr:{name}", ["ptr", "--dist", "geometric(mean=10)", "--guarantee", guarantee])
    add("ptr:non_law", ["ptr", "--dist", NON_LAW, "--guarantee", "1,1e-6"])
    for name, args in [("q_2", ["--q", "2", "--sigma", "1", "--epsilon-q", "1"]),
                       ("sigma_0", ["--q", "0.01", "--sigma", "0", "--epsilon-q", "1"]),
                       ("sigma_nan", ["--q", "0.01", "--sigma", "nan", "--epsilon-q", "1"]),
                       ("threshold_nan", ["--q", "0.01", "--sigma", "1", "--threshold", "1,nan"]),
                       ("epsilon_q_nan", ["--q", "0.01", "--sigma", "1", "--epsilon-q", "nan"])]:
        add(f"tune:{name}", ["tune", "--dist", "geometric(mean=10)", *args])
    # valid, if enormous: ε_Q = 1e300 (thresholds from the least noise searched; a sound, huge ε), δ = 1e-300
    add("tune:valid_epsilon_q_1e300", ["tune", "--dist", "geometric(mean=10)", "--q", "0.01", "--sigma", "1",
                                       "--epsilon-q", "1e300"], invalid=False)
    add("tune:valid_delta_1e-300", ["tune", "--dist", "geometric(mean=10)", "--q", "0.01", "--sigma", "1",
                                    "--epsilon-q", "1", "--delta", "1e-300"], invalid=False)
    # sweep: grids
    grids = {
        "nan_delta": "laws: ['geometric(mean=3)']\nbases: ['gaussian(sigma=4)']\ndeltas: [.nan]\nmethods: [paper]\n",
        "non_law": f"laws: [\"{NON_LAW}\"]\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\nmethods: [paper]\n",
        "python_tag": "laws: !!python/object/apply:os.system ['touch PWNED']\nbases: ['gaussian(sigma=4)']\n"
                      "deltas: [1e-6]\n",
        "billion_laughs": "a: &a ['x','x','x','x','x','x','x','x','x']\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                          "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                          "laws: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nbases: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
                          "deltas: [1e-6]\n",
        "empty": "",
        "not_a_mapping": "- 1\n- 2\n",
        "bad_method": "laws: ['geometric(mean=3)']\nbases: ['gaussian(sigma=4)']\ndeltas: [1e-6]\nmethods: [bogus]\n",
    }
    for name, text in grids.items():
        add(f"sweep:grid_{name}", ["sweep", "grid.yaml", "--out", "out/g.csv"],
            outputs=("work/out/g.csv", "work/out/g.csv.lock"), files={"grid.yaml": text, "out/.keep": ""})
    add("sweep:grid_missing", ["sweep", "missing.yaml", "--out", "g.csv"], outputs=("work/g.csv",))
    add("sweep:grid_directory", ["sweep", ".", "--out", "g.csv"], outputs=("work/g.csv",))
    add("sweep:grid_devnull", ["sweep", "../dev/null", "--out", "g.csv"], outputs=("work/g.csv",), needs_devices=True)
    add("sweep:grid_fifo", ["sweep", "../fifo", "--out", "g.csv"], outputs=("work/g.csv",))
    small = {"grid.yaml": SMALL_GRID}
    for name, out in [("out_devnull", "../dev/null"), ("out_devfull", "../dev/full"), ("out_directory", "."),
                      ("out_fifo", "../fifo"), ("out_foreign_file", "../sentinel/results.csv"),
                      ("out_sentinel_text", "../sentinel/notes.txt"), ("out_empty", ""),
                      ("out_under_a_file", "../sentinel/notes.txt/g.csv"), ("out_long", "x" * 5000 + ".csv")]:
        add(f"sweep:{name}", ["sweep", "grid.yaml", "--out", out], files=small,
            outputs=(), needs_devices="dev/" in out)
    for name, args in [("jobs_0", ["--jobs", "0"]), ("jobs_huge", ["--jobs", "1000000"]),
                       ("dask_empty", ["--dask", ""]), ("parquet_devfull", ["--parquet", "../dev/full"]),
                       ("parquet_sentinel", ["--parquet", "../sentinel/notes.txt"]),
                       ("parquet_directory", ["--parquet", "."])]:
        add(f"sweep:{name}", ["sweep", "grid.yaml", "--out", "g.csv", *args], files=small,
            outputs=("work/g.csv", "work/g.csv.lock"), needs_devices="dev/" in " ".join(args))
    add("sweep:valid_small", ["sweep", "grid.yaml", "--out", "g.csv", "--jobs", "1"], invalid=False, files=small,
        outputs=("work/g.csv", "work/g.csv.lock"))
    # report: refused before computing
    for name, out in [("devnull", "../dev/null"), ("devfull", "../dev/full"), ("fifo", "../fifo"),
                      ("sentinel_file", "../sentinel/notes.txt"), ("under_a_file", "../sentinel/notes.txt/r"),
                      ("empty", "")]:
        add(f"report:{name}", ["report", "--quick", "--no-progress", "--out", out], needs_devices="dev/" in out)
    # every command with a bad option value / unknown option
    for command in ("bound", "dist", "verify", "derive", "audit", "sweep", "plan", "report", "tune", "profile", "rnm",
                    "ptr"):
        add(f"{command}:unknown_option", [command, "--no-such-option", "\u2603" * 1000])
    # --- risk (trade-off curve and attack risk, docs/tradeoff.md) ---
    for name, value in [("fpr_nan", "nan"), ("fpr_above_1", "1.5"), ("fpr_negative", "-0.1"), ("fpr_inf", "inf"),
                        ("fpr_text", "abc")]:
        add(f"risk:{name}", ["risk", "--base", b, "--fpr", value])
    add("risk:method_without_dist", ["risk", "--base", b, "--method", "envelope"])
    add("risk:bad_method", ["risk", "--base", b, "--dist", g, "--method", "bogus"])
    add("risk:bad_base", ["risk", "--base", "gaussian(sigma=-1)"])
    add("risk:unknown_option", ["risk", "--no-such-option", "\u2603" * 1000])
    add("risk:valid_fpr_0_and_1", ["risk", "--base", b, "--fpr", "0", "--fpr", "1"], invalid=False)
    add("risk:valid_fpr_1e-300", ["risk", "--base", b, "--fpr", "1e-300"], invalid=False)
    add("risk:valid_selection", ["risk", "--base", b, "--dist", g, "--method", "envelope"], invalid=False)
    # --- end risk ---
    # --- numeric edges: certified values on the wrong side, NaN in an answer, searches that start where a method
    # does not apply, work without a cost bound
    add("verify:valid_dpsgd_monotone_order", ["verify", "--dist", "point(k=2)", "--base",
                                              "dpsgd(q=0.1, sigma=1.0, steps=10)", "--delta", "1e-6"], invalid=False)
    for name, extra in [("", []), ("_final_run", ["--final-run"])]:
        add(f"plan:valid_interval_trials{name}", ["plan", "--method", "interval", "--dist", "point(k={k})", "--base",
                                                  b, "--epsilon", "2", "--delta", "1e-6", *extra], invalid=False)
    deep_compound = "geometric(mean=2)"
    for _ in range(9):
        deep_compound = f"compound(outer={deep_compound}, inner=poisson(mean=2))"
    deep_truncated = "geometric(mean=3)"
    for _ in range(20):
        deep_truncated = f"truncated(dist={deep_truncated}, k_max=50)"
    for name, law in [("compound_10_deep", deep_compound), ("truncated_20_deep", deep_truncated),
                      ("exponent_9999999", "pgf(expr='exp(z**9999999-1)')"),
                      ("binomial_p_1e-300", "binomial(n=10000000, p=1e-300)")]:
        add(f"dist:valid_{name}", ["dist", law], invalid=False)
        add(f"bound:valid_{name}", ["bound", "--dist", law, "--base", b, "--delta", "1e-6"], invalid=False)
    add("plan:valid_binomial_trials_tiny_p", ["plan", "--dist", "binomial(n={k}, p=1e-9)", "--base", b, "--epsilon",
                                              "2", "--delta", "1e-6"], invalid=False)
    add("verify:valid_binomial_1e7", ["verify", "--dist", "binomial(n=10000000, p=0.5)", "--base", b, "--delta",
                                      "1e-6"], invalid=False)
    for steps in (100_000, 1_000_000):
        add(f"verify:valid_dpsgd_{steps}_steps", ["verify", "--dist", "point(k=2)", "--base",
                                                  f"dpsgd(q=0.01, sigma=1.1, steps={steps})", "--delta", "1e-6"],
            invalid=False)
    values = ", ".join(f"'geometric(mean={i + 2})'" for i in range(1000))
    deltas = ", ".join(f"{1e-6 + i * 1e-9!r}" for i in range(1000))
    add("sweep:grid_billion_cells_anchors", ["sweep", "billion.yaml", "--out", "out.csv"],
        files={"billion.yaml": f"laws: &specs [{values}]\nbases: *specs\ndeltas: [{deltas}]\n"})
    # ---- whole pipeline (with_final_run routes): plan --mean with a {k} template
    add("plan:mean_k_fractional", ["plan", "--base", "gaussian(sigma=4)", "--mean", "30.5", "--dist", "point(k={k})",
                                   "--delta", "1e-6", "--final-run"])
    add("plan:mean_k_nan", ["plan", "--base", "gaussian(sigma=4)", "--mean", "nan", "--dist", "point(k={k})",
                            "--delta", "1e-6"])
    add("bound:compose_with_bogus", ["bound", "--dist", "point(k=3)", "--base", "gaussian(sigma=4)", "--delta", "1e-6",
                                     "--compose-with", "bogus(x=1)"])
    add("plan:mean_k_valid", ["plan", "--base", "gaussian(sigma=4)", "--mean", "3", "--dist", "point(k={k})",
                              "--delta", "1e-6", "--final-run", "--method", "best"], invalid=False)
    # ---- end of the whole-pipeline block
    # ---- edge inputs that ended in tracebacks: the smallest sampling rate, a nearly non-private part, huge integers,
    # a stdout that cannot be written
    tiny_q = "dpsgd(q=1e-300, sigma=1, steps=10)"
    add("bound:valid_dpsgd_smallest_rate", ["bound", "--dist", g, "--base", tiny_q, "--delta", "1e-6", "--method",
                                            "all"], invalid=False)
    add("verify:valid_dpsgd_smallest_rate", ["verify", "--dist", "geometric(mean=3)", "--base", tiny_q, "--delta",
                                             "1e-6"], invalid=False)
    add("plan:valid_dpsgd_smallest_rate_final_run", ["plan", "--base", tiny_q, "--epsilon", "1", "--delta", "1e-6",
                                                     "--dist", plan_g, "--final-run"], invalid=False)
    add("bound:valid_compose_nearly_non_private", ["bound", "--dist", g, "--base", b, "--delta", "1e-6",
                                                   "--compose-with", "gaussian(sigma=1e-3)"], invalid=False)
    add("rnm:valid_m_401_digits", ["rnm", "--m", "1" + "0" * 400, "--base", b, "--delta", "1e-6"], invalid=False)
    # ---- damaged files: a report folder that is not symsel's (a user's edited copy of a summary, no marker), or
    # whose marker is a symbolic link to a file outside it
    mine = {"rep/summary.md": "# symsel report\n\nmy own notes\n", "rep/bounds.csv": "mine\n"}
    add("report:users_copy_of_a_summary", ["report", "--quick", "--no-progress", "--out", "rep"], files=mine)
    marker_text = ("# symsel report wrote these files here and rewrites only them (one name a line)\nbounds.csv\n"
                   "summary.md\n")
    add("report:marker_symlink", ["report", "--quick", "--no-progress", "--out", "rep"],
        files={**mine, "elsewhere/marker": marker_text}, links={"rep/.symsel-report": "../elsewhere/marker"})
    # ---- accepted invalid: a power of the variable over the limit only in the whole expression
    add("dist:degree_of_whole_expression", ["dist", "pgf(expr='(z**1000000)**1000000')"])
    # ---- accepted invalid: options ignored or a bad value never looked at when no mean fits
    for name, value in [("candidates_negative_no_mean_fits", "-5"), ("candidates_nan_no_mean_fits", "nan")]:
        add(f"plan:{name}", ["plan", "--base", b, "--epsilon", "1", "--delta", "1e-6", "--dist", plan_g,
                             "--candidates", value])
    add("plan:candidates_with_fixed_trials", ["plan", "--base", b, "--epsilon", "1", "--delta", "1e-6", "--dist",
                                              "point(k={k})", "--candidates", "5"])
    add("derive:three_output_forms", ["derive", g, "--latex", "--markdown"])  # with --json from add()
    # ---- accepted invalid: grids with a typo key, a boolean delta, a repeated column; an --out that names a folder
    for name, name_text in [("typo_key", ("grid.yaml", SMALL_GRID.replace("methods:", "method:"))),
                            ("delta_true", ("grid.yaml", SMALL_GRID.replace("[1e-6]", "[true]"))),
                            ("two_dist_columns", ("grid.csv", "dist,base,delta,dist\ngeometric(mean=3),"
                                                  "gaussian(sigma=4),1e-6,poisson(mean=3)\n"))]:
        add(f"sweep:grid_{name}", ["sweep", name_text[0], "--out", "g.csv"], files=dict([name_text]),
            outputs=("work/g.csv", "work/g.csv.lock"))
    add("sweep:out_names_a_folder", ["sweep", "grid.yaml", "--out", "newdir/"], files=small)
    # ---- misleading messages: Python's integer printing limit, an environment variable joblib reads
    add("dist:factorial_power", ["dist", "pgf(expr='factorial(10000)**1000')"])
    four = {"grid.yaml": SMALL_GRID.replace("deltas: [1e-6]", "deltas: [1e-6, 1e-5, 1e-4, 1e-3]")}
    add("sweep:loky_cpu_count_garbage", ["sweep", "grid.yaml", "--out", "g.csv"], files=four,
        outputs=("work/g.csv", "work/g.csv.lock"), env={"LOKY_MAX_CPU_COUNT": "garbage"})
    # ---- the least noise of a DP-SGD base at the smallest rate, with the final run (its PLD too wide below sigma 0.02)
    add("plan:valid_dpsgd_smallest_rate_sigma_final_run", ["plan", "--base", "dpsgd(q=1e-300, sigma={sigma}, steps=10)",
                                                           "--final-run", "--dist", "geometric(mean=3)", "--epsilon",
                                                           "1", "--delta", "1e-6"], invalid=False, cpu=180)
    # (ε = 0 at every σ the PLD can hold, so the search for the least σ ends at the PLD's size limit, where each probe
    # builds a PLD of about a million points: 40-80 CPU-s in all, a slow answer rather than a hang)
    # ---- end of the smallest-rate block
    # ---- the documentation build (python3 run.py docs): options refused in one line before any set-up, an output
    # folder that is not a new or empty folder or an earlier site, and one real build into the sandbox
    run_py = (sys.executable, str(ROOT / "run.py"), "docs")
    docs_cases: list[tuple[str, list[str], dict[str, Any]]] = [
        ("unknown_option", ["--no-such-option", "\u2603" * 1000], {}),
        ("positional", ["elsewhere"], {}),  # sphinx-build would take it as its source folder
        ("out_devnull", ["--out", "../dev/null"], {"needs_devices": True}),
        ("out_fifo", ["--out", "../fifo"], {}), ("out_sentinel_file", ["--out", "../sentinel/notes.txt"], {}),
        ("out_under_a_file", ["--out", "../sentinel/notes.txt/site"], {}),
        ("out_foreign_folder", ["--out", "../sentinel"], {}),
        ("out_link_to_foreign_folder", ["--out", "site"], {"links": {"site": "../sentinel"}}),
        ("out_empty", ["--out", ""], {}), ("out_long", ["--out", "x" * 5000], {}),
        ("out_repository", ["--out", str(ROOT)], {}),
        ("out_in_the_sources", ["--out", str(ROOT / "symsel" / "site")], {}),
        ("jobs_0", ["-j", "0"], {}), ("jobs_huge", ["-j", "1000000"], {}), ("jobs_text", ["-j", "many"], {}),
    ]
    for name, args, kw in docs_cases:
        c.append(Case(f"cli:docs:{name}", args, True, program=run_py, **kw))
    c.append(Case("cli:docs:valid_help", ["--help"], False, program=run_py))
    # the build itself (about 15 CPU s): run.py's command in this environment, without its set-up of ./.venv
    here = ("import importlib.util, subprocess, sys\nfrom pathlib import Path\n"
            f"spec = importlib.util.spec_from_file_location('run_py', {str(ROOT / 'run.py')!r})\n"
            "run_py = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(run_py)\n"
            "options = run_py.docs_options(sys.argv[1:])\n"
            "sys.exit(subprocess.call(run_py.docs_command(Path(sys.executable), options), cwd=run_py.ROOT))\n")
    c.append(Case("cli:docs:valid_build", ["--out", "site"], False, outputs=("work/site",),
                  program=(sys.executable, "-c", here)))
    # ---- end of the documentation-build block
    # ---- run.py's own commands: an unknown or missing command is refused in one line before any set-up
    run_py_alone = (sys.executable, str(ROOT / "run.py"))
    for name, args in (("none", []), ("unknown", ["tests"]), ("option_first", ["--bogus", "report"])):
        c.append(Case(f"cli:run_py:{name}", args, True, program=run_py_alone))
    c.append(Case("cli:run_py:valid_help", ["--help"], False, program=run_py_alone))
    # ---- end of the run.py block
    return c


def api_cases() -> list[Case]:
    c: list[Case] = []

    def add(name: str, code: str, invalid: bool = True, **kw: Any) -> None:
        c.append(Case("api:" + name, code, invalid, **kw))

    pre = ("import math, symsel\nfrom symsel import parse_distribution, parse_profile\n"
           "law = parse_distribution('geometric(mean=30)'); base = parse_profile('gaussian(sigma=4)')\n")
    # parse_distribution / parse_profile
    for i, value in enumerate([repr(NON_LAW), "None", "3", "b'geometric(mean=3)'", "''", repr(LONG),
                               "'x' * 1_000_000", "'geometric(mean=2e300)'", "['geometric(mean=3)']",
                               repr("pgf(expr='__import__(\"os\").system(\"touch PWNED\")')"),
                               "'geometric(mean=\\ud800)'", "'point(k=' + '9' * 5000 + ')'"]):
        add(f"parse_distribution:{i}", pre + f"RESULT = parse_distribution({value})")
    for i, value in enumerate(["'gaussian(sigma=nan)'", "None", "4.0", "'dpsgd(q=0.01, sigma=1, steps=10**15)'",
                               "'pointwise(points=[(1, 2)])'", "'laplace(scale=-0.0)'"]):
        add(f"parse_profile:{i}", pre + f"RESULT = parse_profile({value})")
    # bound
    for name, call in [("law_none", "symsel.bound(None, base)"), ("base_none", "symsel.bound(law, None)"),
                       ("law_int", "symsel.bound(3, base)"), ("method_none", "symsel.bound(law, base, None)"),
                       ("method_bogus", "symsel.bound(law, base, 'bogus')"),
                       ("method_list", "symsel.bound(law, base, ['best'])"),
                       ("swapped", "symsel.bound(base, law)"),
                       ("non_law_spec", f"symsel.bound({NON_LAW!r}, base)"),
                       ("mean_1e300", "symsel.bound('geometric(mean=1e300)', base)")]:
        add(f"bound:{name}", pre + f"RESULT = {call}.epsilon(1e-6)")
    for name, arg in [("nan", "math.nan"), ("neg", "-1e-6"), ("two", "2.0"), ("text", "'1e-6'"), ("none", "None"),
                      ("inf", "math.inf"), ("list", "[1e-6]"), ("complex", "1e-6j")]:
        add(f"bound:epsilon_{name}", pre + f"RESULT = symsel.bound(law, base).epsilon({arg})")
        # δ(ε) at ε < 0 is defined (hockey-stick divergence) and an array of ε is answered elementwise: valid
        add(f"bound:delta_{name}", pre + f"RESULT = symsel.bound(law, base).delta({arg})",
            invalid=name not in ("inf", "two", "neg", "list"))
    add("bound:valid_delta_1e-30", pre + "RESULT = symsel.bound(law, base).epsilon(1e-30)", invalid=False)
    add("bound:valid_mean_1e6", pre + "RESULT = symsel.bound(parse_distribution('geometric(mean=1e6)'), base, "
        "'paper').epsilon(1e-6)", invalid=False)
    # lower_bound
    for name, arg in [("nan", "math.nan"), ("zero", "0.0"), ("one", "1.0"), ("text", "'x'"), ("neg", "-1.0")]:
        # δ = 0 and δ = 1 are probabilities: a lower bound (finite, or 0) is a valid answer
        add(f"lower_bound:delta_{name}", pre + f"RESULT = symsel.lower_bound(base, law, {arg}).epsilon",
            invalid=name not in ("zero", "one"))
    add("lower_bound:budget_huge", pre + "RESULT = symsel.lower_bound(base, law, 1e-6, budget=10**12).epsilon")
    add("lower_bound:dps_huge", pre + "RESULT = symsel.lower_bound(base, law, 1e-6, dps=10**7).epsilon")
    add("lower_bound:swapped", pre + "RESULT = symsel.lower_bound(law, base, 1e-6).epsilon")
    # derive
    for name, call in [("non_law", f"symsel.derive({NON_LAW!r})"), ("none", "symsel.derive(None)"),
                       ("delta_nan", "symsel.derive('geometric(mean=3)', delta=math.nan)"),
                       ("base_int", "symsel.derive('geometric(mean=3)', base=4)"),
                       ("long", f"symsel.derive({LONG!r})")]:
        add(f"derive:{name}", pre + f"RESULT = {call}")
    # SelectionAccountant
    acc = pre + ("from dp_accounting import dp_event\nfrom symsel.apps.accounting import SelectionAccountant, "
                 "SelectionDpEvent\nG = dp_event.GaussianDpEvent\nA = SelectionAccountant()\n")
    for name, code in [
        ("relation_text", "RESULT = SelectionAccountant('add_remove')"),
        ("interval_nan", "RESULT = SelectionAccountant(value_discretization_interval=math.nan)"),
        ("tolerance_0", "RESULT = SelectionAccountant(tolerance=0)"),
        ("export_points_huge", "RESULT = SelectionAccountant(export_points=10**12).compose(SelectionDpEvent(G(4.0), "
                               "'point(k=2)')).get_epsilon(1e-6)"),
        ("mean_nan", "RESULT = A.compose(dp_event.RepeatAndSelectDpEvent(G(4.0), math.nan, 1)).get_epsilon(1e-6)"),
        ("mean_0", "RESULT = A.compose(dp_event.RepeatAndSelectDpEvent(G(4.0), 0, 1)).get_epsilon(1e-6)"),
        ("mean_1e300", "RESULT = A.compose(dp_event.RepeatAndSelectDpEvent(G(4.0), 1e300, 1)).get_epsilon(1e-6)"),
        ("shape_nan", "RESULT = A.compose(dp_event.RepeatAndSelectDpEvent(G(4.0), 10, math.nan)).get_epsilon(1e-6)"),
        ("shape_minus_one", "RESULT = A.compose(dp_event.RepeatAndSelectDpEvent(G(4.0), 10, -1)).get_epsilon(1e-6)"),
        ("non_law", f"RESULT = A.compose(SelectionDpEvent(G(4.0), {NON_LAW!r})).get_epsilon(1e-6)"),
        ("law_int", "RESULT = A.compose(SelectionDpEvent(G(4.0), 7)).get_epsilon(1e-6)"),
        ("inner_sigma_nan", "RESULT = A.compose(SelectionDpEvent(G(math.nan), 'point(k=2)')).get_epsilon(1e-6)"),
        ("inner_sigma_negative", "RESULT = A.compose(SelectionDpEvent(G(-4.0), 'point(k=2)')).get_epsilon(1e-6)"),
        ("inner_not_event", "RESULT = A.compose(SelectionDpEvent('gaussian(sigma=4)', 'point(k=2)'))"
                            ".get_epsilon(1e-6)"),
        ("count_huge", "RESULT = A.compose(SelectionDpEvent(G(4.0), 'point(k=2)'), 10**18).get_epsilon(1e-6)"),
        ("count_negative", "RESULT = A.compose(G(4.0), -1)"),
        ("get_epsilon_nan", "RESULT = A.compose(G(4.0)).get_epsilon(math.nan)"),
        ("get_delta_nan", "RESULT = A.compose(G(4.0)).get_delta(math.nan)"),
        ("get_epsilon_text", "RESULT = A.compose(G(4.0)).get_epsilon('1e-6')"),
        ("get_epsilon_1e-30_valid", "RESULT = A.compose(SelectionDpEvent(G(4.0), 'point(k=2)')).get_epsilon(1e-30)"),
    ]:
        add(f"accountant:{name}", acc + code, invalid="valid" not in name)
    # make_selection (OpenDP)
    odp = pre + ("import opendp.prelude as dp\nfrom symsel.apps.opendp import make_selection\n"
                 "dp.enable_features('contrib')\n"
                 "m = dp.m.make_laplace(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), 1.0)\n")
    for name, code in [
        ("law_non_law", f"RESULT = make_selection(m, {NON_LAW!r}, score=float)"),
        ("law_huge_mean", "RESULT = make_selection(m, 'geometric(mean=1e300)', score=float)"),
        ("delta_nan", "RESULT = make_selection(m, 'geometric(mean=3)', score=float, delta=math.nan)"),
        ("delta_1e-30_valid", "RESULT = make_selection(m, 'geometric(mean=3)', score=float, delta=1e-30).map(1.0)"),
        ("profile_points_huge", "RESULT = make_selection(m, 'geometric(mean=3)', score=float, "
                                "profile_points=10**12).map(1.0)"),
        ("profile_points_1", "RESULT = make_selection(m, 'geometric(mean=3)', score=float, profile_points=1)"),
        ("base_profile_bogus", "RESULT = make_selection(m, 'geometric(mean=3)', score=float, base_profile='bogus', "
                               "profile_d_in=1.0)"),
        ("profile_d_in_nan", "RESULT = make_selection(m, 'geometric(mean=3)', score=float, "
                             "base_profile='gaussian(sigma=1)', profile_d_in=math.nan)"),
        ("seed_text", "RESULT = make_selection(m, 'geometric(mean=3)', score=float, seed='x')"),
        ("map_nan", "RESULT = make_selection(m, 'geometric(mean=3)', score=float).map(math.nan)"),
        ("map_1e300_valid", "RESULT = make_selection(m, 'geometric(mean=3)', score=float).map(1e300)"),
        ("measurement_text", "RESULT = make_selection('laplace', 'geometric(mean=3)')"),
        ("score_raises", "RESULT = make_selection(m, 'point(k=2)', score=lambda x: 1 / 0, seed=1)(1.0)"),
    ]:
        add(f"opendp:{name}", odp + code, invalid="valid" not in name)
    # tune (Optuna)
    hpo = pre + "from symsel.apps.hpo import tune\nobj = lambda t: t.suggest_float('x', 0, 1)\n"
    for name, code in [
        ("law_huge", "RESULT = tune(obj, 'geometric(mean=1e300)', 'gaussian(sigma=4)', 1e-6, seed=1)"),
        ("law_non_law", f"RESULT = tune(obj, {NON_LAW!r}, 'gaussian(sigma=4)', 1e-6, seed=1)"),
        ("delta_nan", "RESULT = tune(obj, 'geometric(mean=3)', 'gaussian(sigma=4)', math.nan, seed=1)"),
        ("delta_0", "RESULT = tune(obj, 'geometric(mean=3)', 'gaussian(sigma=4)', 0.0, seed=1)"),
        ("n_trials_0", "RESULT = tune(obj, base='gaussian(sigma=4)', delta=1e-6, n_trials=0, seed=1)"),
        ("n_trials_huge", "RESULT = tune(obj, base='gaussian(sigma=4)', delta=1e-6, n_trials=10**12, seed=1)"),
        ("objective_none", "RESULT = tune(None, 'geometric(mean=3)', 'gaussian(sigma=4)', 1e-6, seed=1)"),
        ("base_none", "RESULT = tune(obj, 'geometric(mean=3)', None, 1e-6, seed=1)"),
        ("direction_bogus", "RESULT = tune(obj, 'geometric(mean=3)', 'gaussian(sigma=4)', 1e-6, seed=1, "
                            "direction='up')"),
        ("objective_nan", "RESULT = tune(lambda t: math.nan, 'geometric(mean=3)', 'gaussian(sigma=4)', 1e-6, "
                                "seed=1).epsilon"),
    ]:
        add(f"hpo:{name}", hpo + code, invalid="valid" not in name)
    # run_sweep / load_grid
    sw = pre + "from symsel.apps.sweep import Cell, load_grid, run_sweep\ncell = Cell('geometric(mean=3)', " \
               "'gaussian(sigma=4)', 'delta', 1e-6, 'paper')\n"
    for name, code, outputs, devices in [
        ("cells_text", "RESULT = run_sweep('cells', 'g.csv')", (), False),
        ("cells_empty_valid", "RESULT = run_sweep([], 'g.csv')", ("work/g.csv", "work/g.csv.lock"), False),
        ("cell_nan_value", "RESULT = run_sweep([Cell('geometric(mean=3)', 'gaussian(sigma=4)', 'delta', math.nan, "
                           "'paper')], 'g.csv', jobs=1)", ("work/g.csv", "work/g.csv.lock"), False),
        ("out_devfull", "RESULT = run_sweep([cell], '../dev/full', jobs=1)", (), True),
        ("out_devnull", "RESULT = run_sweep([cell], '../dev/null', jobs=1)", (), True),
        ("out_directory", "RESULT = run_sweep([cell], '.', jobs=1)", (), False),
        ("out_fifo", "RESULT = run_sweep([cell], '../fifo', jobs=1)", (), False),
        ("out_foreign", "RESULT = run_sweep([cell], '../sentinel/results.csv', jobs=1)", (), False),
        ("out_int", "RESULT = run_sweep([cell], 3, jobs=1)", (), False),
        ("jobs_0", "RESULT = run_sweep([cell], 'g.csv', jobs=0)", (), False),
        ("jobs_float", "RESULT = run_sweep([cell], 'g.csv', jobs=1.5)", (), False),
        ("load_grid_devnull", "RESULT = load_grid('../dev/null')", (), True),
        ("load_grid_none", "RESULT = load_grid(None)", (), False),
    ]:
        add(f"sweep:{name}", sw + code, outputs=outputs, needs_devices=devices, invalid="valid" not in name)
    # plan / tuning / ptr
    pl = pre + "from symsel.apps import plan, ptr, tuning\n"
    for name, code in [
        ("max_mean_epsilon_nan", "RESULT = plan.max_mean('geometric(mean={mean})', base, math.nan, 1e-6)"),
        ("max_mean_epsilon_1e300", "RESULT = plan.max_mean('geometric(mean={mean})', base, 1e300, 1e-6)"),
        ("max_mean_delta_2", "RESULT = plan.max_mean('geometric(mean={mean})', base, 2.0, 2.0)"),
        ("max_mean_no_placeholder", "RESULT = plan.max_mean('geometric(mean=3)', base, 2.0, 1e-6)"),
        ("max_mean_template_int", "RESULT = plan.max_mean(3, base, 2.0, 1e-6)"),
        ("max_mean_base_none", "RESULT = plan.max_mean('geometric(mean={mean})', None, 2.0, 1e-6)"),
        ("max_mean_non_law", "RESULT = plan.max_mean(\"pgf(expr='exp({mean}*(z-1)) - z**40/100')\", base, 2.0, "
                             "1e-6)"),
        ("max_mean_min_mean_nan", "RESULT = plan.max_mean('geometric(mean={mean})', base, 2.0, 1e-6, "
                                  "min_mean=math.nan)"),
        ("max_mean_candidates_nan", "RESULT = plan.max_mean('geometric(mean={mean})', base, 2.0, 1e-6, "
                                    "candidates=math.nan)"),
        ("max_mean_valid_delta_1e-30", "RESULT = plan.max_mean('geometric(mean={mean})', base, 20.0, 1e-30, "
                                       "'paper')['mean']"),
        ("max_trials_epsilon_nan", "RESULT = plan.max_trials('point(k={k})', base, math.nan, 1e-6)"),
        ("max_trials_no_placeholder", "RESULT = plan.max_trials('point(k=3)', base, 2.0, 1e-6)"),
        ("max_trials_method_bogus", "RESULT = plan.max_trials('point(k={k})', base, 2.0, 1e-6, 'bogus')"),
        ("solve_base_two_knobs", "RESULT = plan.solve_base('dpsgd(q=0.01, sigma={sigma}, steps={steps})', "
                                 "'point(k=2)', 2.0, 1e-6)"),
        ("solve_base_epsilon_nan", "RESULT = plan.solve_base('gaussian(sigma={sigma})', 'point(k=2)', math.nan, "
                                   "1e-6)"),
        ("solve_base_law_none", "RESULT = plan.solve_base('gaussian(sigma={sigma})', None, 2.0, 1e-6)"),
        ("solve_base_template_int", "RESULT = plan.solve_base(3, 'point(k=2)', 2.0, 1e-6)"),
        ("solve_base_epsilon_1e300", "RESULT = plan.solve_base('gaussian(sigma={sigma})', 'point(k=2)', 1e300, "
                                     "1e-6)"),
        ("max_steps_q_2", "RESULT = tuning.max_steps(2.0, 1.0, [(1.0, 1e-6)])"),
        ("max_steps_sigma_nan", "RESULT = tuning.max_steps(0.01, math.nan, [(1.0, 1e-6)])"),
        ("max_steps_thresholds_text", "RESULT = tuning.max_steps(0.01, 1.0, 'abc')"),
        ("max_steps_limit_huge_valid", "RESULT = tuning.max_steps(0.01, 1.0, [(1.0, 1e-6)], limit=10**18)"),
        ("gaussian_sigma_for_nan", "RESULT = tuning.gaussian_sigma_for(math.nan, 1e-6)"),
        # sound: the least noise searched (1e-3) already meets a budget of 1e300
        ("gaussian_sigma_for_1e300_valid", "RESULT = tuning.gaussian_sigma_for(1e300, 1e-6)"),
        ("tuning_bound_empty", "RESULT = tuning.tuning_bound(law, [])"),
        ("sigma_tuning_sigmas_text", "RESULT = tuning.sigma_tuning(0.01, 'abc', law, [(1.0, 1e-6)], 1e-6)"),
        ("corollary_non_tnb", "RESULT = tuning.corollary_6_2_thresholds('poisson(mean=3)', 1.0, 1e-6)"),
        ("ptr_guarantee_nan", "RESULT = ptr.ptr_tuning(law, [(math.nan, 1e-6)], 1e-6)"),
        ("ptr_guarantee_delta_2", "RESULT = ptr.ptr_tuning(law, [(1.0, 2.0)], 1e-6)"),
        ("ptr_guarantees_text", "RESULT = ptr.ptr_tuning(law, 'abc', 1e-6)"),
        ("ptr_law_int", "RESULT = ptr.ptr_tuning(3, [(1.0, 1e-6)], 1e-6)"),
        ("ptr_methods_bogus", "RESULT = ptr.ptr_tuning(law, [(1.0, 1e-6)], 1e-6, methods=['bogus'])"),
        ("gen_ptr_nan", "RESULT = ptr.gen_ptr_guarantee(math.nan, 1e-6, 1.0, 1e-6, 1e-6)"),
    ]:
        add(f"plan:{name}" if "max_" in name or "solve" in name else f"tuning:{name}", pl + code,
            invalid="valid" not in name)
    # ---- pairs of the wrong kind: an upper bound on a dominated pair, a lower bound on a dominating pair
    pairs = ("from symsel.pairs.loss import laplace_pairs\nfrom symsel.distributions import point\n"
             "dominating, dominated = laplace_pairs(1.0, 200)\n")
    add("pairs:interval_on_dominated", pairs + "from symsel.bounds.interval_pairs import PairIntervalProfile\n"
        "RESULT = PairIntervalProfile(point(3), (dominated,)).epsilon(1e-6)")
    add("pairs:lower_on_dominating", pairs + "from symsel.evidence.pld_lower import loss_pair_lower_bound\n"
        "RESULT = loss_pair_lower_bound((dominating,), point(2), 1e-18, 2.0).epsilon")
    add("pairs:dpsgd_lower_on_dominating", "from symsel import parse_profile, point\n"
        "from symsel.evidence.pld_lower import loss_pair_lower_bound\n"
        "base = parse_profile('dpsgd(q=0.1, sigma=1, steps=1, value_discretization_interval=0.01)')\n"
        "RESULT = loss_pair_lower_bound(base.dominating_loss_pairs(), point(2), 1e-18, 2.0).epsilon")
    add("pairs:loss_pair_role_string", "import numpy as np\nfrom symsel.pairs.loss import loss_pair\n"
        "RESULT = loss_pair(np.array([0.5, 0.5]), np.array([0.25, 0.75]), 'dominated', 'P,Q', 'x')")
    # ---- end of the pairs block
    # --- trade-off curve and attack risk (docs/tradeoff.md) ---
    for name, value in [("nan", "math.nan"), ("above_1", "1.5"), ("negative", "-1e-9"), ("string", "'0.1'"),
                        ("bool", "True"), ("none", "None"), ("list_with_bad", "[0.1, 2.0]"), ("complex", "1j")]:
        add(f"tradeoff:alpha_{name}", pre + f"RESULT = base.tradeoff({value})")
        add(f"tpr_at_fpr:fpr_{name}", pre + f"RESULT = symsel.bound(law, base).tpr_at_fpr({value})")
    for name, value in [("zero", "0.0"), ("nan", "math.nan"), ("big", "0.5"), ("string", "'1e-6'")]:
        add(f"tradeoff:rtol_{name}", pre + f"RESULT = base.tradeoff(0.1, rtol={value})")
    add("tradeoff:valid_tiny_alpha", pre + "RESULT = base.tpr_at_fpr(1e-300)", invalid=False)
    add("tradeoff:valid_array", pre + "RESULT = float(base.tradeoff([0.0, 1e-30, 0.5, 1.0]).sum())", invalid=False)
    add("advantage:valid_selection", pre + "RESULT = symsel.bound(law, base).advantage()", invalid=False)
    add("plan:risk_bad_fpr", pre + "from symsel.apps.plan import max_trials_for_risk\n"
        "RESULT = max_trials_for_risk('point(k={k})', base, fpr=2.0, max_tpr=0.05)")
    add("plan:risk_bad_max_tpr", pre + "from symsel.apps.plan import max_trials_for_risk\n"
        "RESULT = max_trials_for_risk('point(k={k})', base, fpr=0.01, max_tpr=math.nan)")
    # --- end trade-off ---
    # --- numeric edges: certified values on the wrong side, NaN in an answer, searches that start where a method
    # does not apply, work without a cost bound
    lower_vs_rdp = (
        "import dp_accounting\n"
        "acc = dp_accounting.rdp.RdpAccountant()\n"
        "acc.compose(dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 2 * {steps})\n"
        "lower = symsel.lower_bound(parse_profile('dpsgd(q=0.01, sigma=1.1, steps={steps})'), "
        "symsel.point(k=2), 1e-6).epsilon\n"
        "assert lower <= acc.get_epsilon(1e-6), (lower, acc.get_epsilon(1e-6))\n"
        "RESULT = lower")
    for steps in (500_000, 1_000_000):
        add(f"lower_bound:valid_dpsgd_below_rdp_{steps}", pre + lower_vs_rdp.format(steps=steps), invalid=False)
    for final_run in (False, True):
        add(f"plan:valid_interval_trials_final_run_{final_run}",
            pre + "from symsel.apps import plan\n"
            f"RESULT = plan.max_trials('point(k={{k}})', base, 2.0, 1e-6, 'interval', final_run={final_run})\n"
            "assert RESULT['trials'] is not None, RESULT", invalid=False)
    show = pre + "import matplotlib\nmatplotlib.use('Agg')\n"
    for name, law, base_spec in [("tiny_sigma", "geometric(mean=3)", "gaussian(sigma=1e-3)"),
                                 ("million_trials", "binomial(n=1000000, p=0.5)", "gaussian(sigma=4)")]:
        made = f"b = symsel.bound(parse_distribution({law!r}), parse_profile({base_spec!r}))\n"
        add(f"display:valid_repr_html_{name}", show + made + "RESULT = len(b._repr_html_())", invalid=False)
        add(f"display:valid_plot_{name}", show + made + "RESULT = len(b.plot().get_lines())", invalid=False)
    add("accountant:valid_binomial_1e7", acc + "RESULT = A.compose(SelectionDpEvent(G(4.0), "
        "'binomial(n=10000000, p=0.5)')).get_epsilon(1e-6)", invalid=False)
    add("plan:valid_solve_base_epsilon_1e5_final_run", pl + "RESULT = plan.solve_base('gaussian(sigma={sigma})', "
        "'point(k=2)', 1e5, 1e-6, final_run=True)", invalid=False)
    for steps in (100_000, 1_000_000):
        add(f"lower_bound:valid_dpsgd_{steps}_steps", pre + "RESULT = symsel.lower_bound(parse_profile("
            f"'dpsgd(q=0.01, sigma=1.1, steps={steps})'), symsel.point(k=2), 1e-6).epsilon", invalid=False)
    add("lower_bound:valid_tiny_sigma", pre + "RESULT = symsel.lower_bound(parse_profile('gaussian(sigma=1e-3)'), "
        "symsel.point(k=10), 1e-6).epsilon", invalid=False)
    # ---- whole pipeline and the Opacus accountant (symsel.with_final_run, symsel.apps.opacus)
    op = "import math, symsel\nfrom symsel.apps.opacus import make_accountant_class, whole_search_epsilon\n"
    for name, code in [
        ("with_final_run_final_int", "RESULT = symsel.with_final_run(symsel.bound(symsel.point(3), "
                                     "symsel.parse_profile('gaussian(sigma=4)')), 3)"),
        ("with_final_run_selection_none", "RESULT = symsel.with_final_run(None, 'gaussian(sigma=4)')"),
        ("with_final_run_final_empty", "RESULT = symsel.with_final_run(symsel.bound(symsel.point(3), "
                                       "symsel.parse_profile('gaussian(sigma=4)')), [])"),
        ("opacus_law_and_trials", "RESULT = make_accountant_class('point(k=3)', n_trials=3)"),
        ("opacus_no_law", "RESULT = make_accountant_class()"),
        ("opacus_trials_0", "RESULT = make_accountant_class(n_trials=0)"),
        ("opacus_trials_huge", "RESULT = make_accountant_class(n_trials=10**400)"),
        ("opacus_law_bogus", "RESULT = make_accountant_class('bogus(x=1)')"),
        ("opacus_method_bogus", "RESULT = make_accountant_class(n_trials=2, method='bogus')"),
        ("opacus_history_rate_0", "RESULT = whole_search_epsilon([(1.0, 0.0, 10)], 1e-5)"),
        ("opacus_history_sigma_nan", "RESULT = whole_search_epsilon([(math.nan, 0.1, 10)], 1e-5)"),
        ("opacus_history_sigma_inf", "RESULT = whole_search_epsilon([(math.inf, 0.1, 10)], 1e-5)"),
        ("opacus_history_steps_float", "RESULT = whole_search_epsilon([(1.0, 0.1, 2.5)], 1e-5)"),
        ("opacus_history_steps_huge", "RESULT = whole_search_epsilon([(1.0, 0.1, 10**15)], 1e-5)"),
        ("opacus_history_text", "RESULT = whole_search_epsilon('abc', 1e-5)"),
        ("opacus_delta_2", "RESULT = whole_search_epsilon([(1.0, 0.1, 10)], 2.0)"),
        ("opacus_load_state_other", "a = make_accountant_class(n_trials=2)(); "
                                    "RESULT = a.load_state_dict({'history': [], 'mechanism': 'rdp'})"),
        ("opacus_tiny_sigma_valid", "RESULT = whole_search_epsilon([(1e-3, 0.5, 10**5)], 1e-5)"),
    ]:
        add(f"pipeline:{name}", (op if "opacus" in name else "import symsel\n") + code,
            invalid="valid" not in name)
    # ---- end of the whole-pipeline block
    # ---- edge inputs that ended in tracebacks: huge integers, size arguments without a limit, a law as a spec string,
    # expressions built in Python, a wrong Axes, a non-private selection in a composition, a too fine loss grid
    for name, code in [
        ("valid_epsilon_int_1e400", "RESULT = symsel.bound(law, base).delta(10**400)"),
        ("delta_int_1e400", "RESULT = symsel.bound(law, base).epsilon(10**400)"),
        ("plot_ax_text", "RESULT = symsel.bound(law, base).plot(ax='x')"),
        ("to_pld_points_1e12", "RESULT = symsel.to_pld(symsel.bound(law, base), points=10**12)"),
    ]:
        add(f"bound:{name}", pre + code, invalid="valid" not in name)
    add("lower_bound:slices_1e9", pre + "RESULT = symsel.lower_bound(base, law, 1e-6, slices=10**9).epsilon")
    add("lower_bound:valid_law_spec", pre + "RESULT = symsel.lower_bound(base, 'geometric(mean=3)', 1e-6).epsilon",
        invalid=False)
    add("accountant:get_epsilon_int_1e400", acc + "RESULT = A.compose(G(4.0)).get_epsilon(10**400)")
    add("accountant:valid_get_delta_int_1e400", acc + "RESULT = A.compose(G(4.0)).get_delta(10**400)", invalid=False)
    add("accountant:valid_selection_nearly_non_private", acc + "RESULT = A.compose(SelectionDpEvent(G(1e-3), "
        "'geometric(mean=3)')).compose(G(4.0)).get_epsilon(1e-6)", invalid=False)
    add("accountant:discretization_1e-300", acc + "RESULT = SelectionAccountant(value_discretization_interval=1e-300)"
        ".compose(SelectionDpEvent(G(4.0), 'geometric(mean=3)')).compose(G(4.0)).get_epsilon(1e-6)")
    add("hpo:delta_int_1e400", hpo + "RESULT = tune(obj, 'geometric(mean=3)', 'gaussian(sigma=4)', 10**400, seed=1)")
    add("from_pgf:valid_text", pre + "RESULT = symsel.from_pgf('(1 + z)/2').mean", invalid=False)
    # ---- misleading messages: a byte the locale could not decode, a delegating family naming another one
    add("parse_distribution:undecodable_byte", pre + "RESULT = parse_distribution('g\\udce9ometric(mean=3)')")
    add("geometric:fraction_below_one", pre + "from fractions import Fraction\nRESULT = symsel.geometric("
        "mean=Fraction(1, 2))")
    add("geometric:valid_fraction", pre + "from fractions import Fraction\nRESULT = symsel.geometric("
        "mean=Fraction(3)).mean", invalid=False)
    add("from_pgf:terms_1e5", pre + "import sympy\nz = sympy.Symbol('z')\nterms = [sympy.Pow(z, i, evaluate=False) "
        "for i in range(100_000)]\nRESULT = symsel.from_pgf(sympy.Add(*terms, evaluate=False))")
    # ---- pickles: every base family whose RDP curve was a closure, and a bound on it
    for spec in ("zcdp(rho=0.5)", "rdp_gaussian(sigma=2)", "rdp_pure(eps=1)",
                 "rdp_subsampled_gaussian(q=0.01, sigma=1, steps=10)"):
        add(f"pickle:valid_{spec.split('(')[0]}", pre + f"import pickle\np = parse_profile({spec!r})\nRESULT = "
            "pickle.loads(pickle.dumps(symsel.bound(law, p))).epsilon(1e-6)", invalid=False)
    # ---- the Opacus accountant's target (symsel.apps.opacus: target_epsilon, epsilon_tolerance)
    op = "import math\nfrom symsel.apps.opacus import make_accountant_class, whole_search_epsilon\n"
    for name, code in [
        ("target_zero", "RESULT = make_accountant_class(n_trials=2, target_epsilon=0)"),
        ("target_nan", "RESULT = make_accountant_class(n_trials=2, target_epsilon=math.nan)"),
        ("target_inf", "RESULT = make_accountant_class(n_trials=2, target_epsilon=math.inf)"),
        ("target_text", "RESULT = make_accountant_class(n_trials=2, target_epsilon='8')"),
        ("tolerance_negative", "RESULT = make_accountant_class(n_trials=2, target_epsilon=8, epsilon_tolerance=-1)"),
        ("tolerance_none", "RESULT = make_accountant_class(n_trials=2, target_epsilon=8, epsilon_tolerance=None)"),
        ("target_in_function_neg", "RESULT = whole_search_epsilon([(1.0, 1.0, 1)], 1e-5, 'point(k=2)', "
                                   "target_epsilon=-1.0)"),
        ("target_in_function_list", "RESULT = whole_search_epsilon([(1.0, 1.0, 1)], 1e-5, 'point(k=2)', "
                                    "target_epsilon=[8.0])"),
        ("valid_target_above_tolerance", "RESULT = whole_search_epsilon([(4.0, 1.0, 1)], 1e-5, 'point(k=2)', "
                                         "target_epsilon=0.015)"),
    ]:
        add(f"opacus_target:{name}", op + code, invalid="valid" not in name)
    # ---- end of the Opacus target block
    # ---- bound's search tolerance rtol: outside [1e-9, 1e-2], not a real number
    for name, value in [("zero", "0"), ("neg", "-1e-4"), ("half", "0.5"), ("nan", "math.nan"), ("inf", "math.inf"),
                        ("text", "'1e-4'"), ("bool", "True"), ("valid_1e-3", "1e-3")]:
        add(f"bound:rtol_{name}", pre + f"RESULT = symsel.bound(law, base, 'best', rtol={value}).epsilon(1e-6)",
            invalid="valid" not in name)
    # ---- end of the rtol block
    # ---- OpenDP: a base measurement whose function or map raises inside OpenDP (a multi-line traceback in the
    # OpenDPException's message): one line naming measurement or d_in
    failing = odp + "dp.enable_features('honest-but-curious')\ndef boom(x):\n    raise RuntimeError('inner boom')\n"
    add("opendp:base_function_raises", failing + "u = dp.m.make_user_measurement(dp.atom_domain(T=float, nan=False), "
        "dp.absolute_distance(T=float), dp.max_divergence(), boom, lambda d: d)\n"
        "RESULT = make_selection(u, 'point(k=2)', score=float, seed=1)(1.0)")
    add("opendp:base_map_raises", failing + "u = dp.m.make_user_measurement(dp.atom_domain(T=float, nan=False), "
        "dp.absolute_distance(T=float), dp.max_divergence(), lambda x: x, lambda d: 1 / 0)\n"
        "RESULT = make_selection(u, 'point(k=2)', score=float).map(1.0)")
    # ---- end of the OpenDP block
    # ---- a nearly non-private base (mu = 1000) under a fixed number of runs: interval's likelihood ratio overflows
    add("accountant:valid_selection_nearly_non_private_point", acc + "RESULT = A.compose(SelectionDpEvent(G(1e-3), "
        "'point(k=2)')).get_epsilon(1e-6)", invalid=False)
    # ---- end of the nearly non-private block
    # ---- the Opacus calibration bound and the Rényi composition (symsel.apps.opacus: calibration_base, renyi_epsilon)
    cal = ("import math, symsel\nfrom symsel.apps.opacus import calibration_base, history_base, renyi_epsilon\n"
           "run = history_base([(1.0, 0.1, 10)])\n")
    for name, code in [
        ("calibration_delta_nan", "RESULT = calibration_base([(1.0, 0.1, 10)], math.nan)"),
        ("calibration_delta_text", "RESULT = calibration_base([(1.0, 0.1, 10)], '1e-5')"),
        ("calibration_rate_2", "RESULT = calibration_base([(1.0, 2.0, 10)], 1e-5)"),
        ("renyi_delta_2", "RESULT = renyi_epsilon(symsel.point(k=2), run, 2.0, True)"),
        ("renyi_base_none", "RESULT = renyi_epsilon(symsel.point(k=2), None, 1e-5, True)"),
        ("renyi_law_text", "RESULT = renyi_epsilon('point(k=2)', run, 1e-5, True)"),
        ("renyi_final_run_text", "RESULT = renyi_epsilon(symsel.point(k=2), run, 1e-5, 'yes')"),
        ("valid_calibration", "RESULT = symsel.bound(symsel.point(k=3), calibration_base([(1.0, 0.1, 10)], 1e-5))"
                              ".epsilon(1e-5)"),
        ("valid_renyi", "RESULT = renyi_epsilon(symsel.point(k=3), run, 1e-5, True)"),
    ]:
        add(f"opacus_calibration:{name}", cal + code, invalid="valid" not in name)
    # ---- end of the calibration block
    return c


CASES = cli_cases() + api_cases()


# ------------------------------------------------------------------------------------------------ the sandbox
def _make_sandbox(root: Path) -> dict[str, Any]:
    (root / "sentinel" / "sub").mkdir(parents=True)
    (root / "work").mkdir()
    files = {
        "sentinel/notes.txt": "mine, not a sweep\n",
        "sentinel/results.csv": "name,value\nalice,1\n",
        "sentinel/sub/data.bin": "\x00\x01\x02" * 100,
    }
    for rel, text in files.items():
        (root / rel).write_text(text)
        os.utime(root / rel, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    os.mkfifo(root / "fifo")
    devices = True
    (root / "dev").mkdir()
    try:
        os.mknod(root / "dev" / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        os.mknod(root / "dev" / "full", stat.S_IFCHR | 0o666, os.makedev(1, 7))
    except (PermissionError, OSError):
        devices = False
    return {"devices": devices}


def _snapshot(root: Path) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            st = os.lstat(path)
            if stat.S_ISREG(st.st_mode):
                digest = hashlib.sha1(path.read_bytes()).hexdigest()
                out[rel] = ("file", st.st_size, st.st_mtime_ns, digest)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir",)
            else:
                out[rel] = (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_mtime_ns if not stat.S_ISCHR(st.st_mode) else 0)
    return out


def _damage(before: dict[str, tuple], after: dict[str, tuple], allowed: tuple[str, ...]) -> list[str]:
    def ok(rel: str) -> bool:
        return any(rel == a or rel.startswith(a + "/") for a in allowed) or rel == "work/__pycache__"

    changes = []
    for rel in sorted(set(before) | set(after)):
        if before.get(rel) != after.get(rel) and not ok(rel):
            what = "created" if rel not in before else "removed" if rel not in after else "changed"
            changes.append(f"{rel} {what}")
    return changes


def _reset_work(root: Path, case: Case) -> None:
    work = root / "work"
    shutil.rmtree(work)
    work.mkdir()
    for rel, text in case.files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    for rel, target in case.links.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).symlink_to(target)


# ------------------------------------------------------------------------------------------------ running
def _limits(cpu: int, memory_mib: int) -> Any:
    """The case's limits (module docstring), set in its process before it starts: CPU seconds, and the memory it may
    write (``RLIMIT_DATA``); its own process group, so that a hang is killed with everything it started."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))
        resource.setrlimit(resource.RLIMIT_DATA, (memory_mib * MIB, memory_mib * MIB))
        os.setsid()

    return apply


def _communicate(proc: subprocess.Popen, wall: float) -> tuple[bytes, bytes, bool, Any]:
    """The case's stdout and stderr, whether it hung (past ``wall`` seconds: its process group is killed), and its
    resource usage from ``wait4`` (the process's own and that of the processes it waited for: peak RSS, CPU)."""
    chunks: dict[Any, bytes] = {}

    def read(stream: Any) -> None:
        chunks[stream] = stream.read()

    readers = [threading.Thread(target=read, args=(stream,), daemon=True) for stream in (proc.stdout, proc.stderr)]
    for reader in readers:
        reader.start()
    deadline, hang = time.monotonic() + wall, False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if not hang and time.monotonic() > deadline:
            os.killpg(proc.pid, 9)  # the process group this run started for the case
            hang = True
        time.sleep(0.02)
    proc.returncode = os.waitstatus_to_exitcode(status)
    for reader in readers:  # a process the case left behind may still hold its output open
        reader.join(max(0.0, deadline - time.monotonic()))
    if any(reader.is_alive() for reader in readers):
        try:
            os.killpg(proc.pid, 9)
        except ProcessLookupError:
            pass
        hang = True
        for reader in readers:
            reader.join()
    return chunks[proc.stdout], chunks[proc.stderr], hang, usage


#: what a failed allocation prints: Python's MemoryError (numpy's _ArrayMemoryError), numpy's and the C library's
#: messages, C++'s std::bad_alloc, and the symsel command line's one line for a MemoryError
MEMORY_MARKERS = ("MemoryError", "Unable to allocate", "Cannot allocate memory", "bad_alloc", "not enough memory")


def memory_blowup(out: str, err: str, rc: int | None, hang: bool, peak_rss_mib: float, memory_mib: int) -> bool:
    """Whether a case ran into its memory cap (module docstring, ``memory_blowup``)."""
    killed = rc == -9 and not hang  # SIGKILL before the CPU limit: the out-of-memory killer
    return killed or peak_rss_mib > memory_mib or any(marker in out or marker in err for marker in MEMORY_MARKERS)


def _api_child(name: str) -> int:
    """Run one API case in this process and print one JSON line: what it returned or raised."""
    case = next(c for c in CASES if c.name == name)
    from symsel.errors import SymselError

    assert isinstance(case.args, str)  # an API case's args are its source
    namespace: dict[str, Any] = {}
    try:
        exec(case.args, namespace)  # the case's own source, from this file
        value = namespace.get("RESULT")
        out = {"outcome": "value", "value": repr(value)[:300], "nan": _has_nan(value)}
    except BaseException as exc:
        out = {"outcome": "raised", "type": type(exc).__name__, "message": " ".join(str(exc).split())[:400],
               "symsel_value_error": isinstance(exc, SymselError) and isinstance(exc, ValueError)}
    print("HOSTILE-RESULT " + json.dumps(out), flush=True)
    return 0


def _has_nan(value: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, dict):
        return any(_has_nan(v, depth + 1) for v in value.values())
    if isinstance(value, list | tuple):
        return any(_has_nan(v, depth + 1) for v in value)
    return False


def _strict_json(text: str) -> Any:
    def refuse(constant: str) -> Any:
        raise ValueError(f"non-strict JSON constant {constant}")

    return json.loads(text, parse_constant=refuse)


def run_case(case: Case, root: Path, cpu: int, wall: float, memory_mib: int = 3072) -> dict[str, Any]:
    _reset_work(root, case)
    before = _snapshot(root)
    env = {**os.environ, "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(root.parent / "mpl"), "PYTHONDONTWRITEBYTECODE": "1",
           "COLUMNS": "120", "TQDM_DISABLE": "1", **case.env}
    if case.name.startswith("cli:"):
        cmd = [*(case.program or (SYMSEL,)), *case.args]
    else:
        cmd = [sys.executable, str(Path(__file__).resolve()), "--api-child", case.name]
    if case.cpu > cpu:  # a case's own limit, with the wall limit stretched as much
        cpu, wall = case.cpu, wall * case.cpu / cpu
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=root / "work", env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, preexec_fn=_limits(cpu, memory_mib))
    with proc:
        out_b, err_b, hang, usage = _communicate(proc, wall)
    seconds = time.monotonic() - started
    cpu_used = usage.ru_utime + usage.ru_stime
    peak_rss_mib = usage.ru_maxrss / 1024  # KiB on Linux
    out, err = out_b.decode("utf-8", "replace"), err_b.decode("utf-8", "replace")
    rc = proc.returncode
    if rc == -signal_number("SIGXCPU") or (rc == -9 and cpu_used >= cpu):
        hang = True  # the CPU limit (SIGXCPU, then SIGKILL at the hard limit)
    after = _snapshot(root)
    damaged = _damage(before, after, case.outputs)
    for dev in ("dev/null", "dev/full"):
        if dev in before and not stat.S_ISCHR(os.lstat(root / dev).st_mode):
            damaged.append(f"{dev} is no longer a character device")
    if (root / "work" / PWNED).exists():
        damaged.append("code ran: work/PWNED created")
    record: dict[str, Any] = {"name": case.name, "invalid": case.invalid, "rc": rc, "seconds": round(seconds, 2),
                              "cpu_seconds": round(cpu_used, 2), "peak_rss_mib": round(peak_rss_mib, 1),
                              "hang": hang, "damaged": damaged, "traceback": False, "accepted_invalid": False,
                              "bad_output": False,
                              "memory_blowup": memory_blowup(out, err, rc, hang, peak_rss_mib, memory_mib),
                              "args": (case.args if isinstance(case.args, str) else " ".join(case.args))[-300:],
                              "stderr": " ".join(err.split())[-300:]}
    if hang:
        return record
    if "Traceback" in out or "Traceback" in err:
        record["traceback"] = True
    if case.name.startswith("cli:"):
        _judge_cli(case, rc, out, err, record)
    else:
        _judge_api(case, rc, out, record)
    return record


def signal_number(name: str) -> int:
    import signal

    return int(getattr(signal, name))


def _recorded_errors(text: str) -> bool:
    """A sweep's answer in which every cell it ran is recorded as its one-line error (symsel.apps.sweep.run_cell:
    an invalid cell is written with its error, by design), and it ran some."""
    try:
        data = _strict_json(text)
    except ValueError:
        try:
            data = ast.literal_eval(text)  # an API case's repr of the returned dict
        except (ValueError, SyntaxError):
            return False
    return isinstance(data, dict) and data.get("ran", 0) > 0 and data.get("errors") == data.get("ran")


def _judge_cli(case: Case, rc: int, out: str, err: str, record: dict[str, Any]) -> None:
    if rc == 0:
        if case.invalid and case.name.startswith("cli:sweep:") and _recorded_errors(out):
            record["recorded_as_error"] = True
        elif case.invalid:
            record["accepted_invalid"] = True
            record["stdout"] = " ".join(out.split())[:300]
        try:
            data = _strict_json(out)
            record["bad_output"] = not isinstance(data, dict) or bool(_out_of_range(data))
            if record["bad_output"]:
                record["stdout"] = _out_of_range(data) if isinstance(data, dict) else str(data)[:200]
        except ValueError:
            record["bad_output"] = "--json" in case.args
    elif rc == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        if len(lines) != 1 or not (lines[0].startswith("symsel: error:") or lines[0].startswith("Error:")
                                   or "Usage:" in err):
            record["traceback"] = record["traceback"] or len(lines) > 3
            record["bad_output"] = True
        if not case.invalid:
            record["refused_valid"] = True
    else:
        record["traceback"] = True  # exit 1 (an escaped exception), a signal, anything else


#: JSON keys whose values are probabilities (in [0, 1]) or privacy parameters (>= 0).
PROBABILITIES = ("expected_quantile", "success_probability", "p0", "delta", "delta_at_budget")
NONNEGATIVE = ("mean", "variance")


def _out_of_range(data: Any, depth: int = 0) -> list[str]:
    """Values in the JSON answer out of their range: a probability outside [0, 1], a negative ε or mean, NaN."""
    bad: list[str] = []
    if depth > 6:
        return bad
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else []
    for key, value in items:
        if isinstance(value, dict | list):
            bad += _out_of_range(value, depth + 1)
            continue
        try:
            x = float(value) if isinstance(value, int | float | str) and not isinstance(value, bool) else None
        except (ValueError, OverflowError):  # an integer beyond float range (rnm --m with 401 digits) is in range
            x = None
        if x is None:
            continue
        if math.isnan(x) or (key in PROBABILITIES and not 0 <= x <= 1) or (key in NONNEGATIVE and x < 0):
            bad.append(f"{key}={value!r}")
    return bad


def _judge_api(case: Case, rc: int, out: str, record: dict[str, Any]) -> None:
    lines = [line for line in out.splitlines() if line.startswith("HOSTILE-RESULT ")]
    if rc != 0 or not lines:
        record["traceback"] = True
        return
    result = json.loads(lines[-1].removeprefix("HOSTILE-RESULT "))
    record["result"] = result
    if result["outcome"] == "raised":
        if not result["symsel_value_error"]:
            record["traceback"] = True
        if not case.invalid:
            record["refused_valid"] = True
    else:
        if case.invalid and case.name.startswith("api:sweep:") and _recorded_errors(result["value"]):
            record["recorded_as_error"] = True
        elif case.invalid:
            record["accepted_invalid"] = True
        elif result["nan"]:
            record["bad_output"] = True


KINDS = ("traceback", "hang", "accepted_invalid", "bad_output", "damaged", "memory_blowup")


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts by group and in total; a record of an earlier run without a memory cap (``--merge``) has no
    ``memory_blowup``: it counts as none and is named in ``memory_not_measured``."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for r in records:
        groups.setdefault(":".join(r["name"].split(":")[:2]), []).append(r)
    table = {}
    for group, rows in sorted(groups.items()):
        table[group] = {"cases": len(rows), **{k: sum(bool(r.get(k)) for r in rows) for k in KINDS}}
    total = {"cases": len(records), **{k: sum(bool(r.get(k)) for r in records) for k in KINDS}}
    return {"by_group": table, "total": total,
            "findings": [r for r in records if any(r.get(k) for k in KINDS)],
            "refused_valid": [r["name"] for r in records if r.get("refused_valid")],
            "recorded_as_error": [r["name"] for r in records if r.get("recorded_as_error")],
            "memory_not_measured": [r["name"] for r in records if "memory_blowup" not in r]}


def print_summary(summary: dict[str, Any]) -> None:
    widths = {"traceback": 9, "hang": 5, "accepted_invalid": 16, "bad_output": 10, "damaged": 7, "memory_blowup": 13}
    print(f"{'group':24s} {'cases':>5s} " + " ".join(f"{k:>{widths[k]}s}" for k in KINDS))
    for group, row in [*summary["by_group"].items(), ("TOTAL", summary["total"])]:
        print(f"{group:24s} {row['cases']:5d} " + " ".join(f"{row[k]:{widths[k]}d}" for k in KINDS))
    for r in summary["findings"]:
        kinds = ",".join(k for k in KINDS if r.get(k))
        detail = r["damaged"] or r.get("stdout") or r.get("result") or r["stderr"]
        if r.get("memory_blowup"):
            detail = f"peak RSS {r['peak_rss_mib']} MiB; {detail}"
        print(f"  {r['name']}: {kinds}: {str(detail)[:240]}")
    if summary["memory_not_measured"]:
        print(f"  run without a memory cap (merged from an earlier run; not counted): "
              f"{len(summary['memory_not_measured'])} cases")
    if summary["refused_valid"]:
        print("  refused although valid (not counted): " + ", ".join(summary["refused_valid"]))
    if summary["recorded_as_error"]:
        print("  invalid sweep cells recorded as their error rows, by design (not counted): "
              + ", ".join(summary["recorded_as_error"]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api-child", help=argparse.SUPPRESS)
    parser.add_argument("--only", nargs="+", help="run the cases whose name starts with one of these")
    parser.add_argument("--list", action="store_true", help="list the selected cases and exit")
    parser.add_argument("--cpu", type=int, default=60, help="CPU seconds per case before it counts as a hang")
    parser.add_argument("--wall", type=float, default=120.0, help="wall seconds per case before it counts as a hang")
    parser.add_argument("--memory", type=int, default=3072,
                        help="MiB each case's processes may write (RLIMIT_DATA); running into it, or a peak RSS above "
                        "it, is a memory blow-up")
    parser.add_argument("--merge", help="a JSON of an earlier run: its records are kept, those of the cases run now "
                        "replace theirs (and a case no longer defined is dropped), and the summary is of the whole")
    parser.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "hostile.json"),
                        help="where to write the records and the summary")
    args = parser.parse_args(argv)
    if args.memory < 64:
        parser.error(f"--memory={args.memory} MiB is below what a Python process needs; allowed: 64 MiB or more")
    if args.api_child:
        return _api_child(args.api_child)
    cases = [c for c in CASES if not args.only or any(c.name.startswith(p) for p in args.only)]
    if args.list:
        for c in cases:
            print(c.name)
        print(f"{len(cases)} cases", file=sys.stderr)
        return 0
    with tempfile.TemporaryDirectory(prefix="symsel-hostile-") as tmp:
        root = Path(tmp) / "sandbox"
        root.mkdir()
        info = _make_sandbox(root)
        records, skipped = [], []
        for i, case in enumerate(cases, 1):
            if case.needs_devices and not info["devices"]:
                skipped.append(case.name)
                continue
            record = run_case(case, root, args.cpu, args.wall, args.memory)
            records.append(record)
            flags = ",".join(k for k in KINDS if record[k]) or "ok"
            print(f"[{i}/{len(cases)}] {flags:10s} rc={record['rc']!s:4s} {record['seconds']:6.1f}s "
                  f"{record['peak_rss_mib']:7.0f} MiB {case.name}", flush=True)
    if args.merge:
        names = {c.name for c in CASES}
        now = {r["name"] for r in records}
        earlier = json.loads(Path(args.merge).read_text())
        if earlier.get("memory_limit_mib") != args.memory:
            print(f"the earlier run's memory cap was {earlier.get('memory_limit_mib')} MiB, this one's {args.memory}",
                  file=sys.stderr)
        kept = [r for r in earlier["records"] if r["name"] in names and r["name"] not in now]
        records = kept + records
        skipped = sorted(set(skipped) | {n for n in earlier.get("skipped", []) if n not in now})
        missing = names - {r["name"] for r in records} - set(skipped)
        if missing:
            print(f"not run in either: {sorted(missing)}", file=sys.stderr)
    summary = summarize(records)
    print()
    print_summary(summary)
    report = {"command": "python benchmarks/hostile.py " + " ".join(argv if argv is not None else sys.argv[1:]),
              "date": time.strftime("%Y-%m-%d"), "cpu_limit_seconds": args.cpu, "wall_limit_seconds": args.wall,
              "memory_limit_mib": args.memory,
              "sandbox_devices": info["devices"], "skipped": skipped, "summary": {k: summary[k] for k in
                                                                                   ("by_group", "total")},
              "findings": summary["findings"], "refused_valid": summary["refused_valid"],
              "recorded_as_error": summary["recorded_as_error"],
              "memory_not_measured": summary["memory_not_measured"], "records": records}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
