"""symsel.apps.hpo.tune: the best of K ~ law Optuna trials with the ε of the whole search. Every ε is checked against
symsel.bound computed here; K against the law's own sampler and its moments; the trials by counting objective calls."""

from __future__ import annotations

import ast
import math
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import symsel
from symsel.apps.hpo import OptunaMissingError, TuningResult, tune
from symsel.errors import ParameterError, SymselError

BASE = "gaussian(sigma=4)"
DELTA = 1e-6


@pytest.fixture
def optuna() -> Iterator[Any]:
    module = pytest.importorskip("optuna")
    level = module.logging.get_verbosity()
    module.logging.set_verbosity(module.logging.WARNING)
    yield module
    module.logging.set_verbosity(level)


class Quadratic:
    """``-(x - 0.3)^2`` (or ``+`` for minimizing) in one float parameter; records every call."""

    def __init__(self, sign: float = -1.0, digits: int | None = None):
        self.sign = sign
        self.digits = digits
        self.calls: list[tuple[float, float]] = []

    def __call__(self, trial: Any) -> float:
        x = trial.suggest_float("x", -2.0, 2.0)
        value = self.sign * (x - 0.3) ** 2
        if self.digits is not None:
            value = round(value, self.digits)
        self.calls.append((x, value))
        return value


def _first_seed(law: Any, k: int) -> int:
    return next(seed for seed in range(1000) if int(law.rvs(1, rng=np.random.default_rng(seed))[0]) == k)


# ----------------------------------------------------------------- ε is the bound's


@pytest.mark.parametrize("method", ["best", "rdp"])
def test_epsilon_is_the_bound_of_the_whole_search(optuna: Any, method: str) -> None:
    objective = Quadratic()
    result = tune(objective, law="poisson(mean=3)", base=BASE, delta=DELTA, seed=5, method=method)
    # computed independently: fresh objects, so no cache is shared with tune
    expected = symsel.bound(symsel.parse_distribution("poisson(mean=3)"), symsel.parse_profile(BASE), method)
    assert result.epsilon == expected.epsilon(DELTA)
    assert result.certificate == dict(expected.certificate)
    assert type(result.certificate) is dict
    assert (result.method, result.delta) == (method, DELTA)
    assert result.law == "poisson(mean=3)"
    assert result.base == symsel.parse_profile(BASE).spec
    assert isinstance(result, TuningResult)
    assert f"epsilon ({method}) covers releasing the best trial's params and value only" in result.note


def test_the_methods_give_different_epsilons_so_the_check_above_discriminates() -> None:
    law, base = symsel.parse_distribution("poisson(mean=3)"), symsel.parse_profile(BASE)
    assert symsel.bound(law, base, "best").epsilon(DELTA) < symsel.bound(law, base, "rdp").epsilon(DELTA) - 0.05


def test_epsilon_does_not_depend_on_the_k_drawn(optuna: Any) -> None:
    law, base = symsel.binomial(2, 0.5), symsel.parse_profile(BASE)
    ks, epsilons = set(), set()
    for k in (0, 1, 2):
        result = tune(Quadratic(), law=law, base=base, delta=DELTA, seed=_first_seed(law, k), method="envelope")
        ks.add(result.k)
        epsilons.add(result.epsilon)
    assert ks == {0, 1, 2}
    assert epsilons == {symsel.bound(symsel.binomial(2, 0.5), base, "envelope").epsilon(DELTA)}


# ----------------------------------------------------------------- K and the trials


def test_a_point_law_runs_exactly_k_trials(optuna: Any) -> None:
    law, base = symsel.parse_distribution("point(k=7)"), symsel.parse_profile(BASE)
    for seed in (0, 1, 2):
        objective = Quadratic()
        result = tune(objective, law=law, base=base, delta=DELTA, seed=seed, method="composition")
        assert result.k == 7
        assert len(objective.calls) == 7
        assert len(result.study.trials) == 7
        assert len({x for x, _ in objective.calls}) == 7  # seven fresh configurations


