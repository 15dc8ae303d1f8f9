"""symsel reaches dp-accounting through its public API only: no underscore attribute of a dp-accounting object or
module is read or written anywhere in ``symsel/`` (checked on the syntax tree), and the PLD paths run on
dp-accounting objects wrapped in a proxy that refuses every underscore attribute, with the numbers of the unwrapped
objects, never below dp-accounting's own."""

from __future__ import annotations

import ast
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant, privacy_loss_distribution

from symsel.profiles import PldProfile
from symsel.profiles.dpaccounting import HeldPld, arrays_from_queries, pld_loss_pairs, pld_suffix_tables

PACKAGE = Path(__file__).resolve().parents[2] / "symsel"

#: the private attributes of dp-accounting's PLD objects, pmfs, accountants and privacy losses that symsel once read
#: or wrote, and dp-accounting's private module functions it once called.
PRIVATE_NAMES = {
    "_pld", "_ledger", "_pmf_remove", "_pmf_add", "_symmetric", "_probs", "_lower_loss", "_discretization",
    "_infinity_mass", "_pessimistic_estimate", "_standard_deviation", "_orders", "_rdp",
    "_create_pld_pmf_from_monotone_privacy_loss", "_pld_for_subsampled_mechanism", "_compute_rdp_repeat_and_select",
    "_get_delta_for_epsilon_vectorized", "_truncate_tails",
}


def hockey_stick(pair: Any, eps: np.ndarray) -> np.ndarray:
    """``a(∞) + Σ_{a/b > e^ε} (a − e^ε b)``: the pair's hockey-stick divergence, summed with ``math.fsum``."""
    out = []
    for e in np.asarray(eps, dtype=float).tolist():
        keep = pair.a > math.exp(e) * pair.b
        out.append(math.fsum([pair.a_infinity, *(pair.a[keep] - math.exp(e) * pair.b[keep]).tolist()]))
    return np.asarray(out)


