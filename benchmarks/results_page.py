"""Write benchmarks/RESULTS.md, the results page, from the measurements in benchmarks/results/*.json.

    python benchmarks/results_page.py           # write benchmarks/RESULTS.md
    python benchmarks/results_page.py --check   # exit 1 if benchmarks/RESULTS.md is not what this script writes

The page opens with a summary table (tightness, speed against the peers, scale), then one section per claim: what is
measured, by which script, when, and the numbers. Nothing on it is typed by hand: to change a number, run the
benchmark that measures it (each section names it), then this script. The README's numbers are read from the same
files (:func:`readme_numbers`; tests/test_readme.py checks them).

A new section is a function ``(results) -> list of Markdown lines`` added to :data:`SECTIONS`, beside the benchmark
that writes its JSON file; a claim worth a line of the summary adds a row in :func:`summary`.

Standard library only, so that the test suite imports it without the benchmarks' dependencies.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS_DIR = HERE / "results"
PAGE = HERE / "RESULTS.md"

Results = dict[str, Any]


def load(folder: Path = RESULTS_DIR) -> Results:
    """Every ``<name>.json`` of ``folder``, by name."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(folder.glob("*.json"))}


# --------------------------------------------------------------------------- formatting
def num(value: Any, digits: int = 4) -> str:
    """``digits`` significant digits; scientific notation below 1e-3 and from 1e5; ``-`` for a missing value."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    value = float(value)
    if not math.isfinite(value):
        return "inf" if value > 0 else "-inf" if value < 0 else "nan"
    if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
        return f"{value:.{digits - 1}e}"
    return f"{value:.{digits}g}" if abs(value) >= 1 else f"{value:.{digits}f}"


def fixed(value: Any, decimals: int = 4) -> str:
    """A number with ``decimals`` decimals (``-`` for a missing value)."""
    if value is None:
        return "-"
    if isinstance(value, str):
        return value
    return f"{float(value):.{decimals}f}" if math.isfinite(float(value)) else "inf"


def percent_above(ratio: float) -> str:
    """How far above 1 a ratio is, in per cent, rounded up to two decimals (a bound's gap is never understated)."""
    return f"{math.ceil((ratio - 1) * 1e4 - 1e-9) / 100:.2f} %"


def table(headers: list[str], rows: list[list[Any]]) -> list[str]:
    """A Markdown table."""
    return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers),
            *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows)]


def measured(result: dict[str, Any], script: str) -> str:
    """The line naming how a section's numbers were measured: the script, the date, the machine."""
    environment = result.get("environment", {})
    date = str(environment.get("date") or result.get("date", "?"))[:10]
    cores = environment.get("cpu_count") or result.get("cores")
    packages = environment.get("packages", {})
    versions = ", ".join(f"{name} {packages[name]}" for name in ("dp-accounting",) if packages.get(name))
    machine = f"{cores} cores" if cores else "the development machine"
    return f"Measured by `{script}` on {date} ({machine}{', ' + versions if versions else ''})."


# --------------------------------------------------------------------------- the numbers the README shows
def readme_numbers(results: Results | None = None) -> dict[str, Any]:
    """The README's numbers as it prints them, from the results files: the headline, the candidates table and the
    timings line."""
    results = load() if results is None else results
    candidates = results["candidates"]
    means = {(row["law"], row["method"]): row["mean"] for row in candidates["rows"]}
    laws = list(dict.fromkeys(row["law"] for row in candidates["rows"]))
    timings = results["timings"]
    spans = {run["command"]: (min(run["wall_s"]), max(run["wall_s"])) for run in timings["runs"]}
    return {
        "headline": (f"{means['geometric', 'best']:.0f}", f"{means['geometric', 'dp-accounting RDP']:.0f}"),
        "candidates": {law: (num(means[law, "best"]), num(means[law, "dp-accounting RDP"])) for law in laws},
        "setting": candidates["setting"],
        "timings": {"date": timings["date"], "cores": timings["cores"],
                    **{command: tuple(minutes(s) for s in span) for command, span in spans.items()}},
    }


def minutes(seconds: float) -> str:
    """``1 min 12 s``."""
    whole = round(seconds)
    return f"{whole // 60} min {whole % 60} s" if whole >= 60 else f"{whole} s"


# --------------------------------------------------------------------------- every-base rows, newest first
def every_base_rows(results: Results, kind: str) -> list[dict[str, Any]]:
    """The rows of the ``every_base*`` files of ``kind`` (``fixed``: the quick and full grids; ``random``; ``weak``),
    one per (base, law, δ): the newest measurement."""
    def kind_of(name: str) -> str:
        return "weak" if "_weak" in name else "random" if "_random" in name else "fixed"

    newest: dict[tuple, tuple[str, dict[str, Any]]] = {}
    for name in [name for name in results if name.startswith("every_base") and kind_of(name) == kind]:
        result = results[name]
        date = result["environment"]["date"]
        for row in result["rows"]:
            key = (row["base"], row["law"], row["delta"])
            if key not in newest or newest[key][0] < date:
                newest[key] = (date, row)
    return [row for _, row in newest.values()]


def _worst(rows: list[dict[str, Any]], key: str = "ratio") -> float:
    return max(float(row[key]) for row in rows if row.get(key) is not None and math.isfinite(float(row[key])))


