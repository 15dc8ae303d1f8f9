"""A small, dependency-free mutation tester aimed at soundness: does the test suite notice when a bound gets smaller?

Every mutant makes a certified number *less conservative* (or is meant to): it flips ``<=``/``<`` and
``>=``/``>``, swaps ``max``/``min`` and ``np.maximum``/``np.minimum``, drops an additive safety term
(``+ margin``, ``- 1e-300``, …), turns ``(1 + x)`` into ``(1 - x)`` (and back), points
``math.nextafter(x, inf)`` the other way, and turns ``ceil`` into ``floor``. Aimed at the applications
(``symsel/apps``), which read composed quantities and hand them on, it also reads the wrong element of a pair
(``x[0]`` <-> ``x[1]``, ``a, b = pair`` -> ``b, a = pair``), drops a count factor (``count * x`` -> ``x``, with
``count``, ``steps``, ``k``, ``mean``, ``mu2``, … as the dropped side), takes one off a count (``count`` ->
``(count - 1)`` where it is an argument or a factor), keeps one branch of a conditional expression, drops a
``.compose(...)``/``.self_compose(...)`` (the receiver alone, or the argument alone), sums with ``max``, drops a
``sqrt``, and uses a smaller sensitivity (``2.0`` -> ``1.0`` on a line about sensitivity, a ``sensitivity`` argument
-> ``1.0``). Mutants are generated from the syntax tree and the token stream (never inside strings or comments) and
must compile. Some modules are mutated only inside the functions that produce numbers (:data:`REGIONS`).

The repository is copied (without ``.git`` and virtual environments) into a temporary directory; each mutant
is written into the copy, a fast subset of the tests is run there with ``pytest -x -n 0`` and a timeout, and
the original file is restored. Tests that already fail on the unmutated copy are deselected first, so a mutant
counts as killed only by a test that passes without it.

Usage (from the repository root, inside its virtual environment)::

    python benchmarks/mutation.py --list                              # every candidate mutant, no test run
    python benchmarks/mutation.py --limit 40 --seed 1                 # 40 mutants, round-robin over the modules
    python benchmarks/mutation.py --modules symsel/apps/plan.py --limit 0  # every mutant of one module
    python benchmarks/mutation.py --only symsel/apps/ptr.py:50:12:flip_compare   # chosen mutants, by id
    python benchmarks/mutation.py --limit 40 --json out.json --source /path/to/other/checkout

Each mutant's status is ``killed`` (a test failed), ``survived``, ``timeout`` or ``error`` (pytest itself
could not run, e.g. an import failure: counted as killed in the rate, listed separately).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: modules mutated by default.
DEFAULT_MODULES = (
    "symsel/bounds/api.py", "symsel/bounds/composition.py", "symsel/profiles/composition.py",
    "symsel/bounds/envelope.py",
    "symsel/bounds/hockey_stick.py", "symsel/bounds/mixture.py", "symsel/bounds/precision.py",
    "symsel/bounds/ratio.py", "symsel/bounds/rnm.py", "symsel/bounds/summary.py", "symsel/bounds/interval.py",
    "symsel/bounds/interval_pairs.py", "symsel/pairs/loss.py", "symsel/pairs/dpsgd.py", "symsel/evidence/pld_lower.py",
    "symsel/apps/plan.py", "symsel/apps/tuning.py", "symsel/apps/ptr.py", "symsel/profiles/export.py",
    "symsel/apps/accounting.py", "symsel/apps/opendp.py", "symsel/apps/hpo.py", "symsel/apps/sweep.py",
)
#: the modules of symsel/apps (``--apps`` mutates these only).
APPS_MODULES = (
    "symsel/apps/accounting.py", "symsel/apps/opendp.py", "symsel/apps/plan.py", "symsel/apps/tuning.py",
    "symsel/apps/ptr.py", "symsel/apps/hpo.py", "symsel/apps/sweep.py",
)
#: modules mutated only inside these functions (where their numbers are produced; the rest is file handling,
#: progress bars and argument checks, whose mutants cannot make a certified number smaller).
REGIONS = {
    "symsel/apps/hpo.py": ("tune", "_law_or_trials"),
    "symsel/apps/sweep.py": ("_run_cell", "_cell", "_number", "_bad_value", "write_parquet"),
}
#: functions never mutated (messages, caches, batch sizes, membership checks: no number of theirs is certified),
#: and no mutant inside a ``raise`` statement (its message) is kept either.
UNMUTATED = {
    "symsel/apps/accounting.py": ("_clip", "_memo", "__repr__", "_batch"),
    "symsel/apps/opendp.py": ("_one_line", "_check_member", "_distance_type", "_dp"),
}
#: the fast test subset run against each module's mutants (fastest killers first; a file that does not exist in the
#: copy, e.g. tests/test_properties.py before it was written, is skipped, so the same table serves a before/after run).
P = "tests/test_properties.py::"
FINITE = P + "test_no_bound_is_below_the_exact_selection_on_a_finite_pair"
FIXED_K = P + "test_fixed_k_runs_of_pure_dp_are_never_below_k_eps"
GAUSS = P + "test_no_bound_on_a_gaussian_base_is_below_a_binned_gaussian_selection"
CLOSE = P + "test_envelope_and_best_clear_the_certified_lower_bound_closely"
PAIRS = "tests/bounds/test_interval_pairs.py::"
B, E, PR, PF = "tests/bounds/", "tests/evidence/", "tests/pairs/", "tests/profiles/"
RENYI = [B + "test_renyi.py", B + "test_renyi_fixed_k.py", B + "test_lemma7_floor.py"]
#: the modules of bounds/, evidence/, pairs/ and profiles/ run their owning test files only (tests/<folder>/...),
#: so that a surviving mutant names a gap in the tests of the module that owns the number.
TESTS = {
    "symsel/bounds/api.py": [B + "test_api.py", B + "test_bounds_edges.py", B + "test_search_order.py",
                             B + "test_fdp_floor.py"],
    "symsel/bounds/composition.py": [B + "test_composition.py", B + "test_composition_brute_force.py"],
    "symsel/bounds/envelope.py": [B + "test_envelope.py", B + "test_search_order.py"],
    "symsel/bounds/hockey_stick.py": [B + "test_hockey_stick.py", B + "test_fdp_floor.py"],
    "symsel/bounds/mixture.py": [B + "test_hockey_stick.py", B + "test_envelope.py"],
    "symsel/bounds/precision.py": [B + "test_bounds_edges.py", B + "test_envelope.py", B + "test_ratio.py"],
    "symsel/bounds/ratio.py": [B + "test_ratio.py", B + "test_lemma7_floor.py", B + "test_hockey_stick.py"],
    "symsel/bounds/rnm.py": [B + "test_rnm.py"],
    "symsel/bounds/summary.py": [B + "test_api.py", B + "test_bounds_edges.py"],
    "symsel/bounds/interval.py": [B + "test_interval.py"],
    "symsel/bounds/interval_pairs.py": [PAIRS + "test_finite_pairs_between_the_certified_lower_bound_and_a_hair_above",
                                        PAIRS + "test_never_below_any_score_order_of_split_atoms",
                                        PAIRS + "test_mass_at_infinite_loss_is_charged_its_top_increment",
                                        PAIRS + "test_two_runs_of_a_finite_pair_never_below_their_exact_composition",
                                        PAIRS + "test_every_interval_mass_is_within_its_allowance_when_one_side_has_"
                                        "little_finite_mass"],
    "symsel/bounds/pipeline.py": [B + "test_pipeline.py"],
    **{f"symsel/bounds/renyi/{name}.py": RENYI for name in ("closed", "curve", "entry", "lemma7", "truncation")},
    "symsel/evidence/audit.py": [E + "test_audit.py"],
    "symsel/evidence/continuous.py": [E + "test_continuous.py"],
    "symsel/evidence/dpsgd_brackets.py": [E + "test_dpsgd_brackets.py"],
    "symsel/evidence/exact.py": [E + "test_exact.py"],
    "symsel/evidence/examples.py": [E + "test_examples.py"],
    "symsel/evidence/lower.py": [E + "test_lower.py"],
    "symsel/evidence/monotone.py": [E + "test_dpsgd_brackets.py"],
    "symsel/evidence/pld_lower.py": [E + "test_pld_lower.py"],
    "symsel/evidence/tabulated_lower.py": [E + "test_tabulated_lower.py"],
    "symsel/evidence/verify.py": [E + "test_verify.py"],
    "symsel/pairs/dpsgd.py": [PR + "test_dpsgd.py", PR + "test_pair_direction.py", E + "test_dpsgd_brackets.py"],
    "symsel/pairs/dpsgd_dominating.py": [PR + "test_dpsgd_dominating.py"],
    "symsel/pairs/finite.py": [E + "test_exact.py"],
    "symsel/pairs/location.py": [PR + "test_location.py"],
    "symsel/pairs/loss.py": [PR + "test_pair_direction.py",
                             PAIRS + "test_the_laplace_pairs_dominate_and_are_dominated",
                             PAIRS + "test_every_loss_pair_is_two_distributions",
                             PAIRS + "test_a_pld_rounded_up_dominates_it"],
    "symsel/profiles/analytic.py": [PF + "test_profiles_analytic.py"],
    "symsel/profiles/base.py": [PF + "test_profiles_base.py"],
    "symsel/profiles/composition.py": [B + "test_composition_protocol.py"],
    "symsel/profiles/dpaccounting.py": [PF + "test_profiles_dpaccounting.py", PF + "test_dp_accounting_public_api.py"],
    "symsel/profiles/export.py": [PF + "test_export_grid.py", PF + "test_export.py"],
    "symsel/profiles/finite.py": [PF + "test_profiles_finite.py"],
    "symsel/profiles/rdp.py": [PF + "test_profiles_rdp.py"],
    "symsel/profiles/region.py": [PF + "test_region.py"],
    "symsel/profiles/replace_one_rdp.py": [PF + "test_replace_one_rdp.py"],
    "symsel/profiles/subsampled_gaussian_pld.py": [PF + "test_subsampled_gaussian_pld.py"],
    "symsel/profiles/subsampled_rdp.py": [PF + "test_subsampled_rdp.py"],
    "symsel/profiles/tabulated.py": [PF + "test_profiles_tabulated.py"],
    "symsel/profiles/tradeoff.py": [PF + "test_tradeoff.py"],
    "symsel/apps/plan.py": [P + "test_the_planned_mean_fits_the_budget_and_a_larger_one_does_not",
                       P + "test_the_solved_sigma_fits_and_less_noise_does_not", "tests/apps/test_plan.py"],
    "symsel/apps/tuning.py": [P + "test_gaussian_sigma_for_is_never_below_the_exact_root",
                         P + "test_tuning_bound_dominates_every_admitted_candidate", "tests/apps/test_tuning.py"],
    "symsel/apps/ptr.py": [P + "test_ptr_profile_of_two_guarantees_is_the_intersection_of_their_polygons",
                      P + "test_ptr_tuning_is_never_below_the_exact_selection_of_the_worst_candidate",
                      "tests/apps/test_ptr.py"],
}
APPS = "tests/apps/"
ACC = APPS + "test_accounting_oracles.py::"
ODP = APPS + "test_opendp_oracles.py"
TESTS.update({
    "symsel/apps/accounting.py": [APPS + "test_apps_mutation_oracles.py", ACC + "test_the_oracle_itself",
                                  ACC + "test_best_of_two_runs_of_a_composed_gaussian_is_its_two_fold_composition",
                                  ACC + "test_one_run_of_a_composed_gaussian_is_exact_gdp",
                                  ACC + "test_a_selection_beside_gaussians_adds_up_to_the_exact_gdp",
                                  ACC + "test_one_run_of_every_supported_event_is_dp_accountings_pld",
                                  ACC + "test_one_run_beside_other_events_is_dp_accountings_composition",
                                  APPS + "test_app_limits.py::test_a_count_must_be_an_integer",
                                  APPS + "test_accounting.py"],
    "symsel/apps/opendp.py": [ODP, APPS + "test_apps_mutation_oracles.py", APPS + "test_opendp.py"],
    "symsel/apps/hpo.py": [APPS + "test_apps_mutation_oracles.py", APPS + "test_hpo.py"],
    "symsel/apps/sweep.py": [APPS + "test_apps_mutation_oracles.py", APPS + "test_sweep.py"],
})
for _module in ("symsel/apps/plan.py", "symsel/apps/tuning.py", "symsel/apps/ptr.py"):
    TESTS[_module] = [*TESTS[_module], APPS + "test_apps_mutation_oracles.py"]
FALLBACK_TESTS = [FINITE, GAUSS]
#: slow tests left out of every subset (the whole suite still runs them): seconds each, and what they check is
#: also checked by a faster test of the same subset.
SLOW = ["tests/bounds/test_hockey_stick.py::test_every_method_is_above_the_exact_value",
        "tests/apps/test_opendp.py::test_integer_distances_on_a_count",
        "tests/apps/test_accounting.py::test_a_fixed_k_selection_exports_interval_at_some_points_and_stays_above_the_"
        "lower_bound",
        "tests/apps/test_accounting.py::test_selection_event_with_any_law_and_fixed_k"]

#: an additive term counts as a safety term when its source mentions one of these, or is a tiny literal.
SAFETY_NAME = re.compile(r"margin|MARGIN|slack|allowance|ALLOWANCE|NUDGE|nudge|ROUNDING|rounding|floor|tol\b|"
                         r"TOL|eps_shift|shift|SHIFT|error|ERROR", re.IGNORECASE)
TINY_LITERAL = 1e-6
COMPARE_FLIP = {"<=": "<", "<": "<=", ">=": ">", ">": ">="}
NAME_SWAP = {"max": "min", "min": "max", "maximum": "minimum", "minimum": "maximum", "fmax": "fmin",
             "fmin": "fmax", "ceil": "floor"}
#: names whose factor is a count (``count * x`` -> ``x``) and which lose one (``count`` -> ``(count - 1)``).
COUNT_NAME = re.compile(r"^(count|counts|steps|k|n|n_trials|trials|mean|m|mu2|inner|times|points)$")
SENSITIVITY = re.compile(r"sensitivity", re.IGNORECASE)
IGNORE = shutil.ignore_patterns(".git", ".venv*", "__pycache__", ".hypothesis", ".pytest_cache", ".ruff_cache",
                                "*.egg-info", "symsel-report", ".mutation*")


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    col: int
    kind: str
    original: str
    replacement: str
    start: int  # character offsets of the replaced span in the module source
    end: int

    @property
    def ident(self) -> str:
        return f"{self.module}:{self.line}:{self.col}:{self.kind}"

    def apply(self, source: str) -> str:
        return source[:self.start] + self.replacement + source[self.end:]


# ------------------------------------------------------------------------------------------- generation
def _offsets(source: str) -> list[int]:
    starts, total = [0], 0
    for line in source.splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def _tokens(source: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(source).readline))


def _span(node: ast.AST, starts: list[int]) -> tuple[int, int]:
    return starts[node.lineno - 1] + node.col_offset, starts[node.end_lineno - 1] + node.end_col_offset


def _is_safety_term(node: ast.AST, text: str) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, float | int) and not isinstance(node.value, bool):
        return 0 < abs(node.value) <= TINY_LITERAL
    if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
        return _is_safety_term(node.operand, text)
    return bool(SAFETY_NAME.search(text))


def _op_token(tokens: list[tokenize.TokenInfo], after: tuple[int, int], before: tuple[int, int],
              strings: set[str]) -> tokenize.TokenInfo | None:
    """The first operator token in ``strings`` strictly between two (line, col) positions."""
    for tok in tokens:
        if tok.type == tokenize.OP and tok.string in strings and after <= tok.start and tok.end <= before:
            return tok
    return None


def mutants_of(module: str, source: str) -> list[Mutant]:
    """Every candidate mutant of one module's source (compiling ones only), in source order."""
    starts = _offsets(source)
    tokens = _tokens(source)
    tree = ast.parse(source)
    found: dict[tuple[int, int, str], Mutant] = {}

    def add(kind: str, line: int, col: int, start: int, end: int, replacement: str) -> None:
        original = source[start:end]
        if original == replacement:
            return
        mutant = Mutant(module, line, col, kind, original, replacement, start, end)
        try:
            ast.parse(mutant.apply(source))
        except SyntaxError:
            return
        found.setdefault((line, col, kind), mutant)

    # comparison operators, from the token stream (never inside strings or comments)
    for tok in tokens:
        if tok.type == tokenize.OP and tok.string in COMPARE_FLIP:
            line, col = tok.start
            start = starts[line - 1] + col
            add("flip_compare", line, col, start, start + len(tok.string), COMPARE_FLIP[tok.string])
    for node in ast.walk(tree):
        # max <-> min, np.maximum <-> np.minimum, ceil -> floor (called names and attributes)
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name in NAME_SWAP:
                end = starts[func.end_lineno - 1] + func.end_col_offset
                start = end - len(name)
                kind = "ceil_floor" if name == "ceil" else "swap_max_min"
                add(kind, func.end_lineno, func.end_col_offset - len(name), start, end, NAME_SWAP[name])
            # nextafter(x, inf) -> nextafter(x, -inf)
            if name == "nextafter" and len(node.args) == 2:
                target = node.args[1]
                text = ast.get_source_segment(source, target) or ""
                if "inf" in text and not text.lstrip().startswith("-"):
                    start, end = _span(target, starts)
                    add("nextafter_down", target.lineno, target.col_offset, start, end, f"-{text}")
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
            left, right = node.left, node.right
            # (1 + x) <-> (1 - x)
            if isinstance(left, ast.Constant) and left.value in (1, 1.0) and not isinstance(left.value, bool):
                tok = _op_token(tokens, (left.end_lineno, left.end_col_offset), (right.lineno, right.col_offset),
                                {"+", "-"})
                if tok is not None:
                    line, col = tok.start
                    start = starts[line - 1] + col
                    add("one_plus_minus", line, col, start, start + 1, "-" if tok.string == "+" else "+")
            # a + margin / a - margin -> a
            text = ast.get_source_segment(source, right) or ""
            if _is_safety_term(right, text):
                start, _ = _span(left, starts)
                _, end = _span(node, starts)
                left_text = ast.get_source_segment(source, left) or ""
                if "\n" not in source[start:end]:
                    add("drop_safety_term", node.lineno, node.col_offset, start, end, left_text)
        # x * (1 + margin)-style factors are covered by one_plus_minus; augmented `+= margin` too:
        if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add):
            text = ast.get_source_segment(source, node.value) or ""
            if _is_safety_term(node.value, text):
                start, end = _span(node, starts)
                add("drop_safety_term", node.lineno, node.col_offset, start, end, "pass")
    _app_mutants(source, tree, starts, add)
    return sorted(found.values(), key=lambda m: (m.line, m.col, m.kind))


