"""Hostile and extreme inputs, each through the command line in-process: a right answer (exit 0,
finite numbers) or one line on stderr with exit status 2 that names what was wrong — never a traceback,
never an accepted non-law, never a hang (each of these returns in seconds; `benchmarks/bench_scale.py`
records the times of the large ones)."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner

import symsel
from symsel.cli import main

B = ("--base", "gaussian(sigma=4)")


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def assert_one_line_error(result, *fragments: str) -> None:
    """Exit 2, one line on stderr naming the fragments; stdout empty, or one JSON error object with --json."""
    assert result.exit_code == 2, (result.exit_code, result.output)
    if result.stdout:
        error = json.loads(result.stdout)
        assert set(error) == {"error", "kind", "exit_status"} and error["exit_status"] == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symsel: error: "), result.stderr
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize(("spec", "fragments"), [
    ("pgf(expr='1.2*z^100 - 0.2*z^101')", ("non-negative coefficients", "P[K=101]")),
    ("pmf(expr='0.6 - 1.6*(k-17) + 0.8*(k-17)^2', k_min=17, k_max=19)", ("non-negative", "P[K=18]")),
    ("pgf(expr='z', z=1)", ("parameter z=1", "variable")),
    # a series whose first 16 coefficients are fine but P[K=18] < 0: phi'' < 0 near 1 gives it away
    ("pgf(expr='exp(z-1) + (z^17 - z^18)/2')", ("absolutely monotone", "phi''")),
    ("geometric(mean=30, mean=40)", ("'mean' given twice",)),
    ("pgf(expr='z', expr='z^2')", ("'expr' given twice",)),
    ("pmf(expr='1/4', k_min=2.5, k_max=5)", ("k_min=2.5", "integer")),
    ("pgf(expr=3)", ("expr=3", "quoted formula")),
    ("point(k=" + "-" * 5000 + "1)", ("nested too deeply",)),
    ("pmf(p=[" + ",".join(["0.0002"] * 5001) + "])", ("longer than",)),
    ("tnb(eta=1e6, gamma=0.5)", ("eta=", "eta <= 1000")),
    ("truncated(dist=geometric(mean=30), k_max=5000)", ("k_max=5000", "k_max <= 1000")),
    ("pgf(expr='z^(9^9^9)')", ("exponent", "too large")),
    ("pgf(expr='factorial(10^9)*z')", ("factorial", "too large")),
    ("pgf(expr='(10^10)^(10^10)*z')", ("too large",)),
    ("pgf(expr='(10^10)^(10^6)*z')", ("digits",)),
    ("pgf(expr='" + "9" * 5000 + "*z')", ("too many digits",)),
    ("geometric(mean=-3)", ("geometric: parameter mean=-3",)),  # the family the user typed, not tnb
    ("__import__('os').system('true')", ("expected a name",)),
    ("geometric(mean=30).__class__", ("expected a distribution spec",)),
])
def test_a_bad_law_gets_a_one_line_error(spec: str, fragments: tuple[str, ...]) -> None:
    assert_one_line_error(run("dist", spec, "--json"), *fragments)


@pytest.mark.parametrize(("args", "fragments"), [
    (("profile", "dpsgd(q=0.01, sigma=1.1, steps=1e12)", "--delta", "1e-5"), ("steps=",)),
    (("profile", "dpsgd(q=0.5, sigma=0.01, steps=1000)", "--delta", "1e-5"), ("sigma=0.01", "PLD")),
    (("verify", "--dist", "geometric(mean=30)", *B, "--delta", "1e-6", "--seed", "-1"), ("--seed",)),
    (("verify", "--dist", "geometric(mean=30)", *B, "--delta", "1e-6", "--budget", "1000000000"), ("--budget",)),
    (("audit", "--dist", "geometric(mean=30)", *B, "--delta", "1e-6", "--trials", "1000000000000"), ("--trials",)),
    (("bound", "--dist", "geometric(mean=30)", *B, "--epsilon", "inf"), ("epsilon=inf", "finite")),
    (("bound", "--dist", "geometric(mean=30)", *B, "--epsilon", "-inf"), ("epsilon=-inf",)),
    (("plan", *B, "--epsilon", "inf", "--delta", "1e-6"), ("epsilon=inf",)),
    (("profile", "gaussian(sigma=4)", "--epsilon", "nan"), ("epsilon=nan",)),
])
def test_bad_options_get_a_one_line_error(args: tuple[str, ...], fragments: tuple[str, ...]) -> None:
    assert_one_line_error(run(*args), *fragments)


def _number(result, key: str) -> float:
    assert result.exit_code == 0, result.output
    assert result.stderr == ""  # no warning reaches stderr on success
    return json.loads(result.stdout)[key]


def test_laplace_with_a_tiny_scale_answers() -> None:
    # max privacy loss 1/scale = 1e9: at delta = 1e-6 the answer is epsilon <= 1e9 (pure DP), not an overflow
    eps = _number(run("profile", "laplace(scale=1e-9)", "--delta", "1e-6", "--json"), "epsilon")
    assert 0 < eps <= 1e9


def test_dpsgd_below_its_truncated_pld_mass_is_finite() -> None:
    """dp-accounting's RdpAccountant gives 4.49 at delta = 1e-16 for this run (see test_profiles_dpaccounting)."""
    eps = _number(run("profile", "dpsgd(q=0.01, sigma=1.1, steps=1000)", "--delta", "1e-16", "--json"), "epsilon")
    assert 4.0 < eps < 4.6