def test_k_is_reproducible_and_follows_the_law(optuna: Any) -> None:
    law, base = symsel.parse_distribution("geometric(mean=3)"), symsel.parse_profile(BASE)
    n = 300
    ks = []
    for seed in range(n):
        objective = Quadratic()
        result = tune(objective, law=law, base=base, delta=DELTA, seed=seed, method="rdp")
        assert result.k == int(law.rvs(1, rng=np.random.default_rng(seed))[0])
        assert len(objective.calls) == result.k
        ks.append(result.k)
    draws = np.array(ks)
    assert draws.min() >= 1  # geometric(mean=3) has no mass at 0
    assert abs(draws.mean() - 3.0) <= 4 * math.sqrt(law.variance / n)
    p1 = float(law.pmf(1))  # 1/3: a point mass at 3 would also have mean 3
    assert abs(np.mean(draws == 1) - p1) <= 4 * math.sqrt(p1 * (1 - p1) / n)


def test_a_seed_reproduces_the_whole_search(optuna: Any) -> None:
    law, base = symsel.parse_distribution("geometric(mean=3)"), symsel.parse_profile(BASE)
    runs = []
    for _ in range(2):
        objective = Quadratic()
        result = tune(objective, law=law, base=base, delta=DELTA, seed=11, method="rdp")
        runs.append((result.k, objective.calls, result.best_params))
    assert runs[0] == runs[1]
    other = Quadratic()
    tune(other, law=law, base=base, delta=DELTA, seed=12, method="rdp")
    assert other.calls[0] != runs[0][1][0]


@pytest.mark.parametrize(("direction", "sign", "pick"), [("maximize", -1.0, max), ("minimize", 1.0, min)])
def test_the_best_trial_is_the_argmax_or_argmin(optuna: Any, direction: str, sign: float, pick: Callable) -> None:
    law, base = symsel.point(20), symsel.parse_profile(BASE)
    objective = Quadratic(sign)
    result = tune(objective, law=law, base=base, delta=DELTA, seed=4, method="composition", direction=direction)
    values = [value for _, value in objective.calls]
    index = values.index(pick(values))
    assert result.best_value == values[index]
    assert result.best_params == {"x": objective.calls[index][0]}
    assert result.best_trial.number == index
    assert result.released == {"params": result.best_params, "value": result.best_value, "epsilon": result.epsilon,
                               "delta": DELTA}
    assert values.count(result.best_value) == 1 and len(set(values)) == 20  # a real choice among 20 values


def test_ties_go_to_the_first_trial(optuna: Any) -> None:
    objective = Quadratic(digits=0)  # -(x - 0.3)^2 rounded: many trials share the best value
    result = tune(objective, law=symsel.point(20), base=symsel.parse_profile(BASE), delta=DELTA, seed=0,
                  method="composition")
    values = [value for _, value in objective.calls]
    assert values.count(max(values)) > 1
    assert result.best_trial.number == values.index(max(values))


def test_failed_and_pruned_trials_count_as_runs_but_not_as_the_best(optuna: Any) -> None:
    calls = []

    def objective(trial: Any) -> float:
        x = trial.suggest_float("x", -2.0, 2.0)
        calls.append(x)
        if len(calls) % 3 == 1:
            return None  # a non-number fails the trial (NaN and inf are refused: test_app_limits.py)
        if len(calls) % 3 == 2:
            raise optuna.TrialPruned()
        return -((x - 0.3) ** 2)

    with pytest.warns(UserWarning, match="None"):
        result = tune(objective, law=symsel.point(9), base=symsel.parse_profile(BASE), delta=DELTA, seed=1,
                      method="composition")
    assert result.k == 9 and len(calls) == 9
    completed = [(x, -((x - 0.3) ** 2)) for i, x in enumerate(calls) if i % 3 == 2]
    assert result.best_params == {"x": max(completed, key=lambda c: c[1])[0]}
    assert "6 of 9 trials failed or were pruned" in result.note


def test_an_exception_in_the_objective_is_raised(optuna: Any) -> None:
    def objective(trial: Any) -> float:
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        tune(objective, law=symsel.point(3), base=symsel.parse_profile(BASE), delta=DELTA, seed=0,
             method="composition")