def _identifier(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None


def _app_mutants(source: str, tree: ast.AST, starts: list[int], add: Any) -> None:
    """The mutants aimed at the applications (module docstring): wrong element, dropped count, count - 1, one
    branch of a conditional, a dropped composition, max for sum, no sqrt, a smaller sensitivity."""
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    lines = source.splitlines()

    def text(node: ast.AST) -> str:
        return ast.get_source_segment(source, node) or ""

    def replace(kind: str, node: ast.AST, replacement: str) -> None:
        start, end = _span(node, starts)
        if "\n" not in source[start:end]:
            add(kind, node.lineno, node.col_offset, start, end, replacement)

    def in_fstring(node: ast.AST) -> bool:
        while node in parents:
            node = parents[node]
            if isinstance(node, ast.JoinedStr):
                return True
        return False

    for node in ast.walk(tree):
        if in_fstring(node):
            continue
        # the wrong element of a pair: x[0] <-> x[1]
        if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
                and node.slice.value in (0, 1) and not isinstance(node.slice.value, bool)):
            replace("index_swap", node.slice, str(1 - node.slice.value))
        # a, b = pair -> b, a = pair
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple)
                and len(node.targets[0].elts) == 2):
            first, second = node.targets[0].elts
            replace("swap_unpack", node.targets[0], f"{text(second)}, {text(first)}")
        # count * x -> x
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for keep, drop in ((node.left, node.right), (node.right, node.left)):
                if COUNT_NAME.match(_identifier(drop) or "") or (isinstance(drop, ast.Call) and any(
                        COUNT_NAME.match(_identifier(a) or "") for a in drop.args) and _identifier(drop.func) in
                        ("int", "float")):
                    replace("drop_count_factor", node, text(keep))
        # count -> (count - 1), as an argument of a call or a factor
        name = _identifier(node)
        if name and COUNT_NAME.match(name) and isinstance(getattr(node, "ctx", None), ast.Load):
            parent = parents.get(node)
            as_argument = isinstance(parent, ast.Call) and node in parent.args
            as_keyword = isinstance(parent, ast.keyword)
            as_factor = isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Mult | ast.Div)
            if as_argument or as_keyword or as_factor:
                replace("count_minus_one", node, f"({text(node)} - 1)")
        # a if c else b -> a / b
        if isinstance(node, ast.IfExp):
            replace("ternary_body", node, f"({text(node.body)})")
            replace("ternary_else", node, f"({text(node.orelse)})")
        if isinstance(node, ast.Call):
            func = _identifier(node.func)
            # x.compose(y) -> x / y; x.self_compose(n) -> x
            if func in ("compose", "self_compose") and isinstance(node.func, ast.Attribute):
                replace("drop_compose", node, text(node.func.value))
                if func == "compose" and len(node.args) == 1:
                    replace("drop_composed_with", node, text(node.args[0]))
            if func == "sum" and isinstance(node.func, ast.Name):
                replace("sum_to_max", node.func, "max")
            if func == "sqrt" and len(node.args) == 1:
                replace("drop_sqrt", node, f"({text(node.args[0])})")
            for arg in node.args:
                if _identifier(arg) == "sensitivity":
                    replace("smaller_sensitivity", arg, "1.0")
        if (isinstance(node, ast.Constant) and node.value in (2, 2.0) and not isinstance(node.value, bool)
                and SENSITIVITY.search(lines[node.lineno - 1])):
            replace("smaller_sensitivity", node, "1.0")


