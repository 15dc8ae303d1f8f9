"""The Opacus-interface accountant of the whole search (symsel.apps.opacus), without Opacus or torch.

References: dp-accounting's PLD accountant on the same history (one candidate, no final run: the search is that
training), ``symsel.bound`` and ``symsel.with_final_run`` on the same DP-SGD base (computed here from the base's spec,
not through the accountant), and, as Opacus's own test of its inverse, a property: the σ that Opacus's bisection
(``get_noise_multiplier``, written out below from its documented algorithm) finds through this accountant never gives
an ε above the target. The real Opacus and torch are tested by ``python3 run.py test-opacus`` (tests_opacus/).
"""

from __future__ import annotations

import math
import subprocess
import sys
from types import SimpleNamespace

import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant
from dp_accounting.rdp import rdp_privacy_accountant
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symsel
from symsel.apps import opacus
from symsel.apps.opacus import WholeSearchAccountant, make_accountant_class, whole_search_epsilon
from symsel.errors import ParameterError, SymselError

DELTA = 1e-5
#: the methods of Opacus 1.6.0's IAccountant (opacus/accountants/accountant.py) and the attribute it sets.
IACCOUNTANT_INTERFACE = ("step", "get_epsilon", "__len__", "mechanism", "get_optimizer_hook_fn", "state_dict",
                         "load_state_dict")


def dpsgd_event(sigma: float, q: float, steps: int) -> dp_event.DpEvent:
    return dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(q, dp_event.GaussianDpEvent(sigma)), steps)


def opacus_bisection(accountant: WholeSearchAccountant, target_epsilon: float, target_delta: float, sample_rate: float,
                     steps: int, epsilon_tolerance: float = 0.01) -> float:
    """Opacus's ``get_noise_multiplier``: double σ from 10 until ε is at most the target, then halve the interval
    ``[0, σ_high]`` until the target exceeds ε(σ_high) by at most the tolerance; return σ_high."""
    eps_high, sigma_low, sigma_high = math.inf, 0.0, 10.0
    while eps_high > target_epsilon:
        sigma_high *= 2
        accountant.history = [(sigma_high, sample_rate, steps)]
        eps_high = accountant.get_epsilon(delta=target_delta)
        assert sigma_high < 1e6
    while target_epsilon - eps_high > epsilon_tolerance:
        sigma = (sigma_low + sigma_high) / 2
        accountant.history = [(sigma, sample_rate, steps)]
        eps = accountant.get_epsilon(delta=target_delta)
        if eps < target_epsilon:
            sigma_high, eps_high = sigma, eps
        else:
            sigma_low = sigma
    return sigma_high


# ------------------------------------------------------------------------------------ against references
@pytest.mark.parametrize(("sigma", "q", "steps"), [(1.1, 0.01, 1000), (2.0, 0.1, 50)])
def test_one_candidate_without_final_run_is_dp_accountings_pld_of_the_history(sigma: float, q: float,
                                                                               steps: int) -> None:
    accountant = make_accountant_class(n_trials=1)()
    accountant.history = [(sigma, q, steps)]
    peer = pld_privacy_accountant.PLDAccountant().compose(dpsgd_event(sigma, q, steps))
    assert accountant.get_epsilon(DELTA) == pytest.approx(peer.get_epsilon(DELTA), rel=1e-6)


def test_a_history_of_several_runs_is_their_composition() -> None:
    """σ and the rate changed during training: the candidate's run is the composition of the entries (one candidate,
    no final run: dp-accounting's PLD of the composed events)."""
    history = [(1.1, 0.05, 40), (0.9, 0.1, 20), (1.1, 0.05, 10)]
    accountant = make_accountant_class(n_trials=1)()
    accountant.history = list(history)
    peer = pld_privacy_accountant.PLDAccountant()
    for sigma, q, steps in history:
        peer.compose(dpsgd_event(sigma, q, steps))
    assert accountant.get_epsilon(DELTA) == pytest.approx(peer.get_epsilon(DELTA), rel=1e-6)


