"""symsel.derive: symbolic and numeric paths agree; the Derivation record and the ``symsel derive`` CLI.

Reference values are independent of the code under test: the Poisson mean and variance ``mu`` and Cor 5.8's
``log R = mu (e^eps1 - 1) + mu delta1`` (Koskela et al.), binomial/TNB parameters typed by hand, the
beta-binomial mean ``n a/(a + b) = 8``, and soundness against :func:`symsel.evidence.lower.lower_bound` (exact
examples).
"""

from __future__ import annotations

import json
import math

import mpmath
import pytest
import sympy
from click.testing import CliRunner

from symsel import binomial, bound, geometric, poisson, tnb
from symsel.bounds.hockey_stick import paper_log_ratio_at, polygon_ratio_at
from symsel.cli import main
from symsel.derive import (
    derive,
    engine,
    facts_latex,
    polygon_vertex_ratios,
    render_latex,
    render_markdown,
    segment_is_monotone,
)
from symsel.derive.family import recognize
from symsel.distributions import z
from symsel.errors import SpecError
from symsel.profiles import GaussianProfile, pure


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


def test_family_recognized_from_the_pgf_with_its_parameters():
    mu = sympy.Symbol("mu", positive=True)
    assert recognize(sympy.exp(mu * (z - 1))) == ("poisson", {"mu": mu})
    name, params = recognize((sympy.Rational(7, 10) + sympy.Rational(3, 10) * z) ** 20)
    assert name == "binomial" and params == {"n": 20, "p": sympy.Rational(3, 10)}
    g = sympy.Rational(1, 30)
    name, params = recognize(g * z / (1 - (1 - g) * z))  # geometric: eta = 1
    assert name == "tnb" and params == {"eta": 1, "gamma": g}
    assert recognize((z + z**2 + z**5) / 3) is None


def test_free_symbol_poisson_gives_cor_5_8():
    d = derive("pgf(expr='exp(mu*(z-1))')")
    assert (d.mean, d.variance, d.family) == (r"\mu", r"\mu", "poisson")
    assert d.sup_location == "vertex" and "proved" in d.sup_argument
    eps, e1, d1, mu = sympy.symbols("varepsilon varepsilon_1 delta_1 mu", positive=True)
    assert d.eps_hat_theorem == "Koskela et al. Cor 5.8"
    assert d.eps_hat == sympy.latex(eps - mu * (sympy.exp(e1) - 1) - mu * d1)  # typed from the paper
    assert d.verified and all(c.passed for c in d.checks)


def test_beta_binomial_with_an_approx_base_is_sound_on_exact_examples():
    d = derive("beta_binomial(n=20, a=2, b=3)", "approx(eps=1, delta=1e-6)")
    assert d.family is None and d.mean == "8"  # n a / (a + b)
    assert d.sup_location == "vertex" and "proved by interval arithmetic" in d.sup_argument
    assert d.bound["epsilon_lower"] <= d.bound["epsilon_best"] <= d.bound["epsilon_derived"] + 1e-6
    kinds = {c.kind for c in d.checks}
    assert {"soundness", "interval", "numeric-50"} <= kinds and d.verified
    assert "interval arithmetic" in d.markdown()
    vertex_check = next(c for c in d.checks if c.kind == "interval")
    assert vertex_check.proof and vertex_check.passed  # the vertex value within the engine's certificate


