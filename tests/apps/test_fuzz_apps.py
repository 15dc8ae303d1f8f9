"""Hostile input for the commands and APIs added beside the CLI fuzz test: ``symsel tune``,
``symsel report --out``, ``SelectionAccountant``, ``symsel.apps.hpo.tune`` and ``symsel.apps.opendp.make_selection``.

Every call ends in an answer or in symsel's own error: from the CLI exit 2 with one line on stderr (and one JSON
error object on stdout with ``--json``), from Python a ``ValueError`` subclass (``SymselError``) naming the
parameter, or dp-accounting's ``UnsupportedEventError`` for an event it cannot account. Never a traceback, an
``internal error``, a NaN, or a file written where it should not be.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from symsel.cli import main
from symsel.errors import ParameterError, SymselError

NUMBERS = st.one_of(
    st.sampled_from(["0", "-1", "1e-320", "1e-300", "1e300", "inf", "-inf", "nan", "abc", "", "1,2", "0x10", "1e6"]),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)
LAWS = st.sampled_from(["geometric(mean=10)", "geometric(mean=1e6)", "logarithmic(mean=5)", "point(k=40)",
                        "tnb(eta=-2, mean=3)", "pgf(expr='z**(9**9**9)')", "geometric(mean=nan)", "bogus(k=1)",
                        "__import__('os')", "(" * 300, "geometric(mean=10" + ")" * 300])
FAST = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _one_line_or_answer(result) -> None:
    assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
    assert "internal error" not in result.output and "Traceback" not in result.output
    if result.exit_code == 2:
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("symsel: error: "), result.stderr
        error = json.loads(result.stdout)
        assert error["exit_status"] == 2 and error["error"] in lines[0]
    else:
        payload = json.loads(result.stdout)
        assert "nan" not in json.dumps(payload).lower()


# ------------------------------------------------------------------------------------------------ symsel tune
@FAST
@given(law=LAWS, q=NUMBERS, sigma=NUMBERS, epsilon_q=NUMBERS, delta=NUMBERS)
def test_tune_command_never_escapes(law: str, q: str, sigma: str, epsilon_q: str, delta: str) -> None:
    args = ["tune", "--dist", law, "--q", q, "--sigma", sigma, "--epsilon-q", epsilon_q, "--delta", delta, "--json"]
    _one_line_or_answer(CliRunner().invoke(main, args))


@pytest.mark.parametrize("args", [
    ("--q", "1e-300", "--sigma", "1e300"),  # an OverflowError inside dp-accounting before the sigma range
    ("--q", "1e-310", "--sigma", "1"),  # a ZeroDivision/'a must be greater than b' before the q range
    ("--q", "0.5", "--sigma", "1e-300"),
    ("--q", "0.01", "--sigma", "1", "--threshold", "1,2,3"),
    ("--q", "0.01", "--sigma", "1", "--threshold", "nan,0.1"),
    ("--q", "0.01", "--sigma", "1", "--threshold", "1,-1"),
])
def test_tune_command_edges_are_one_line_errors(args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, ["tune", "--dist", "geometric(mean=10)", *args, "--json"])
    assert result.exit_code == 2, result.output
    _one_line_or_answer(result)


# ------------------------------------------------------------------------------------------------ report --out
def test_report_refuses_an_out_that_is_a_file_before_computing(tmp_path: Path) -> None:
    """--out names an existing file, or a folder under a file: refused at once, the file untouched."""
    target = tmp_path / "taken"
    target.write_text("mine\n")
    for out in (target, target / "sub"):
        result = CliRunner().invoke(main, ["report", "--quick", "--out", str(out), "--no-progress", "--json"])
        assert result.exit_code == 2, result.output
        _one_line_or_answer(result)
        assert "--out" in result.stderr or "out" in json.loads(result.stdout)["error"]
    assert target.read_text() == "mine\n"


def test_report_refuses_a_nul_in_out() -> None:
    result = CliRunner().invoke(main, ["report", "--quick", "--out", "bad\x00name", "--no-progress", "--json"])
    assert result.exit_code == 2, result.output
    _one_line_or_answer(result)


# ------------------------------------------------------------------------------------------ SelectionAccountant
HOSTILE_VALUES = [math.nan, -1.0, math.inf, "1e-6", None, [1e-6], 2.0, -math.inf, True]


@pytest.mark.parametrize("value", HOSTILE_VALUES, ids=repr)
def test_accountant_targets_are_checked(value) -> None:
    from dp_accounting import dp_event

    from symsel.apps.accounting import SelectionAccountant

    accountant = SelectionAccountant().compose(dp_event.GaussianDpEvent(4.0))
    for call, name in ((accountant.get_epsilon, "delta"), (accountant.get_delta, "epsilon")):
        try:
            out = call(value)
        except SymselError as error:
            assert isinstance(error, ValueError) and name in str(error)
        else:  # dp-accounting's own reading of a boundary value (delta 2 -> epsilon 0, epsilon inf -> delta(inf))
            assert isinstance(out, float) and not math.isnan(out) and out >= 0


@pytest.mark.parametrize("kwargs", [
    {"value_discretization_interval": 0.0}, {"value_discretization_interval": math.nan},
    {"method": "exact"}, {"method": None}, {"tolerance": -1.0}, {"tolerance": math.inf}, {"export_points": 2},
    {"export_points": 1.5}, {"neighboring_relation": "add_remove"},
], ids=lambda k: repr(k))
def test_accountant_options_are_checked(kwargs) -> None:
    from symsel.apps.accounting import SelectionAccountant

    name = next(iter(kwargs))
    with pytest.raises(SymselError, match=name):
        SelectionAccountant(**kwargs)


@pytest.mark.parametrize("law", ["geometric(mean=nan)", "bogus(k=1)", "pgf(expr='2*z')", 12, None, "(" * 400])
def test_accountant_refuses_a_selection_of_a_bad_law(law) -> None:
    """dp-accounting's contract: an event an accountant cannot account raises its UnsupportedEventError, which
    names the event and carries symsel's one-line reason."""
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import UnsupportedEventError

    from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent

    event = SelectionDpEvent(dp_event.GaussianDpEvent(4.0), law)
    assert not SelectionAccountant().supports(event)
    with pytest.raises(UnsupportedEventError, match=r"SelectionDpEvent.*(spec|parameter)"):
        SelectionAccountant().compose(event)


