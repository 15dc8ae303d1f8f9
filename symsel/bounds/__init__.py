"""Bounds on the privacy of private selection, each a pure function returning a :class:`SelectionBound`.

* :mod:`symsel.bounds.api` — :func:`bound` (the one entry point), :data:`METHODS`, the result type.
* :mod:`symsel.bounds.envelope` — Theorem 4.1 of Koskela, Redberg & Wang taken per output
  (docs/envelope.md): method ``envelope``.
* :mod:`symsel.bounds.hockey_stick` — Koskela et al. Theorem 4.1 with a ratio supremum: ``paper``,
  ``polygon``, ``fdp``.
* :mod:`symsel.bounds.renyi` — Papernot & Steinke (ICLR 2022) Lemma 7 and closed forms: ``rdp``,
  ``rdp_lemma7``.
* :mod:`symsel.bounds.rnm` — Report Noisy Max (Koskela et al. Section 3).
* :mod:`symsel.bounds.ratio` — the certified supremum of monotone ratios shared by the ratio methods.
"""

from __future__ import annotations

from symsel.bounds.api import BEST_COMPONENTS, METHODS, SelectionBound, bound
from symsel.bounds.summary import bound_summary, risk_summary

__all__ = ["BEST_COMPONENTS", "METHODS", "SelectionBound", "bound", "bound_summary", "risk_summary"]