# --------------------------------------------------------------------------- the summary
def summary(results: Results) -> list[str]:
    """The summary table: one row per claim, its measured figure, and the section with the details."""
    composition = results["bench_composition"]
    fixed_rows = composition["rows"]
    huge = [row for row in composition["huge"] if row["sigma"] == 4.0]
    envelope = results["bench_envelope"]["tightness"]
    random_laws = [row for row in envelope if not row["dist"].startswith(("point", "binomial"))]
    every = every_base_rows(results, "fixed") + every_base_rows(results, "random")
    weak = every_base_rows(results, "weak")
    means = {(row["law"], row["method"]): row["mean"] for row in results["candidates"]["rows"]}
    fast = results["fast"]["rows"]
    warm = sorted(row["goals"]["warm"]["ratio"] for row in fast if "warm" in row.get("goals", {}))
    whole = sorted(row["goals"]["whole"]["ratio"] for row in fast if "whole" in row.get("goals", {}))
    scale = results["bench_scale"]["rows"]
    precision = results["bench_precision"]["summary"]
    soundness = results["bench_tightness"]["soundness"]
    hostile = results["hostile"]["summary"]["total"]
    rows = [
        ["tightness: fixed K on a Gaussian base", f"`best` within {percent_above(_worst(fixed_rows, 'bracket'))} of "
         f"the certified lower bound ({len(fixed_rows)} settings: K = 2…100 and binomial laws, σ ∈ {{1, 4}}, "
         "δ ∈ {1e-6, 1e-10})", "[Fixed K](#fixed-k)"],
        ["tightness: huge laws", f"`best` within {percent_above(_worst(huge, 'bracket'))} of the certified lower "
         "bound for Poisson and binomial laws of mean 10⁶ (σ = 4)", "[Fixed K](#fixed-k)"],
        ["tightness: random laws", f"`envelope` within {percent_above(_worst(random_laws, 'envelope/lower'))} of the "
         f"certified lower bound on the papers' laws ({len(random_laws)} settings)",
         "[The papers' laws](#the-papers-laws-on-a-gaussian-base)"],
        ["tightness: every base", f"`best` within {percent_above(_worst(every))} of the certified lower bound "
         f"({len(every)} settings: DP-SGD, Laplace, randomized response, finite pairs; fixed and random laws); "
         f"weak runs within {percent_above(_worst(weak))} ({len(weak)} settings)", "[Every base](#every-base)"],
        ["soundness", f"{sum(row['sound'] for row in soundness)} of {len(soundness)} exact worst cases below every "
         "bound; float64 certificates above the 50-digit values: "
         f"{'yes' if precision['certificates_dominate_mp'] else 'NO'}", "[Precision](#precision)"],
        ["candidates against dp-accounting", f"{num(means['geometric', 'best'])} against "
         f"{num(means['geometric', 'dp-accounting RDP'])} (geometric K, ε = 2.5, DP-SGD in the CIFAR-10 setting)",
         "[Candidates](#candidates)"],
        ["speed against dp-accounting", f"warm calls {num(warm[0], 2)}–{num(warm[-1], 3)}× the peer's time, whole "
         f"processes {num(whole[0], 2)}–{num(whole[-1], 3)}× ({len(fast)} rows)",
         "[Speed](#speed-against-dp-accounting)"],
        ["scale", f"E[K] = 10⁶ and δ down to 1e-30: every method in at most "
         f"{math.ceil(max(row['all_methods_s'] for row in scale))} s per setting ({len(scale)} settings)",
         "[Scale](#scale)"],
        ["hostile input", f"{hostile['cases']} bad inputs: {hostile['traceback']} tracebacks, {hostile['hang']} "
         f"hangs, {hostile['accepted_invalid']} accepted"
         + (f", {hostile['memory_blowup']} memory blow-ups" if "memory_blowup" in hostile else ""),
         "[Hostile input](#hostile-input)"],
    ]
    return ["## Summary", "", *table(["claim", "measured", "details"], rows)]


# --------------------------------------------------------------------------- the sections
def candidates_section(results: Results) -> list[str]:
    result = results["candidates"]
    setting = result["setting"]
    rows = [[row["law"], row["method"], num(row["mean"]), f"{row['cpu_s']:.1f}"] for row in result["rows"]]
    return ["## Candidates", "",
            f"The largest certified mean of K at ε = {setting['epsilon']}, δ = {setting['delta']:g} on the DP-SGD run "
            f"of Koskela et al. Figure 7 (q = {setting['q']:.5g}, σ = {setting['sigma']}, {setting['steps']} steps). "
            "`rdp` is symsel's Papernot–Steinke route, `dp-accounting RDP` the peer's own `RepeatAndSelectDpEvent`; "
            "they differ for Poisson K only, where Theorem 6 needs an (ε̂, δ̂) guarantee of the base that symsel reads "
            "off the base's tight profile and dp-accounting gets by converting its RDP curve.",
            "", measured(result, "benchmarks/bench_candidates.py"), "",
            *table(["law", "method", "mean of K", "CPU s"], rows)]