def test_a_search_space_is_drawn_before_the_objective(optuna: Any) -> None:
    seen = []

    def objective(trial: Any) -> float:
        seen.append(dict(trial.params))
        return -((trial.params["x"] - 0.3) ** 2)

    space = {"x": optuna.distributions.FloatDistribution(-2.0, 2.0), "n": optuna.distributions.IntDistribution(1, 4)}
    result = tune(objective, law=symsel.point(5), base=symsel.parse_profile(BASE), delta=DELTA, seed=0,
                  method="composition", search_space=space)
    assert len(seen) == 5
    assert all(set(p) == {"x", "n"} and -2 <= p["x"] <= 2 and p["n"] in {1, 2, 3, 4} for p in seen)
    assert result.best_params == max(seen, key=lambda p: -((p["x"] - 0.3) ** 2))


# ----------------------------------------------------------------- K = 0


def test_k_zero_runs_and_releases_no_trial(optuna: Any) -> None:
    law = symsel.parse_distribution("binomial(n=2, p=0.5)")
    seed = _first_seed(law, 0)
    objective = Quadratic()
    result = tune(objective, law="binomial(n=2, p=0.5)", base=BASE, delta=DELTA, seed=seed, method="envelope")
    assert result.k == 0
    assert objective.calls == []
    assert result.study.trials == []
    assert (result.best_trial, result.best_value, result.best_params) == (None, None, None)
    assert "K = 0: no trial ran and none is released" in result.note
    assert result.epsilon == symsel.bound(law, symsel.parse_profile(BASE), "envelope").epsilon(DELTA)
    assert result.epsilon > 0


# ----------------------------------------------------------------- samplers


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
@pytest.mark.parametrize("make", [
    lambda o: o.samplers.TPESampler(seed=0),
    lambda o: o.samplers.GridSampler({"x": [-1.0, 0.0, 1.0]}, seed=0),
    lambda o: o.samplers.QMCSampler(seed=0),
])
@pytest.mark.parametrize("method", ["best", "envelope", "rdp"])
def test_a_non_iid_sampler_is_refused_without_composition(optuna: Any, make: Callable, method: str) -> None:
    sampler = make(optuna)
    objective = Quadratic()
    with pytest.raises(ParameterError) as info:
        tune(objective, law="point(k=3)", base=BASE, delta=DELTA, sampler=sampler, method=method)
    message = str(info.value)
    assert info.value.name == "sampler"
    assert "\n" not in message
    assert type(sampler).__name__ in message and "i.i.d." in message and "composition" in message
    assert objective.calls == []


def test_an_adaptive_sampler_with_composition_is_run_and_says_so(optuna: Any) -> None:
    objective = Quadratic()
    result = tune(objective, law="point(k=6)", base=BASE, delta=DELTA, sampler=optuna.samplers.TPESampler(seed=0),
                  method="composition")
    law, base = symsel.parse_distribution("point(k=6)"), symsel.parse_profile(BASE)
    composition = symsel.bound(law, base, "composition").epsilon(DELTA)
    assert result.epsilon == composition
    assert result.epsilon != symsel.bound(law, base, "rdp").epsilon(DELTA)
    assert result.method == "composition" and result.sampler == "TPESampler"
    assert "composition used because TPESampler does not draw configurations i.i.d." in result.note
    assert "docs/composition.md" in result.note
    assert result.k == 6 and len(objective.calls) == 6


def test_a_given_random_sampler_is_accepted(optuna: Any) -> None:
    objective = Quadratic()
    result = tune(objective, law=symsel.point(4), base=symsel.parse_profile(BASE), delta=DELTA,
                  sampler=optuna.samplers.RandomSampler(seed=3), method="composition")
    assert result.sampler == "RandomSampler" and len(objective.calls) == 4
    assert "configurations drawn i.i.d. by RandomSampler" in result.note
    assert "epsilon (composition) covers the whole transcript: K and every trial" in result.note


