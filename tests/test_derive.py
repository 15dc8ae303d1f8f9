"""Symbolic and numeric paths agree where SymPy locates the supremum at a polygon corner."""

from __future__ import annotations

import pytest
import sympy

from symsel import binomial, geometric, poisson, tnb
from symsel.bounds.hockey_stick import paper_log_ratio_at, polygon_ratio_at
from symsel.derive import facts_latex, polygon_vertex_ratios, segment_is_monotone
from symsel.profiles import GaussianProfile


@pytest.mark.parametrize("dist", [tnb(0.5, gamma=0.05), geometric(mean=30), poisson(8), binomial(20, 0.3)])
@pytest.mark.parametrize("eps1", [0.3, 1.0])
def test_certified_polygon_sup_equals_the_symbolic_corner_value(dist, eps1):
    base = GaussianProfile(2.0)
    delta1 = float(base.delta(eps1))
    assert segment_is_monotone(dist, eps1, delta1, "S1") and segment_is_monotone(dist, eps1, delta1, "S2")
    corners = polygon_vertex_ratios(dist, eps1, delta1)
    symbolic = max(float(sympy.N(v, 30)) for v in corners.values())
    numeric = polygon_ratio_at(dist, base, eps1)
    assert numeric.log_ratio >= symbolic - 1e-12
    assert numeric.log_ratio - symbolic < 1e-6


def test_paper_form_is_above_the_corner_value():
    """The closed forms relax the polygon: never below its supremum (Koskela et al. Thm 5.2)."""
    dist, base = tnb(1.0, gamma=0.01), GaussianProfile(4.0)
    for eps1 in (0.1, 0.5, 1.5):
        delta1 = float(base.delta(eps1))
        corners = polygon_vertex_ratios(dist, eps1, delta1)
        assert paper_log_ratio_at(dist, eps1, delta1) >= max(float(sympy.N(v)) for v in corners.values()) - 1e-12


def test_facts_latex_for_a_user_pgf():
    from symsel.spec import parse_distribution

    facts = facts_latex(parse_distribution("pgf(expr='exp(mu*(z-1))', mu=10)"))
    assert facts["mean"] == "\\mu"
    assert "e^{" in facts["pgf"]
    assert facts["variance"] == "\\mu"  # Poisson: variance = mean