@pytest.mark.parametrize(("spec", "entry", "final_run"), [
    ("dpsgd(q=0.05, sigma=1.5, steps=20)", (1.5, 0.05, 20), False),
    ("gaussian(sigma=2)", (2.0, 1.0, 1), True),  # a DP-SGD pipeline costs seconds: tests/apps/test_pipeline_routes.py
])
def test_the_whole_search_is_symsels_bound_on_the_same_base(spec: str, entry: tuple, final_run: bool) -> None:
    base = symsel.parse_profile(spec)
    selection = symsel.bound(symsel.parse_distribution("geometric(mean=8)"), base)
    expected = symsel.with_final_run(selection, base).epsilon(DELTA) if final_run else selection.epsilon(DELTA)
    accountant = make_accountant_class("geometric(mean=8)", final_run=final_run)()
    accountant.history = [entry]
    assert accountant.get_epsilon(DELTA) == pytest.approx(expected, rel=1e-9)
    alone = make_accountant_class(n_trials=1)()
    alone.history = [entry]
    assert accountant.get_epsilon(DELTA) > alone.get_epsilon(DELTA)  # the search costs more than one run


def test_a_gaussian_history_is_the_gaussian_mechanism_exactly() -> None:
    """Rate 1: ``steps`` Gaussian runs of noise σ are one of noise ``σ/√steps`` (μ-GDP adds in squares)."""
    accountant = make_accountant_class(n_trials=4)()
    accountant.history = [(8.0, 1.0, 4)]
    expected = symsel.bound(symsel.point(4), symsel.parse_profile("gaussian(sigma=4)")).epsilon(DELTA)
    assert accountant.get_epsilon(DELTA) == pytest.approx(expected, rel=1e-12)


def test_empty_and_non_private_histories() -> None:
    accountant = make_accountant_class(n_trials=3, final_run=True)()
    assert accountant.get_epsilon(DELTA) == 0.0
    accountant.history = [(0.0, 0.01, 10)]
    assert accountant.get_epsilon(DELTA) == math.inf
    accountant.history = [(1e-3, 0.5, 10)]  # below the DP-SGD base's noise range: no finite ε claimed
    assert accountant.get_epsilon(DELTA) == math.inf


# ------------------------------------------------------------------------------------ the inverse never overshoots
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.floats(0.3, 12.0), k=st.integers(1, 60), steps=st.integers(1, 200),
       log_delta=st.integers(-10, -4))
def test_the_sigma_opacus_finds_never_overshoots_the_budget(target: float, k: int, steps: int,
                                                            log_delta: int) -> None:
    """Opacus's bisection through the accountant (here with the cheap ``rdp`` method, a Gaussian training) returns a
    σ whose whole-search ε, asked afresh, is at most the target."""
    delta = 10.0 ** log_delta
    cls = make_accountant_class(n_trials=k, method="rdp")
    sigma = opacus_bisection(cls(), target, delta, 1.0, steps)
    fresh = cls()
    fresh.history = [(sigma, 1.0, steps)]
    assert fresh.get_epsilon(delta) <= target


def test_the_bisection_with_the_default_method_and_the_final_run_stays_within_the_budget() -> None:
    """The default ``best`` bound and the final run: within the budget, and within Opacus's tolerance below it
    (the bisection's last σ has ε in ``[target − 0.01, target]``)."""
    cls = make_accountant_class("geometric(mean=8)", final_run=True)
    sigma = opacus_bisection(cls(), 2.0, 1e-6, 1.0, 1)
    fresh = cls()
    fresh.history = [(sigma, 1.0, 1)]
    assert 2.0 - 0.01 <= fresh.get_epsilon(1e-6) <= 2.0


