"""symsel's time per question beside its dp-accounting peer, timed in the same run, turn about.

Goals, checked for every row and stored in the JSON under ``goals``:

* **warm**: symsel's warm call costs at most 2x the peer's warm call, or at most 20 ms (CPU); the ratio checked is the
  larger of the ratio of the two medians and the median of the turns' ratios (both sides of a turn ask about the same
  parameter, and a cost can depend on it: dp-accounting's FFT sizes made row 3's turns alternate between 0.30 and
  0.40 s for the peer);
* **whole process**: a fresh ``python -c`` process answering one question costs at most 1.5x the peer's (CPU);
* **README accountant example** (row 7): at most 2 CPU-seconds (whole process);
* **a calibration through SelectionAccountant** (row 8): at most 5 CPU-seconds (whole process).

Every row is one question, written once as source code (``call(i)``, :data:`ROWS`) for symsel and for its peer, and
run in three modes. CPU is ``time.process_time()`` plus ``resource.getrusage(RUSAGE_CHILDREN)`` (user + system)
for any subprocess; wall is ``time.perf_counter()``. Medians of ``--repeats`` runs (default 5; ``--quick``: 3); in
each turn symsel and its peer(s) run one after the other, the order flipped every turn, so that the load of a busy
machine falls on both alike.

* **warm**: this process, both libraries imported, one untimed warm-up call of each side first; then each timed call
  asks about a NEW parameter (σ, Laplace scale or calibration bracket times ``1 + 0.001 i``; each row its own
  ``i``), as a calibration loop does, so caches keyed on σ do not help.
* **first call**: a fresh ``python -c`` process runs the user's imports (symsel: ``import symsel``, or the
  README's import lines for row 7, ``from symsel.apps.accounting import ...`` for row 8; peer: ``import
  dp_accounting``), then times its first question (``call(0)``, the unperturbed parameter) from inside. symsel's
  lazy imports fall inside the timed part.
* **whole**: the same child process as a whole: its total CPU (``RUSAGE_CHILDREN`` of this process around it,
  interpreter start-up and imports included) and its wall time.

Rows (δ = 1e-6): 1. geometric(mean=30) on gaussian(σ = 4) vs the RDP accountant on
``RepeatAndSelectDpEvent(GaussianDpEvent(σ), 30, 1)``; 2. point(k=40) on gaussian(σ = 4) vs the PLD accountant on
40 composed Gaussian runs; 3. point(k=40) on dpsgd(q=0.01, σ = 1.1, steps=1000) vs the PLD accountant on 40 composed
DP-SGD runs; 4. poisson(mean=10) on that dpsgd vs RDP ``RepeatAndSelectDpEvent(dpsgd, 10, inf)``; 5. tnb(eta=0.5,
mean=10) on that dpsgd vs RDP ``RepeatAndSelectDpEvent(dpsgd, 10, 0.5)``; 6. binomial(n=40, p=1/2) on laplace(scale=1)
vs the PLD accountant on 40 composed Laplace runs (dp-accounting has no binomial selection: the composition is the
accountant symsel replaces); 7. the README's SelectionAccountant example, run as written (warm calls vary its σ),
vs dp-accounting's RDP accountant on the same three events (the Poisson selection as ``RepeatAndSelectDpEvent(run,
10, inf)``) and, second, the PLD accountant with each selection replaced by 10 composed runs (what the PLD
accountant can do; not a bound for a random K); 8a/8b. ``calibrate_dp_mechanism`` finding the Gaussian σ for ε = 2,
δ = 1e-6 (``tol`` 1e-3, the same explicit bracket for both) of a geometric(mean=10) tuning (SelectionAccountant vs
RdpAccountant on ``RepeatAndSelectDpEvent``) and of a point(k=40) tuning (SelectionAccountant on
``SelectionDpEvent(…, "point(k=40)")`` vs PLDAccountant on 40 composed runs); 8c/8d. the same for the σ of
dpsgd(q=0.01, σ, steps=1000): a point(k=40) tuning (vs PLDAccountant on 40 composed runs) and a poisson(mean=10)
tuning (vs RdpAccountant on ``RepeatAndSelectDpEvent(run, 10, inf)``); the answers are the σ found. 9a-9d. random
and fixed numbers of trials of other runs, each at its own δ (:func:`random_law_rows`).

``--rtol R``: symsel is asked for the search tolerance ``R`` (``bound(..., rtol=R)``, ``SelectionAccountant(rtol=R)``;
from 1e-3 on, ``best`` works on a coarser loss grid of a DP-SGD run) → ``fast_rtol<R>.json``, or
``fast_rtol<R>_rows_<ids>.json`` for the rows chosen with ``--rows``.

A row or mode that raises records the error text and the run goes on. ``--profile ROW`` prints instead the 10
largest cumulative entries of a cProfile of that row's first call in a fresh process.

Run from the repository root: ``python benchmarks/bench_fast.py [--repeats N] [--rows 1,3,8] [--quick]`` →
``benchmarks/results/fast.json`` (``fast_quick.json`` with ``--quick``).
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import textwrap
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _common import fmt, write_results

ROOT = Path(__file__).resolve().parent.parent
DELTA = 1e-6
#: a fresh process that takes longer than this (seconds) is stopped and recorded as an error
TIMEOUT = 1200
#: the perturbation of a row's parameter at call ``i`` (``i = 0``: the parameter as written)
PERTURB = "def F(i):\n    return 1 + 0.001 * i\n"

DPACC_IMPORTS = ("import dp_accounting\nfrom dp_accounting import dp_event, mechanism_calibration\n"
                 "from dp_accounting.pld import PLDAccountant\nfrom dp_accounting.rdp import RdpAccountant\n")
SYMSEL_IMPORTS = "import symsel\n"
CALIBRATION_IMPORTS = ("from dp_accounting import dp_event, mechanism_calibration\n"
                       "from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent\n")

#: ``--rtol``: the search tolerance symsel is asked for (``bound(..., rtol=)``, ``SelectionAccountant(rtol=)``);
#: ``None``: the default
RTOL: float | None = None

GOALS = {"warm_ratio": 2.0, "warm_ms": 20.0, "whole_ratio": 1.5, "readme_cpu_s": 2.0, "calibration_cpu_s": 5.0}


@dataclass
class Side:
    """One side of a row: its imports (run before the clock starts in a fresh process) and code defining
    ``call(i) -> float``."""

    label: str
    imports: str
    code: str


@dataclass
class Row:
    id: str
    label: str
    symsel: Side
    peers: list[Side]
    note: str = ""
    answer: str = "ε"
    extra: dict[str, Any] = field(default_factory=dict)


def _symsel_bound(law: str, profile: str, delta: float = DELTA) -> str:
    """``call(i)``: symsel's best bound of ``law`` on ``profile`` (``{s}`` is the perturbed parameter), ε at δ."""
    return textwrap.dedent(f"""\
        def call(i):
            s = {profile[1]} * F(i)
            law = symsel.parse_distribution({law!r})
            base = symsel.parse_profile(f{profile[0]!r})
            return float(symsel.bound(law, base, "best", rtol={RTOL!r}).epsilon({delta!r}))
        """)


