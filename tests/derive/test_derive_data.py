"""``symsel derive`` as data: every closed form both as LaTeX and as a SymPy string that reads back
to the same expression; one record rendered three ways; the same output on any machine, whatever its load.

References are independent of the renderers: ``sympy.sympify`` of each ``sympy`` string against the record's own
SymPy object, the Markdown table parsed back against the JSON checks, two processes with different hash seeds, and a
clock that jumps an hour between readings (a machine so loaded that any time budget would run out).
"""

from __future__ import annotations

import functools
import itertools
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import sympy
from click.testing import CliRunner

from symsel.cli import main
from symsel.derive import Derivation, derive, render_latex, render_markdown
from symsel.derive.common import expansion_bound, law_size, polynomial_degree
from symsel.derive.segments import interval_budget
from symsel.distributions import z

APPROX = "approx(eps=1, delta=1e-6)"
#: (spec, base, sections): a free parameter (family, envelope Max, pure-DP, Rényi Thm 6, utility with optimal t), a
#: numeric TNB (envelope pieces, Thm 2, a log in the quantile), a law beyond the symbolic limits with a base
#: (interval proof, a 30-digit eps_hat), a free exponent (a Limit), a huge law (a power kept unexpanded).
CASES = (
    ("pgf(expr='exp(mu*(z-1))')", None, True),
    ("geometric(mean=10)", None, True),
    ("beta_binomial(n=20, a=2, b=3)", APPROX, True),
    ("pgf(expr='z^a')", None, False),
    ("binomial(n=80, p=0.5)", None, True),
)
#: where closed forms sit in the JSON object (every one must be an expression object or null).
EXPRESSION_FIELDS = ("pgf", "dpgf", "mean", "variance", "p0", "p1", "ratio", "eps_hat", "envelope")
SECTION_FIELDS = {"pure_dp": ("eps0", "log_ratio", "epsilon"), "renyi": ("closed_form", "ps_closed_form"),
                  "utility": ("expected_quantile", "success_probability", "tail_bound", "tail_optimal_t")}
#: JSON strings that are prose, labels or the rendered report (LaTeX allowed there; nowhere else).
PROSE = {"spec", "base", "sup_argument", "eps_hat_theorem", "latex", "family", "sup_location", "renyi.term",
         "renyi.theorem", "renyi.argument", "pure_dp.argument", "utility.expected_quantile_kind"}


@functools.cache
def _derived(spec: str, base: str | None, sections: bool) -> Derivation:
    return derive(spec, base, sections=sections)


def _json(d: Derivation) -> dict:
    return json.loads(json.dumps(d.to_json()))


def _walk(value, path=""):
    """``(path, value)`` for every expression object and every other string of a JSON object."""
    if isinstance(value, dict) and set(value) == {"latex", "sympy"}:
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _walk(v, f"{path}.{k}" if path else k)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_every_closed_form_is_latex_and_a_sympy_string_that_reads_back(case):
    d = _derived(*case)
    payload = _json(d)
    found = {p: v for p, v in _walk(payload) if isinstance(v, dict)}
    record = d.expressions()
    assert set(found) == set(record) and len(found) >= 7
    for path, entry in found.items():
        back = sympy.sympify(entry["sympy"])
        expr = record[path].expr
        assert back == expr or sympy.simplify(back - expr) == 0, (path, entry["sympy"])
        assert entry["latex"] == str(record[path]), path
    # no closed form is LaTeX only: each field is an expression object or null, and LaTeX appears nowhere else
    for key in EXPRESSION_FIELDS:
        assert payload[key] is None or key in found, key
    for key in payload["family_params"]:
        assert f"family_params.{key}" in found
    for section, keys in SECTION_FIELDS.items():
        for key in keys if payload[section] else ():
            assert payload[section][key] is None or f"{section}.{key}" in found, (section, key)
    loose = [p for p, v in _walk(payload) if isinstance(v, str) and "\\" in v and p not in PROSE
             and not p.startswith(("notes", "skipped", "checks"))]
    assert loose == []