# ------------------------------------------------------------------------------------ a target steers the work
@pytest.mark.parametrize(("law", "entry", "final_run", "offsets"), [
    # best takes the costly interval bound here: the Rényi bound is asked first
    ("point(k=20)", (4.0, 1.0, 1), False, (0.005, 0.015, 0.05, 1.0, -0.005, -0.5)),
    ("geometric(mean=8)", (2.0, 1.0, 1), True, (0.015, -0.005)),  # the pipeline's own δ at the thresholds
])
def test_a_target_keeps_each_answer_on_the_side_of_the_thresholds_the_bound_is_on(law: str, entry: tuple,
                                                                                  final_run: bool,
                                                                                  offsets: tuple) -> None:
    """With ``target_epsilon`` t, an answer is certified (at or above the configured bound's ε, the slow answer)
    and on the same side of t and of t − 0.01 (Opacus's tolerance) as it: targets just above it (the answer is the
    bound's), within two tolerances (checked below t − 0.02, then searched), further above, just and far below."""
    exact = whole_search_epsilon([entry], DELTA, law, final_run)
    targets = [exact + offset * (exact if abs(offset) > 0.1 else 1.0) for offset in offsets]
    if not final_run:  # a cheap bound just below the target, where the bound is more than a tolerance below it
        base = symsel.parse_profile(f"gaussian(sigma={entry[0]})")
        targets.append(symsel.bound(symsel.parse_distribution(law), base, "envelope").epsilon(DELTA) + 0.005)
    for target in targets:
        offset = target - exact
        steered = whole_search_epsilon([entry], DELTA, law, final_run, target_epsilon=target)
        assert steered >= exact * (1 - 1e-3), (offset, steered, exact)
        assert (steered < target) == (exact < target), (offset, steered, exact)
        assert (steered < target - 0.01) == (exact < target - 0.01), (offset, steered, exact)
        if 0 < offset < 0.01:
            assert steered == exact  # the answer the bisection stops on is the bound's own


# ------------------------------------------------------------------------------------ the calibration bound
#: a DP-SGD history whose bounds cost about a second: the calibration bound (symsel.apps.opacus.calibration_base)
#: applies to it.
SMALL_RUN = (1.0, 0.1, 10)


def calibration_allowance(mean_trials: float) -> float:
    """The allowance stated in docs/opacus.md: the calibration bound is above the configured bound by at most
    ``CALIBRATION_PAIR_WIDTH · E[K]`` in ε."""
    return opacus.CALIBRATION_PAIR_WIDTH * mean_trials


def test_the_calibration_bound_is_certified_and_within_its_allowance() -> None:
    """40 runs of dpsgd(q=0.1, sigma=1.0, steps=10), δ = 1e-6: the calibration bound (coarser PLD grid, pairs and
    pieces) is at least 8.20, an independent probe's lower bound (one step's outputs bucketed by loss with exact
    masses, composed by convolving their indices, the best expanding-interval order: the figure
    tests/bounds/test_interval_pairs.py uses), at least the configured bound on the history's own base, and at
    most the allowance above it."""
    law = symsel.point(k=40)
    calibration = opacus.calibration_base([SMALL_RUN], 1e-6)
    assert isinstance(calibration, symsel.profiles.DpsgdProfile) and not calibration.has_deep_loss_pairs
    assert calibration.interval_piece_mass == opacus.CALIBRATION_PIECE_MASS
    coarse = symsel.bound(law, calibration).epsilon(1e-6)
    fine = symsel.bound(law, symsel.parse_profile("dpsgd(q=0.1, sigma=1.0, steps=10)")).epsilon(1e-6)
    assert 8.20 <= fine <= coarse <= fine + calibration_allowance(40)
    assert opacus.calibration_base([SMALL_RUN], 1e-9).has_deep_loss_pairs  # a small δ keeps the deeper pairs
    gaussian = opacus.calibration_base([(2.0, 1.0, 4)], 1e-6)  # not a DP-SGD run: the history's own base
    assert isinstance(gaussian, symsel.profiles.GaussianProfile) and gaussian.mu == pytest.approx(1.0)


