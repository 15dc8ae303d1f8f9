"""`symsel derive` with a base, and the bound of a 5000-term pmf: wall time, cold, one run each.

A Gaussian base's optimal ``eps1`` is a 17-digit rational; before the interval-arithmetic segment signs,
``derive(law, "gaussian(sigma=2)")`` ran past 60 s for ``poisson(3)`` (SymPy's sign proof on exact numbers) and a
5000-term pmf spent a minute in ``numpy.polyval``. For each law this script times:

1. ``symsel.derive(law, base)`` with every section (facts, polygon sup and its proof kind, envelope, pure-DP,
   Rényi route, utility, soundness against the certified lower bound), and ``sections=False``;
2. ``symsel.bound(law, base).epsilon(1e-5)`` (method ``best``), beside dp-accounting's RDP
   ``RepeatAndSelectDpEvent`` for the laws it supports (Poisson, geometric) as the peer: ``ratio`` is symsel's
   bound time over the peer's.

Run from the repository root: ``python benchmarks/bench_derive.py`` → ``benchmarks/results/bench_derive.json``.
"""

from __future__ import annotations

import math
import time
from typing import Any

from _common import print_table, rdp_repeat_and_select, write_results

import symsel

BASE, DELTA = "gaussian(sigma=2)", 1e-5
#: (spec, dp-accounting shape: inf = Poisson, 1 = geometric, None = not supported by the peer)
LAWS = [
    ("poisson(3)", math.inf),
    ("geometric(mean=10)", 1.0),
    ("binomial(n=20, p=0.3)", None),
    ("two_point(L=10, s=1/2)", None),
    ("pgf(expr='(exp(mu*z)-1)/(exp(mu)-1)', mu=3)", None),
    ("pmf(expr='1/n', k_min=1, k_max=5000, n=5000)", None),
]


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main() -> None:
    from dp_accounting import dp_event

    rows: list[dict[str, Any]] = []
    for spec, shape in LAWS:
        t_full, full = _timed(lambda spec=spec: symsel.derive(spec, BASE, DELTA))
        t_light, _ = _timed(lambda spec=spec: symsel.derive(spec, BASE, DELTA, sections=False))
        law, base = symsel.parse_distribution(spec), symsel.parse_profile(BASE)
        t_bound, eps = _timed(lambda law=law, base=base: symsel.bound(law, base).epsilon(DELTA))
        kinds = sorted({c.kind for c in full.checks})
        row: dict[str, Any] = {"law": spec, "derive_s": t_full, "derive_light_s": t_light, "bound_s": t_bound,
                               "epsilon_best": eps, "epsilon_lower": full.bound["epsilon_lower"],
                               "sup_location": full.sup_location, "verified": full.verified, "check_kinds": kinds}
        if shape is not None:
            t_peer, (peer_eps, _) = _timed(lambda law=law, shape=shape: rdp_repeat_and_select(
                dp_event.GaussianDpEvent(2.0), float(law.mean), shape, DELTA))
            row.update(peer_epsilon=peer_eps, peer_s=t_peer, ratio=t_bound / t_peer)
        rows.append(row)
        print(f"{spec}: derive {t_full:.1f} s (light {t_light:.1f} s), bound {t_bound:.1f} s", flush=True)
    print_table(f"derive and bound, base {BASE}, delta {DELTA:g}",
                ["law", "derive s", "light s", "bound s", "best", "lower", "sup", "verified", "peer eps", "ratio"],
                [[r["law"], r["derive_s"], r["derive_light_s"], r["bound_s"], r["epsilon_best"], r["epsilon_lower"],
                  r["sup_location"], r["verified"], r.get("peer_epsilon"), r.get("ratio")] for r in rows])
    write_results("bench_derive", {"base": BASE, "delta": DELTA, "rows": rows})


if __name__ == "__main__":
    main()
