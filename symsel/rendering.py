"""The display protocol: how a law of ``K``, a derivation and a selection bound are shown (``repr``, Jupyter, plots).

The classes that are displayed live on low floors (:class:`~symsel.distributions.Distribution`,
:class:`~symsel.derive.Derivation`, :class:`~symsel.bounds.SelectionBound`), but showing them well needs floors above
them (a bound's display puts the certified lower bound of :mod:`symsel.evidence` beside its ``ε``). So the display
methods of those classes delegate to a :class:`Renderer`, a protocol defined here on the ground floor and implemented
by :mod:`symsel.display`, which sits above everything it displays (docs/architecture.md). The package's facade
(``symsel/__init__.py``) installs the loader of that implementation; it is imported on the first display, never at
``import symsel``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any, Protocol


class Renderer(Protocol):
    """What a display implementation provides (each function evaluates numbers when called, never earlier)."""

    def distribution_repr(self, dist: Any) -> str: ...

    def distribution_latex(self, dist: Any) -> str: ...

    def derivation_markdown(self, derivation: Any) -> str: ...

    def bound_html(self, bound: Any) -> str: ...

    def plot_bound(self, bound: Any, ax: Any = None, deltas: Sequence[float] | None = None,
                   lower: bool = False) -> Any: ...

    def plot_tradeoff(self, bound: Any, ax: Any = None, fprs: Sequence[float] | None = None) -> Any: ...


_loader: list[Callable[[], Renderer]] = []


def install(loader: Callable[[], Renderer]) -> None:
    """Use ``loader()`` (called on the first display) as the renderer; replaces any earlier one."""
    _loader[:] = [loader]
    renderer.cache_clear()


@lru_cache(maxsize=1)
def renderer() -> Renderer:
    """The installed renderer (loaded once)."""
    if not _loader:
        raise RuntimeError("no renderer installed: symsel's displays need 'import symsel' (symsel/__init__.py)")
    return _loader[0]()
