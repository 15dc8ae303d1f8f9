"""symsel.evidence.verify: exact worst cases and certified lower bounds against every upper bound.

References are computed here from scratch (mpmath bisection on the Gaussian profile), not by the
bound code under test."""

from __future__ import annotations

import math

import mpmath
import pytest

from symsel import distributions as dists
from symsel.errors import ParameterError
from symsel.evidence.examples import get_example
from symsel.evidence.verify import verify_example, verify_selection
from symsel.profiles import GaussianProfile, PairProfile, Profile, RandomizedResponseProfile, pure, zcdp


def _rnm_theorem_3_2_epsilon(m: int, sensitivity: float, sigma: float, delta: float) -> float:
    """The eps at which m * delta_G(eps) = delta, delta_G the Gaussian profile with mu = sensitivity/sigma
    (Koskela et al. Theorem 3.2), by bisection at 40 digits."""
    with mpmath.workdps(40):
        mu, d = mpmath.mpf(sensitivity) / mpmath.mpf(sigma), mpmath.mpf(repr(delta))

        def excess(e):
            return m * (mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)) - d

        lo, hi = mpmath.mpf(0), mpmath.mpf(10)
        for _ in range(120):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if excess(mid) > 0 else (lo, mid)
        return float(hi)


@pytest.mark.parametrize(("name", "sensitivity"), [("rnm", 2.0), ("rnm-monotone", 1.0)])
def test_rnm_examples_check_the_bound_of_their_own_sensitivity(name, sensitivity):
    """Theorem 3.2 uses the Gaussian profile at sensitivity 2, or 1 when the queries move
    monotonically: the monotone example must be checked against the sensitivity-1 bound (~1.12), not
    the sensitivity-2 one (~2.37)."""
    record = verify_example(name)
    expected = _rnm_theorem_3_2_epsilon(3, sensitivity, 4.0, 1e-6)
    assert record["bounds"]["profile"] == pytest.approx(expected, rel=1e-8)
    assert record["bounds"]["profile"] >= record["exact_epsilon"]
    assert record["sound"] is True


def test_examples_carry_a_profile_not_a_dict():
    assert isinstance(get_example("xiang-example-1").base_profile, Profile)
    assert get_example("xiang-example-1").base_profile.spec == pure(1.0).spec
    assert isinstance(get_example("ps-three-point").base_profile, PairProfile)
    rnm = get_example("rnm-monotone")
    assert isinstance(rnm.base_profile, GaussianProfile) and rnm.base_profile.mu == 0.25
    assert rnm.params["monotone"] is True and get_example("rnm").params["monotone"] is False


def test_verify_selection_on_a_finite_base_brackets_the_truth():
    """Binary randomized response (eps = 1), K = 2 runs, delta = 0: the lower bound reaches 2 eps
    (P&S Prop 17) and no bound goes below it."""
    record = verify_selection(dists.point(2), RandomizedResponseProfile(1.0), 0.0, budget=40)
    assert record["lower_bound"] == pytest.approx(2.0, abs=1e-12)
    assert record["sound"] is True
    assert all(v is None or v >= 2.0 - 1e-9 for v in record["bounds"].values())
    assert math.isfinite(record["ratio"])


def test_verify_selection_refuses_a_base_without_a_dominating_pair():
    with pytest.raises(ParameterError) as info:
        verify_selection(dists.geometric(mean=30), zcdp(0.1), 1e-6)
    assert info.value.name == "base" and info.value.value == "zcdp(rho=0.1)"
    assert "gaussian" in info.value.allowed


def test_an_example_without_details_has_the_same_bounds_and_verdict():
    """The report's examples table asks ``details=False``: each bound's epsilon alone, the same numbers."""
    full, bare = verify_example("ps-three-point"), verify_example("ps-three-point", details=False)
    assert bare["bounds"] == full["bounds"] and bare["sound"] is full["sound"] is True
    assert all(set(record) <= {"method", "epsilon", "reason"} for record in bare["details"].values())
    assert any("certificate" in record for record in full["details"].values())
    with pytest.raises(ParameterError, match="details"):
        verify_example("ps-three-point", details="no")


def test_verify_on_dpsgd_answers_the_monotone_order() -> None:
    """DP-SGD is known through dominated pairs: the monotone (loss) order on the winning pair is evaluated too, a
    number (never NaN) no larger than dp-accounting's RDP accountant for releasing both runs (an upper bound on the
    best of two), and the whole answer is strict JSON."""
    import json

    import dp_accounting

    from symsel import parse_profile

    q, sigma, steps = 0.1, 1.0, 10
    payload = verify_selection(dists.point(k=2), parse_profile(f"dpsgd(q={q}, sigma={sigma}, steps={steps})"), 1e-6)
    accountant = dp_accounting.rdp.RdpAccountant()
    accountant.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(sigma)), 2 * steps)
    monotone = payload["monotone_order_epsilon"]
    assert isinstance(monotone, float) and 0 < monotone <= accountant.get_epsilon(1e-6)
    payload.pop("details")
    json.dumps({k: v for k, v in payload.items() if k not in ("bounds", "ratio")}, allow_nan=False)


def test_a_monotone_order_not_evaluated_is_reported_as_such(monkeypatch) -> None:
    """A lower bound that did not evaluate its monotone order (NaN) reaches the output as null with a note."""
    from symsel.evidence import lower

    real = lower.lower_bound
    monkeypatch.setattr(lower, "lower_bound", lambda *args, **kwargs: real(*args, **kwargs, monotone=False))
    payload = verify_selection(dists.point(k=2), RandomizedResponseProfile(1.0, 2), 1e-6, budget=5)
    assert payload["monotone_order_epsilon"] is None and "not evaluated" in payload["monotone_order_note"]