def in_regions(module: str, source: str, mutants: list[Mutant]) -> list[Mutant]:
    """The mutants of ``module`` inside the functions :data:`REGIONS` names for it (all of them if none), outside
    the functions :data:`UNMUTATED` names and outside ``raise`` statements (only for modules named in either)."""
    if module not in REGIONS and module not in UNMUTATED:
        return mutants
    tree = ast.parse(source)
    functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]

    def spans(names: tuple[str, ...]) -> list[tuple[int, int]]:
        return [(node.lineno, node.end_lineno or node.lineno) for node in functions if node.name in names]

    keep = spans(REGIONS[module]) if module in REGIONS else [(1, len(source.splitlines()))]
    drop = spans(UNMUTATED.get(module, ())) + [(node.lineno, node.end_lineno or node.lineno)
                                                  for node in ast.walk(tree) if isinstance(node, ast.Raise)]
    return [m for m in mutants if any(lo <= m.line <= hi for lo, hi in keep)
            and not any(lo <= m.line <= hi for lo, hi in drop)]


def select(all_mutants: dict[str, list[Mutant]], limit: int, seed: int) -> list[Mutant]:
    """Deterministic selection: each module's mutants shuffled with ``seed``, then taken round-robin over the
    modules until ``limit`` (0 = all)."""
    queues = []
    for module in sorted(all_mutants):
        items = list(all_mutants[module])
        random.Random(f"{seed}:{module}").shuffle(items)
        queues.append(items)
    chosen: list[Mutant] = []
    while any(queues) and (limit <= 0 or len(chosen) < limit):
        for queue in queues:
            if queue and (limit <= 0 or len(chosen) < limit):
                chosen.append(queue.pop(0))
    return chosen