def test_sympy_strings_keep_assumptions_and_values():
    """The free mean of a Poisson PGF reads back positive; the P[K = 1] of z^a is an unevaluated limit."""
    payload = _json(_derived(*CASES[0]))
    mu = sympy.sympify(payload["mean"]["sympy"])
    assert mu == sympy.Symbol("mu", positive=True) and mu.is_positive
    eps, e1, d1 = sympy.symbols("varepsilon varepsilon_1 delta_1", positive=True)
    eps_hat = sympy.sympify(payload["eps_hat"]["sympy"])  # Cor 5.8, typed from the paper
    assert sympy.simplify(eps_hat - (eps - mu * (sympy.exp(e1) - 1) - mu * d1)) == 0
    p1 = sympy.sympify(_json(_derived(*CASES[3]))["p1"]["sympy"])
    assert isinstance(p1, sympy.Limit)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_the_json_reads_back_into_the_same_record_and_renderings(case):
    d = _derived(*case)
    back = Derivation.from_json(_json(d))
    assert back == d and back.markdown() == d.markdown() and back.latex() == d.latex()
    assert {p: e.expr for p, e in back.expressions().items()} == {p: e.expr for p, e in d.expressions().items()}


def test_the_command_line_json_with_infinities_reads_back():
    """delta = 1e-30 < m delta1: infinite bounds and margins, printed as "inf" (JSON has no infinity)."""
    from symsel.cli._app import _finite_or_none

    d = derive("poisson(3)", APPROX, 1e-30, sections=False)
    payload = json.loads(json.dumps(_finite_or_none(d.to_json()), allow_nan=False))
    assert payload["bound"]["epsilon_best"] == "inf"
    back = Derivation.from_json(payload)
    assert back == d and back.markdown() == d.markdown() == render_markdown(payload)


def _markdown_checks(markdown: str) -> list[tuple[str, str, bool]]:
    rows = [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith("| claim")]
    out = []
    for row in rows:
        claim, kind, _, passed = row[2:-2].rsplit(" | ", 3)
        out.append((claim, kind.split(" (")[0], passed == "yes"))
    return out


def test_cli_json_markdown_and_latex_are_one_record():
    """Three runs of the command: the Markdown and the LaTeX printed are the renderings of the JSON printed (so the
    three agree on every claim, every closed form and every skipped section)."""
    runner = CliRunner()
    args = ["derive", "two_point(L=10, s=1/2)", "--base", APPROX]
    payload = json.loads(runner.invoke(main, [*args, "--json"]).output)
    markdown = runner.invoke(main, args).output.rstrip("\n")
    latex = runner.invoke(main, [*args, "--latex"]).output.rstrip("\n")
    assert markdown == render_markdown(payload) and latex == render_latex(payload) == payload["latex"]
    assert _markdown_checks(markdown) == [(c["claim"], c["kind"], c["passed"]) for c in payload["checks"]]
    for key in ("pgf", "dpgf", "mean", "variance", "p0", "p1", "ratio"):
        assert payload[key]["latex"] in latex and payload[key]["latex"] in markdown
    assert payload["skipped"] and all(f"- {k}: {v}" in markdown for k, v in payload["skipped"].items())
    assert f"**{payload['sup_location']}** — {payload['sup_argument']}" in markdown


# ------------------------------------------------------------------ determinism
def _dumps(d: Derivation) -> str:
    return json.dumps(d.to_json(), indent=1)