@pytest.mark.parametrize(("law", "entry", "delta"), [
    ("point(k=1)", (2.0, 1.0, 1), 1e-5),  # a Gaussian run, then the final run: two runs, exactly
    ("point(k=5)", SMALL_RUN, 1e-5),
    ("point(k=20)", (0.8662, 0.004, 5000), 1e-5),
])
def test_the_renyi_composition_of_the_search_and_the_final_run(law: str, entry: tuple, delta: float) -> None:
    """renyi_epsilon with the final run against dp-accounting's RDP accountant composing the K runs and the final
    one (the best of K fixed runs is a post-processing of all of them, whose RDP curve the rdp bound takes), and
    for one Gaussian run the exact ε of two runs (μ-GDP: noise σ/√2), which it must not be below."""
    sigma, rate, steps = entry
    k = int(law.split("=")[1].rstrip(")"))
    base = opacus.history_base([entry])
    event = dpsgd_event(sigma, rate, steps) if rate < 1 else dp_event.SelfComposedDpEvent(
        dp_event.GaussianDpEvent(sigma), steps)
    value = opacus.renyi_epsilon(symsel.parse_distribution(law), base, delta, final_run=True)
    peer = rdp_privacy_accountant.RdpAccountant().compose(event, k + 1).get_epsilon(delta)
    assert value == pytest.approx(peer, rel=1e-3)
    if rate == 1.0:
        exact = symsel.parse_profile(f"gaussian(sigma={sigma / math.sqrt(2)!r})").epsilon(delta)
        assert value >= exact
    without = opacus.renyi_epsilon(symsel.parse_distribution(law), base, delta, final_run=False)
    assert without == pytest.approx(rdp_privacy_accountant.RdpAccountant().compose(event, k).get_epsilon(delta),
                                    rel=1e-3)


def test_on_a_dpsgd_history_a_target_answers_on_the_side_of_the_slow_bound_outside_the_allowance() -> None:
    """8 runs of dpsgd(q=0.1, sigma=1.0, steps=10): with targets around the slow answer ``E`` (the configured bound
    on the history's own base), every steered answer is at least ``E`` (certified, up to the pipeline's and the
    searches' tolerance) and on ``E``'s side of ``t`` and ``t − 0.01`` wherever ``E`` is farther than the allowance
    from that threshold."""
    law, allowance = "point(k=8)", calibration_allowance(8)
    exact = whole_search_epsilon([SMALL_RUN], DELTA, law)
    for offset in (1.0, 0.03, 0.004, -0.005, -0.03, -1.0):
        target = exact + offset
        steered = whole_search_epsilon([SMALL_RUN], DELTA, law, target_epsilon=target)
        assert steered >= exact * (1 - 1e-6), (offset, steered, exact)
        for threshold in (target, target - 0.01):
            if abs(exact - threshold) > allowance:
                assert (steered < threshold) == (exact < threshold), (offset, threshold, steered, exact)


def test_a_calibration_of_a_dpsgd_history_stays_within_the_budget_and_near_it() -> None:
    """Opacus's bisection through the accountant told the target, on 8 runs of DP-SGD: the slow bound at the σ
    found is within the budget, and within the tolerance and the allowance below it (so σ is at most what that
    band of ε costs above the slow bound's own σ)."""
    sigma = opacus_bisection(make_accountant_class(n_trials=8, target_epsilon=5.0)(), 5.0, DELTA, 0.1, 10)
    fresh = make_accountant_class(n_trials=8)()
    fresh.history = [(sigma, 0.1, 10)]
    assert 5.0 - 0.01 - calibration_allowance(8) <= fresh.get_epsilon(DELTA) <= 5.0