def test_a_random_sampler_subclass_is_not_trusted(optuna: Any) -> None:
    class Sneaky(optuna.samplers.RandomSampler):
        pass

    with pytest.raises(ParameterError, match="Sneaky"):
        tune(Quadratic(), law="point(k=3)", base=BASE, delta=DELTA, sampler=Sneaky(seed=0))


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize(("kwargs", "name", "allowed"), [
    ({"delta": 0.0}, "delta", "(0.0, 1.0)"),
    ({"delta": 1.0}, "delta", "(0.0, 1.0)"),
    ({"delta": -1e-6}, "delta", "(0.0, 1.0)"),
    ({"delta": float("nan")}, "delta", "(0.0, 1.0)"),
    ({"delta": "1e-6"}, "delta", "(0.0, 1.0)"),
    ({"method": "fastest"}, "method", "'composition'"),
    ({"objective": 42}, "objective", "callable"),
    ({"direction": "max"}, "direction", "'maximize', 'minimize'"),
    ({"seed": -1}, "seed", "integer >= 0"),
    ({"seed": 1.5}, "seed", "integer >= 0"),
    ({"law": 7}, "law", "symsel.Distribution"),
    ({"base": 4.0}, "base", "Profile"),
    ({"search_space": {"x": (0, 1)}}, "search_space", "optuna.distributions"),
    ({"sampler": "random"}, "sampler", "optuna.samplers"),
])
def test_bad_input_names_the_parameter_value_and_range(optuna: Any, kwargs: dict, name: str, allowed: str) -> None:
    arguments = {"objective": Quadratic(), "law": "point(k=2)", "base": BASE, "delta": DELTA, **kwargs}
    with pytest.raises(ParameterError) as info:
        tune(**arguments)
    message = str(info.value)
    assert info.value.name == name
    assert message.startswith(f"tune: parameter {name}=")
    assert allowed in message
    assert "\n" not in message
    if name != "sampler":
        assert repr(kwargs[name]) in message or name in ("objective", "law", "base", "search_space")


def test_a_bad_law_spec_is_a_spec_error(optuna: Any) -> None:
    with pytest.raises(symsel.SpecError):
        tune(Quadratic(), law="geometric(mean=", base=BASE, delta=DELTA)


# ----------------------------------------------------------------- Optuna stays optional


def test_without_optuna_tune_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "optuna", None)  # `import optuna` now raises ImportError
    objective = Quadratic()
    with pytest.raises(OptunaMissingError) as info:
        tune(objective, law="point(k=2)", base=BASE, delta=DELTA)
    message = str(info.value)
    assert isinstance(info.value, SymselError) and isinstance(info.value, ImportError)
    assert "\n" not in message and "pip install" in message and "optuna" in message.lower()
    assert objective.calls == []


def _imports_optuna_on_import(tree: ast.AST) -> list[int]:
    """Lines of ``import optuna…`` / ``from optuna… import`` that run when the module is imported (not inside a
    function, not under ``if TYPE_CHECKING:``)."""
    found: list[int] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            return
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):  # never runs
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "optuna" for a in node.names):
            found.append(node.lineno)
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "optuna":
            found.append(node.lineno)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def test_no_symsel_module_imports_optuna_on_import() -> None:
    package = Path(symsel.__file__).parent
    modules = sorted(package.rglob("*.py"))
    assert package / "apps" / "hpo.py" in modules and len(modules) > 20
    offenders = {str(path.relative_to(package)): lines for path in modules
                 if (lines := _imports_optuna_on_import(ast.parse(path.read_text(encoding="utf-8"))))}
    assert offenders == {}
    # the scan sees imports that run on import, under any `if` but `if TYPE_CHECKING:`
    source = ("if X:\n    import optuna.samplers\nif TYPE_CHECKING:\n    import optuna\n"
              "def f():\n    from optuna import x")
    assert _imports_optuna_on_import(ast.parse(source)) == [2]


def test_symsel_imports_and_tune_says_how_to_install_optuna_in_a_fresh_interpreter() -> None:
    script = """
import sys
sys.modules["optuna"] = None
import symsel, symsel.apps.hpo
from symsel.apps.hpo import OptunaMissingError, tune
try:
    tune(lambda trial: 0.0, law="point(k=1)", base="gaussian(sigma=1)", delta=1e-6)
except OptunaMissingError as exc:
    print(exc)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "pip install" in done.stdout