def _peer(accountant: str, event: str, scale: float, delta: float = DELTA) -> str:
    """``call(i)``: a fresh dp-accounting ``accountant`` on ``event`` (``s`` is the perturbed parameter), ε at δ."""
    return textwrap.dedent(f"""\
        def call(i):
            s = {scale!r} * F(i)
            accountant = {accountant}()
            accountant.compose({event})
            return float(accountant.get_epsilon({delta!r}))
        """)


DPSGD_SPEC = ("dpsgd(q=0.01, sigma={s}, steps=1000)", 1.1)
DPSGD_SIGMA_EVENT = ("dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, "
                     "dp_event.GaussianDpEvent(sigma)), 1000)")
DPSGD_EVENT = ("dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(s)), "
               "1000)")


def readme_example() -> str:
    """The README's SelectionAccountant example, verbatim: the ```python block that builds ``SelectionAccountant()``."""
    text = (ROOT / "README.md").read_text()
    for block in text.split("```python\n")[1:]:
        code = block.split("```", 1)[0]
        if "SelectionAccountant()" in code:
            return code
    raise LookupError("README.md has no ```python block with SelectionAccountant()")


def _readme_row() -> Row:
    code = readme_example()
    target = "GaussianDpEvent(4.0)"
    if target not in code:
        raise LookupError(f"the README example has no {target}: its σ cannot be varied for the warm calls")
    imports = "".join(line + "\n" for line in code.splitlines() if line.startswith(("import ", "from ")))
    symsel_code = textwrap.dedent(f"""\
        import ast as _ast
        README = {code!r}
        def call(i):
            # the README's code as written (i = 0), or with its σ = 4.0 times F(i); the value of its last line
            # (of what it prints, when it prints)
            code = README if i == 0 else README.replace({target!r}, f"GaussianDpEvent({{4.0 * F(i)!r}})")
            tree = _ast.parse(code)
            last = tree.body.pop().value
            if isinstance(last, _ast.Call) and getattr(last.func, "id", None) == "print":
                last = last.args[0]  # the README prints its answer: the value printed
            namespace = {{}}
            exec(compile(tree, "<README>", "exec"), namespace)
            return float(eval(compile(_ast.Expression(last), "<README>", "eval"), namespace))
        """)
    rdp = textwrap.dedent(f"""\
        def call(i):
            run = dp_event.GaussianDpEvent(4.0 * F(i))
            accountant = RdpAccountant()
            accountant.compose(dp_event.RepeatAndSelectDpEvent(run, 10, 1))
            accountant.compose(dp_event.RepeatAndSelectDpEvent(run, 10, float("inf")))
            accountant.compose(run)
            return float(accountant.get_epsilon({DELTA!r}))
        """)
    pld = textwrap.dedent(f"""\
        def call(i):
            run = dp_event.GaussianDpEvent(4.0 * F(i))
            accountant = PLDAccountant()
            accountant.compose(dp_event.SelfComposedDpEvent(run, 10))
            accountant.compose(dp_event.SelfComposedDpEvent(run, 10))
            accountant.compose(run)
            return float(accountant.get_epsilon({DELTA!r}))
        """)
    return Row("7", "README SelectionAccountant example", Side("README code", imports, symsel_code),
               [Side("RDP: same 3 events (poisson → RepeatAndSelect(run, 10, inf))", DPACC_IMPORTS, rdp),
                Side("PLD: each selection → 10 composed runs (not a bound for random K)", DPACC_IMPORTS, pld)],
               note="the README's code (geometric(10) and poisson(10) selections of Gaussian(4), then the run) as "
               "written; PLDAccountant cannot account a selection: main peer = RdpAccountant on the same events",
               extra={"readme_code": code})