def fixed_k_section(results: Results) -> list[str]:
    result = results["bench_composition"]
    rows = [[f"`{row['law']}`", row["sigma"], f"{row['delta']:g}", fixed(row["best"]), fixed(row["composition"]),
             fixed(row["envelope"]), fixed(row["lower"]), fixed(row["bracket"], 5)] for row in result["rows"]]
    huge = [[f"`{row['law']}`", row["sigma"], f"{row['delta']:g}", fixed(row["best"]), fixed(row["envelope"]),
             fixed(row["lower"]), fixed(row["bracket"], 5)] for row in result["huge"]]
    return ["## Fixed K", "",
            "ε of the best of K runs of a Gaussian mechanism for fixed K and binomial laws: `best` (which takes "
            "`interval` here), `composition` and `envelope` beside the certified lower bound (`symsel.lower_bound`). "
            "The truth lies between `lower` and `best`.",
            "", measured(result, "benchmarks/bench_composition.py"), "",
            *table(["law", "σ", "δ", "best", "composition", "envelope", "lower", "best / lower"], rows),
            "", "Laws of mean 10⁶:", "",
            *table(["law", "σ", "δ", "best", "envelope", "lower", "best / lower"], huge)]


def _every_base_table(rows: list[dict[str, Any]]) -> list[str]:
    return table(["base", "law", "δ", "best", "composition", "interval", "lower", "lower's slices", "best / lower"],
                 [[f"`{row['base']}`", f"`{row['law']}`", f"{row['delta']:g}", num(row["best"], 6),
                   num(row["composition"], 6), num(row["interval"], 6), num(row["lower"], 6),
                   str(row.get("lower_slices", 1000)), num(row["ratio"], 5)]
                  for row in rows])


def every_base_section(results: Results) -> list[str]:
    dates = sorted(str(results[name]["environment"]["date"])[:10] for name in results
                   if name.startswith("every_base"))
    return ["## Every base", "",
            "Fixed, concentrated and random laws of K on every base with a dominating pair: `best`, `composition` and "
            "`interval` beside the certified lower bound (its slice construction cut into `lower's slices` slices, "
            "`lower_bound(..., slices=)`); for each setting the newest measurement.",
            "", f"Measured by `benchmarks/bench_every_base.py` (`--full`, `--random`, `--weak`) from {dates[0]} to "
            f"{dates[-1]}.", "",
            "### Fixed and concentrated laws", "", *_every_base_table(every_base_rows(results, "fixed")),
            "", "### Random laws", "", *_every_base_table(every_base_rows(results, "random")),
            "", "### Weak runs", "", "Small privacy losses: large noise, large Laplace scales.", "",
            *_every_base_table(every_base_rows(results, "weak"))]


def papers_laws_section(results: Results) -> list[str]:
    result = results["bench_envelope"]
    rows = [[f"`{row['dist']}`", f"`{row['base']}`", fixed(row["paper"]), fixed(row["fdp"]), fixed(row["envelope"]),
             fixed(row["rdp"]), fixed(row["best"]), fixed(row["lower"]), fixed(row["envelope/lower"], 5),
             fixed(row["best"] / row["lower"], 5)] for row in result["tightness"]]
    return ["## The papers' laws on a Gaussian base", "",
            "ε at δ = 1e-6 by the ratio methods, the envelope bound and the Rényi route, and `best`, beside the "
            "certified lower bound.", "", measured(result, "benchmarks/bench_envelope.py"), "",
            *table(["law", "base", "paper", "fdp", "envelope", "rdp", "best", "lower", "envelope / lower",
                    "best / lower"], rows)]


def dpsgd_settings_section(results: Results) -> list[str]:
    result = results["bench_tightness"]
    methods = ["dpaccounting_rdp", *result["table_methods"]]
    rows = []
    for block in result["results"]:
        for row in block["rows"]:
            rows.append([block["setting"], block["family"], row["mean"], *(fixed(row.get(m), 3) for m in methods)])
    names = {"dpaccounting_rdp": "dp-accounting RDP"}
    settings = [f"{name}: {setting['source']} (q = {setting['q']:.5g}, σ = {setting['sigma']}, {setting['steps']} "
                "steps)" for name, setting in result["settings"].items()]
    return ["## The papers' DP-SGD settings", "",
            f"ε at δ = {result['delta']:g} of the best of K DP-SGD runs, by method, against the mean of K.", "",
            *(f"- {line}" for line in settings), "", measured(result, "benchmarks/bench_tightness.py"), "",
            *table(["setting", "law", "mean", *(names.get(m, m) for m in methods)], rows)]


def speed_section(results: Results) -> list[str]:
    result = results["fast"]
    return ["## Speed against dp-accounting", "",
            "Each row times symsel and the peer call that answers the same question in the same run; ratios are "
            "symsel's time over the peer's (below 1: symsel is faster). `warm`: a repeated call in one process; "
            "`first-call`: the first call of a process; `whole`: a whole process, imports included.",
            "", measured(result, "benchmarks/bench_fast.py"), "", *result["markdown"].rstrip("\n").split("\n")]


def speed_tolerance_section(results: Results) -> list[str]:
    """Rows of the speed table at the default search tolerance and at a coarse one (``bench_fast.py --rtol``), each
    setting timed beside the peer in its own run."""
    settings = sorted((name for name in results if name.startswith("fast_rtol")),
                      key=lambda name: -float(results[name]["rtol"]))
    if not settings:
        return []
    lines = ["### At a coarse tolerance", "",
             "`best(..., rtol=1e-3)` builds a DP-SGD run on a coarser loss grid (still pessimistic, so still "
             "certified; docs/interval.md, \"The loss grid follows the tolerance\"). The same rows at each tolerance, "
             "each setting with the peer in its own run:", ""]
    for name in settings:
        result = results[name]
        rows = f", rows {', '.join(result['rows_selected'])}" if result.get("rows_selected") else ""
        lines += [f"`rtol = {result['rtol']:g}`{rows}. {measured(result, 'benchmarks/bench_fast.py --rtol')}", "",
                  *result["markdown"].rstrip("\n").split("\n"), ""]
    return lines[:-1]


