"""The soundness direction in the types: a pair that dominates the base and a pair the base dominates are different
types (symsel.pairs.loss), ``interval`` takes only the first and the lower bounds only the second, and certified
numbers carry the side the truth lies on (symsel.certified)."""

from __future__ import annotations

import json
import math
import pickle

import numpy as np
import pytest

from symsel.bounds import bound
from symsel.bounds.interval_pairs import PairIntervalProfile, pair_interval_profile
from symsel.certified import Lower, Upper
from symsel.display import format_certified
from symsel.distributions import point
from symsel.errors import PairDirectionError, ParameterError
from symsel.evidence.lower import lower_bound
from symsel.evidence.pld_lower import loss_pair_lower_bound
from symsel.pairs.loss import DominatedPair, DominatingPair, LossPair, loss_pair
from symsel.spec import parse_profile

#: the case of the issue: on its dominating pair this "lower bound" came out at 9331.96 against an upper bound of 7.87
DPSGD = "dpsgd(q=0.1, sigma=1, steps=1, value_discretization_interval=0.01)"


@pytest.mark.parametrize("search", ["fixed point", "bisected"])
def test_the_dpsgd_lower_bound_refuses_the_dominating_pair(search):
    """Both searches on dominated pairs (the fixed-point one and the bisected one DP-SGD uses) refuse a pair that
    dominates the base."""
    from symsel.evidence.dpsgd_brackets import searched_lower_bound

    base = parse_profile(DPSGD)
    dominating = base.dominating_loss_pairs()
    assert dominating and all(isinstance(pair, DominatingPair) for pair in dominating)
    function = loss_pair_lower_bound if search == "fixed point" else searched_lower_bound
    with pytest.raises(PairDirectionError, match="needs a DominatedPair") as caught:
        function(dominating, point(2), 1e-18, 2.0)
    assert isinstance(caught.value, TypeError)


def test_interval_refuses_a_dominated_pair():
    base = parse_profile("laplace(scale=1)")
    with pytest.raises(PairDirectionError, match="needs a DominatingPair"):
        PairIntervalProfile(point(3), base.dominated_loss_pairs())
    with pytest.raises(PairDirectionError):  # one wrong pair among right ones is refused too
        PairIntervalProfile(point(3), base.dominating_loss_pairs() + base.dominated_loss_pairs())


def test_each_base_hands_out_each_kind_under_its_own_type():
    for spec in ("laplace(scale=1)", "randomized_response(eps=1, k=3)", DPSGD):
        base = parse_profile(spec)
        assert all(type(pair) is DominatingPair for pair in base.dominating_loss_pairs())
        assert all(type(pair) is DominatedPair for pair in base.dominated_loss_pairs())
        assert [type(p) for p in base.loss_pairs("dominated")] == [type(p) for p in base.dominated_loss_pairs()]
    with pytest.raises(ParameterError, match="role"):
        base.loss_pairs("upper")


def test_a_pair_is_made_only_as_one_of_the_two_kinds():
    a, b = np.array([0.5, 0.5]), np.array([0.25, 0.75])
    assert isinstance(loss_pair(a, b, DominatedPair, "P,Q", "test"), DominatedPair)
    for kind in ("dominated", LossPair):
        with pytest.raises(ParameterError, match="kind"):
            loss_pair(a, b, kind, "P,Q", "test")  # type: ignore[arg-type]


def test_the_right_calls_still_give_their_numbers():
    """Each kind is taken where it belongs, and the dominated pair's lower bound sits below an upper bound."""
    base = parse_profile("randomized_response(eps=1, k=2)")
    assert all(isinstance(p, DominatingPair) for p in pair_interval_profile(point(3), base).pairs)
    upper = bound(point(3), base, "envelope").epsilon(1e-6)
    lower = loss_pair_lower_bound(base.dominated_loss_pairs(), point(3), 1e-6, upper, rounds=1).epsilon
    assert 0 < lower <= upper


def test_certified_values_carry_their_direction_and_print_on_their_safe_side():
    b = bound(point(3), parse_profile("gaussian(sigma=2)"), "envelope")
    eps = b.epsilon(1e-6)
    assert type(eps) is Upper and type(b.delta(1.0)) is Upper and not isinstance(b.delta([1.0]), float)
    low = lower_bound(parse_profile("gaussian(sigma=2)"), point(3), 1e-6, budget=20).epsilon
    assert type(low) is Lower and low <= eps
    # they are the floats they hold: printed, serialized and pickled as such
    assert repr(eps) == repr(float(eps)) and json.loads(json.dumps(eps)) == float(eps)
    assert pickle.loads(pickle.dumps(low)) == low and type(eps + 1.0) is float
    # shown rounded to their safe side, read from the type
    x = 0.1234564
    assert format_certified(Upper(x)) == "0.123457" and format_certified(Lower(x)) == "0.123456"
    assert float(format_certified(Upper(eps))) >= eps and float(format_certified(low)) <= low
    with pytest.raises(TypeError):
        format_certified(math.pi)  # type: ignore[arg-type]
