"""Every certified number the command line prints is still a bound: upper bounds (ε and δ) rounded up, lower bounds
rounded down, a largest mean that fits rounded down, counts whole. Each printed number is parsed and compared with
the unrounded value the Python API certifies."""

from __future__ import annotations

import math
import re
from decimal import Decimal

import pytest
from click.testing import CliRunner

import symsel
from symsel.cli import main
from symsel.rounding import format_lower, format_upper
from symsel.spec import parse_distribution, parse_profile

DELTA = 1e-6
GEOMETRIC, GAUSSIAN = "geometric(mean=30)", "gaussian(sigma=4)"
NUMBER = r"(-?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|inf)"


def _run(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _above(text: str, value: float) -> bool:
    return Decimal(text) >= Decimal(value) if text != "inf" else True


def _below(text: str, value: float) -> bool:
    return Decimal(text) <= Decimal(value) if text != "inf" else value == math.inf


def test_the_formatting_functions_round_towards_the_safe_side():
    """Against exact decimal arithmetic on floats of every size (subnormal to the largest), and the carry."""
    values = [1.23456789, 9.9999995, 1e-6, 0.1, 2.4999999999, 1e300, 5e-324, 1.7976931348623157e308, 7.87, -1.5]
    values += [math.ldexp(1.0 + i / 977, e) for i in range(0, 977, 61) for e in range(-1070, 1020, 37)]
    for value in values:
        up, down = format_upper(value), format_lower(value)
        assert Decimal(down) <= Decimal(value) <= Decimal(up), (value, up, down)
        assert len(Decimal(up).normalize().as_tuple().digits) <= 6 >= len(Decimal(down).normalize().as_tuple().digits)
    assert (format_upper(1.23456789), format_lower(1.23456789)) == ("1.23457", "1.23456")
    assert (format_upper(0.1), format_lower(0.1)) == ("0.100001", "0.1")  # 0.1 is 0.1000000000000000055…
    assert format_upper(math.inf) == "inf" and format_upper(3.0) == format_lower(3.0) == "3"


@pytest.mark.slow
def test_bound_method_all_prints_every_upper_bound_at_or_above_its_certified_value():
    """Rounded to nearest, six of the seven finite upper bounds of this table printed below their certified value."""
    text = _run("bound", "--dist", GEOMETRIC, "--base", GAUSSIAN, "--delta", str(DELTA), "--method", "all")
    dist, base = parse_distribution(GEOMETRIC), parse_profile(GAUSSIAN)
    checked = 0
    for line in text.splitlines()[1:]:
        method, printed = line.split()[:2]
        if printed == "n/a":
            continue
        certified = symsel.bound(dist, base, method).epsilon(DELTA)
        assert _above(printed, certified), (method, printed, certified)
        assert Decimal(printed) - Decimal(certified) <= Decimal("1e-5") * Decimal(certified), (method, printed)
        checked += 1
    assert checked >= 8


def test_bound_at_an_epsilon_prints_delta_rounded_up_and_profile_too():
    text = _run("bound", "--dist", GEOMETRIC, "--base", GAUSSIAN, "--epsilon", "1.9")
    printed = text.splitlines()[1].split()[2]
    certified = symsel.bound(parse_distribution(GEOMETRIC), parse_profile(GAUSSIAN)).delta(1.9)
    assert _above(printed, float(certified)), (printed, certified)
    base = parse_profile(GAUSSIAN)
    eps = re.search(r"epsilon = " + NUMBER, _run("profile", GAUSSIAN, "--delta", "1e-9")).group(1)
    assert _above(eps, base.epsilon(1e-9))
    delta = re.search(r"delta = " + NUMBER, _run("profile", GAUSSIAN, "--epsilon", "0.7")).group(1)
    assert _above(delta, float(base.delta(0.7)))


@pytest.mark.slow
def test_verify_prints_the_lower_bound_rounded_down_and_the_upper_bounds_up():
    """The payload ``verify_selection`` returns (the Python API) holds the unrounded numbers; the command's text is
    its formatting of that payload (one search, not two)."""
    from symsel.cli.core import _format_verify
    from symsel.evidence.verify import verify_selection

    payload = verify_selection(parse_distribution("geometric(mean=10)"), parse_profile(GAUSSIAN), DELTA, budget=20,
                               seed=0)
    text = _format_verify(payload)
    lower, monotone = re.search(r"lower bound\s+" + NUMBER + r"\s+\(monotone order " + NUMBER, text).groups()
    assert _below(lower, payload["lower_bound"]) and _below(monotone, payload["monotone_order_epsilon"])
    for method, value in payload["bounds"].items():
        if value is not None:
            printed = re.search(rf"^  {method}\s+" + NUMBER + "$", text, re.MULTILINE).group(1)
            assert _above(printed, value), (method, printed, value)
    ratio = re.search(r"tightest UB / LB\s+" + NUMBER, text).group(1)
    assert _above(ratio, payload["ratio"])


def test_plan_prints_a_mean_rounded_down_a_count_whole_and_epsilon_and_delta_rounded_up():
    from symsel.apps.plan import max_mean, max_trials

    base = parse_profile(GAUSSIAN)
    text = _run("plan", "--base", GAUSSIAN, "--epsilon", "2", "--delta", str(DELTA), "--dist",
                "geometric(mean={mean})")
    mean, eps = re.search(r"mean K = " + NUMBER + r" \(epsilon " + NUMBER, text).groups()
    record = max_mean("geometric(mean={mean})", base, 2.0, DELTA)
    assert _below(mean, record["mean"]) and _above(eps, record["epsilon"]), (text, record)
    text = _run("plan", "--base", GAUSSIAN, "--epsilon", "3", "--delta", str(DELTA), "--dist", "point(k={k})")
    trials, eps, more, delta = re.search(r"(\d+) trials \(epsilon " + NUMBER + r"; (\d+) would need delta " + NUMBER,
                                         text).groups()
    record = max_trials("point(k={k})", base, 3.0, DELTA)
    assert int(trials) == record["trials"] and int(more) == record["trials"] + 1
    assert _above(eps, record["epsilon"]) and _above(delta, record["next_delta_at_budget"]), (text, record)


@pytest.mark.parametrize("value", [2.2883149, 1e-6 * (1 + 2**-40), 1.0000000001])
def test_a_value_just_above_its_rounded_digits_prints_the_next_digit_up(value):
    """Rounded to nearest these print below the value; the safe direction never does."""
    assert Decimal(f"{value:.6g}") < Decimal(value) <= Decimal(format_upper(value))
