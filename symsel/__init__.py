"""symsel: symbolic-plus-numeric privacy accounting of private selection.

Private selection runs a differentially private base mechanism a random number ``K`` of times and
releases the best run. symsel holds the law of ``K`` as a SymPy probability generating function,
and turns it into certified bounds on the privacy profile of the selection (Koskela, Redberg and
Wang, ICML 2024, Theorem 4.1) next to the Renyi-DP route of Papernot and Steinke (ICLR 2022).

One import is enough::

    import symsel
    law = symsel.parse_distribution("geometric(mean=30)")
    base = symsel.parse_profile("gaussian(sigma=4)")
    symsel.bound(law, base).epsilon(1e-6)          # method "best"; see symsel.METHODS
    symsel.derive("poisson(mean=3)", "approx(eps=1, delta=1e-6)").markdown()   # a derivation, checked

``symsel.__version__`` is the installed version (the one in ``pyproject.toml``).
"""

from symsel import rendering as _rendering


def _display() -> _rendering.Renderer:
    """The display implementation (symsel/display.py, the floor above everything it displays), loaded on first use."""
    from symsel import display

    return display


_rendering.install(_display)

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (type checkers take it as True)

#: the installed distribution's version, read on first use (importlib.metadata costs ~50 ms): see ``_version``
__version__: str

__all__ = [
    "BEST_COMPONENTS",
    "METHODS",
    "Distribution",
    "NotApplicableError",
    "ParameterError",
    "Profile",
    "SelectionAccountant",
    "SelectionBound",
    "SelectionDpEvent",
    "SpecError",
    "SymselError",
    "beta_binomial",
    "binomial",
    "bound",
    "compose",
    "compound",
    "derive",
    "from_pgf",
    "from_pmf",
    "geometric",
    "get_example",
    "list_examples",
    "logarithmic",
    "lower_bound",
    "mixture",
    "negative_binomial",
    "parse_distribution",
    "parse_expression",
    "parse_profile",
    "point",
    "poisson",
    "tnb",
    "to_pld",
    "truncated",
    "two_point",
    "with_final_run",
]

if TYPE_CHECKING:  # what the names below are, for type checkers: at run time each is imported on first use
    from symsel import derive as derive
    from symsel.apps import accounting as accounting
    from symsel.apps import hpo as hpo
    from symsel.apps import opacus as opacus
    from symsel.apps import opendp as opendp
    from symsel.apps import plan as plan
    from symsel.apps import ptr as ptr
    from symsel.apps import sweep as sweep
    from symsel.apps import tuning as tuning
    from symsel.apps.accounting import SelectionAccountant, SelectionDpEvent
    from symsel.bounds import BEST_COMPONENTS, METHODS, SelectionBound, bound
    from symsel.bounds.pipeline import with_final_run
    from symsel.distributions import (
        Distribution,
        beta_binomial,
        binomial,
        compound,
        from_pgf,
        from_pmf,
        geometric,
        logarithmic,
        mixture,
        negative_binomial,
        point,
        poisson,
        tnb,
        truncated,
        two_point,
    )
    from symsel.errors import NotApplicableError, ParameterError, SpecError, SymselError
    from symsel.evidence.examples import get_example, list_examples
    from symsel.evidence.lower import lower_bound
    from symsel.profiles import Profile
    from symsel.profiles import export as export
    from symsel.profiles.export import compose, to_pld
    from symsel.spec import parse_distribution, parse_expression, parse_profile

#: every public name, imported on first use: ``import symsel`` (and so ``symsel --help``) stays cheap, and SymPy,
#: SciPy and dp-accounting load only when a law, a profile or a bound is first asked for.
_LAZY = {
    **dict.fromkeys(["BEST_COMPONENTS", "METHODS", "SelectionBound", "bound"], "symsel.bounds"),
    **dict.fromkeys(
        ["Distribution", "beta_binomial", "binomial", "compound", "from_pgf", "from_pmf", "geometric", "logarithmic",
         "mixture", "negative_binomial", "point", "poisson", "tnb", "truncated", "two_point"],
        "symsel.distributions",
    ),
    **dict.fromkeys(["NotApplicableError", "ParameterError", "SpecError", "SymselError"], "symsel.errors"),
    "Profile": "symsel.profiles",
    **dict.fromkeys(["parse_distribution", "parse_expression", "parse_profile"], "symsel.spec"),
    "lower_bound": "symsel.evidence.lower",
    "with_final_run": "symsel.bounds.pipeline",
    **dict.fromkeys(["SelectionAccountant", "SelectionDpEvent"], "symsel.apps.accounting"),
    **dict.fromkeys(["to_pld", "compose"], "symsel.profiles.export"),
    **dict.fromkeys(["get_example", "list_examples"], "symsel.evidence.examples"),
}

#: subpackages, and the application modules under the short names the README uses (``symsel.plan.max_mean`` is
#: ``symsel.apps.plan.max_mean``), all imported on first use.
_SUBMODULES = {
    **{name: f"symsel.{name}"
       for name in ("apps", "bounds", "distributions", "evidence", "pairs", "profiles", "report")},
    **{name: f"symsel.apps.{name}"
       for name in ("accounting", "hpo", "opacus", "opendp", "plan", "ptr", "sweep", "tuning")},
    "export": "symsel.profiles.export",
}


def _version() -> str:
    """The version of the installed distribution ``symsel``; from a source tree that was never installed, the one
    in its ``pyproject.toml``; ``0+unknown`` when neither can be read."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("symsel")
    except PackageNotFoundError:
        import tomllib
        from pathlib import Path

        try:
            with (Path(__file__).resolve().parents[1] / "pyproject.toml").open("rb") as file:
                return str(tomllib.load(file)["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "0+unknown"


def __getattr__(name: str) -> object:
    if name == "__version__":
        value = globals()["__version__"] = _version()
        return value
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(_SUBMODULES[name])
    if name == "derive":  # a callable subpackage: symsel.derive(law, base) and symsel.derive.derive are one function
        import importlib

        return importlib.import_module("symsel.derive")
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'symsel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_SUBMODULES) | {"derive", "__version__"})
