"""Applications built on the bounds: planning (:mod:`.plan`), hyperparameter tuning that changes each
candidate's privacy (:mod:`.tuning`, Koskela et al. §6.2), tuning Generalized PTR (:mod:`.ptr`), grids of
bounds (:mod:`.sweep`), a dp-accounting accountant (:mod:`.accounting`; the PLD export is
:mod:`symsel.profiles.export`), Optuna (:mod:`.hpo`), OpenDP (:mod:`.opendp`) and Opacus (:mod:`.opacus`).
``symsel.plan`` and the like are short names for these modules.
"""

_MODULES = ("accounting", "hpo", "opacus", "opendp", "plan", "ptr", "sweep", "tuning")


def __getattr__(name: str) -> object:
    if name in _MODULES:  # ``symsel.apps.plan`` after a bare ``import symsel``
        import importlib

        return importlib.import_module(f"symsel.apps.{name}")
    raise AttributeError(f"module 'symsel.apps' has no attribute {name!r}")