def test_randomized_response_with_a_huge_epsilon_is_bounded_by_it() -> None:
    eps = _number(run("profile", "randomized_response(eps=1000)", "--delta", "1e-6", "--json"), "epsilon")
    assert eps <= 1000


@pytest.mark.parametrize("k_max", [500, 1000])
def test_the_uniform_law_on_0_to_k_is_a_law(k_max: int) -> None:
    result = run("dist", f"pmf(expr='1/{k_max + 1}', k_min=0, k_max={k_max})", "--json")
    assert _number(result, "mean") == pytest.approx(k_max / 2, rel=1e-12)


def test_every_method_gives_epsilon_zero_at_delta_one() -> None:
    result = run("bound", "--dist", "geometric(mean=30)", *B, "--delta", "1", "--method", "all", "--json")
    assert result.exit_code == 0, result.output
    for record in json.loads(result.stdout)["results"]:
        assert record["epsilon"] in (0.0, None), record


def test_a_base_without_privacy_marks_the_renyi_route_not_applicable() -> None:
    result = run("bound", "--dist", "geometric(mean=30)", "--base", "approx(eps=1, delta=1)", "--delta", "1e-6",
                 "--method", "all", "--json")
    assert result.exit_code == 0, result.output
    records = {r["method"]: r for r in json.loads(result.stdout)["results"]}
    assert records["rdp"]["epsilon"] is None and "not applicable" not in (records["rdp"].get("theorem") or "")
    assert "Renyi" in records["rdp"]["reason"] or "Rényi" in records["rdp"]["reason"]


def test_json_is_strict_and_tiny_deltas_are_not_silent_zeros() -> None:
    result = run("bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=1)", "--epsilon", "60",
                 "--method", "envelope", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout, parse_constant=lambda token: pytest.fail(f"non-strict JSON token {token}"))
    assert record["delta"] == 0.0 and math.isfinite(record["log_delta"]) and record["log_delta"] < -700
    assert float(record["delta_decimal"].split("e")[1]) < -300


@pytest.mark.parametrize(("spec", "mean"), [
    ("geometric(mean=1e300)", 1e300),  # gamma = 1e-300: was a division by zero
    ("geometric(gamma=1e-38)", 1e38),  # was 1.00028e38: 1 - gamma lost gamma's digits at z = 1
    ("tnb(eta=0.5, gamma=1e-200)", 0.5e200 * (1 - 1e-200) / (1 - 1e-100)),  # eta (1-g) / (g (1 - g^eta)), Def. 1
])
def test_a_tiny_gamma_keeps_the_mean_exact(spec: str, mean: float) -> None:
    assert _number(run("dist", spec, "--json"), "mean") == pytest.approx(mean, rel=1e-14)


@pytest.mark.parametrize(("spec", "fragments"), [
    ("negative_binomial(eta=1e300, mean=3)", ("eta=", "eta <= 1000")),  # was a hang
    ("negative_binomial(eta=1000000, gamma=0.5)", ("eta=", "eta <= 1000")),  # was 'too many digits to print'
    ("pgf(expr='abs(z)')", ("abs",)),  # was an internal error from SymPy's printer
    ("pgf(expr='(2*z-1)^2')", ("non-negative coefficients", "P[K=1]")),  # 1 - 4z + 4z^2 with phi(1) = 1
    ("point(k=geometric(mean=3))", ("geometric(mean=3)", "a real number")),  # was the repr Distribution(...)
])
def test_more_bad_laws_get_a_one_line_error(spec: str, fragments: tuple[str, ...]) -> None:
    assert_one_line_error(run("dist", spec, "--json"), *fragments)


@pytest.mark.parametrize("base", ["gaussian(sigma=1e-300)", "gdp(mu=1e300)"])
def test_a_gaussian_without_privacy_answers_infinity(base: str) -> None:
    # mu = 1e300: lambda mu^2 / 2 overflowed; the honest answer is epsilon = inf (no privacy), not an error
    result = run("bound", "--dist", "geometric(mean=30)", "--base", base, "--delta", "1e-6", "--json")
    assert result.exit_code == 0 and result.stderr == "", result.output
    assert json.loads(result.stdout)["epsilon"] == "inf"