def test_cli_json_and_errors():
    runner = CliRunner()
    result = runner.invoke(main, ["derive", "pgf(expr='exp(mu*(z-1))')", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    for key in ("pgf", "dpgf", "mean", "variance", "family", "ratio", "sup_location", "eps_hat", "envelope",
                "latex", "checks"):
        assert key in payload
    assert payload["mean"] == {"latex": r"\mu", "sympy": "Symbol('mu', positive=True)"}
    assert payload["family"] == "poisson"
    assert payload["envelope"]["latex"].startswith(r"\max")  # docs/envelope.md in closed form, mu left free
    assert all("agreement" in c for c in payload["checks"])
    latex = runner.invoke(main, ["derive", "poisson(3)", "--latex"])
    assert latex.exit_code == 0 and latex.output.startswith("\\begin{align*}")
    with pytest.raises(SpecError):
        derive("pgf(expr='exp(mu*(z-1))')", "approx(eps=1, delta=1e-6)")


# ------------------------------------------------------------------ pure-DP region, Rényi route, utility
EPS0, MU = sympy.symbols("varepsilon_0 mu", positive=True)


@pytest.fixture(scope="module")
def poisson_free():
    return derive("pgf(expr='exp(mu*(z-1))')")


def test_pure_dp_region_poisson_is_mu_tanh(poisson_free):
    """Vertex ((e/(1+e), 1/(1+e))): log R = mu (e^eps0 - 1)/(e^eps0 + 1) = mu tanh(eps0/2) (typed by hand)."""
    entry = poisson_free.pure_dp
    assert entry["sup_location"] == "vertex" and "proved" in entry["argument"]
    assert entry["log_ratio"] == sympy.latex(MU * sympy.tanh(EPS0 / 2))
    check = next(c for c in poisson_free.checks if c.claim.startswith("pure-DP region"))
    assert check.passed and check.kind == "numeric-50"


def test_pure_dp_fixed_runs_give_k_eps0_prop_17():
    """K = 3 runs: P[K=1] = 0, the start corner is a 0/0 limit; the selection is 3 eps0-DP (P&S Prop 17)."""
    d = derive("pgf(expr='z**3')")
    assert d.pure_dp["log_ratio"] == sympy.latex(2 * EPS0) and d.pure_dp["epsilon"] == sympy.latex(3 * EPS0)
    assert d.verified


def test_pure_dp_with_a_pure_base_matches_the_certified_fdp_bound():
    d = derive("poisson(3)", "pure(eps=1)")
    assert d.pure_dp["eps0"] == "1" and d.verified
    expected = 1 + 3 * math.tanh(0.5)  # eps0 + mu tanh(eps0/2)
    assert abs(bound(poisson(3), pure(1.0), "fdp").epsilon(0.0) - expected) < 1e-6


def test_renyi_route_poisson_gives_thm_6(poisson_free):
    entry = poisson_free.renyi
    assert entry["theorem"] == "Papernot-Steinke Thm 6" and entry["closed_form"].startswith(r"\max")
    lam, dhat = sympy.symbols(r"lambda \hat{\delta}", positive=True)
    assert entry["ps_closed_form"] == sympy.latex(MU * dhat + sympy.log(MU) / (lam - 1))  # typed from the paper
    claims = {c.claim.split(":")[0]: c for c in poisson_free.checks}
    assert claims["end-corner term/(lambda - 1) = mu delta1 + log mu/(lambda - 1)"].passed
    assert all(c.passed for c in poisson_free.checks if "Lemma 7" in c.claim or "lambda" in c.claim)


def test_renyi_route_tnb_reports_thm_2():
    d = derive("geometric(mean=10)")
    assert d.renyi["theorem"] == "Papernot-Steinke Thm 2" and r"\hat{\lambda}" in d.renyi["ps_closed_form"]
    assert d.verified


def test_utility_closed_forms_against_hand_sums(poisson_free):
    u = poisson_free.utility
    assert u["expected_quantile"] == sympy.latex(1 - 1 / MU + sympy.exp(-MU) / MU)  # 1 - int_0^1 e^{mu(x-1)} dx
    assert u["success_probability"] == sympy.latex(1 - sympy.exp(-MU / sympy.Symbol("c", positive=True)))
    assert u["tail_optimal_t"] == sympy.latex(sympy.log(sympy.Symbol("k", positive=True) / MU))
    d = derive("geometric(mean=10)")  # gamma = 1/10: sum_k gamma (1-gamma)^(k-1) k/(k+1) by brute force
    with mpmath.workdps(40):
        term = lambda k: mpmath.mpf(1) / 10 * (mpmath.mpf(9) / 10) ** (k - 1) * k / (k + 1)  # noqa: E731
        brute = mpmath.nsum(term, [1, mpmath.inf])
        typed = mpmath.mpf(10) / 9 - 10 * mpmath.log(10) / 81
        assert abs(brute - typed) < mpmath.mpf(10) ** -30
    assert d.utility["expected_quantile"] == sympy.latex(sympy.Rational(10, 9) - 10 * sympy.log(10) / 81)


def test_cli_markdown_and_latex_show_the_new_sections():
    """One run of the command (--json); its Markdown and LaTeX are renderings of that record
    (test_derive_data.py::test_cli_json_markdown_and_latex_are_one_record runs all three formats)."""
    result = CliRunner().invoke(main, ["derive", "poisson(3)", "--json"])
    assert result.exit_code == 0, result.output
    payload = json.loads(result.output)
    assert {"pure_dp", "renyi", "utility"} <= set(payload) and payload["verified"]
    markdown = render_markdown(payload)
    for head in ("## Pure-DP region", "## Rényi route", "## Utility"):
        assert head in markdown
    latex = render_latex(payload)
    assert r"\log R(" in latex and r"\int_0^1" in latex


def test_a_huge_law_skips_its_symbolic_sections_by_size_with_the_reason():
    """Degree 80 > 60: the reason names the sizes (count_ops of (z/2 + 1/2)^80 is 4: a power of a sum, not expanded)."""
    d = derive("binomial(n=80, p=0.5)")
    assert d.pure_dp is None and d.renyi is None and d.utility is None
    assert set(d.skipped) == {"family", "sup_location", "envelope", "pure_dp", "renyi", "utility"}
    assert d.skipped["pure_dp"] == (
        "skipped by size: phi has 4 operations, is an exact polynomial of degree 80, function nesting depth 0; "
        "above 3000 operations or degree 60 phi is only evaluated numerically; symsel.bound(dist, pure(eps0), 'fdp') "
        "gives certified numeric values")
    assert d.pgf.expr == (z / 2 + sympy.Rational(1, 2)) ** 80  # kept as a power, not expanded
    assert "## Skipped" in d.markdown() and d.skipped["utility"] in d.markdown() and d.verified


@pytest.mark.parametrize("spec", ["poisson(3)", "two_point(L=10, s=1/2)", "binomial(n=20, p=0.3)",
                                  "pgf(expr='(exp(mu*z)-1)/(exp(mu)-1)', mu=3)"])
def test_a_gaussian_base_with_its_17_digit_polygon_is_derived(spec):
    """The optimal eps1 of a Gaussian base is a 17-digit rational: SymPy's sign proof on exact numbers did not finish
    (poisson(3) ran past 60 s); now interval arithmetic or sampling decides, and every check passes."""
    d = derive(spec, "gaussian(sigma=2)", sections=False)
    assert d.verified and d.bound["epsilon_best"] >= d.bound["epsilon_lower"]


def test_interval_signs_match_the_poisson_ratio_and_refuse_a_sign_change():
    """Poisson: phi'(q)/phi'(q') = e^{mu (q - q')}; q - q' grows along S1 and shrinks along S2 (by hand from the
    corners), so the log-ratio's derivative is > 0 on S1 and < 0 on S2. A constant phi' gives 0. The two-point law
    peaks inside S2 (its derivative changes sign there): no interval proof, sampling decides."""
    from symsel.derive.corners import polygon_corners
    from symsel.derive.segments import interval_segment_sign, segment_sign

    c = polygon_corners(sympy.Rational(7037861020613807, 10**17), sympy.Rational(1701333513557249, 10**16))
    dphi = 3 * sympy.exp(3 * (z - 1))
    assert interval_segment_sign(dphi, c["start"], c["vertex"]) == 1
    assert interval_segment_sign(dphi, c["vertex"], c["end"]) == -1
    assert interval_segment_sign(sympy.Rational(3, 10) + 0 * z, c["start"], c["vertex"]) == 0
    two_point = sympy.Rational(1, 2) + 5 * z**9
    c = polygon_corners(sympy.Integer(1), sympy.Rational(1, 10**6))  # sup near t = 0.55 of S2 (dense mpmath scan)
    assert interval_segment_sign(two_point, c["vertex"], c["end"]) is None
    assert segment_sign(two_point, c["vertex"], c["end"], numeric=True) == (None, "sampling")


def test_a_nearly_flat_derivative_is_proved_by_the_mean_value_form():
    """Poisson on the Gaussian base's optimal polygon (eps1 = 1.02e-4, delta1 = 0.197): along S1 the log-ratio's
    derivative is mu (dq - dq') = 3 * 0.4 * (1 - e^-eps1), about 1.2e-4, beside terms of size 1. The natural interval
    enclosure needed more than the 4000 pieces allowed (sampling decided); with the mean-value form both signs are
    proved within the budget (by hand: + on S1, - on S2)."""
    from symsel.derive.corners import polygon_corners
    from symsel.derive.segments import interval_segment_sign

    c = polygon_corners(sympy.Rational("0.00010193819537359522"), sympy.Rational("0.19737174614603825"))
    dphi = 3 * sympy.exp(3 * (z - 1))
    assert interval_segment_sign(dphi, c["start"], c["vertex"]) == 1
    assert interval_segment_sign(dphi, c["vertex"], c["end"]) == -1


@pytest.mark.parametrize("law", ["binomial(n=20, p=0.3)", "two_point(L=10, s=1/2)", "poisson(3)"])
def test_every_enclosure_holds_the_derivative_at_points_of_its_piece(law, monkeypatch):
    """Each enclosure the sign proof uses (natural, or its intersection with the mean-value form) holds the
    derivative d/dt [log phi'(q) - log phi'(q')] evaluated at 40 digits at five points of its piece, on both
    segments of a polygon (the by-hand derivative, independent of the enclosures' code)."""
    from symsel.derive import segments
    from symsel.derive.corners import polygon_corners

    dphi = sympy.diff(__import__("symsel").parse_distribution(law).pgf, z)
    corners = polygon_corners(sympy.Rational(7, 100), sympy.Rational(17, 100))
    seen = []
    original = segments._bisect_sign

    def checking(derivative, budget):
        def wrapped(lo, hi):
            enclosure, cost = derivative(lo, hi)
            seen.append((lo, hi, enclosure))
            return enclosure, cost
        return original(wrapped, min(budget, 300))

    monkeypatch.setattr(segments, "_bisect_sign", checking)
    f1, f2 = (sympy.lambdify(z, e, "mpmath") for e in (dphi, sympy.diff(dphi, z)))
    for a, b in ((corners["start"], corners["vertex"]), (corners["vertex"], corners["end"])):
        seen.clear()
        segments.interval_segment_sign(dphi, a, b)
        with mpmath.workdps(40):
            a0, a1, b0, b1 = (mpmath.mpf(str(sympy.N(v, 50))) for v in (*a, *b))
            for lo, hi, enclosure in seen[::7]:
                for k in range(5):
                    t = lo + (hi - lo) * mpmath.mpf(k) / 4
                    q, qp = a0 + t * (b0 - a0), a1 + t * (b1 - a1)
                    exact = f2(q) * (b0 - a0) / f1(q) - f2(qp) * (b1 - a1) / f1(qp)
                    assert enclosure.a - mpmath.mpf(10) ** -25 <= exact <= enclosure.b + mpmath.mpf(10) ** -25
        assert seen


def test_a_simplification_that_changes_the_value_is_not_printed():
    """SymPy's simplify turned the Lemma 7 vertex term of the zero-truncated Poisson (mu = 3) into a complex number
    (a wrong log branch on 1 - e^3); the term printed keeps the real value of the unsimplified form."""
    from symsel.derive.common import DELTA1, EPS1, LAM
    from symsel.derive.corners import polygon_corners
    from symsel.derive.renyi import corner_term

    dphi = 3 * sympy.exp(3 * z) / (sympy.exp(3) - 1)
    q, qp = polygon_corners(EPS1, DELTA1)["vertex"]
    point = {EPS1: sympy.Rational(1, 2), DELTA1: sympy.Rational(1, 1000), LAM: 2}
    by_hand = 2 * sympy.log(dphi.subs(z, q)) - sympy.log(dphi.subs(z, qp))
    printed = sympy.N(corner_term(dphi, (q, qp)).subs(point), 40)
    assert abs(complex(printed) - complex(sympy.N(by_hand.subs(point), 40))) < 1e-30


def test_a_section_sympy_fails_on_is_skipped_with_the_reason():
    skipped: dict[str, str] = {}

    def fails() -> None:
        raise ValueError("The argument 'x' is not comparable.")

    assert engine._section("renyi", skipped, fails) == (None, [])
    assert skipped == {"renyi": "SymPy failed on it (ValueError: The argument 'x' is not comparable.); method "
                                "'rdp_lemma7' gives certified numeric values"}


def test_a_huge_law_with_a_base_reports_an_unknown_location_not_a_recursion_error():
    """Degree > HUGE_DEGREE: phi' is not lambdified for a sign proof (degree 5000 overflowed the recursion limit)."""
    d = derive("binomial(n=80, p=0.5)", "approx(eps=1, delta=1e-6)", sections=False)
    assert d.sup_location == "unknown" and "too large" in d.sup_argument and d.verified


def test_a_delta_below_m_delta0_gives_infinite_bounds_with_zero_margins_not_nan():
    """delta = 1e-30 < m delta0 = 3e-6: the exact example is (0, 1e-6)-tight, so eps = inf is the truth."""
    d = derive("poisson(3)", "approx(eps=1, delta=1e-6)", 1e-30, sections=False)
    assert d.bound["epsilon_best"] == d.bound["epsilon_lower"] == math.inf
    sound = [c for c in d.checks if c.kind == "soundness"]
    assert sound and all(c.passed and not math.isnan(c.agreement) for c in sound) and d.verified
    assert json.loads(json.dumps(d.to_json()))["verified"]


def test_a_free_parameter_below_one_is_checked_at_points_where_the_law_is_a_pgf():
    """g in z^2 (1 - g)/(1 - g z) must stay below 1: the checks use g = 1/2, 1/5, 9/10 (g = 3 was tried first and
    made derive fail with 'not a PGF'). The mean 1 + 1/(1 - g) is by hand (K - 1 is geometric on {1, 2, ...})."""
    from symsel.derive.common import free_points

    g = sympy.Symbol("g", positive=True)
    d = derive("pgf(expr='z^2*(1-g)/(1-g*z)')", sections=False)
    assert d.verified
    phi = z**2 * (1 - g) / (1 - g * z)
    assert [p[g] for p in free_points(phi)] == [sympy.Rational(1, 2), sympy.Rational(1, 5), sympy.Rational(9, 10)]
    assert d.mean in (r"\frac{g - 2}{g - 1}", r"\frac{2 - g}{1 - g}")


def test_no_valid_parameter_point_is_a_clear_error_and_a_free_exponent_is_not_an_internal_error():
    with pytest.raises(SpecError, match="no values of the free parameters g"):
        derive("pgf(expr='z^2*(1+g)/(1+g*z)')", sections=False)  # coefficients (1+g)(-g)^k alternate: never a PGF
    d = derive("pgf(expr='z^a')", sections=False)  # P[K=1] = lim a z^(a-1) depends on a: kept as a limit
    assert d.verified and d.mean == "a" and r"\lim" in d.p1


@pytest.mark.parametrize("base", ["approx(eps=1, delta=1e-6)", "gaussian(sigma=2)"])
def test_a_fixed_k_law_on_a_base_with_delta_reports_its_unbounded_ratio(base):
    """point(k) has phi'(0) = 0: the polygon's start corner (q' = 0) makes the ratio phi'(q)/phi'(q') infinite, and
    the polygon bound vacuous. This was an internal error (a complex log converted to float), from Python and from
    the command line; now the derivation says so, checks it against the engine's infinite certificate, and the
    soundness check still runs (by hand: point(3) on approx(1, 1e-6) is at most 3 eps = 3)."""
    d = derive("point(k=3)", base, sections=False)
    assert d.verified and d.sup_location == "start (unbounded)"
    assert any("unbounded" in c.claim and c.passed for c in d.checks)
    assert d.bound["epsilon_best"] >= d.bound["epsilon_lower"] > 0
    if base.startswith("approx"):
        assert 2.99 < d.bound["epsilon_lower"] <= d.bound["epsilon_best"] <= 3.0
    result = CliRunner().invoke(main, ["derive", "point(k=2)", "--base", base, "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sup_location"] == "start (unbounded)"


def test_an_exponential_ratio_has_its_sup_located_at_the_vertex_by_proof():
    """Zero-truncated Poisson, ``phi'(z) ∝ e^{10 z}``: the ratio is ``10 (q - q')``. The quotient of exponentials hid
    the sign of its derivative along the polygon's segments ("unknown"); written through ``phi''/phi' = 10`` it is
    proved. Reference: ``q - q'`` at 401 points of each segment of the polygon (corners typed from
    docs/setting.md), at 30 digits, peaks at the vertex."""
    from symsel.derive.segments import sup_location

    dphi = 10 * sympy.exp(10 * z) / (sympy.exp(10) - 1)
    where, argument, kind, _ = sup_location(dphi)
    assert (where, kind) == ("vertex", "symbolic") and "proved" in argument
    with mpmath.workdps(30):
        for eps1, delta1 in ((0.2, 1e-3), (1.0, 0.05), (3.0, 0.3)):
            x = mpmath.exp(eps1)
            start, end = (mpmath.mpf(delta1), 0), (1, 1 - mpmath.mpf(delta1))
            vertex = ((delta1 + x) / (x + 1), (1 - delta1) / (x + 1))
            gaps = [a[0] + t * (b[0] - a[0]) - a[1] - t * (b[1] - a[1])
                    for a, b in ((start, vertex), (vertex, end)) for t in mpmath.linspace(0, 1, 401)]
            assert max(gaps) == vertex[0] - vertex[1]


@pytest.mark.parametrize("dphi", [10 * sympy.exp(10 * z) / (sympy.exp(10) - 1), sympy.diff((1 + z) ** 7 / 128, z),
                                  sympy.diff(sympy.log(1 - z / 3) / sympy.log(sympy.Rational(2, 3)), z)])
def test_the_logarithmic_derivative_form_is_the_segment_derivative(dphi):
    """The second try's derivative is the first's, as a function of t, at 30 digits on a numeric polygon."""
    from symsel.derive.segments import _T, log_derivative_form, polygon_corners, segment_derivative

    corners = polygon_corners(sympy.Rational(1, 2), sympy.Rational(1, 100))
    for a, b in ((corners["start"], corners["vertex"]), (corners["vertex"], corners["end"])):
        for weights in ((1, 1), (sympy.Rational(5, 2), sympy.Rational(3, 2))):
            first, second = segment_derivative(dphi, a, b, weights), log_derivative_form(dphi, a, b, weights)
            for t in (sympy.Rational(1, 7), sympy.Rational(1, 2), sympy.Rational(6, 7)):
                assert abs(sympy.N(first.subs(_T, t) - second.subs(_T, t), 30)) < 1e-25


@pytest.mark.parametrize("flags", [("--latex", "--markdown"), ("--latex", "--json"), ("--latex", "--markdown",
                                                                                       "--json")])
def test_derive_takes_one_output_form(flags):
    result = CliRunner().invoke(main, ["derive", "geometric(mean=3)", *flags])
    assert result.exit_code == 2 and "at most one of --latex, --markdown, --json" in result.output
