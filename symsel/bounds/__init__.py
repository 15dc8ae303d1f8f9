"""Bounds on the privacy of private selection, each a pure function returning a Profile.

* :mod:`symsel.bounds.hockey_stick` — Koskela, Redberg & Wang (ICML 2024) Theorem 4.1 with the
  hockey-stick divergence: methods ``paper``, ``polygon``, ``fdp``.
* :mod:`symsel.bounds.renyi` — Papernot & Steinke (ICLR 2022) Lemma 7 and closed forms: ``rdp``.
* :mod:`symsel.bounds.rnm` — Report Noisy Max (Koskela et al. Section 3).
* :mod:`symsel.bounds.ratio` — the certified supremum of monotone ratios that all of them share.
"""

from __future__ import annotations

from symsel.bounds.summary import METHODS, bound_summary, selection_bound

__all__ = ["METHODS", "bound_summary", "selection_bound"]
