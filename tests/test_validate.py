"""The shared range checks: numbers beyond float range are converted in a stated direction, never an
``OverflowError``; huge integers in messages are shown by their size."""

from __future__ import annotations

import sys
from fractions import Fraction

import pytest

import symsel
from symsel import validate
from symsel.errors import ParameterError


def test_a_huge_integer_epsilon_is_rounded_toward_zero_and_answered():
    # δ(ε) decreases in ε: the δ at the largest float is an upper bound on the δ at 10**400
    assert validate.to_float(10**400) == sys.float_info.max
    assert validate.to_float(-(10**400)) == -sys.float_info.max
    assert validate.to_float(Fraction(10**400, 3)) == sys.float_info.max
    b = symsel.bound(symsel.geometric(mean=30), symsel.parse_profile("gaussian(sigma=4)"))
    assert b.delta(10**400) == 0.0 and b.delta(-(10**400)) == 1.0
    assert list(b.delta([10**400, 10**400])) == [0.0, 0.0]


def test_a_huge_integer_delta_is_out_of_range_with_its_size_named():
    b = symsel.bound(symsel.geometric(mean=30), symsel.parse_profile("gaussian(sigma=4)"))
    with pytest.raises(ParameterError, match="delta=<an integer of about 401 digits>"):
        b.epsilon(10**400)
    with pytest.raises(ParameterError, match="about 5001 digits"):  # past Python's 4300-digit printing limit
        validate.probability(10**5000, "delta", "here")


def test_integers_are_compared_exactly():
    assert validate.integer(10**400, "m", "here") == 10**400
    with pytest.raises(ParameterError, match="an integer 1 <= m <= 10"):
        validate.integer(10**400, "m", "here", hi=10)
    with pytest.raises(ParameterError):
        validate.integer(1.5, "m", "here")


def test_an_environment_variable_a_library_reads_is_checked(monkeypatch):
    monkeypatch.setenv("LOKY_MAX_CPU_COUNT", "garbage")
    with pytest.raises(ParameterError, match="environment variable LOKY_MAX_CPU_COUNT='garbage'"):
        validate.environment_integer("LOKY_MAX_CPU_COUNT", "sweep")
    from symsel.apps.sweep import check_jobs

    with pytest.raises(ParameterError, match="LOKY_MAX_CPU_COUNT"):
        check_jobs(-1)
    assert check_jobs(1) == 1  # one process: joblib's pool is not used
    monkeypatch.setenv("LOKY_MAX_CPU_COUNT", "3")
    assert validate.environment_integer("LOKY_MAX_CPU_COUNT", "sweep") == 3