def test_a_large_beta_binomial_answers_in_seconds() -> None:
    # n + 1 rising factorials with a, b substituted took minutes at n = 2000 (now ~10 s there); moments from the
    # closed forms of the beta-binomial law: n a / (a + b) and n a b (a + b + n) / ((a + b)^2 (a + b + 1))
    result = run("dist", "beta_binomial(n=500, a=2, b=3)", "--json")
    assert _number(result, "mean") == pytest.approx(200, rel=1e-12)
    assert json.loads(result.stdout)["variance"] == pytest.approx(500 * 6 * 505 / (25 * 6), rel=1e-12)


def test_a_large_power_of_a_law_is_not_expanded() -> None:
    # (z/2 + 1/2)^1e6 is Bin(1e6, 1/2): mean n p, variance n p (1 - p); its series check did not finish
    result = run("dist", "pgf(expr='(z/2+1/2)^1000000')", "--json")
    assert _number(result, "mean") == pytest.approx(500000, rel=1e-12)
    assert json.loads(result.stdout)["variance"] == pytest.approx(250000, rel=1e-12)


@pytest.mark.parametrize(("args", "fragments"), [
    (("plan", *B, "--epsilon", "1e300", "--delta", "1e-6"), ("epsilon=1e+300", "<= 100")),
    (("dist", "point(k=1e300)"), ("k=1e+300", "k <= 1e+09")),
])
def test_budgets_and_counts_beyond_what_answers_in_seconds_are_refused(args, fragments) -> None:
    assert_one_line_error(run(*args), *fragments)


def test_a_law_whose_float_phi_prime_is_unusable_marks_the_float_methods_not_applicable() -> None:
    """geometric(mean=1e20): 1 − (1−γ)z rounds to 0 at z = 1 in float64; polygon, fdp, envelope and Lemma 7 say
    so instead of refining without end, and the closed forms (paper, rdp) still answer."""
    result = run("bound", "--dist", "geometric(mean=1e20)", *B, "--delta", "1e-6", "--method", "all", "--json")
    assert result.exit_code == 0, result.output
    records = {r["method"]: r for r in json.loads(result.stdout)["results"]}
    for method in ("polygon", "fdp", "envelope", "rdp_lemma7"):
        assert records[method]["epsilon"] is None and "float64" in records[method]["reason"]
    assert math.isfinite(records["paper"]["epsilon"]) and records["best"]["epsilon"] == records["paper"]["epsilon"]


def test_a_nested_exponential_pgf_is_checked_in_seconds() -> None:
    """exp(e^z − e) (Touchard's law): its Taylor coefficients are Bell numbers
    B_k / k! times e^(1−e). sympy.series took minutes on it; the ring-series path must agree exactly."""
    import sympy

    law = symsel.parse_distribution("pgf(expr='exp(exp(z)-E)')")
    bell = [1, 1, 2, 5, 15, 52, 203, 877, 4140, 21147]
    for k, b in enumerate(bell):
        assert sympy.simplify(law.pmf_exact(k) - sympy.Rational(b, sympy.factorial(k)) * sympy.exp(1 - sympy.E)) == 0
    assert law.mean == pytest.approx(math.e, rel=1e-12)


@pytest.mark.slow  # about 4 s (conftest.py runs the slow tests first)
def test_the_largest_beta_binomial_is_described_with_an_exact_expected_quantile() -> None:
    """beta_binomial(n=2000) through `symsel dist` (48 s before): E[K/(K+1)] against scipy's betabinom pmf."""
    from scipy.stats import betabinom

    result = CliRunner().invoke(main, ["dist", "beta_binomial(n=2000, a=2, b=3)", "--json"])
    assert result.exit_code == 0, result.output
    facts = json.loads(result.stdout)
    ks = range(2001)
    reference = sum(betabinom.pmf(k, 2000, 2, 3) * k / (k + 1) for k in ks)
    assert facts["expected_quantile"] == pytest.approx(reference, rel=1e-10)
    assert facts["mean"] == pytest.approx(800.0, rel=1e-12)


# ------------------------------------------------------------------ cases found by the hostile-input run
@pytest.mark.parametrize("base", [4, 4.5, ["gaussian(sigma=4)"], {"sigma": 4}])
def test_derive_refuses_a_base_that_is_neither_a_spec_nor_a_profile(base) -> None:
    """``derive(law, base=4)`` was an AttributeError (``int`` has no ``spec``)."""
    with pytest.raises(symsel.errors.ParameterError, match=r"derive: parameter base=.*Profile"):
        symsel.derive("geometric(mean=3)", base=base)