def _calibration(accountant: str, event: str, bracket: tuple[float, float]) -> str:
    if accountant == "SelectionAccountant" and RTOL is not None:
        accountant = f"functools.partial(SelectionAccountant, rtol={RTOL!r})"
    return textwrap.dedent(f"""\
        import functools
        def call(i):
            def make_event(sigma):
                return {event}
            bracket = mechanism_calibration.ExplicitBracketInterval({bracket[0]!r} * F(i), {bracket[1]!r} * F(i))
            return float(mechanism_calibration.calibrate_dp_mechanism(
                {accountant}, make_event, target_epsilon=2.0, target_delta={DELTA!r}, bracket_interval=bracket,
                tol=1e-3))
        """)


def rows() -> list[Row]:
    """Every row (the README row raises at build time if the README example cannot be found)."""
    out = [
        Row("1", "geometric(mean=30) on gaussian(sigma=4)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("geometric(mean=30)", ("gaussian(sigma={s})", 4.0))),
            [Side("RDP RepeatAndSelect(Gauss(σ), 30, 1)", DPACC_IMPORTS, _peer(
                "RdpAccountant", "dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(s), 30, 1)", 4.0))]),
        Row("2", "point(k=40) on gaussian(sigma=4)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("point(k=40)", ("gaussian(sigma={s})", 4.0))),
            [Side("PLD SelfComposed(Gauss(σ), 40)", DPACC_IMPORTS, _peer(
                "PLDAccountant", "dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(s), 40)", 4.0))]),
        Row("3", "point(k=40) on dpsgd(q=0.01, sigma=1.1, steps=1000)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("point(k=40)", DPSGD_SPEC)),
            [Side("PLD SelfComposed(dpsgd, 40)", DPACC_IMPORTS, _peer(
                "PLDAccountant", f"dp_event.SelfComposedDpEvent({DPSGD_EVENT}, 40)", 1.1))]),
        Row("4", "poisson(mean=10) on dpsgd(q=0.01, sigma=1.1, steps=1000)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("poisson(mean=10)", DPSGD_SPEC)),
            [Side("RDP RepeatAndSelect(dpsgd, 10, inf)", DPACC_IMPORTS, _peer(
                "RdpAccountant", f"dp_event.RepeatAndSelectDpEvent({DPSGD_EVENT}, 10, float('inf'))", 1.1))]),
        Row("5", "tnb(eta=0.5, mean=10) on dpsgd(q=0.01, sigma=1.1, steps=1000)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("tnb(eta=0.5, mean=10)", DPSGD_SPEC)),
            [Side("RDP RepeatAndSelect(dpsgd, 10, 0.5)", DPACC_IMPORTS, _peer(
                "RdpAccountant", f"dp_event.RepeatAndSelectDpEvent({DPSGD_EVENT}, 10, 0.5)", 1.1))]),
        Row("6", "binomial(n=40, p=1/2) on laplace(scale=1)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("binomial(n=40, p=1/2)", ("laplace(scale={s})", 1.0))),
            [Side("PLD SelfComposed(Laplace(b), 40) (no exact peer)", DPACC_IMPORTS, _peer(
                "PLDAccountant", "dp_event.SelfComposedDpEvent(dp_event.LaplaceDpEvent(s), 40)", 1.0))],
            note="dp-accounting has no binomial selection: peer = the 40-run composition symsel replaces"),
    ]
    try:
        out.append(_readme_row())
    except Exception as exc:  # recorded as the row's error
        out.append(Row("7", "README SelectionAccountant example", Side("README code", "", ""), [],
                       extra={"build_error": f"{type(exc).__name__}: {exc}"}))
    geometric = "dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(sigma), 10, 1)"
    out += [
        Row("8a", "calibrate σ for ε=2: geometric(mean=10) tuning of Gaussian(σ)",
            Side("SelectionAccountant", CALIBRATION_IMPORTS,
                 _calibration("SelectionAccountant", geometric, (1.0, 10.0))),
            [Side("calibrate, RDP RepeatAndSelect(Gauss(σ), 10, 1)", DPACC_IMPORTS,
                  _calibration("RdpAccountant", geometric, (1.0, 10.0)))],
            answer="σ", note="bracket [1, 10], tol 1e-3"),
        Row("8b", "calibrate σ for ε=2: point(k=40) tuning of Gaussian(σ)",
            Side("SelectionAccountant", CALIBRATION_IMPORTS, _calibration(
                "SelectionAccountant", 'SelectionDpEvent(dp_event.GaussianDpEvent(sigma), "point(k=40)")',
                (5.0, 40.0))),
            [Side("calibrate, PLD SelfComposed(Gauss(σ), 40)", DPACC_IMPORTS, _calibration(
                "PLDAccountant", "dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(sigma), 40)", (5.0, 40.0)))],
            answer="σ", note="bracket [5, 40], tol 1e-3"),
        Row("8c", "calibrate σ for ε=2: point(k=40) tuning of dpsgd(q=0.01, σ, steps=1000)",
            Side("SelectionAccountant", CALIBRATION_IMPORTS, _calibration(
                "SelectionAccountant", f'SelectionDpEvent({DPSGD_SIGMA_EVENT}, "point(k=40)")', (2.0, 10.0))),
            [Side("calibrate, PLD SelfComposed(dpsgd, 40)", DPACC_IMPORTS, _calibration(
                "PLDAccountant", f"dp_event.SelfComposedDpEvent({DPSGD_SIGMA_EVENT}, 40)", (2.0, 10.0)))],
            answer="σ", note="bracket [2, 10], tol 1e-3"),
        Row("8d", "calibrate σ for ε=2: poisson(mean=10) tuning of dpsgd(q=0.01, σ, steps=1000)",
            Side("SelectionAccountant", CALIBRATION_IMPORTS, _calibration(
                "SelectionAccountant", f'SelectionDpEvent({DPSGD_SIGMA_EVENT}, "poisson(mean=10)")', (1.0, 5.0))),
            [Side("calibrate, RDP RepeatAndSelect(dpsgd, 10, inf)", DPACC_IMPORTS, _calibration(
                "RdpAccountant", f"dp_event.RepeatAndSelectDpEvent({DPSGD_SIGMA_EVENT}, 10, float('inf'))",
                (1.0, 5.0)))],
            answer="σ", note="bracket [1, 5], tol 1e-3"),
    ]
    return out + random_law_rows()


