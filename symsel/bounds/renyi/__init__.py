"""The Rényi-DP route for private selection: Papernot & Steinke, *Hyperparameter Tuning with Rényi
Differential Privacy*, ICLR 2022 (docs/renyi.md).

The selection ``A`` draws ``K`` (PGF ``φ``), runs a base mechanism ``Q`` ``K`` times and releases the
best run. Every bound here is an RDP curve ``λ ↦ ε'(λ)`` of ``A``, turned into an ``(ε, δ)`` profile by
:class:`symsel.profiles.RdpProfile` (optimal conversion on a grid of orders):

* **Lemma 7** (any PGF): ``D_λ(A‖A') ≤ ε(λ) + (1/(λ−1)) log sup_{(q,q') ∈ 𝓡} φ'(q)^λ φ'(q')^(1−λ)``,
  the sup certified by :func:`symsel.bounds.ratio.certified_log_sup` on the region of the base
  (its full profile, or one ``(ε̂, δ̂)`` polygon optimized over ``ε̂``);
* **Theorem 2** (truncated negative binomial ``D_{η,γ}``), optimized over ``λ̂`` on a grid, with
  **Corollary 3** (pure ``ε`` ⇒ ``(2+η)ε``-DP) as the ``λ = ∞`` cap and **Corollary 4** (ρ-zCDP) in
  closed form;
* **Theorem 6** (Poisson ``μ``), with ``ε̂ = log(1 + 1/(λ−1))``, the largest ``ε̂`` its hypothesis allows;
* a fixed number ``k`` of runs: the RDP composition ``k ε(λ)`` of the runs (the best of them is a post-processing;
  below the point mass of Appendix D.1, ``k ε(λ) + log k/(λ−1)``);
* **Lemma 20** (an ``(ε0, δ0)``-DP base: ``δ = 1 − φ(1 − δ0)`` plus the bound for ``K'`` with PGF
  ``φ(x(1−δ0))/φ(1−δ0)`` and a pure ``ε0`` base) and **Corollary 21** (Poisson);
* **Lemma 22** (``K`` conditioned on ``K ≤ k``: extra terms added to any of the above).

Every curve is made non-decreasing in ``λ`` afterwards (Remark 5: ``D_λ`` grows with ``λ``, so a bound at
``λ2`` holds at every ``λ1 ≤ λ2``), as dp-accounting's ``RepeatAndSelectDpEvent`` does for Theorem 2.

Two optional refinements (``extended=True``) go beyond the printed statements; both follow from the
papers' own proofs:

* Theorem 2: the proof of P&S (App. B.2) reaches ``(1+η)/λ̂ · log(1 + (1/γ − 1) e^{(λ̂−1)ε̂})`` before
  relaxing it to ``(1+η)(1 − 1/λ̂)ε̂ + (1+η) log(1/γ)/λ̂``;
* Theorem 6: the last step of its proof bounds ``(λ−1)(1−q') − λ(1−q)`` using ``1 − q' ≤ e^ε̂ (1−q) + δ̂``
  and needs ``e^ε̂ ≤ λ/(λ−1)``; keeping ``1 − q' ≤ 1`` as well gives, for every ``ε̂ ≥ 0``,
  ``μ · max(δ̂, 1 − (λ/(λ−1)) (1 − δ̂) e^{−ε̂})`` in place of ``μ δ̂``, minimized over a grid of ``ε̂``.

The package: :mod:`.curve` (the curve object, its profile, the order grids), :mod:`.closed` (Theorems 2 and 6,
Corollaries 3, 4 and 21, the point mass), :mod:`.lemma7` (any PGF), :mod:`.truncation` (Lemma 22) and
:mod:`.entry` (the entry points and Lemma 20).
"""

from __future__ import annotations

from symsel.bounds.renyi.closed import (
    corollary3_epsilon,
    corollary4_rdp,
    corollary21,
    theorem2_constant,
    theorem6_delta_term,
    tnb_parameters,
    zcdp_rho,
)
from symsel.bounds.renyi.curve import (
    LEMMA7_MAX_ORDERS,
    LEMMA7_ORDERS,
    ApproximateRenyiProfile,
    RenyiSelectionProfile,
    SelectionCurve,
    base_rdp_curve,
    default_orders,
)
from symsel.bounds.renyi.entry import (
    approximate_dp_law,
    lemma20_bound,
    lemma22_curve,
    renyi_bound,
    renyi_selection_curve,
)
from symsel.bounds.renyi.lemma7 import LEMMA7_CHORD_TOL, LEMMA7_COARSE_ORDERS, convex_upper_fill, lemma7_log_sup
from symsel.bounds.renyi.truncation import split_truncated, truncation_terms

__all__ = [
    "LEMMA7_CHORD_TOL",
    "LEMMA7_COARSE_ORDERS",
    "LEMMA7_MAX_ORDERS",
    "LEMMA7_ORDERS",
    "ApproximateRenyiProfile",
    "RenyiSelectionProfile",
    "SelectionCurve",
    "approximate_dp_law",
    "base_rdp_curve",
    "convex_upper_fill",
    "corollary3_epsilon",
    "corollary4_rdp",
    "corollary21",
    "default_orders",
    "lemma7_log_sup",
    "lemma20_bound",
    "lemma22_curve",
    "renyi_bound",
    "renyi_selection_curve",
    "split_truncated",
    "theorem2_constant",
    "theorem6_delta_term",
    "tnb_parameters",
    "truncation_terms",
    "zcdp_rho",
]