def speed_per_method_section(results: Results) -> list[str]:
    result = results["bench_speed"]
    rows = []
    for name in ("analytic", "dpsgd"):
        block = result[name]
        setting = block["setting"]
        label = f"`{setting['dist']}` on " + (f"`{setting['base']}`" if "base" in setting else
                                              f"`dpsgd(q={setting['q']}, sigma={setting['sigma']}, "
                                              f"steps={setting['steps']})`")
        peer = block["dpaccounting_rdp"]
        rows.append([label, "dp-accounting RDP", fixed(peer["epsilon"]), f"{peer['seconds'] * 1e3:.1f}"])
        for method, timing in block["symsel"].items():
            rows.append([label, method, fixed(timing["epsilon"]), f"{timing['total'] * 1e3:.1f}"])
    return ["### Per method", "",
            "One call of each method from a spec string (parse, build, query), beside dp-accounting's RDP accountant "
            "on the same selection.", "", measured(result, "benchmarks/bench_speed.py"), "",
            *table(["selection", "method", "ε", "ms"], rows)]


def speed_breakdown_section(results: Results) -> list[str]:
    result = results["fast_breakdown"]
    rows = [[row["label"], f"{row['symsel_cpu'] * 1e3:.1f}", f"{row['peer_cpu'] * 1e3:.1f}",
             ", ".join(f"{stage} {cpu * 1e3:.1f}" for stage, cpu in sorted(row["stages"].items(),
                                                                          key=lambda item: -item[1])[:3])]
            for row in result["rows"]]
    imports = results["fast_imports"]
    order = results["fast_search_order"]
    orders = [[f"`{case['law']}`", f"`{case['base']}`",
               *(f"{cpu * 1e3:.0f}" for cpu in case["cpu_s"].values())] for case in order["cases"]]
    return ["### Where the time goes", "",
            "CPU milliseconds of a warm call of each row, and the three stages that take most of it.", "",
            measured(result, "benchmarks/breakdown_fast.py"), "",
            *table(["row", "symsel (ms)", "peer (ms)", "largest stages (ms)"], rows),
            "", "CPU seconds of the imports of a fresh process:", "", measured(imports, "benchmarks/breakdown_fast.py"),
            "", *table(["imports", "CPU s"], [[name, f"{cpu:.2f}"] for name, cpu in imports["cpu_s"].items()]),
            "", "`best` on a fixed K evaluates `interval` before `envelope` (CPU milliseconds per call, either order):",
            "", measured(order, "benchmarks/breakdown_fast.py"), "",
            *table(["law", "base", *order["cases"][0]["cpu_s"]], orders)]


def practitioner_section(results: Results) -> list[str]:
    result = results["bench_practitioner"]
    export, tuning = result["export"], result["sigma_tuning"]
    rows = [["export a tuning of mean K = " + str(export["mean"]) + " to dp-accounting and compose it",
             f"{export['export_s'] + export['compose_s']:.1f}", f"tuning ε {fixed(export['tuning_eps'])}, "
             f"composed {fixed(export['composed_eps_at_2delta'])}"],
            ["σ-tuning (Koskela et al. Cor 6.2) over three noise levels", f"{tuning['seconds']:.1f}",
             f"steps {', '.join(str(s) for s in tuning['steps'])}; ε {fixed(tuning['best'])} (paper "
             f"{fixed(tuning['paper'])})"],
            *([f"`symsel dist \"{law['law']}\"`", f"{law['seconds']:.1f}",
               f"mean {num(law['mean'])}, expected quantile {fixed(law['expected_quantile'])}"]
              for law in result["hostile_laws"]),
            ["`symsel report --quick`", f"{result['quick_report_s']:.0f}", ""]]
    return ["## The practitioner's tools", "",
            "Seconds of the tools a practitioner calls, beside what they answer.", "",
            measured(result, "benchmarks/bench_practitioner.py"), "", *table(["task", "seconds", "answer"], rows)]


def accounting_section(results: Results) -> list[str]:
    result = results["bench_accounting"]
    rows = [[row["label"], fixed(row["selection_epsilon"]), fixed(row["rdp_epsilon"]), fixed(row["pld_epsilon"]),
             row["pld_is"]] for row in result["rows"]]
    return ["## SelectionAccountant", "",
            "ε at δ = 1e-6 of a tuning accounted by `SelectionAccountant`, beside dp-accounting's RDP accountant on "
            "`RepeatAndSelectDpEvent` and its PLD accountant on the composition of every run.",
            "", measured(result, "benchmarks/bench_accounting.py"), "",
            *table(["tuning", "SelectionAccountant", "dp-accounting RDP", "dp-accounting PLD", "PLD of"], rows)]