def test_accountant_names_an_event_it_cannot_account() -> None:
    from dp_accounting import dp_event
    from dp_accounting.privacy_accountant import UnsupportedEventError

    from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent

    unsupported = dp_event.UnsupportedDpEvent()
    for event in (unsupported, SelectionDpEvent(unsupported, "geometric(mean=10)")):
        accountant = SelectionAccountant()
        assert not accountant.supports(event)
        with pytest.raises(UnsupportedEventError):
            accountant.compose(event)


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")  # dp-accounting's own, on noise 1e-300
@pytest.mark.parametrize("noise", [1e-300, 1e-8, 1e300])
def test_an_event_whose_pld_cannot_be_built_is_a_one_line_error_and_leaves_the_accountant_as_it_was(noise) -> None:
    """dp-accounting fails to build the PLD of a Gaussian with an absurd noise (an overflow, or an array too large):
    ``compose`` raises a ParameterError naming the event, and the accountant answers as before it was called, with
    the same ledger."""
    from dp_accounting import dp_event

    from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent

    first = SelectionDpEvent(dp_event.GaussianDpEvent(4.0), "point(k=3)")
    # the selection and its final run: held as the pipeline, so the bad event that follows is composed as a PLD
    accountant = SelectionAccountant(value_discretization_interval=1e-3).compose(first).compose(
        dp_event.GaussianDpEvent(4.0))
    before = (accountant.get_epsilon(1e-6), accountant.ledger, len(accountant.selection_bounds))
    for bad in (dp_event.GaussianDpEvent(noise), dp_event.PoissonSampledDpEvent(0.5, dp_event.GaussianDpEvent(noise)),
                dp_event.ComposedDpEvent([dp_event.LaplaceDpEvent(1.0), dp_event.GaussianDpEvent(noise)])):
        with pytest.raises(ParameterError, match=r"parameter event=.*(PLD dp-accounting can build|PLD fits in)") \
                as error:
            accountant.compose(bad)
        assert "\n" not in str(error.value)
        assert (accountant.get_epsilon(1e-6), accountant.ledger, len(accountant.selection_bounds)) == before


