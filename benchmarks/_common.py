"""Shared helpers of the benchmark scripts: timing, peak memory, tables, JSON results.

The benchmarks are run on demand (``python benchmarks/bench_speed.py`` from the repository root), never
by the test suite. Each script prints a table and writes ``benchmarks/results/<name>.json`` together
with the machine and package versions it ran on.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import platform
import statistics
import time
import tracemalloc
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

RESULTS_DIR = Path(__file__).resolve().parent / "results"
PACKAGES = ("symsel", "dp-accounting", "numpy", "scipy", "sympy", "mpmath")


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, list[float], Any]:
    """Run ``fn`` ``repeats`` times; return the median wall time, all times and the last result."""
    times, result = [], None
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), times, result


def peak_memory(fn: Callable[[], Any]) -> tuple[int, Any]:
    """Peak traced allocation of one call of ``fn`` (``tracemalloc``; numpy reports its buffers to it)."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def environment() -> dict[str, Any]:
    """Machine and package versions, stored with every result file."""
    versions = {}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "packages": versions,
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }


def _plain(value: Any) -> Any:
    """JSON-friendly copy: numpy scalars to Python numbers, non-finite floats to strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def write_results(name: str, payload: dict[str, Any]) -> Path:
    """Write ``payload`` (plus the environment) to ``benchmarks/results/<name>.json``."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    document = {"benchmark": name, "environment": environment(), **payload}
    path.write_text(json.dumps(_plain(document), indent=2) + "\n")
    return path


def fmt(value: Any, digits: int = 4) -> str:
    """Compact cell text."""
    if value is None:
        return "-"
    if isinstance(value, float | np.floating):
        if not math.isfinite(value):
            return str(value)
        if value != 0 and (abs(value) < 1e-3 or abs(value) >= 1e5):
            return f"{value:.{digits - 1}e}"
        return f"{value:.{digits}g}" if abs(value) >= 1 else f"{value:.{digits}f}"
    return str(value)


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """Print an aligned plain-text table."""
    cells = [[fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    print(f"\n{title}")
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


# --------------------------------------------------------------------------- peers and fast paths
#: ``shape`` of dp-accounting's ``RepeatAndSelectDpEvent`` for each symsel family (P&S Thm 2 / Thm 6).
DPACC_SHAPE = {"poisson": math.inf, "geometric": 1.0, "logarithmic": 0.0}


def dpaccounting_shape(family: str, eta: float | None = None) -> float:
    """dp-accounting's shape parameter for a symsel law of K (``tnb`` takes ``eta``)."""
    if family == "tnb":
        return float(eta)
    return DPACC_SHAPE[family]


def rdp_repeat_and_select(base_event: Any, mean: float, shape: float, delta: float) -> tuple[float, float]:
    """The Papernot--Steinke baseline as shipped: dp-accounting's ``RdpAccountant`` (default orders) on
    ``RepeatAndSelectDpEvent(base_event, mean, shape)``; returns ``(epsilon, optimal order)``."""
    from dp_accounting import dp_event
    from dp_accounting.rdp import rdp_privacy_accountant

    accountant = rdp_privacy_accountant.RdpAccountant()
    accountant.compose(dp_event.RepeatAndSelectDpEvent(base_event, float(mean), float(shape)))
    eps, order = accountant.get_epsilon_and_optimal_order(delta)
    return float(eps), float(order)


def dpsgd_event(q: float, sigma: float, steps: int) -> Any:
    """The DP-SGD event symsel's ``dpsgd`` profile accounts (Poisson-subsampled Gaussian, ``steps`` times)."""
    from dp_accounting import dp_event

    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)


def symsel_rdp_available() -> bool:
    """Whether ``symsel.bounds.renyi`` (method ``rdp``) has landed."""
    try:
        import symsel.bounds.renyi  # noqa: F401
    except ImportError:
        return False
    return True