def scale_section(results: Results) -> list[str]:
    result = results["bench_scale"]
    rows = [[f"`{row['law']}`", f"{row['delta']:g}", f"{row['all_methods_s']:.1f}", num(row["best"]),
             num(row.get("peer_epsilon")), num(row.get("verify_s"), 2)] for row in result["rows"]]
    return ["## Scale", "",
            f"Huge laws of K on `{result['base']}`: the seconds every method takes together, `best`, the peer's ε "
            "where dp-accounting has the law, and the seconds of `verify`.",
            "", measured(result, "benchmarks/bench_scale.py"), "",
            *table(["law", "δ", "all methods (s)", "best", "dp-accounting RDP", "verify (s)"], rows)]


def precision_section(results: Results) -> list[str]:
    result = results["bench_precision"]
    s = result["summary"]
    rows = [["φ′ in float64 against 50 digits (relative)", num(s["max_rel_dphi"], 2)],
            ["log φ′ (absolute)", num(s["max_abs_log_dphi"], 2)],
            ["Gaussian δ(ε) (relative)", num(s["max_rel_gaussian_delta"], 2)],
            ["Gaussian ε(δ) (relative; on the safe side: " + ("yes" if s["gaussian_epsilon_conservative"] else "NO")
             + ")", num(s["max_rel_gaussian_epsilon"], 2)],
            ["selection ε(δ) (relative; on the safe side: " + ("yes" if s["selection_epsilon_conservative"] else "NO")
             + ")", num(s["max_rel_selection_epsilon"], 2)],
            ["exact worst cases, float64 against 50 digits (relative)", num(s["max_rel_exact_epsilon"], 2)]]
    soundness = results["bench_tightness"]["soundness"]
    sound = [[row["case"], f"{row['delta']:g}", fixed(row["exact_or_lower"]),
              fixed(min(row[m] for m in ("paper", "polygon", "fdp", "rdp", "rdp_lemma7") if row.get(m) is not None)),
              "yes" if row["sound"] else "NO"] for row in soundness]
    return ["## Precision", "",
            "The float64 fast paths against mpmath at 50 digits: the largest difference found.",
            "", measured(result, "benchmarks/bench_precision.py"), "", *table(["quantity", "largest difference"], rows),
            "", "The papers' exact worst cases against every upper bound (the smallest bound shown):", "",
            measured(results["bench_tightness"], "benchmarks/bench_tightness.py"), "",
            *table(["case", "δ", "exact or lower", "smallest bound", "sound"], sound)]


def derive_section(results: Results) -> list[str]:
    result = results["bench_derive"]
    rows = [[f"`{row['law']}`", f"{row['derive_s']:.1f}", f"{row['bound_s']:.2f}", fixed(row["epsilon_best"]),
             fixed(row["epsilon_lower"]), row["sup_location"], "yes" if row["verified"] else "NO"]
            for row in result["rows"]]
    return ["## derive", "",
            f"`symsel derive LAW --base \"{result['base']}\"` at δ = {result['delta']:g}: seconds, the bound it checks "
            "and the certified lower bound, and where the supremum of the ratio was located.",
            "", measured(result, "benchmarks/bench_derive.py"), "",
            *table(["law", "derive (s)", "bound (s)", "best", "lower", "sup at", "verified"], rows)]


def fixed_trials_section(results: Results) -> list[str]:
    result = results["fixed_trials"]
    rows = [[row["n_trials"], fixed(row["best"]), fixed(row["composition"]), fixed(row["envelope"]),
             fixed(row["dp_accounting_rdp"]), fixed(row["lower"]), fixed(row["best"] / row["lower"])]
            for row in result["rows"]]
    plans = [[plan.get("final_run", "none"), plan["budget_epsilon"], f"{plan['delta']:g}", plan["trials"],
              fixed(plan["epsilon"]), f"{plan['cpu_s']:.0f}"] for plan in result["plans"]]
    return ["## Fixed trials", "",
            "The best of `n_trials` runs of `dpsgd(q=0.01, sigma=1.1, steps=1000)`, ε at δ = 1e-6: `best`, "
            "`composition` (releasing every trial), `envelope`, dp-accounting's RDP accountant on the composition "
            "of all trials, and the certified lower bound; then the most trials a budget affords, alone and with the "
            "final training run composed.",
            "", measured(result, "benchmarks/bench_fixed_trials.py"), "",
            *table(["n_trials", "best", "composition", "envelope", "dp-accounting RDP", "lower", "best / lower"],
                   rows),
            "", *table(["final run", "budget ε", "δ", "trials", "ε", "CPU s"], plans)]


def brackets_section(results: Results) -> list[str]:
    result = results["brackets"]
    rows = [[row["relation"], f"`{row['law']}`", f"{row['delta']:g}", fixed(row["best"]), fixed(row["lower"]),
             fixed(row["ratio"]), fixed(row["independent"]), "yes" if row["met"] else "no",
             "yes" if row["sound"] else "**no**"] for row in result["rows"]]
    scope = "the full grid" if result.get("full") else "a representative subset of the grid (the full grid: `--full`)"
    return ["## Brackets on every neighbouring relation and down to δ = 1e-30", "",
            f"`best` against the certified lower bound on `{result['base']}` under each neighbouring relation, "
            f"{scope}. Goal: best / lower ≤ {result['goal']} on every row; met on {result['met']} of "
            f"{len(result['rows'])}. `independent` is the smallest of dp-accounting's upper bounds that apply to the "
            "row (its RDP and PLD accountants on the composition of all runs for `point(k)`, its RDP "
            "`RepeatAndSelectDpEvent` for the geometric law on add/remove; `-` where none applies); `sound` says "
            f"the lower bound is not above it ({result['unsound']} rows are).",
            "", measured(result, "benchmarks/bench_brackets.py"), "",
            *table(["relation", "law", "δ", "best", "lower", "best / lower", "independent", "goal met", "sound"],
                   rows)]