def test_a_target_answer_is_above_dp_accountings_pld_of_one_candidate() -> None:
    """One candidate, no final run: every steered answer is at or above dp-accounting's PLD ε of the history."""
    peer = pld_privacy_accountant.PLDAccountant().compose(dpsgd_event(1.1, 0.01, 1000)).get_epsilon(DELTA)
    for target in (0.5 * peer, peer + 0.005, peer + 0.05, 3 * peer):
        accountant = make_accountant_class(n_trials=1, target_epsilon=target)()
        accountant.history = [(1.1, 0.01, 1000)]
        assert accountant.get_epsilon(DELTA) >= peer * (1 - 1e-6)


def test_a_calibration_with_the_target_finds_the_same_sigma() -> None:
    """Opacus's bisection through an accountant that knows the target takes the same steps as without it (the
    cheap ``rdp`` method: the benchmark measures the default one)."""
    slow = opacus_bisection(make_accountant_class(n_trials=3, method="rdp")(), 3.0, DELTA, 1.0, 1)
    cls = make_accountant_class(n_trials=3, method="rdp", target_epsilon=3.0)
    assert cls.mechanism() == "symsel:point(k=3)@rdp~eps=3.0"
    assert opacus_bisection(cls(), 3.0, DELTA, 1.0, 1) == slow


# ------------------------------------------------------------------------------------ the interface
def test_the_class_has_opacus_accountant_interface() -> None:
    cls = make_accountant_class("geometric(mean=10)", final_run=True)
    accountant = cls()
    for attribute in IACCOUNTANT_INTERFACE:
        assert callable(getattr(accountant, attribute))
    assert accountant.history == []
    assert cls.mechanism() == "symsel:geometric(mean=10)+final" == accountant.mechanism()
    assert make_accountant_class(n_trials=20).mechanism() == "symsel:point(k=20)"
    assert make_accountant_class(n_trials=20, name="tuned").mechanism() == "tuned"


def test_step_len_and_the_optimizer_hook() -> None:
    accountant = make_accountant_class(n_trials=2)()
    for _ in range(3):
        accountant.step(noise_multiplier=1.0, sample_rate=0.01)
    accountant.step(noise_multiplier=2.0, sample_rate=0.01)
    assert accountant.history == [(1.0, 0.01, 3), (2.0, 0.01, 1)] and len(accountant) == 4
    hook = accountant.get_optimizer_hook_fn(sample_rate=0.01)
    hook(SimpleNamespace(noise_multiplier=2.0, accumulated_iterations=1))
    hook(SimpleNamespace(noise_multiplier=2.0, accumulated_iterations=2))
    assert accountant.history == [(1.0, 0.01, 3), (2.0, 0.01, 2), (2.0, 0.02, 1)] and len(accountant) == 6


def test_state_dict_round_trip_and_refusals() -> None:
    cls = make_accountant_class(n_trials=2)
    accountant = cls()
    accountant.history = [(1.0, 0.01, 10)]
    state = accountant.state_dict()
    assert dict(state) == {"history": [(1.0, 0.01, 10)], "mechanism": "symsel:point(k=2)"}
    state["history"].append((5.0, 0.5, 1))  # a copy
    assert accountant.history == [(1.0, 0.01, 10)]
    other = cls()
    other.load_state_dict(accountant.state_dict())
    assert other.history == accountant.history
    for bad, fragment in (({}, "non-empty"), ({"history": []}, "mechanism"),
                          ({"history": [], "mechanism": "prv"}, "prv"),
                          ({"history": [(1.0, 2.0, 3)], "mechanism": "symsel:point(k=2)"}, "sample_rate")):
        with pytest.raises(ParameterError, match=fragment):
            other.load_state_dict(bad)


