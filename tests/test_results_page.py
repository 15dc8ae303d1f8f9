"""benchmarks/RESULTS.md is what benchmarks/results_page.py writes from benchmarks/results/*.json (nothing on it is
typed by hand), every results file is on it, and its summary's figures are the ones its sections show."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _results_page():
    spec = importlib.util.spec_from_file_location("results_page", ROOT / "benchmarks" / "results_page.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PAGE = _results_page()


class _Recording(dict):
    """The results files, noting which ones are read."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)


def test_the_results_page_is_what_the_script_writes():
    assert (ROOT / "benchmarks" / "RESULTS.md").read_text() == PAGE.page(), (
        "benchmarks/RESULTS.md is stale: run python benchmarks/results_page.py")


def test_every_results_file_is_on_the_page():
    """A results file nothing reads is history: it goes (git keeps it)."""
    results = _Recording(PAGE.load())
    PAGE.page(results)
    assert set(results) - results.read == set()


def test_the_page_opens_with_the_summary_and_has_a_section_per_claim():
    text = PAGE.page()
    headings = re.findall(r"^## (.+)$", text, re.M)
    assert headings[0] == "Summary"
    for claim in ("Candidates", "Fixed K", "Every base", "Speed against dp-accounting", "Scale", "Precision"):
        assert claim in headings
    assert len(headings) + len(re.findall(r"^### ", text, re.M)) >= 1 + len(PAGE.SECTIONS)


def test_percent_above_never_understates_a_gap():
    assert PAGE.percent_above(1.0012154) == "0.13 %"
    assert PAGE.percent_above(1.0012) == "0.12 %"
    assert PAGE.percent_above(1.0) == "0.00 %"


def test_the_summary_states_the_worst_fixed_k_gap_of_the_results_file():
    """An independent reading of bench_composition.json: the largest best / lower of its rows, rounded up."""
    rows = json.loads((ROOT / "benchmarks" / "results" / "bench_composition.json").read_text())["rows"]
    worst = max(row["best"] / row["lower"] for row in rows)
    summary = PAGE.page().split("## Candidates")[0]
    stated = float(re.search(r"fixed K on a Gaussian base \| `best` within ([\d.]+) %", summary).group(1))
    assert (worst - 1) * 100 <= stated < (worst - 1) * 100 + 0.01


def test_the_every_base_rows_take_the_newest_measurement(tmp_path: Path):
    older = {"environment": {"date": "2026-01-01T00:00:00+00:00"},
             "rows": [{"base": "b", "law": "l", "delta": 1e-6, "ratio": 1.5}]}
    newer = {"environment": {"date": "2026-02-01T00:00:00+00:00"},
             "rows": [{"base": "b", "law": "l", "delta": 1e-6, "ratio": 1.1}]}
    rows = PAGE.every_base_rows({"every_base_full_0": older, "every_base": newer}, "fixed")
    assert [row["ratio"] for row in rows] == [1.1]


@pytest.mark.parametrize(("value", "text"), [(2694.2, "2694"), (239012.0, "2.390e+05"), (19.4512, "19.45"),
                                             (0.0412345, "0.0412"), (None, "-")])
def test_numbers_are_printed_to_four_significant_digits(value, text):
    assert PAGE.num(value) == text


def test_the_hostile_section_shows_the_memory_blowups_of_a_run_with_a_cap():
    counts = {"cases": 3, "traceback": 0, "hang": 0, "accepted_invalid": 0, "bad_output": 0, "damaged": 0,
              "memory_blowup": 2}
    capped = {"command": "python benchmarks/hostile.py", "date": "2026-01-01", "cpu_limit_seconds": 60,
              "wall_limit_seconds": 120.0, "memory_limit_mib": 3072,
              "summary": {"by_group": {"cli:x": counts}, "total": counts}}
    text = "\n".join(PAGE.hostile_section({"hostile": capped}))
    assert "| cli:x | 3 | 0 | 0 | 0 | 0 | 0 | 2 |" in text and "3072 MiB of writable memory" in text
    uncapped = {**capped, "memory_limit_mib": None,
                "summary": {"by_group": {"cli:x": {k: v for k, v in counts.items() if k != "memory_blowup"}},
                            "total": counts}}
    assert "| cli:x | 3 | 0 | 0 | 0 | 0 | 0 | – |" in "\n".join(PAGE.hostile_section({"hostile": uncapped}))