def sigma_with_target(slow: dict) -> str:
    """How far the σ found with the target is from the slow calibration's (the calibration bound's allowance)."""
    relative = slow.get("sigma_with_target_relative_to_it")
    return "another" if relative is None else f"the σ with the target {relative * 100:+.3f} % from it"


def opacus_section(results: Results) -> list[str]:
    result = results["opacus"]
    cal = result["calibration"]
    goals, slow = cal["goals"], cal["without_target"]
    routes = result["routes"]
    route_rows = [[name, fixed(row["epsilon"]), f"{row['cpu_seconds']:.1f}"] for name, row in routes["routes"].items()]
    composed = routes["dp_accounting_composition_of_exports"]
    route_rows.append(["dp-accounting: `to_pld(selection).compose(to_pld(base))` (not a route)",
                       fixed(composed["epsilon"]), f"{composed['cpu_seconds']:.1f}"])
    trials, rdp = result["trials"], result["rdp_fixed_k"]
    yes = {True: "met", False: "**not met**"}
    return ["## The Opacus accountant and the whole pipeline", "",
            f"Calibration through the Opacus interface, by {cal['how']}: {cal['question']}. σ found "
            f"{fixed(cal['sigma'], 5)} (the planner's {fixed(cal['planner_sigma'], 5)}, "
            f"{cal['sigma_relative_to_planner'] * 100:+.3f} %: {yes[goals['sigma_within_0.5%']]}), ε at that σ "
            f"{fixed(cal['epsilon_at_sigma'])} (at most the budget: {yes[goals['never_above_budget']]}), in "
            f"{cal['cpu_seconds']:.1f} CPU s over {num(cal['get_epsilon_calls'])} calls of `get_epsilon` (at most "
            f"20 CPU s: {yes[goals['cpu_seconds_at_most_20']]}), the accountant told the target "
            f"(`target_epsilon=8`); without it, every answer the tight bound, σ {fixed(slow['sigma'], 5)} "
            f"({'the same' if slow['same_sigma'] else sigma_with_target(slow)}) in {slow['cpu_seconds']:.1f} CPU s "
            f"(run second, in the same process). The "
            f"planner took {cal['planner_cpu_seconds']:.1f} CPU s. The same bisection on dp-accounting's PLD "
            f"accountant for one candidate (what Opacus calibrates "
            f"without symsel) finds σ = {fixed(cal['peer_one_candidate_sigma'], 5)} in "
            f"{cal['peer_cpu_seconds']:.1f} CPU s.",
            "", f"Routes to the whole pipeline's number: {routes['question']}; relative spread "
            f"{routes['relative_spread'] * 100:.3f} % (within 0.1 %: {yes[routes['goal_within_0.1%']]}).", "",
            *table(["route", "ε", "CPU s"], route_rows),
            "", f"Trials: {trials['question']}: the planner says {trials['planner_trials']} "
            f"(ε {fixed(trials['planner_epsilon'])}); `SelectionAccountant` gives "
            + ", ".join(f"{fixed(e)} for {k}" for k, e in trials["accountant_epsilon"].items())
            + f" ({'agree' if trials['agree'] else '**disagree**'}).",
            "", f"rdp for a fixed K: {rdp['question']}: the planner {rdp['planner_trials']}, dp-accounting's RDP "
            f"composition of the runs {rdp['dp_accounting_rdp_composition_trials']} "
            f"({'agree' if rdp['agree'] else '**disagree**'}).",
            "", measured(result, "benchmarks/bench_opacus.py")]


def hostile_section(results: Results) -> list[str]:
    """The counts by group; the memory blow-ups of a run with a memory cap (a dash in a run without one)."""
    result = results["hostile"]
    groups = result["summary"]["by_group"]
    keys = ["cases", "traceback", "hang", "accepted_invalid", "bad_output", "damaged", "memory_blowup"]
    rows = [[group, *(counts.get(key, "–") for key in keys)] for group, counts in groups.items()]
    rows.append(["total", *(result["summary"]["total"].get(key, "–") for key in keys)])
    cap = result.get("memory_limit_mib")
    limits = (f"Each case had {result['cpu_limit_seconds']} CPU s, {num(result['wall_limit_seconds'])} s of wall time"
              + (f" and {cap} MiB of writable memory (`RLIMIT_DATA`); a `MemoryError`, a failed allocation or a peak "
                 "RSS above the cap is a memory blow-up." if cap else "; this run had no memory cap."))
    return ["## Hostile input", "",
            "Bad input from the command line and from Python (`benchmarks/hostile.py`, `cli_cases()` and "
            "`api_cases()`), each in a sandboxed process: a traceback, a hang, accepted invalid input, a bad output, "
            "a damaged file or a memory blow-up counts against it. " + limits,
            "", f"Measured by `{result['command']}` on {result['date']}.", "",
            *table(["group", "cases", "traceback", "hang", "accepted invalid", "bad output", "damaged",
                    "memory blow-up"], rows)]