def test_the_same_derivation_twice_is_byte_identical_across_processes_and_hash_seeds():
    spec, base = "poisson(mean=3)", APPROX
    code = ("import json, sys, symsel; d = symsel.derive(sys.argv[1], sys.argv[2], sections=False); "
            "print(json.dumps(d.to_json(), indent=1))")
    outs = [subprocess.run([sys.executable, "-c", code, spec, base], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": seed}, timeout=600).stdout for seed in ("0", "4242")]
    assert outs[0] == outs[1] == _dumps(derive(spec, base, sections=False)) + "\n"


def test_a_machine_loaded_for_hours_gives_the_same_derivation(monkeypatch):
    """Every clock jumps an hour between two readings and no timer may be armed: a time budget would run out at
    once (the interval proof's CPU deadline did, turning the proof into sampling). The output is unchanged."""
    case = ("beta_binomial(n=20, a=2, b=3)", APPROX, True)
    quiet = _derived(*case)
    assert any(c.kind == "interval" for c in quiet.checks)  # a budgeted search that a deadline would have cut
    hours = itertools.count()

    def clock() -> float:
        return 3600.0 * next(hours)

    for name in ("process_time", "perf_counter", "monotonic", "time", "thread_time"):
        monkeypatch.setattr(time, name, clock)
        monkeypatch.setattr(time, f"{name}_ns", lambda: int(clock() * 1e9))

    def no_timer(*args, **kwargs):
        raise AssertionError("derive armed a timer")

    monkeypatch.setattr(signal, "setitimer", no_timer)
    monkeypatch.setattr(signal, "alarm", no_timer)
    loaded = derive(case[0], case[1], sections=case[2])
    assert _dumps(loaded) == _dumps(quiet)


# ------------------------------------------------------------------ the size budget
def test_skipped_sections_say_why_in_the_same_words_each_time():
    """A nested exp is beyond the symbolic limits by depth (2 > 1): each section skipped names the sizes."""
    first = derive("pgf(expr='exp(exp(z-1)-1)')")
    again = derive("pgf(expr='exp(exp(z-1)-1)')")
    assert first.skipped == again.skipped
    size = "skipped by size: phi has 4 operations, is no exact polynomial, function nesting depth 2"
    assert first.skipped["renyi"] == (f"{size}; SymPy's symbolic steps run only up to 400 operations, degree 4 and "
                                      "nesting depth 1; method 'rdp_lemma7' gives certified numeric values")
    assert first.skipped["utility"].startswith(size) and "series expansion" in first.skipped["utility"]
    assert set(first.skipped) == {"family", "sup_location", "envelope", "pure_dp", "renyi", "utility"}
    assert first.verified


def test_expected_mean_of_a_million_is_derived_by_size_not_time():
    """E[K] = 10^6 as z^1000000: degree 10^6 > 60, every symbolic section skipped with its reason, and P[K = 1] = 0
    exact (no 10^6-term expansion)."""
    d = derive("point(k=1000000)")
    assert d.mean == "1000000" and d.p1 == "0" and d.verified
    assert "degree 1000000" in d.skipped["utility"]
    p0 = derive("binomial(n=2000000, p=0.5)", sections=False).p0  # 2^-2000000: 600 000 digits, kept unevaluated
    assert isinstance(p0.expr, sympy.Subs) and p0.expr.doit() == sympy.Rational(1, 2) ** 2000000


def test_sizes_are_read_off_the_tree():
    assert polynomial_degree((sympy.Rational(7, 10) + sympy.Rational(3, 10) * z) ** 5000) == 5000
    assert polynomial_degree(z**2 / (1 - z)) is None
    size = law_size(sympy.exp(sympy.exp(z - 1) - 1))
    assert (size.degree, size.depth, size.symbolic) == (None, 2, False)
    mu = sympy.Symbol("mu", positive=True)
    assert law_size(sympy.exp(mu * (z - 1))).symbolic


@pytest.mark.parametrize("expr", [(1 + z) ** 3 * (1 + z + z**2) ** 2, (2 + z) ** 7 / (1 - z) ** 2,
                                  sympy.exp(z) * (z + 1) ** 4 + (z - 3) ** 5])
def test_the_expansion_bound_is_an_upper_bound(expr):
    num, den = sympy.fraction(sympy.together(expr))
    actual = max(len(sympy.Add.make_args(sympy.expand(num))), len(sympy.Add.make_args(sympy.expand(den))))
    assert actual <= expansion_bound(expr)
    assert expansion_bound(((1 + z) * (2 + z)) ** 100, cap=2000) == 2001  # capped, without expanding


def test_the_interval_budget_is_a_number_of_enclosures_set_by_size():
    assert interval_budget(3 * sympy.exp(3 * z - 3)) == 4000
    binomial60 = sympy.diff(sympy.expand((sympy.Rational(1, 2) + z / 2) ** 60), z)
    assert interval_budget(binomial60) == 80_000 // sympy.count_ops(binomial60) < 4000
