"""Privacy profiles of base mechanisms, and the spec-family registry :data:`FAMILIES`.

A :class:`Profile` knows ``δ(ε)`` for every real ``ε``, its inverse ``ε(δ)``, the lower boundary of
the privacy region it implies, and (when known) its RDP curve. ``FAMILIES`` maps spec names to
constructors taking plain keyword arguments; the spec parser calls ``FAMILIES[name](**kwargs)``.
"""

from __future__ import annotations

from collections.abc import Callable

from symsel.profiles.analytic import GaussianProfile, LaplaceProfile, gdp
from symsel.profiles.base import Profile, delta_by_symmetry
from symsel.profiles.dpaccounting import DpsgdProfile, PldProfile
from symsel.profiles.finite import (
    ApproxDPProfile,
    FinitePairProfile,
    PairProfile,
    PointwiseProfile,
    RandomizedResponseProfile,
    pure,
)
from symsel.profiles.rdp import (
    DEFAULT_ORDERS,
    RdpProfile,
    rdp_gaussian,
    rdp_pure,
    rdp_subsampled_gaussian,
    zcdp,
)
from symsel.profiles.tabulated import TabulatedProfile

#: spec name → constructor (keyword arguments of plain Python types).
FAMILIES: dict[str, Callable[..., Profile]] = {
    "gaussian": GaussianProfile,
    "gdp": gdp,
    "laplace": LaplaceProfile,
    "randomized_response": RandomizedResponseProfile,
    "pure": pure,
    "approx": ApproxDPProfile,
    "pointwise": PointwiseProfile,
    "pair": PairProfile,
    "dpsgd": DpsgdProfile,
    "tabulated": TabulatedProfile,
    "zcdp": zcdp,
    "rdp_gaussian": rdp_gaussian,
    "rdp_pure": rdp_pure,
    "rdp_subsampled_gaussian": rdp_subsampled_gaussian,
}

__all__ = [
    "DEFAULT_ORDERS",
    "FAMILIES",
    "ApproxDPProfile",
    "DpsgdProfile",
    "FinitePairProfile",
    "GaussianProfile",
    "LaplaceProfile",
    "PairProfile",
    "PldProfile",
    "PointwiseProfile",
    "Profile",
    "RandomizedResponseProfile",
    "RdpProfile",
    "TabulatedProfile",
    "delta_by_symmetry",
    "gdp",
    "pure",
    "rdp_gaussian",
    "rdp_pure",
    "rdp_subsampled_gaussian",
    "zcdp",
]
