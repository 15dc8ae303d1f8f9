"""Property-based fuzzing of the command line: spec strings that are valid, mutated or hostile go
through the CLI entry point in-process. Every run ends in exit 0 with one strict-JSON object whose numbers are
finite and in range, or in exit 2 with exactly one line on stderr and one JSON error object on stdout
(``--json``). No exception escapes,
and no spec executes code (a sentinel file is never created)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symsel.cli import main

SENTINEL = Path("/tmp/symsel-fuzz-sentinel")
LAW_NAMES = ["point", "tnb", "geometric", "logarithmic", "poisson", "binomial", "negative_binomial", "beta_binomial",
             "two_point", "truncated", "mixture", "compound", "pgf", "pmf", "bogus", "__import__", "eval", "exec"]
BASE_NAMES = ["gaussian", "laplace", "randomized_response", "pure", "approx", "gdp", "zcdp", "dpsgd", "open"]
PARAMS = ["k", "eta", "gamma", "mean", "n", "p", "a", "b", "L", "s", "mu", "expr", "k_min", "k_max", "sigma",
          "scale", "eps", "delta", "rho", "q", "steps", "z", "dist", "__class__"]
NUMBERS = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.sampled_from(["0", "1", "-1", "0.5", "1e-300", "1e300", "1e308", "inf", "-inf", "nan", "9/10", "1/0", "2.5",
                     "1e6", "10**10", "9^9^9", "True", "None", "[]", "()", "''"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
FORMULAS = st.sampled_from([
    "z", "z^2", "exp(mu*(z-1))", "exp(10*(z-1))", "(1-g)/(1-g*z)", "z^(9^9^9)", "factorial(10^9)", "1/k",
    "0.5*z+0.5*z^2", "1.2*z^100 - 0.2*z^101", "__import__('os')", "open('/etc/passwd')", "lambda: 1", "z.__class__",
    "sin(z)", "log(z)", "(z", "z)))", "",
])
HOSTILE = st.sampled_from([
    f"__import__('pathlib').Path('{SENTINEL}').touch()",
    f"open('{SENTINEL}', 'w')",
    f"geometric(mean=__import__('pathlib').Path('{SENTINEL}').touch())",
    f"pgf(expr=\"__import__('pathlib').Path('{SENTINEL}').touch()\")",
    "[x for x in ().__class__.__bases__[0].__subclasses__()]",
    "geometric(mean=30)" * 50, "(" * 500 + ")" * 500, "point(k=" + "-" * 3000 + "1)", "\x00", "geometric(mean=30",
])


@st.composite
def spec(draw, names: list[str]) -> str:
    name = draw(st.sampled_from(names))
    args = []
    for _ in range(draw(st.integers(0, 3))):
        key = draw(st.sampled_from(PARAMS))
        value = draw(FORMULAS.map(repr)) if key == "expr" else draw(NUMBERS)
        args.append(f"{key}={value}")
    return f"{name}({', '.join(args)})"


def mutated(base: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    def mutate(text: str, position: int, char: str, delete: bool) -> str:
        i = position % (len(text) + 1)
        return text[:i] + text[i + 1:] if delete else text[:i] + char + text[i:]

    return st.builds(mutate, base, st.integers(0, 200), st.sampled_from(list("()=,'\"[]^*-+./ 0e9_")), st.booleans())


VALID_LAWS = st.sampled_from(["geometric(mean=30)", "poisson(mean=10)", "tnb(eta=0.5, gamma=0.01)",
                              "binomial(n=20, p=0.5)", "pgf(expr='exp(mu*(z-1))', mu=3)", "point(k=3)",
                              "two_point(L=100, s=0.1)", "truncated(dist=geometric(mean=30), k_max=50)"])
LAWS = st.one_of(spec(LAW_NAMES), mutated(VALID_LAWS), VALID_LAWS, HOSTILE)
BASES = st.one_of(spec(BASE_NAMES), mutated(st.just("gaussian(sigma=4)")), HOSTILE)


def _check(result) -> None:
    assert not SENTINEL.exists(), "a spec executed code"
    assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
    if result.exit_code == 2:
        error = json.loads(result.stdout)
        assert set(error) == {"error", "kind", "exit_status"} and error["exit_status"] == 2, result.stdout
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("symsel: error: "), result.stderr
        assert error["error"] in lines[0]
        return
    payload = json.loads(result.stdout, parse_constant=lambda token: (_ for _ in ()).throw(AssertionError(token)))
    for key in ("mean", "variance", "p0", "epsilon", "delta"):
        value = payload.get(key)
        if isinstance(value, float):
            assert math.isfinite(value) or key == "epsilon", (key, value)
    for key in ("p0", "delta"):
        if isinstance(payload.get(key), float):
            assert 0.0 <= payload[key] <= 1.0


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FUZZ
@given(law=LAWS)
def test_dist_command_never_escapes(law: str) -> None:
    _check(CliRunner().invoke(main, ["dist", law, "--json"]))


@FUZZ
@given(base=BASES, delta=st.sampled_from(["1e-6", "0", "1", "1e-30", "-1", "2", "nan"]))
def test_profile_command_never_escapes(base: str, delta: str) -> None:
    _check(CliRunner().invoke(main, ["profile", base, "--delta", delta, "--json"]))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law=st.one_of(VALID_LAWS, mutated(VALID_LAWS), HOSTILE),
       method=st.sampled_from(["paper", "envelope", "composition", "best", "xyz"]))
def test_bound_command_never_escapes(law: str, method: str) -> None:
    _check(CliRunner().invoke(main, ["bound", "--dist", law, "--base", "gaussian(sigma=4)", "--delta", "1e-6",
                                     "--method", method, "--json"]))


# ----------------------------------------------------------------------------- tune, ptr, report, plan, sweep
SMALL_NUMBERS = st.sampled_from(["0", "1", "-1", "1e-30", "1e-6", "0.5", "2", "1e300", "inf", "nan", "x", "",
                                 "1,2", "(1e-6)", "1e6"])


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law=st.one_of(st.just("geometric(mean={mean})"), mutated(st.just("geometric(mean={mean})")), HOSTILE,
                     VALID_LAWS),
       epsilon=SMALL_NUMBERS, delta=SMALL_NUMBERS, mean=st.one_of(st.none(), SMALL_NUMBERS))
def test_plan_command_never_escapes(law: str, epsilon: str, delta: str, mean: str | None) -> None:
    """plan's forward and inverse questions (--epsilon: the largest mean; --mean: the epsilon it needs)."""
    args = ["plan", "--base", "gaussian(sigma=4)", "--dist", law, "--delta", delta, "--json"]
    args += ["--mean", mean] if mean is not None else ["--epsilon", epsilon]
    _check(CliRunner().invoke(main, args))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law=st.one_of(VALID_LAWS, mutated(VALID_LAWS), HOSTILE),
       guarantee=st.one_of(st.sampled_from(["1,1e-6", "2,1e-8", "1", "a,b", "-1,0.5", "1,2", "inf,0", "1e300,1e-300",
                                            ",", "1,1e-6,3"]), st.text(max_size=12)),
       delta=SMALL_NUMBERS)
def test_ptr_command_never_escapes(law: str, guarantee: str, delta: str) -> None:
    _check(CliRunner().invoke(main, ["ptr", "--dist", law, "--guarantee", guarantee, "--delta", delta, "--json"]))


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(law=st.one_of(st.sampled_from(["poisson(mean=3)", "point(k=3)", "binomial(n=4, p=0.5)"]), mutated(VALID_LAWS),
                     HOSTILE, spec(LAW_NAMES)))
def test_derive_command_never_escapes(law: str) -> None:
    _check(CliRunner().invoke(main, ["derive", law, "--json"]))