# ------------------------------------------------------------------------------------------- running
def _pytest(workdir: Path, tests: list[str], extra: list[str], timeout: float) -> tuple[str, float, str]:
    """Run pytest in ``workdir``; returns (status, seconds, output tail)."""
    cmd = [sys.executable, "-m", "pytest", *tests, "-x", "-q", "-n", "0", "-p", "no:cacheprovider",
           "-p", "no:randomly", "--hypothesis-seed=0", "-o", "addopts=", *extra]
    env = {**os.environ, "PYTHONPATH": str(workdir), "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg",
           "SYMSEL_MUTATION": "1"}  # tests/test_properties.py: report a failing example without shrinking it
    started = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=workdir, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the pytest process this function started, and its children
        out, _ = proc.communicate()
        return "timeout", time.monotonic() - started, out[-2000:]
    seconds = time.monotonic() - started
    if proc.returncode == 0:
        return "survived", seconds, out[-2000:]
    if proc.returncode == 1:
        return "killed", seconds, out[-2000:]
    if proc.returncode == 5:  # nothing collected
        return "error", seconds, out[-2000:]
    return "error", seconds, out[-2000:]


def _failing_node_ids(workdir: Path, tests: list[str], timeout: float) -> list[str]:
    """Tests that fail on the unmutated copy (to be deselected), from pytest's ``-rf`` summary."""
    cmd = [sys.executable, "-m", "pytest", *tests, "-q", "-n", "0", "-p", "no:cacheprovider", "-rfE",
           "--hypothesis-seed=0", "-o", "addopts=", *[f"--deselect={node}" for node in SLOW]]
    env = {**os.environ, "PYTHONPATH": str(workdir), "PYTHONDONTWRITEBYTECODE": "1", "MPLBACKEND": "Agg"}
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout,
                          start_new_session=True)
    failing = re.findall(r"^(?:FAILED|ERROR) (\S+?)(?: - .*)?$", proc.stdout, flags=re.MULTILINE)
    return sorted(set(failing))