def _dpsgd(q: float, sigma: float, steps: int) -> tuple[tuple[str, float], str]:
    """A DP-SGD run as symsel's spec (``{s}``: the perturbed σ) and as dp-accounting's event (``s``)."""
    return ((f"dpsgd(q={q}, sigma={{s}}, steps={steps})", sigma),
            f"dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent({q}, dp_event.GaussianDpEvent(s)), {steps})")


def random_law_rows() -> list[Row]:
    """Rows 9a-9d: a random (or fixed) number of trials of a training run, each at its own δ, beside the
    accountant a practitioner would use (the Rényi accountant's ``RepeatAndSelectDpEvent`` for a random K, the PLD
    accountant's composition for a fixed one). The same question as row 4 at δ = 1e-6 is row 4."""
    geometric_run, geometric_event = _dpsgd(0.004, 1.0, 5000)
    poisson_run, poisson_event = _dpsgd(0.02, 0.9, 500)
    return [
        Row("9a", "geometric(mean=20) on dpsgd(q=0.004, sigma=1.0, steps=5000), δ = 1e-5",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("geometric(mean=20)", geometric_run, 1e-5)),
            [Side("RDP RepeatAndSelect(dpsgd, 20, 1)", DPACC_IMPORTS, _peer(
                "RdpAccountant", f"dp_event.RepeatAndSelectDpEvent({geometric_event}, 20, 1)", 1.0, 1e-5))]),
        Row("9b", "poisson(mean=10) on dpsgd(q=0.02, sigma=0.9, steps=500), δ = 1e-5",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("poisson(mean=10)", poisson_run, 1e-5)),
            [Side("RDP RepeatAndSelect(dpsgd, 10, inf)", DPACC_IMPORTS, _peer(
                "RdpAccountant", f"dp_event.RepeatAndSelectDpEvent({poisson_event}, 10, float('inf'))", 0.9,
                1e-5))]),
        Row("9c", "poisson(mean=30) on gaussian(sigma=2)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("poisson(mean=30)", ("gaussian(sigma={s})", 2.0))),
            [Side("RDP RepeatAndSelect(Gauss(σ), 30, inf)", DPACC_IMPORTS, _peer(
                "RdpAccountant", "dp_event.RepeatAndSelectDpEvent(dp_event.GaussianDpEvent(s), 30, float('inf'))",
                2.0))]),
        Row("9d", "point(k=40) on gaussian(sigma=1)",
            Side("best", SYMSEL_IMPORTS, _symsel_bound("point(k=40)", ("gaussian(sigma={s})", 1.0))),
            [Side("PLD SelfComposed(Gauss(σ), 40)", DPACC_IMPORTS, _peer(
                "PLDAccountant", "dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(s), 40)", 1.0))]),
    ]