def test_a_gaussian_event_too_small_for_seconds_is_refused_before_its_pld_is_built_and_a_larger_one_is_not() -> None:
    """A noise whose PLD would take minutes (0.01 at the default grid: 76 CPU-s) is refused at once, by a one-line
    error naming the event and the grid, before anything is built, and the accountant is left as it was; a noise
    just above the limit is accounted as ``PLDAccountant`` accounts it (same ε). On a grid of 1e-3 the limit of
    5e6 estimated points falls between noise 0.009 (7.1e6) and 0.02 (1.7e6)."""
    from dp_accounting import dp_event
    from dp_accounting.pld import pld_privacy_accountant

    from symsel.apps import accounting
    from symsel.apps.accounting import SelectionAccountant

    accountant = SelectionAccountant(value_discretization_interval=1e-3).compose(dp_event.LaplaceDpEvent(1.0))
    before = (accountant.get_epsilon(1e-6), accountant.ledger)
    for bad in (dp_event.GaussianDpEvent(0.009), dp_event.PoissonSampledDpEvent(0.5, dp_event.GaussianDpEvent(0.009)),
                dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(0.02), 10)):
        with pytest.raises(ParameterError, match=r"parameter event=.*PLD fits in 5e\+06 points on the loss grid "
                           r"0\.001 \(this one needs about [0-9.]+e\+0[67]") as error:
            accountant.compose(bad)
        assert "\n" not in str(error.value)
        assert (accountant.get_epsilon(1e-6), accountant.ledger) == before
    assert accounting.MAX_GAUSSIAN_PLD_POINTS == 5e6
    good = dp_event.GaussianDpEvent(0.02)
    ours = SelectionAccountant(value_discretization_interval=1e-3).compose(good)
    theirs = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    theirs.compose(good)
    assert ours.get_epsilon(1e-6) == theirs.get_epsilon(1e-6)


# ------------------------------------------------------------------------------------------------ hpo.tune
@pytest.mark.parametrize("kwargs", [
    {"law": "geometric(mean=nan)"}, {"law": 3}, {"law": "point(k=-1)"}, {"base": "gaussian(sigma=-1)"},
    {"base": None}, {"delta": math.nan}, {"delta": 2.0}, {"delta": "1e-6"}, {"method": "exact"},
    {"direction": "sideways"}, {"seed": -1}, {"seed": 1.5}, {"search_space": {"x": "not a distribution"}},
], ids=lambda k: repr(k))
def test_hpo_tune_checks_its_arguments(kwargs) -> None:
    from symsel.apps.hpo import tune

    arguments = {"objective": lambda trial: trial.suggest_float("x", 0.0, 1.0), "law": "point(k=2)",
                 "base": "gaussian(sigma=4)", "delta": 1e-6, "seed": 0, **kwargs}
    with pytest.raises(SymselError, match=rf"{next(iter(kwargs))}|spec|parameter"):
        tune(**arguments)


def test_hpo_tune_refuses_a_non_callable_objective() -> None:
    from symsel.apps.hpo import tune

    with pytest.raises(SymselError, match="objective"):
        tune("not callable", "point(k=2)", "gaussian(sigma=4)", 1e-6, seed=0)


# ------------------------------------------------------------------------------------- opendp.make_selection
@pytest.mark.parametrize("kwargs", [
    {"law": "geometric(mean=nan)"}, {"law": 3}, {"direction": "up"}, {"method": "exact"}, {"delta": -1.0},
    {"delta": math.nan}, {"profile_points": 1}, {"seed": "x"}, {"base_profile": "gaussian(sigma=0)"},
], ids=lambda k: repr(k))
def test_opendp_make_selection_checks_its_arguments(kwargs) -> None:
    import opendp.prelude as dp

    from symsel.apps.opendp import make_selection

    dp.enable_features("contrib")
    space = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    measurement = space >> dp.m.then_laplace(scale=1.0)
    arguments = {"measurement": measurement, "law": "geometric(mean=10)", "score": float, **kwargs}
    with pytest.raises(SymselError, match=rf"{next(iter(kwargs))}|spec|parameter"):
        make_selection(**arguments)


def test_opendp_make_selection_refuses_what_is_not_a_measurement() -> None:
    from symsel.apps.opendp import make_selection

    for thing in (None, "laplace", 3, lambda x: x):
        with pytest.raises(SymselError, match="measurement"):
            make_selection(thing, "geometric(mean=10)")