def _tests_for(module: str, workdir: Path, override: list[str] | None) -> list[str]:
    tests = override or TESTS.get(module, FALLBACK_TESTS)
    return [t for t in tests if (workdir / t.split("::")[0]).exists()]


def _prepare(work: Path, args: argparse.Namespace) -> None:
    """The copy to mutate: the working tree of ``--source``, or the committed tree ``--rev`` (``git archive``,
    read-only on the repository) with ``--overlay`` files taken from the working tree on top."""
    source_root = Path(args.source).resolve()
    if args.rev:
        work.mkdir(parents=True)
        args.rev = subprocess.run(["git", "-C", str(source_root), "rev-parse", "--verify", args.rev + "^{commit}"],
                                  capture_output=True, text=True, check=True).stdout.strip()  # a moving HEAD: pin it
        archive = subprocess.run(["git", "-C", str(source_root), "archive", "--format=tar", args.rev],
                                 capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(work)], input=archive.stdout, check=True)
    else:
        shutil.copytree(source_root, work, ignore=IGNORE)
    for item in args.overlay or []:
        target = work / item
        if (source_root / item).exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source_root / item, target)
        elif target.exists():
            target.unlink()


def run(args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory(prefix="symsel-mutation-") as tmp:
        work = Path(tmp) / "repo"
        _prepare(work, args)
        return _run_in(work, args)


def _run_in(work: Path, args: argparse.Namespace) -> dict:
    modules = args.modules or list(APPS_MODULES if args.apps else DEFAULT_MODULES)
    all_mutants = {m: in_regions(m, (work / m).read_text(), mutants_of(m, (work / m).read_text())) for m in modules}
    if args.kinds:
        all_mutants = {m: [x for x in v if x.kind in args.kinds] for m, v in all_mutants.items()}
    chosen = select(all_mutants, args.limit, args.seed)
    if args.only:
        wanted = set(args.only)
        every = [m for ms in all_mutants.values() for m in ms]
        chosen = [m for m in every if m.ident in wanted]
        missing = wanted - {m.ident for m in chosen}
        if missing:
            raise SystemExit(f"mutation: unknown mutant ids: {sorted(missing)}")
    if args.list:
        for m in chosen:
            print(f"{m.ident:60s} {m.original!r} -> {m.replacement!r}")
        print(f"{len(chosen)} mutants ({sum(len(v) for v in all_mutants.values())} candidates)", file=sys.stderr)
        return {}
    report: dict = {"seed": args.seed, "limit": args.limit, "source": args.source, "rev": args.rev,
                    "overlay": args.overlay, "candidates": {m: len(v) for m, v in all_mutants.items()},
                    "modules": {}, "mutants": []}
    probe = subprocess.run([sys.executable, "-c", "import symsel; print(symsel.__file__)"], cwd=work,
                           env={**os.environ, "PYTHONPATH": str(work)}, capture_output=True, text=True)
    if not probe.stdout.strip().startswith(str(work)):
        raise SystemExit(f"mutation: the copy's symsel is not the one imported ({probe.stdout or probe.stderr})")
    deselect: dict[str, list[str]] = {}
    for module in sorted({m.module for m in chosen}):
        tests = _tests_for(module, work, args.tests)
        failing = _failing_node_ids(work, tests, args.baseline_timeout)
        deselect[module] = failing
        if failing:
            print(f"[baseline] {module}: deselecting {len(failing)} test(s) failing without mutation: "
                  + ", ".join(failing), flush=True)
    report["deselected"] = deselect
    for i, mutant in enumerate(chosen, 1):
        path = work / mutant.module
        original = path.read_text()
        path.write_text(mutant.apply(original))
        tests = _tests_for(mutant.module, work, args.tests)
        extra = [f"--deselect={node}" for node in [*deselect.get(mutant.module, []), *SLOW]]
        try:
            status, seconds, tail = _pytest(work, tests, extra, args.timeout)
        finally:
            path.write_text(original)
        killer = ""
        if status == "killed":
            hit = re.search(r"^FAILED (\S+)", tail, flags=re.MULTILINE)
            killer = hit.group(1) if hit else ""
        record = {**asdict(mutant), "id": mutant.ident, "status": status, "seconds": round(seconds, 1),
                  "killed_by": killer}
        if status == "error":
            record["output"] = tail[-600:]
        report["mutants"].append(record)
        print(f"[{i}/{len(chosen)}] {status:8s} {seconds:6.1f}s {mutant.ident}  "
              f"{mutant.original!r} -> {mutant.replacement!r}  {killer}", flush=True)
        if args.json:  # after every mutant: an interrupted run keeps what it found
            Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    for module in modules:
        rows = [r for r in report["mutants"] if r["module"] == module]
        if not rows:
            continue
        counts = {s: sum(r["status"] == s for r in rows) for s in ("killed", "survived", "timeout", "error")}
        dead = counts["killed"] + counts["timeout"] + counts["error"]
        report["modules"][module] = {**counts, "total": len(rows), "kill_rate": round(dead / len(rows), 3)}
    return report


def _print_summary(report: dict) -> None:
    print("\nmodule                              killed survived timeout error  total  kill rate")
    for module, row in report["modules"].items():
        print(f"{module:35s} {row['killed']:6d} {row['survived']:8d} {row['timeout']:7d} {row['error']:5d} "
              f"{row['total']:6d}  {100 * row['kill_rate']:6.1f} %")
    survivors = [r for r in report["mutants"] if r["status"] == "survived"]
    if survivors:
        print("\nsurviving mutants:")
        for r in survivors:
            print(f"  {r['id']}  {r['original']!r} -> {r['replacement']!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", nargs="+", help="modules to mutate (paths from the repository root)")
    parser.add_argument("--limit", type=int, default=40, help="mutants in all (round-robin over modules; 0: all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the deterministic mutant selection")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds per mutant before it counts as timeout")
    parser.add_argument("--baseline-timeout", type=float, default=900.0, help="seconds for each unmutated run")
    parser.add_argument("--tests", nargs="+", help="test files/node ids to run instead of the per-module subset")
    parser.add_argument("--apps", action="store_true", help="mutate the modules of symsel/apps only")
    parser.add_argument("--kinds", nargs="+", help="only mutants of these kinds (e.g. index_swap drop_count_factor)")
    parser.add_argument("--only", nargs="+", help="run exactly these mutant ids (see --list)")
    parser.add_argument("--list", action="store_true", help="list the selected mutants and exit")
    parser.add_argument("--json", help="write the full report here")
    parser.add_argument("--source", default=str(ROOT), help="repository to copy and mutate (default: this one)")
    parser.add_argument("--rev", help="mutate this committed revision (git archive) instead of the working tree")
    parser.add_argument("--overlay", nargs="+", help="with --rev: files copied from the working tree on top "
                        "(a file missing there is removed from the copy)")
    args = parser.parse_args(argv)
    report = run(args)
    if not report:
        return 0
    _print_summary(report)
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