@pytest.mark.parametrize(("kwargs", "fragment"), [
    ({}, "exactly one of law"),
    ({"law": "point(k=3)", "n_trials": 3}, "exactly one of law"),
    ({"n_trials": 0}, "n_trials"),
    ({"n_trials": 10**400}, "n_trials"),
    ({"law": 3}, "spec string"),
    ({"n_trials": 2, "method": "nope"}, "method"),
    ({"n_trials": 2, "final_run": "yes"}, "final_run"),
    ({"n_trials": 2, "target_epsilon": 0}, "target_epsilon"),
    ({"n_trials": 2, "target_epsilon": math.nan}, "target_epsilon"),
    ({"n_trials": 2, "target_epsilon": math.inf}, "target_epsilon"),
    ({"n_trials": 2, "target_epsilon": "8"}, "target_epsilon"),
    ({"n_trials": 2, "target_epsilon": 8, "epsilon_tolerance": -1}, "epsilon_tolerance"),
    ({"n_trials": 2, "target_epsilon": 8, "epsilon_tolerance": None}, "epsilon_tolerance"),
])
def test_bad_configurations_name_the_parameter(kwargs: dict, fragment: str) -> None:
    with pytest.raises(ValueError, match=fragment):
        make_accountant_class(**kwargs)


@pytest.mark.parametrize(("history", "fragment"), [
    ([(1.0, 0.0, 10)], "sample_rate"),
    ([(1.0, 1.5, 10)], "sample_rate"),
    ([(-1.0, 0.1, 10)], "noise_multiplier"),
    ([(math.nan, 0.1, 10)], "noise_multiplier"),
    ([(1.0, 0.1, 0)], "steps"),
    ([(1.0, 0.1, 2.5)], "steps"),
    ([(1.0, 0.1)], "triple"),
])
def test_bad_histories_name_the_entry(history: list, fragment: str) -> None:
    accountant = make_accountant_class(n_trials=2)()
    accountant.history = history
    with pytest.raises(ParameterError, match=fragment):
        accountant.get_epsilon(DELTA)


def test_a_bad_target_in_the_function_is_refused_by_name() -> None:
    for bad in ([8.0], -1.0, math.nan):
        with pytest.raises(ParameterError, match="target_epsilon"):
            whole_search_epsilon([(1.0, 1.0, 1)], DELTA, "point(k=2)", target_epsilon=bad)


def test_the_calibration_functions_refuse_bad_input_by_name() -> None:
    run = opacus.history_base([SMALL_RUN])
    for call, fragment in [
        (lambda: opacus.calibration_base([SMALL_RUN], math.nan), "delta"),
        (lambda: opacus.calibration_base([SMALL_RUN], "1e-5"), "delta"),
        (lambda: opacus.calibration_base([(1.0, 2.0, 10)], 1e-5), "sample_rate"),
        (lambda: opacus.renyi_epsilon(symsel.point(k=2), run, 2.0, True), "delta"),
        (lambda: opacus.renyi_epsilon(symsel.point(k=2), None, 1e-5, True), "base"),
        (lambda: opacus.renyi_epsilon("point(k=2)", run, 1e-5, True), "dist"),
        (lambda: opacus.renyi_epsilon(symsel.point(k=2), run, 1e-5, "yes"), "final_run"),
    ]:
        with pytest.raises(ParameterError, match=fragment):
            call()


def test_bad_delta_is_refused() -> None:
    with pytest.raises(ParameterError, match="delta"):
        whole_search_epsilon([(1.0, 0.1, 10)], 2.0)


def test_register_without_opacus_says_what_to_install() -> None:
    try:
        import opacus as _  # noqa: F401
    except ImportError:
        with pytest.raises(SymselError, match="symsel\\[opacus\\]"):
            opacus.register(n_trials=20)
    else:  # pragma: no cover - the Opacus environment tests registration itself (tests_opacus/)
        pytest.skip("Opacus is installed")


def test_importing_the_module_imports_neither_torch_nor_opacus() -> None:
    code = ("import sys, symsel, symsel.apps.opacus as o; o.make_accountant_class(n_trials=2)(); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'opacus')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