@pytest.mark.parametrize("delta", [math.nan, -1e-6, 0.0, 1.5, math.inf, "1e-6", None])
def test_derive_refuses_a_delta_out_of_range_without_a_base(delta) -> None:
    """``derive(law, delta=nan)`` without a base derived on (the delta was only read with a base)."""
    with pytest.raises(symsel.errors.ParameterError, match=r"derive: parameter delta=.*1e-300 <= delta <= 1"):
        symsel.derive("geometric(mean=3)", delta=delta)


def test_derive_on_the_command_line_refuses_a_nan_delta() -> None:
    assert_one_line_error(run("derive", "geometric(mean=30)", "--delta", "nan", "--json"), "delta=nan")


@pytest.mark.parametrize("budget", [10**12, 20_001, 0])
def test_lower_bound_caps_its_budget_as_the_command_line_does(budget) -> None:
    """``lower_bound(..., budget=10**12)`` hung: the API now has the CLI's cap, one constant for both."""
    from symsel.cli.core import MAX_BUDGET
    from symsel.validate import MAX_LOWER_BOUND_BUDGET

    assert MAX_BUDGET == MAX_LOWER_BOUND_BUDGET == 20_000
    base, law = symsel.parse_profile("gaussian(sigma=4)"), symsel.parse_distribution("geometric(mean=30)")
    with pytest.raises(symsel.errors.ParameterError, match=r"lower_bound: parameter budget=.*budget <= 20000"):
        symsel.lower_bound(base, law, 1e-6, budget=budget)


def test_verify_budget_above_the_shared_cap_is_refused() -> None:
    assert_one_line_error(run("verify", "--dist", "geometric(mean=30)", *B, "--delta", "1e-6", "--budget", "20001"),
                          "--budget")


@pytest.mark.parametrize("bad", ["1e-6", b"1", ["1", 2], ("0.5", 1.0), True, 1j, "inf"])
def test_eps_arrays_refuse_strings_booleans_and_complex_numbers_everywhere(bad) -> None:
    """``bound(...).delta("1e-6")`` answered 0.854 (numpy parses strings): every ε/δ taker refuses."""
    import numpy as np

    from symsel.evidence.continuous import selection_delta
    from symsel.pairs import as_pair
    from symsel.profiles.region import as_float_array, as_mpf_probability, as_scalar

    law = symsel.parse_distribution("geometric(mean=30)")
    gaussian = symsel.parse_profile("gaussian(sigma=4)")
    bound = symsel.bound(law, gaussian)
    takers = [bound.delta, bound.log_delta, gaussian.delta, gaussian.log_delta,
              symsel.parse_profile("laplace(scale=1)").delta, symsel.parse_profile("approx(eps=1, delta=1e-6)").delta,
              lambda e: as_float_array(e, "eps"), lambda e: as_scalar(e, "eps")]
    array_like = [bad, np.asarray(bad, dtype=object)] if isinstance(bad, list | tuple) else [bad]
    if isinstance(bad, str):
        array_like.append(np.asarray([bad]))
    for value in array_like:
        for take in takers:
            with pytest.raises(symsel.errors.ParameterError, match="parameter eps="):
                take(value)
    laplace = symsel.parse_profile("laplace(scale=1)")
    scalar_takers = [lambda e: gaussian.delta_mp(e, 30), lambda e: laplace.delta_mp(e, 30),
                     lambda e: symsel.parse_profile("randomized_response(eps=1)").delta_mp(e, 30),
                     lambda e: selection_delta(as_pair(gaussian, "test"), law, e, 15)]
    for take in scalar_takers:
        with pytest.raises(symsel.errors.ParameterError, match="parameter eps="):
            take(bad)
    with pytest.raises(symsel.errors.ParameterError, match="parameter q="):
        as_mpf_probability(bad)
    with pytest.raises(symsel.errors.ParameterError, match="parameter delta="):
        bound.epsilon(bad)


def test_eps_arrays_still_take_every_kind_of_real_number() -> None:
    import mpmath
    import numpy as np

    gaussian = symsel.parse_profile("gaussian(sigma=4)")
    bound = symsel.bound(symsel.parse_distribution("geometric(mean=30)"), gaussian)
    at_one = bound.delta(1.0)
    for value in (1, 1.0, np.float64(1), np.float32(1), np.int64(1), np.float16(1), np.array(1.0), mpmath.mpf(1)):
        assert bound.delta(value) == at_one
        assert float(gaussian.delta_mp(value, 30)) == pytest.approx(gaussian.delta(1.0), rel=1e-12)
    for value in ([1, 2.5], (1, 2.5), np.array([1.0, 2.5]), np.array([1, 2]), np.array([1.0, 2.5], dtype=object),
                  [np.float32(1), 2.5]):
        out = bound.delta(value)
        assert isinstance(out, np.ndarray) and out[0] == at_one
    assert bound.delta(math.inf) == 0.0 and bound.delta(-math.inf) == 1.0