# ------------------------------------------------------------------------------------------------ clocks
def cpu_now() -> float:
    """CPU seconds of this process (all threads) plus its waited-for children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _children_cpu() -> float:
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


CHILD = """\
import json as _json, resource as _resource, time as _time
{imports}
{perturb}
{code}
def _cpu():
    c = _resource.getrusage(_resource.RUSAGE_CHILDREN)
    return _time.process_time() + c.ru_utime + c.ru_stime
_c0, _w0 = _cpu(), _time.perf_counter()
_answer = call(0)
_c1, _w1 = _cpu(), _time.perf_counter()
print(_json.dumps({{"cpu": _c1 - _c0, "wall": _w1 - _w0, "answer": _answer}}))
"""

PROFILE_CHILD = """\
import cProfile as _cp, pstats as _ps
{imports}
{perturb}
{code}
_profile = _cp.Profile()
_profile.enable()
_answer = call(0)
_profile.disable()
print("answer", _answer)
_ps.Stats(_profile).sort_stats("cumulative").print_stats({top})
"""


def fresh_process(side: Side) -> dict[str, Any]:
    """One fresh ``python -c`` process: its first call (timed inside) and the whole process (timed here)."""
    script = CHILD.format(imports=side.imports, perturb=PERTURB, code=side.code)
    cpu0, wall0 = _children_cpu(), time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=TIMEOUT)
    whole_wall, whole_cpu = time.perf_counter() - wall0, _children_cpu() - cpu0
    if done.returncode != 0:
        raise RuntimeError(f"child exited {done.returncode}: {done.stderr.strip()[-800:]}")
    first = json.loads(done.stdout.strip().splitlines()[-1])
    return {"first_cpu": first["cpu"], "first_wall": first["wall"], "whole_cpu": whole_cpu, "whole_wall": whole_wall,
            "answer": first["answer"]}


def in_process(side: Side) -> Any:
    """``call`` of ``side``, defined in this process (imports run here once)."""
    namespace: dict[str, Any] = {"__name__": f"bench_fast_{id(side)}"}
    exec(compile(side.imports + PERTURB + side.code, f"<{side.label}>", "exec"), namespace)
    return namespace["call"]


def timed_call(call: Any, i: float) -> dict[str, Any]:
    cpu0, wall0 = cpu_now(), time.perf_counter()
    answer = call(i)
    return {"cpu": cpu_now() - cpu0, "wall": time.perf_counter() - wall0, "answer": answer, "i": i}


def _summary(samples: list[dict[str, Any]], keys: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"n": len(samples), "answers": [s["answer"] for s in samples]}
    for key in keys:
        values = [s[key] for s in samples]
        out[key] = values
        out[f"median_{key}"] = statistics.median(values) if values else None
    return out


def _error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".strip()[:1500]


# ------------------------------------------------------------------------------------------------ modes
def warm(row: Row, ordinal: int, repeats: int) -> dict[str, Any]:
    """Warm-up (untimed), then ``repeats`` turns; turn ``t`` asks every side about parameter ``F(t + 0.1 ordinal)``."""
    sides = [row.symsel, *row.peers]
    calls = [in_process(side) for side in sides]
    for call in calls:
        call(0.1 * ordinal)
    samples: list[list[dict[str, Any]]] = [[] for _ in sides]
    for turn in range(1, repeats + 1):
        order = list(range(len(sides))) if turn % 2 else list(reversed(range(len(sides))))
        for k in order:
            samples[k].append(timed_call(calls[k], turn + 0.1 * ordinal))
        print(f"    warm turn {turn}: " + ", ".join(f"{s[-1]['cpu']:.3f}" for s in samples) + " CPU-s", flush=True)
    return {"symsel": _summary(samples[0], ("cpu", "wall")),
            "peers": [_summary(s, ("cpu", "wall")) for s in samples[1:]]}


def fresh(row: Row, repeats: int) -> dict[str, Any]:
    """``repeats`` turns of a fresh process per side (first call and whole process from the same child)."""
    sides = [row.symsel, *row.peers]
    samples: list[list[dict[str, Any]]] = [[] for _ in sides]
    for turn in range(1, repeats + 1):
        order = list(range(len(sides))) if turn % 2 else list(reversed(range(len(sides))))
        for k in order:
            samples[k].append(fresh_process(sides[k]))
        print(f"    fresh turn {turn}: whole " + ", ".join(f"{s[-1]['whole_cpu']:.2f}" for s in samples)
              + " CPU-s; first call " + ", ".join(f"{s[-1]['first_cpu']:.3f}" for s in samples), flush=True)
    keys = ("first_cpu", "first_wall", "whole_cpu", "whole_wall")
    return {"symsel": _summary(samples[0], keys), "peers": [_summary(s, keys) for s in samples[1:]]}


def _ratio(a: Any, b: Any) -> float | None:
    if a is None or b is None or b == 0:
        return None
    return a / b


def ratios(record: dict[str, Any], peer: int) -> dict[str, float | None]:
    """symsel / peer ``peer`` for each mode, CPU and wall."""
    out: dict[str, float | None] = {}
    warm_, fresh_ = record.get("warm"), record.get("fresh")
    for clock in ("cpu", "wall"):
        if isinstance(warm_, dict) and "symsel" in warm_:
            mine, theirs = warm_["symsel"], warm_["peers"][peer]
            out[f"warm_{clock}"] = _ratio(mine[f"median_{clock}"], theirs[f"median_{clock}"])
            # turn by turn: both sides asked about the same parameter, whose cost can vary (an FFT's size)
            paired = [_ratio(a, b) for a, b in zip(mine[clock], theirs[clock], strict=True)]
            out[f"warm_{clock}_paired"] = statistics.median(paired) if None not in paired and paired else None
        if isinstance(fresh_, dict) and "symsel" in fresh_:
            for mode in ("first", "whole"):
                out[f"{mode}_{clock}"] = _ratio(fresh_["symsel"][f"median_{mode}_{clock}"],
                                                fresh_["peers"][peer][f"median_{mode}_{clock}"])
    return out


def goals(row: Row, record: dict[str, Any]) -> dict[str, Any]:
    """The issue's goals for this row (against its main peer)."""
    out: dict[str, Any] = {}
    r = record.get("ratios", [{}])[0] if record.get("ratios") else {}
    warm_ = record.get("warm")
    if isinstance(warm_, dict) and "symsel" in warm_ and r.get("warm_cpu") is not None:
        ms = 1e3 * warm_["symsel"]["median_cpu"]
        ratio = max(r["warm_cpu"], r.get("warm_cpu_paired") or 0.0)  # the less favourable of the two
        out["warm"] = {"met": ratio <= GOALS["warm_ratio"] or ms <= GOALS["warm_ms"], "ratio": ratio,
                       "ratio_of_medians": r["warm_cpu"], "median_of_paired_ratios": r.get("warm_cpu_paired"),
                       "symsel_ms": ms}
    if r.get("whole_cpu") is not None:
        out["whole"] = {"met": r["whole_cpu"] <= GOALS["whole_ratio"], "ratio": r["whole_cpu"]}
    fresh_ = record.get("fresh")
    if isinstance(fresh_, dict) and "symsel" in fresh_:
        cpu = fresh_["symsel"]["median_whole_cpu"]
        if row.id == "7":
            out["readme_cpu_s"] = {"met": cpu <= GOALS["readme_cpu_s"], "cpu_s": cpu}
        if row.id.startswith("8"):
            out["calibration_cpu_s"] = {"met": cpu <= GOALS["calibration_cpu_s"], "cpu_s": cpu,
                                        "first_call_cpu_s": fresh_["symsel"]["median_first_cpu"]}
    return out