def mutation_section(results: Results) -> list[str]:
    result = results["mutation_apps"]
    keys = ["killed", "survived", "timeout", "error", "total"]
    rows = [[f"`{module}`", *(counts[key] for key in keys)] for module, counts in result["modules"].items()]
    total = result["total"]
    rows.append(["total", *(total[key] for key in keys[:-1]), total["mutants"]])
    return ["## Mutation testing", "",
            "Mutants of the application modules (`benchmarks/mutation.py`): each is a small change of the code, "
            "killed when a test fails.",
            "", f"Measured on {result['date']}.", "", *table(["module", *keys], rows)]


def mutation_core_section(results: Results) -> list[str]:
    """The sampled mutation run over the folders that produce certified numbers, by folder, with every survivor
    and the verdict on it (equivalent, safe side, or the test that now kills it)."""
    result = results["mutation_core"]
    keys = ["killed", "survived", "timeout", "error"]
    folders: dict[str, dict[str, int]] = {}
    for module, counts in result["modules"].items():
        folder = module.split("/")[1]
        row = folders.setdefault(folder, dict.fromkeys([*keys, "total"], 0))
        for key in [*keys, "total"]:
            row[key] += counts[key]

    def rate(row: dict[str, int]) -> str:
        return f"{100 * (row['total'] - row['survived']) / row['total']:.1f} %"

    rows = [[f"`symsel/{folder}/`", *(row[key] for key in [*keys, "total"]), rate(row)]
            for folder, row in folders.items()]
    total = result["total"]
    rows.append(["total", *(total[key] for key in keys), total["mutants"],
                 rate({**total, "total": total["mutants"]})])
    later = len(result["killed_after"]["ids"])
    after = {**total, "killed": total["killed"] + later, "survived": total["survived"] - later,
             "total": total["mutants"]}
    rows.append(["total, with the tests added for the survivors", *(after[key] for key in keys), total["mutants"],
                 rate(after)])
    unsafe = [key for key, text in result["verdicts"].items() if text.startswith("unsafe")]
    unsafe_killed = [key for key in unsafe if key in result["killed_after"]["ids"]]
    shrinking = result["unsafe"]
    survivors = [[f"`{m['id']}`", f"`{m['original']}` → `{m['replacement']}`", result["verdicts"].get(m["id"], "?")]
                 for m in result["mutants"] if m["status"] == "survived"]
    return ["## Mutation testing of bounds, evidence, pairs and profiles", "",
            "Mutants of every module of `symsel/bounds`, `symsel/evidence`, `symsel/pairs` and `symsel/profiles` "
            "(`benchmarks/mutation.py`, a seeded sample, each module's mutants run against its owning test files "
            "only); the kill rate counts timeouts and errors as killed.",
            "", f"Measured on {result['date']} by `{result['commands']}`.", "",
            *table(["folder", *keys, "total", "kill rate"], rows),
            "", f"Survivors that move a certified number to the unsafe side: {len(unsafe)}, of which "
            f"{len(unsafe_killed)} are now killed by a test of the owning module (the rest: their verdicts below); "
            "every other survivor is equivalent, moves a number to the safe side, or produces no number.",
            "", "Kill rate of the mutants that move a certified number to the unsafe side (every mutant killed in a "
            "run counted as one, with the unsafe survivors), by the owning module's tests: "
            f"{shrinking['killed']} of {shrinking['mutants']} ({100 * shrinking['kill_rate']:.1f} %).",
            "", "Surviving mutants, each with its verdict (a test added for one is confirmed by "
            f"`{result['killed_after']['command']}`):", "",
            *(table(["mutant", "change", "verdict"], survivors) if survivors else ["none"])]


def timings_section(results: Results) -> list[str]:
    result = results["timings"]
    rows = [[f"`{run['command']}`", ", ".join(minutes(s) for s in run["wall_s"])] for run in result["runs"]]
    return ["## Timings", "", f"{result['how'][0].upper()}{result['how'][1:]}.", "",
            f"Measured on {result['date']}.", "", *table(["command", "wall time per clone"], rows)]


def tradeoff_section(results: Results) -> list[str]:
    result = results["tradeoff"]
    rows = [["Gaussian, k-fold (closed form, 50 digits)", len(result["gaussian"]),
             sum(r["beta_above_exact"] for r in result["gaussian"]),
             num(max(r["beta_max_rel_gap"] for r in result["gaussian"]), 2)],
            ["randomized response (brute force over all tests)", len(result["randomized_response"]),
             sum(r["beta_above_exact"] for r in result["randomized_response"]),
             num(max(r["beta_max_rel_gap"] for r in result["randomized_response"]), 2)]]
    dpsgd = [[f"q={r['q']}, sigma={r['sigma']}, steps={r['steps']}", r["beta_above_riskcal_pessimistic"],
              num(r["max_gap_to_riskcal_pessimistic"], 2), fixed(r["time_ratio_symsel_over_riskcal"], 2)]
             for r in result["dpsgd"]]
    return ["## Trade-off curves and attack risk", "",
            "The certified lower bound on β(α) (docs/tradeoff.md) against exact curves: never above them, and the "
            "largest relative gap below them.", "", measured(result, "benchmarks/bench_tradeoff.py"), "",
            *table(["reference", "settings", "points above", "largest relative gap"], rows), "",
            "DP-SGD against riskcal's curve of dp-accounting's pessimistic PLD (an upper reference):", "",
            *table(["run", "points above", "largest gap", "time / riskcal"], dpsgd)]