def _violations(tree: ast.AST) -> list[tuple[int, str]]:
    """Attribute reads and writes of :data:`PRIVATE_NAMES` on anything but ``self``/``cls``, the same names as the
    string argument of ``getattr``/``hasattr``/``setattr``, and ``from dp_accounting... import _name``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in PRIVATE_NAMES:
            if not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in (
                "getattr", "hasattr", "setattr", "delattr"):
            names = [a.value for a in node.args[1:2] if isinstance(a, ast.Constant)]
            if names and names[0] in PRIVATE_NAMES:
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dp_accounting"):
            found += [(node.lineno, alias.name) for alias in node.names if alias.name.startswith("_")]
    return found


def test_the_checker_finds_private_access() -> None:
    """The checker itself: each way of reaching a private attribute is found, ``self._probs`` is not."""
    source = ("a = acc._pld\nacc._pld = b\nx = getattr(pld, '_pmf_remove', None)\nself._probs = 1\n"
              "from dp_accounting.pld.privacy_loss_distribution import _pld_for_subsampled_mechanism\n"
              "y = module._create_pld_pmf_from_monotone_privacy_loss(loss)\n")
    assert sorted(line for line, _ in _violations(ast.parse(source))) == [1, 2, 3, 5, 6]


def test_symsel_reads_no_private_attribute_of_dp_accounting() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        hits = _violations(ast.parse(path.read_text(encoding="utf-8")))
        if hits:
            found[str(path.relative_to(PACKAGE.parent))] = hits
    assert found == {}


class PublicOnly:
    """A proxy of a dp-accounting object that exposes only its public attributes (an underscore name raises
    ``AttributeError``, as it would on a release that renamed it); what its methods return is wrapped too."""

    def __init__(self, target: Any):
        object.__setattr__(self, "_target", target)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"private attribute {name!r} of dp-accounting asked for")
        value = getattr(object.__getattribute__(self, "_target"), name)
        if callable(value):
            return lambda *args, **kwargs: _wrap(value(*args, **kwargs))
        return _wrap(value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"attribute {name!r} of dp-accounting written")


def _wrap(value: Any) -> Any:
    module = type(value).__module__ or ""
    return PublicOnly(value) if module.startswith("dp_accounting") else value


EVENT = dp_event.SelfComposedDpEvent(dp_event.PoissonSampledDpEvent(0.2, dp_event.LaplaceDpEvent(1.0)), 5)
EPS = np.linspace(-1.0, 3.0, 401)
DELTAS = (0.3, 1e-2, 1e-4, 1e-6, 1e-9, 1e-12)


def _profiles(wrap: bool) -> PldProfile:
    profile = PldProfile(EVENT)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(EVENT)
    profile.__dict__["accountant"] = PublicOnly(accountant) if wrap else accountant  # the cached_property's value
    return profile


def test_a_pld_profile_on_a_public_only_accountant_gives_the_same_safe_numbers() -> None:
    """δ on many ε (arrays rebuilt from public queries), ε(δ) (dp-accounting's call, then the tables) and the
    dominating pairs: the same on the proxy as on the accountant itself, and never below dp-accounting's own δ
    and ε (its PLD, queried directly)."""
    wrapped, plain = _profiles(True), _profiles(False)
    reference = pld_privacy_accountant.PLDAccountant()
    reference.compose(EVENT)
    exact = np.array([float(reference.get_delta(float(e))) for e in EPS])
    got = wrapped.delta(EPS)
    assert np.array_equal(got, plain.delta(EPS))
    assert np.all(got >= np.clip(exact, 0, 1)) and np.max(got - exact) < 1e-9
    for delta in DELTAS * 2:  # the later queries come from the tables
        eps = wrapped.epsilon(delta)
        assert eps == plain.epsilon(delta)
        assert eps >= reference.get_epsilon(delta) and eps <= reference.get_epsilon(delta) + 1e-4 + 1e-9
    pairs, plain_pairs = wrapped.loss_pairs(), plain.loss_pairs()
    assert len(pairs) == len(plain_pairs) == 1
    sample = EPS[::20]
    pair_delta = np.asarray(hockey_stick(pairs[0], sample), dtype=float)
    assert np.array_equal(pair_delta, np.asarray(hockey_stick(plain_pairs[0], sample), dtype=float))
    assert np.all(pair_delta >= exact[::20] * (1 - 1e-9) - 1e-15)  # dominates both directions of the PLD


def test_a_held_pld_known_only_publicly_gives_safe_tables_and_pairs() -> None:
    """A PLD object handed in (as a nested accountant's or a composition's): its arrays from public queries on its
    loss grid give δ above the PLD's own at every ε (between grid points too), on the proxy and off it alike."""
    pld = privacy_loss_distribution.from_laplace_mechanism(1.0, value_discretization_interval=1e-3,
                                                           sampling_prob=0.3).self_compose(4)
    eps = np.linspace(-2.0, 5.0, 1401) + 3.7e-4  # off the grid
    exact = np.asarray([pld.get_delta_for_epsilon(float(e)) for e in eps], dtype=float)
    from symsel.profiles.dpaccounting import suffix_tables_delta

    values = []
    for held in (HeldPld(PublicOnly(pld)), PublicOnly(pld), pld):
        tables = pld_suffix_tables(held, 1e-3)
        assert tables is not None
        values.append(suffix_tables_delta(tables, eps))
        (pair,) = pld_loss_pairs(held, "held", 1e-3)
        assert np.all(hockey_stick(pair, eps[::50]) >= exact[::50] * (1 - 1e-9) - 1e-15)
    assert all(np.array_equal(values[0], v) for v in values)
    assert np.all(values[0] >= np.clip(exact, 0, 1)) and np.max(values[0] - exact) < 1e-6


def test_arrays_from_queries_refuses_a_pld_without_a_finite_top() -> None:
    assert pld_suffix_tables(PublicOnly(privacy_loss_distribution.from_gaussian_mechanism(2.0))) is None  # no grid
    nonprivate = pld_privacy_accountant.PLDAccountant()
    nonprivate.compose(dp_event.NonPrivateDpEvent())
    assert arrays_from_queries(PublicOnly(nonprivate), 1e-4) is None


@pytest.mark.parametrize("q", [1.0, 0.05])
def test_dpsgd_paths_hold_arrays_of_their_own(q: float) -> None:
    """A DP-SGD profile answers from symsel's own arrays (no query of dp-accounting's fields): its δ and ε equal
    those of ``PLDAccountant`` for the same event to the bit."""
    from symsel.profiles import DpsgdProfile

    profile = DpsgdProfile(q, 1.5, 40, value_discretization_interval=1e-3)
    assert isinstance(profile.accountant, HeldPld) and profile.accountant.arrays is not None
    reference = pld_privacy_accountant.PLDAccountant(value_discretization_interval=1e-3)
    reference.compose(profile.event)
    eps = np.linspace(-1.0, 6.0, 50)
    assert np.array_equal(np.asarray(profile.accountant.get_delta(eps)), np.asarray(reference.get_delta(eps)))
    for delta in DELTAS:
        assert profile.accountant.get_epsilon(delta) == reference.get_epsilon(delta)
    assert math.isfinite(profile.epsilon(1e-6))