def run_row(row: Row, ordinal: int, repeats: int) -> dict[str, Any]:
    record: dict[str, Any] = {"id": row.id, "label": row.label, "symsel": row.symsel.label,
                              "peers": [p.label for p in row.peers], "note": row.note, "answer": row.answer,
                              "errors": {}, **row.extra}
    if "build_error" in row.extra:
        record["errors"]["build"] = row.extra["build_error"]
        return record
    start = time.perf_counter()
    for mode, fn in (("warm", lambda: warm(row, ordinal, repeats)), ("fresh", lambda: fresh(row, repeats))):
        try:
            record[mode] = fn()
        except Exception as exc:  # the row goes on with its other mode, the run with the other rows
            record["errors"][mode] = _error(exc)
            record["errors"][f"{mode}_traceback"] = traceback.format_exc()[-3000:]
            print(f"    {mode}: {_error(exc)[:300]}", flush=True)
    record["ratios"] = [ratios(record, k) for k in range(len(row.peers))]
    record["goals"] = goals(row, record)
    record["seconds"] = time.perf_counter() - start
    return record


# ------------------------------------------------------------------------------------------------ table
def _answer(record: dict[str, Any], peer: int) -> str:
    fresh_ = record.get("fresh") or {}
    warm_ = record.get("warm") or {}
    source = fresh_ if "symsel" in fresh_ else warm_
    if "symsel" not in source:
        return "-"
    mine, theirs = source["symsel"]["answers"], source["peers"][peer]["answers"]
    return f"{record['answer']} {fmt(mine[0] if mine else None)} vs {fmt(theirs[0] if theirs else None)}"