def first_call_section(results: Results) -> list[str]:
    result = results["first_call"]
    rows = [[row["query"], row["mode"], fixed(row["first_cpu_s"], 3), fixed(row["warm_cpu_s"], 3),
             fixed(row["ratio_cpu"], 2), row["first_page_faults"], row["warm_page_faults"]] for row in result["rows"]]
    query = result["query"]
    return ["## A fresh process's first query", "",
            f"`import symsel` leaves the allocator of the importing process alone; the command line, which owns its "
            f"process, keeps freed large arrays for reuse. The first `{query['method']}` query of "
            f"{query['law']} on {query['base']} in a fresh process against a warm one (CPU seconds, medians; "
            f"mode `library`: glibc's own allocator settings, `keep`: the command line's). Goal: {result['goal']}.",
            "", measured(result, "benchmarks/bench_first_call.py"), "",
            *table(["query", "mode", "first (s)", "warm (s)", "ratio", "page faults, first", "page faults, warm"],
                   rows)]


def memory_section(results: Results) -> list[str]:
    result = results["memory"]
    peer = result["summary"].get("peer", {})

    def ratio(s: dict, key: str) -> str:
        return fixed(s[key] / peer[key], 2) if peer.get(key) and s.get(key) is not None else "-"

    rows = [[case, s["calibrations_done"], fixed(s["rss_first"], 0), fixed(s["rss_half"], 0), fixed(s["rss_last"], 0),
             ratio(s, "rss_last"), fixed(s["mib_per_calibration_second_half"], 1),
             fixed(s.get("seconds_per_calibration"), 1), ratio(s, "seconds_per_calibration"),
             fixed(s.get("cache_mib_last"), 0)]
            for case, s in result["summary"].items()]
    note = [f"Partial: {result['partial']}.", ""] if result.get("partial") else []
    return ["## Memory across repeated calibrations", "",
            f"σ of a DP-SGD run ({result['steps']} steps) calibrated through `SelectionAccountant` and dp-accounting's "
            f"`calibrate_dp_mechanism` {result['calibrations']} times in one process; RSS after each (MiB); "
            "the peer: dp-accounting's `PLDAccountant` on the ten runs composed (a fixed K, without selection). The "
            "last column: the bytes symsel's caches hold after the last calibration (`symsel.memory.cache_bytes`, "
            "summed over the caches, so what two caches share counts twice), each cache bounded in bytes.", "",
            measured(result, "benchmarks/bench_memory.py"), "", *note,
            *table(["case", "calibrations", "RSS after the first", "at half", "at the last", "÷ peer",
                    "MiB per calibration, second half", "s per calibration", "÷ peer", "symsel caches (MiB)"], rows)]


def diagnose_every_base_section(results: Results) -> list[str]:
    result = results["diagnose_every_base"]
    rows = []
    for row in result["rows"]:
        bottom, top = row["truth_bracket"]
        for side in ("upper", "lower"):
            for name, value in row[side].items():
                rows.append([f"`{row['law']}` on `{row['base']}`", side, name, fixed(value["epsilon"], 6),
                             fixed(value["cpu_s"], 1), f"[{fixed(bottom, 6)}, {fixed(top, 6)}]"])
    return ["## Every base: which side is loose", "",
            "The widest fixed-K rows of \"Every base\" at δ = 1e-6, each side recomputed at finer resolutions: the "
            "upper bound (`interval`) on PLDs coarsened by rounding losses up and by splitting them onto the grid, at "
            "several widths, and on a finer PLD; the certified lower bound on finer DP-SGD buckets and on Laplace "
            "slices refined on its ramp. The truth lies in the bracket (the largest lower, the smallest upper value).",
            "", measured(result, "benchmarks/diagnose_every_base.py"), "",
            *table(["row", "side", "resolution", "ε", "CPU s", "truth in"], rows)]


#: the sections in page order, after the summary
SECTIONS: list[Callable[[Results], list[str]]] = [
    candidates_section, fixed_k_section, every_base_section, diagnose_every_base_section, papers_laws_section,
    dpsgd_settings_section,
    speed_section, speed_tolerance_section, speed_per_method_section, speed_breakdown_section, accounting_section,
    scale_section,
    precision_section, derive_section, fixed_trials_section, brackets_section,
    practitioner_section, opacus_section, tradeoff_section, hostile_section,
    mutation_section, mutation_core_section, first_call_section, memory_section, timings_section,
]


def page(results: Results | None = None) -> str:
    """The results page."""
    results = load() if results is None else results
    lines = ["# Benchmark results", "",
             "What symsel's claims rest on, measured: tightness against certified lower bounds, speed and answers "
             "against dp-accounting in the same run, scale and precision. This page is written by "
             "`python benchmarks/results_page.py` from `benchmarks/results/*.json`; each section names the benchmark "
             "that measures it.", "", *summary(results)]
    for section in SECTIONS:
        lines += ["", *section(results)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = page()
    if "--check" in argv:
        if PAGE.read_text() != text:
            print(f"{PAGE} is not what {Path(__file__).name} writes: run it", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"written {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