def table(records: list[dict[str, Any]]) -> str:
    headers = ["row", "peer call", "peer warm (ms)", "symsel warm (ms)", "warm ratio", "first-call ratio",
               "whole ratio", "symsel CPU s (whole)", "answers (symsel vs peer)"]
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    notes = []
    for record in records:
        if record["errors"].get("build"):
            lines.append(f"| {record['id']} {record['label']} | - | " + " | ".join("error" for _ in headers[2:]) + " |")
            notes.append(f"row {record['id']}: {record['errors']['build']}")
            continue
        warm_, fresh_ = record.get("warm") or {}, record.get("fresh") or {}
        for k, peer in enumerate(record["peers"]):
            r = record["ratios"][k]
            label = f"{record['id']} {record['label']}" if k == 0 else f"{record['id']} (alt. peer)"
            peer_ms = 1e3 * warm_["peers"][k]["median_cpu"] if "symsel" in warm_ else None
            mine_ms = 1e3 * warm_["symsel"]["median_cpu"] if "symsel" in warm_ else None
            whole = fresh_["symsel"]["median_whole_cpu"] if "symsel" in fresh_ else None
            cells = [label, peer, fmt(peer_ms, 3), fmt(mine_ms, 3), fmt(r.get("warm_cpu"), 3),
                     fmt(r.get("first_cpu"), 3), fmt(r.get("whole_cpu"), 3), fmt(whole, 3), _answer(record, k)]
            lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
        if record["note"]:
            notes.append(f"row {record['id']}: {record['note']}")
        for mode in ("warm", "fresh"):
            if mode in record["errors"]:
                notes.append(f"row {record['id']} {mode} error: {record['errors'][mode][:300]}")
    text = "\n".join(lines)
    if notes:
        text += "\n\n" + "\n".join(f"- {n}" for n in notes)
    return text


def goals_text(records: list[dict[str, Any]]) -> str:
    out = []
    for record in records:
        for name, goal in record.get("goals", {}).items():
            detail = ", ".join(f"{k} {fmt(v, 3)}" for k, v in goal.items() if k != "met")
            out.append(f"- row {record['id']} {name}: {'met' if goal['met'] else 'NOT met'} ({detail})")
    return "\n".join(out)


def profile(row_id: str, top: int = 10) -> int:
    """cProfile of the first call of row ``row_id``'s symsel side in a fresh process (top ``top`` cumulative)."""
    row = next(r for r in rows() if r.id == row_id)
    script = PROFILE_CHILD.format(imports=row.symsel.imports, perturb=PERTURB, code=row.symsel.code, top=top)
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, timeout=TIMEOUT).returncode


def source_state() -> dict[str, Any]:
    """The commit measured and whether the package's files differed from it (others may be editing the tree)."""
    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], capture_output=True, text=True, cwd=ROOT, timeout=60).stdout.rstrip()
        except Exception as exc:  # no git: say so
            return f"unavailable: {_error(exc)}"

    return {"commit": git("rev-parse", "HEAD"),
            "symsel_modified": git("status", "--short", "--", "symsel").splitlines()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed turns per mode (median of these)")
    parser.add_argument("--rows", default=None, help="comma-separated row ids (1..7, 8a..8d, 9a..9d; 8 = all four 8s)")
    parser.add_argument("--quick", action="store_true", help="3 repeats, writes fast_quick.json")
    parser.add_argument("--profile", default=None, metavar="ROW", help="cProfile ROW's first call and stop")
    parser.add_argument("--rtol", type=float, default=None,
                        help="symsel's search tolerance (bound(..., rtol=), SelectionAccountant(rtol=)); writes "
                        "fast_rtol<RTOL>.json")
    args = parser.parse_args(argv)
    global RTOL
    RTOL = args.rtol
    if args.profile:
        return profile(args.profile)
    repeats = 3 if args.quick else max(1, args.repeats)
    chosen = None if args.rows is None else [s.strip() for s in args.rows.split(",") if s.strip()]
    selected = [(n, r) for n, r in enumerate(rows(), 1)
                if chosen is None or any(r.id == c or r.id.startswith(c) for c in chosen)]
    start = time.perf_counter()
    state = source_state()
    records = []
    for ordinal, row in selected:
        print(f"row {row.id}: {row.label}", flush=True)
        records.append(run_row(row, ordinal, repeats))
        print(f"  done in {records[-1].get('seconds', 0):.0f} s", flush=True)
    markdown = table(records)
    print("\n" + markdown + "\n\nCPU ratios (symsel / peer, medians); wall-clock in the JSON.\n\nGoals:\n"
          + goals_text(records))
    payload = {"repeats": repeats, "rows_selected": chosen, "delta": DELTA, "source": state, "goals": GOALS,
               "rows": records, "markdown": markdown, "wall_seconds": time.perf_counter() - start}
    payload["rtol"] = RTOL
    name = "fast_quick" if args.quick else "fast"
    if RTOL is not None:  # a selection of rows at a tolerance is its own file beside the full run's
        name += f"_rtol{RTOL:g}" + ("" if chosen is None else "_rows_" + "_".join(chosen))
    path = write_results(name, payload)
    print(f"\nwrote {path} ({payload['wall_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
