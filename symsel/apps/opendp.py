"""Private selection as an OpenDP measurement: :func:`make_selection` (``pip install 'symsel[opendp]'``).

``make_selection(measurement, law)`` turns an OpenDP (0.16) ``Measurement`` of a base algorithm and a symsel law of
``K`` into an OpenDP ``Measurement`` of the selection: run the base ``K ~ law`` times on the same data and release the
best output only. Its privacy map is symsel's certified bound, ``symsel.bound(law, base_profile, method)``, where
``base_profile`` is the base's privacy profile at the same ``d_in``, read off the base measurement's own map:

============================================ ===================================== ===============================
base output measure                          ``base.map(d_in)``                    symsel profile (exact / lossy)
============================================ ===================================== ===============================
``max_divergence()``                         ``ε``                                 ``pure(eps=ε)`` (exact)
``zero_concentrated_divergence()``           ``ρ``                                 ``zcdp(rho=ρ)``: the RDP curve
                                                                                   ``ρα``, converted to (ε, δ) by
                                                                                   symsel (sound for every ρ-zCDP
                                                                                   mechanism; no Gaussian shape
                                                                                   is assumed)
``approximate(max_divergence())``            ``(ε, δ)``                            ``approx(eps=ε, delta=δ)``
(= ``fixed_smoothed_max_divergence()``)                                            (the tightest profile it implies)
``smoothed_max_divergence()``                a ``PrivacyProfile``                  ``pointwise(points=[(ε_i,
                                                                                   δ(ε_i))])`` on a grid of
                                                                                   ``profile_points`` values of ε:
                                                                                   the intersection of guarantees
                                                                                   the mechanism satisfies, so an
                                                                                   upper bound on its profile
============================================ ===================================== ===============================

The measures are named as OpenDP 0.16 names them; OpenDP's renamed measures (``PureDP``, ``zCDP``, ``ApproxDP``,
``ProfileDP``) are the same four rows, recognised and built under whichever names the installed OpenDP has
(:data:`MEASURES`). Other measures (Rényi, approximate zCDP, user measures) are refused with
:class:`~symsel.errors.NotApplicableError` unless ``base_profile=`` is given: a symsel profile (or spec) valid for
inputs at distance at most ``profile_d_in``, or a callable ``d_in -> profile``. A ``base_profile`` is the caller's
claim about the base (say ``gaussian(sigma=…)`` for a continuous Gaussian mechanism, which is tighter than its ρ-zCDP
curve); symsel cannot check it against the measurement (OpenDP's ``make_gaussian`` on floats samples a discretized
Gaussian, for which the zCDP curve is the guarantee OpenDP proves).

The selection's output measure:

* ``delta=None`` (default): ``smoothed_max_divergence()``; ``selection.map(d_in)`` is an OpenDP ``PrivacyProfile``
  whose ``delta(ε)`` is ``symsel.bound(law, base_profile, method).delta(ε − 1e-9)`` (capped at 1; the shift,
  :data:`EPSILON_SHIFT`, keeps OpenDP's inversion ``epsilon(δ)``, which stops a few ulps below the exact inverse,
  at or above symsel's certified ``ε(δ)``). OpenDP 0.16's Python API
  converts a ``PrivacyProfile`` to Rust only in one direction; a user map hands the profile back as the profile's
  underlying ``AnyObject`` pointer, which OpenDP's callback takes over (the one place this module relies on how
  OpenDP 0.16 passes objects between Python and Rust; ``delta=`` avoids it). ``selection_bound(d_in)`` of the
  returned measurement gives symsel's bound itself, with its certified ``ε(δ)``.
* ``delta=δ``: ``approximate(max_divergence())``; ``selection.map(d_in) = (symsel.bound(...).epsilon(δ), δ)``.

Every bound is an upper bound (symsel's certificates), and every conversion above is exact or conservative, so
the map never under-reports the selection's privacy loss (given a correct base map or ``base_profile``).

The function. ``K`` is drawn with a ``numpy.random.Generator`` (seeded by ``seed``; ``law.rvs``); the base's own
noise is OpenDP's (its cryptographically secure sampler). ``K`` is never released: ``K = 0`` releases ``None``,
otherwise the best of the ``K`` outputs by ``score`` (the first in run order among equal scores). A score that is
not a real number, or is NaN, and a ``score`` function that raises, end the run with one ``ParameterError`` naming
``score``. At most :data:`MAX_RUNS` runs: a law with a larger mean is refused. The random-``K`` bounds assume
i.i.d. runs: the base must be one fixed
measurement, run on the same data each time (OpenDP's measurements are).

Features: :func:`make_selection` turns on OpenDP's ``"contrib"`` and ``"honest-but-curious"`` features
(``dp.enable_features``), which ``make_user_measurement`` and ``new_privacy_profile`` require: OpenDP cannot check
a user-defined map, so it asks the caller to vouch for it. Here the map is symsel's certified bound on a profile
taken from the base's own (OpenDP-proved) map, or the ``base_profile`` you vouch for.
"""

from __future__ import annotations

import math
import numbers
import warnings
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from symsel import validate
from symsel.errors import NotApplicableError, ParameterError, SymselError
from symsel.spec import as_distribution, as_profile

if TYPE_CHECKING:
    from symsel.bounds.api import SelectionBound
    from symsel.distributions import Distribution
    from symsel.profiles import Profile

__all__ = ["OpenDPMissingError", "base_profile_from_map", "make_selection"]

WHERE = "make_selection"
INSTALL_HINT = "pip install 'symsel[opendp]' (or pip install 'opendp>=0.16')"
DIRECTIONS = ("maximize", "minimize")
#: default number of ``ε`` points at which a ``smoothed_max_divergence`` base profile is sampled.
PROFILE_POINTS = 64
#: the most points :func:`base_profile_from_map` samples (one OpenDP call each; 1e12 was a hang).
MAX_PROFILE_POINTS = 100_000
#: the sampled grid of a base ``PrivacyProfile`` ends where it falls to this ``δ`` (or at :data:`MAX_GRID_EPSILON`).
GRID_FLOOR = 1e-20
MAX_GRID_EPSILON = 100.0
#: the profile handed to OpenDP is the bound shifted right by this much in ε (see :func:`_curve`).
EPSILON_SHIFT = 1e-9
#: the most runs of the base one selection may execute: a law with ``E[K]`` above it (``point(k=100000000)``) is
#: refused by :func:`make_selection`, and a run that draws a ``K`` above it is refused before running the base
#: (``P[K > MAX_RUNS] <= E[K] / MAX_RUNS``, Markov).
MAX_RUNS = 10**6


class OpenDPMissingError(SymselError, ImportError):
    """:func:`make_selection` was called without OpenDP installed (an ``ImportError`` too)."""

    def __init__(self) -> None:
        super().__init__(f"symsel.apps.opendp needs OpenDP, which is not installed: {INSTALL_HINT}")


def _dp() -> Any:
    try:
        import opendp.prelude as dp
    except ImportError:
        raise OpenDPMissingError() from None
    return dp


# ------------------------------------------------------------------------------------------------ measures
#: OpenDP's privacy measures this module reads or builds, by role: the names of their constructors in ``opendp.prelude``
#: (OpenDP's rename first: ``MaxDivergence`` → ``PureDP``, ``ZeroConcentratedDivergence`` → ``zCDP``,
#: ``SmoothedMaxDivergence`` → ``ProfileDP``, ``Approximate<MaxDivergence>`` → ``ApproxDP``, the old names kept as
#: deprecated aliases; then the names OpenDP 0.16 has), and the type names a measure of that role reports.
MEASURES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "pure": (("pure_dp", "max_divergence"), ("PureDP", "MaxDivergence")),
    "zcdp": (("zcdp", "z_cdp", "zero_concentrated_divergence"), ("zCDP", "ZCDP", "ZeroConcentratedDivergence")),
    "approx": (("approx_dp",), ("ApproxDP", "Approximate<PureDP>", "Approximate<MaxDivergence>",
                                "Approximate(PureDP)", "Approximate(MaxDivergence)")),
    "profile": (("profile_dp", "smoothed_max_divergence"), ("ProfileDP", "SmoothedMaxDivergence")),
}


def _measure(dp: Any, role: str) -> Any:
    """The privacy measure of ``role`` (:data:`MEASURES`), built by the first of its constructors that the installed
    OpenDP has (``approximate`` of the pure measure for ``"approx"`` when there is no ``approx_dp``)."""
    names, _ = MEASURES[role]
    for name in names:
        constructor = getattr(dp, name, None)
        if callable(constructor):
            with warnings.catch_warnings():  # an old name, deprecated by a newer OpenDP, is still the same measure
                warnings.simplefilter("ignore", DeprecationWarning)
                return constructor()
    if role == "approx":
        return dp.approximate(_measure(dp, "pure"))
    raise NotApplicableError(f"{WHERE}: the installed OpenDP has none of {', '.join(names)}")


def _role(dp: Any, measure: Any) -> str | None:
    """The role (:data:`MEASURES`) of an OpenDP privacy measure, by its type name or by equality with the measure
    the installed OpenDP builds for that role; ``None`` for any other measure."""
    kind = " ".join(str(getattr(measure, "type", "")).split())
    for role, (_, types) in MEASURES.items():
        if kind in types:
            return role
    for role in MEASURES:
        try:
            if measure == _measure(dp, role):
                return role
        except Exception:  # a role the installed OpenDP cannot build is not this measure
            continue
    return None


# ------------------------------------------------------------------------------------------------ inputs






def _distance_type(dp: Any, measurement: Any) -> str:
    try:
        return str(dp.metric_distance_type(measurement.input_metric))
    except Exception:  # a metric OpenDP cannot name: accept any real distance
        return "f64"


def _check_d_in(d_in: Any, distance_type: str) -> float:
    """``d_in`` as a float: a finite real ``≥ 0`` (an integer for integer distance types)."""
    integral = distance_type[:1] in ("u", "i")
    allowed = f"a finite distance >= 0 of the input metric's type {distance_type}"
    allowed += " (an integer)" if integral else ""
    kind = numbers.Integral if integral else numbers.Real
    if isinstance(d_in, bool) or not isinstance(d_in, kind):
        raise ParameterError("d_in", d_in, allowed, WHERE)
    value = float(d_in)
    if not math.isfinite(value) or value < 0:
        raise ParameterError("d_in", d_in, allowed, WHERE)
    return value


# --------------------------------------------------------------------------------- the base's profile
def base_profile_from_map(measurement: Any, d_in: Any, profile_points: int = PROFILE_POINTS) -> Profile:
    """The symsel profile of ``measurement`` at input distance ``d_in``, read off its OpenDP privacy map
    (module docstring, table); exact or conservative, never below the map's own guarantee.

    Raises:
        ParameterError: ``measurement`` is not an OpenDP measurement, or its map refuses ``d_in``.
        NotApplicableError: its output measure has no conversion here (pass ``base_profile=`` to
            :func:`make_selection`).
    """
    dp = _dp()
    if not isinstance(measurement, dp.Measurement):
        raise ParameterError("measurement", measurement, "an opendp Measurement", WHERE)
    profile_points = validate.integer(profile_points, "profile_points", WHERE, lo=2, hi=MAX_PROFILE_POINTS)
    from symsel.profiles import ApproxDPProfile, PointwiseProfile, pure, zcdp

    measure = measurement.output_measure
    try:
        guarantee = measurement.map(d_in)
    except dp.OpenDPException as exc:
        raise ParameterError("d_in", d_in, "a distance the base measurement's privacy map accepts (OpenDP: "
                             f"{_innermost(exc)})", WHERE) from None
    role = _role(dp, measure)
    if role == "pure":
        return pure(eps=_finite(guarantee, "epsilon"))
    if role == "zcdp":
        rho = _finite(guarantee, "rho")
        return pure(eps=0.0) if rho == 0 else zcdp(rho=rho)
    if role == "approx":
        eps, delta = guarantee
        return ApproxDPProfile(eps=_finite(eps, "epsilon"), delta=float(delta))
    if role == "profile":
        return PointwiseProfile(_sampled(guarantee, profile_points))
    raise NotApplicableError(
        f"{WHERE}: the base's output measure {measure} has no conversion to a symsel profile (supported: "
        "PureDP (max_divergence), zCDP (zero_concentrated_divergence), ApproxDP (approximate(max_divergence)), "
        "ProfileDP (smoothed_max_divergence)); pass base_profile= (a symsel profile valid at the d_in you query)")


def _finite(value: Any, name: str) -> float:
    x = float(value)
    if not math.isfinite(x) or x < 0:
        raise NotApplicableError(f"{WHERE}: the base measurement's map gives {name}={value!r}; a finite "
                                 f"{name} >= 0 is needed for a finite bound")
    return x


def _sampled(profile: Any, points: int) -> list[tuple[float, float]]:
    """Guarantees ``(ε_i, δ(ε_i))`` of an OpenDP ``PrivacyProfile`` on ``points`` values of ε from 0 to where it
    falls to :data:`GRID_FLOOR`. Each pair is a guarantee the base satisfies (the profile's own ``δ`` at that ``ε``,
    capped at 1), so the profile they imply together is above the base's: where the grid is coarse it is only
    looser. OpenDP's inversion ``epsilon(δ)`` only places the grid's end."""
    try:
        top = float(profile.epsilon(GRID_FLOOR))
    except Exception:
        top = MAX_GRID_EPSILON
    if not math.isfinite(top) or top <= 0:
        top = MAX_GRID_EPSILON
    top = min(top, MAX_GRID_EPSILON)
    out = []
    for eps in np.linspace(0.0, top, points):
        delta = float(profile.delta(float(eps)))
        if math.isnan(delta):
            delta = 1.0
        out.append((float(eps), min(1.0, max(0.0, delta))))
    return out


# ------------------------------------------------------------------------------------------------ the selection
class _Selection:
    """What a selection measurement knows: the base, the law, the method, and its bounds by ``d_in`` (an LRU)."""

    def __init__(self, base: Any, law: Distribution, method: str, delta: float | None,
                 base_profile: Callable[[float], Profile], distance_type: str):
        self.base, self.law, self.method, self.delta = base, law, method, delta
        self.base_profile = base_profile
        self.distance_type = distance_type
        self.error: SymselError | None = None  # the last symsel error raised inside a run (OpenDP wraps it)
        self._bounds: OrderedDict[float, SelectionBound] = OrderedDict()

    def bound(self, d_in: Any) -> SelectionBound:
        from symsel.bounds import bound

        key = _check_d_in(d_in, self.distance_type)
        if key in self._bounds:
            self._bounds.move_to_end(key)
            return self._bounds[key]
        result = bound(self.law, self.base_profile(d_in), self.method)
        self._bounds[key] = result
        if len(self._bounds) > 32:
            self._bounds.popitem(last=False)
        return result


def _curve(result: SelectionBound) -> Callable[[float], float]:
    """The curve handed to OpenDP: ``ε ↦ min(1, δ_bound(max(0, ε − EPSILON_SHIFT)))``, at or above the bound (it is
    non-increasing). The shift keeps OpenDP's inversion ``epsilon(δ)``, which stops a few ulps on the low side of
    the exact inverse, above symsel's ``ε(δ)``."""

    def delta(eps: float) -> float:
        if isinstance(eps, bool) or not isinstance(eps, numbers.Real) or math.isnan(eps) or eps < 0:
            raise ParameterError("epsilon", eps, "a real number >= 0", WHERE)
        return min(1.0, max(0.0, float(result.delta(max(0.0, float(eps) - EPSILON_SHIFT)))))

    return delta


_CLASS: list[type] = []


def _measurement_class(dp: Any) -> type:
    """:class:`SelectionMeasurement`, defined on first use (OpenDP is optional)."""
    if _CLASS:
        return _CLASS[0]

    class SelectionMeasurement(dp.Measurement):
        """An OpenDP ``Measurement`` of a private selection (from :func:`make_selection`). ``map`` and calling it
        check their argument first, so bad input raises a symsel ``ValueError`` naming it (inside OpenDP's own
        combinators the map's errors arrive as ``OpenDPException``, with symsel's message in them)."""

        _type_ = dp.Measurement._type_  # a ctypes pointer subclass must name its target, or it points at nothing

        def map(self, d_in: Any) -> Any:
            """The selection's privacy at ``d_in``: an OpenDP ``PrivacyProfile`` (or ``(ε, δ)`` with ``delta=``)."""
            self.selection_bound(d_in)  # symsel's errors, raised here rather than through OpenDP
            return super().map(d_in)

        def __call__(self, arg: Any) -> Any:
            return self.invoke(arg)

        def invoke(self, arg: Any) -> Any:
            """Run the selection on ``arg`` (a member of the input domain)."""
            _check_member(self.input_domain, arg)
            state = self._symsel_selection
            state.error = None
            try:
                return super().invoke(arg)
            except dp.OpenDPException:
                if state.error is not None:  # symsel's own error inside the run: raised as itself
                    raise state.error from None
                raise

        def selection_bound(self, d_in: Any) -> SelectionBound:
            """symsel's certified bound on the selection at ``d_in``: ``symsel.bound(law, base_profile(d_in),
            method)``, with ``epsilon(δ)``, ``delta(ε)``, ``certificate``."""
            return self._symsel_selection.bound(d_in)

        @property
        def selection(self) -> dict[str, Any]:
            """The law's spec, the method and, with ``delta=``, the fixed ``δ``."""
            state = self._symsel_selection
            return {"law": state.law.spec, "method": state.method, "delta": state.delta}

    SelectionMeasurement.__name__ = SelectionMeasurement.__qualname__ = "SelectionMeasurement"
    _CLASS.append(SelectionMeasurement)
    return SelectionMeasurement


def _check_member(domain: Any, arg: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # OpenDP's note on a value of the wrong type: the error below says it
        try:
            ok = bool(domain.member(arg))
        except Exception:
            ok = False
    if not ok:
        raise ParameterError("data", arg, f"a member of the measurement's input domain {domain}", WHERE)


def make_selection(
    measurement: Any,
    law: str | Distribution,
    *,
    score: Callable[[Any], float] | None = None,
    direction: str = "maximize",
    method: str = "best",
    delta: float | None = None,
    base_profile: Profile | str | Callable[[Any], Profile | str] | None = None,
    profile_d_in: float | None = None,
    profile_points: int = PROFILE_POINTS,
    seed: int | np.random.Generator | None = None,
) -> Any:
    """An OpenDP ``Measurement`` releasing the best of ``K ~ law`` runs of ``measurement`` (module docstring).

    Enables OpenDP's ``"contrib"`` and ``"honest-but-curious"`` features (required by ``make_user_measurement``
    and ``new_privacy_profile``).

    Args:
        measurement: the base, an OpenDP ``Measurement`` (output measure: module docstring's table, or any with
            ``base_profile``).
        law: the law of ``K``: a spec string (``"geometric(mean=10)"``, ``"point(k=5)"``) or a
            :class:`symsel.Distribution`, with ``E[K] <= MAX_RUNS``.
        score: ``score(output) -> float`` ranks the base's outputs. ``None``: the base outputs ``(score, candidate)``
            pairs and the first element is the score. The whole best output is released.
        direction: ``"maximize"`` (default) or ``"minimize"`` the score.
        method: the bound method, one of :data:`symsel.METHODS` (default ``"best"``).
        delta: ``None`` for a ``smoothed_max_divergence`` measurement (a privacy profile); a ``δ`` in ``(0, 1)``
            for an ``approximate(max_divergence())`` measurement whose map is ``(ε(δ), δ)``.
        base_profile: instead of reading the base's map: a callable ``d_in -> symsel profile or spec``, or one
            profile (or spec) valid for every ``d_in ≤ profile_d_in`` (larger ``d_in`` are refused).
        profile_d_in: the largest ``d_in`` a non-callable ``base_profile`` holds for (required with it).
        profile_points: points sampled from a ``smoothed_max_divergence`` base's profile (default 64).
        seed: seeds the ``numpy.random.Generator`` that draws ``K``; ``None`` for fresh entropy.

    Returns:
        A ``SelectionMeasurement`` (a subclass of ``opendp.mod.Measurement``; use it as any measurement), with
        ``selection_bound(d_in)``, symsel's bound behind the map.

    Raises:
        OpenDPMissingError: OpenDP is not installed.
        ParameterError: a bad ``measurement``, ``law``, ``score``, ``direction``, ``method``, ``delta``,
            ``base_profile``, ``profile_d_in``, ``profile_points`` or ``seed``; later, a bad ``d_in`` or input.
        NotApplicableError: the base's output measure has no conversion (and no ``base_profile``), or the
            method does not apply to the law and base.
    """
    dp = _dp()
    dp.enable_features("contrib", "honest-but-curious")
    from symsel.bounds import METHODS

    if not isinstance(measurement, dp.Measurement):
        raise ParameterError("measurement", measurement, "an opendp Measurement (e.g. dp.m.make_laplace(...))", WHERE)
    law_obj = as_distribution(law, "law", WHERE)
    if law_obj.support_min > MAX_RUNS or not law_obj.mean <= MAX_RUNS:
        raise ParameterError("law", law_obj.spec, f"a law of K with E[K] <= MAX_RUNS = {MAX_RUNS} runs of the base (it "
                             f"has E[K] = {law_obj.mean:g})", WHERE)
    if score is not None and not callable(score):
        raise ParameterError("score", score, "None (outputs are (score, candidate) pairs) or a callable "
                             "score(output) -> float", WHERE)
    direction = validate.choice(direction, "direction", WHERE, DIRECTIONS)
    method = validate.choice(method, "method", WHERE, METHODS)
    if delta is not None:
        delta = validate.real(delta, "delta", WHERE, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
    profile_points = validate.integer(profile_points, "profile_points", WHERE, lo=2, hi=MAX_PROFILE_POINTS)
    rng = validate.generator(seed, "seed", WHERE)
    distance_type = _distance_type(dp, measurement)
    profile_of = _profile_source(measurement, base_profile, profile_d_in, profile_points, distance_type)
    state = _Selection(measurement, law_obj, method, delta, profile_of, distance_type)
    rank = _ranker(score, direction)

    def function(data: Any) -> Any:
        k = int(law_obj.rvs(1, rng=rng)[0])
        if k > MAX_RUNS:
            state.error = ParameterError("law", law_obj.spec, f"a law whose K stays within MAX_RUNS = {MAX_RUNS} runs "
                                         f"(K = {k} was drawn, before any run)", WHERE)
            raise state.error
        best, best_key = None, None
        for _ in range(k):
            try:
                output = measurement(data)
            except Exception as exc:  # the base measurement failed inside OpenDP: one line naming it, no traceback
                state.error = ParameterError("measurement", _one_line(f"measurement(data={data!r})", 60),
                                             "a base measurement that runs on every member of its input domain (on "
                                             f"this data it raised {_innermost(exc)})", WHERE)
                raise state.error from None
            try:
                key = rank(output)
            except SymselError as exc:
                state.error = exc
                raise
            except Exception as exc:  # the user's score function failed: one line naming score, no traceback
                state.error = ParameterError("score", getattr(score, "__name__", repr(score)),
                                             "a callable score(output) -> float that returns a real number for every "
                                             f"output (it raised {type(exc).__name__}: {_one_line(exc)})", WHERE)
                raise state.error from None
            if best_key is None or key > best_key:
                best, best_key = output, key
        return best

    if delta is None:
        output_measure = _measure(dp, "profile")

        def privacy_map(d_in: Any) -> Any:
            profile = dp.new_privacy_profile(_curve(state.bound(d_in)))
            return profile.curve  # OpenDP's callback takes this AnyObject over (module docstring)
    else:
        output_measure = _measure(dp, "approx")
        fixed = delta

        def privacy_map(d_in: Any) -> Any:
            return (float(state.bound(d_in).epsilon(fixed)), fixed)

    selection = dp.m.make_user_measurement(measurement.input_domain, measurement.input_metric, output_measure,
                                           function, privacy_map)
    selection.__class__ = _measurement_class(dp)
    selection._symsel_selection = state
    return selection


def _one_line(exc: BaseException | str, width: int = 120) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def _innermost(exc: BaseException) -> str:
    """The error an exception reports, on one line: for an ``OpenDPException`` carrying a Python traceback (an
    error inside a user-defined function), its last line (``RuntimeError: …``), else its variant and message."""
    text = str(getattr(exc, "message", None) or exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for line in reversed(lines):
        head = line.split(":", 1)[0]
        if head.isidentifier() and (head.endswith("Error") or head.endswith("Exception")):
            return _one_line(line)
    variant = getattr(exc, "variant", None)
    return _one_line(f"{variant or type(exc).__name__}: {lines[-1] if lines else ''}")


def _ranker(score: Callable[[Any], float] | None, direction: str) -> Callable[[Any], tuple[int, float]]:
    """A key that orders outputs best-last: ``(1, ±score)``; a NaN score is refused (``ParameterError``)."""
    sign = 1.0 if direction == "maximize" else -1.0

    def rank(output: Any) -> tuple[int, float]:
        if score is None:
            if not isinstance(output, tuple | list) or len(output) != 2:
                raise ParameterError("score", None, "a callable score(output) -> float, or a base that outputs "
                                     f"(score, candidate) pairs (it output {output!r:.80})", WHERE)
            value = output[0]
        else:
            value = score(output)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise ParameterError("score", value, "a real number for every output", WHERE)
        value = float(value)
        if math.isnan(value):
            raise ParameterError("score", value, "a real number, not NaN, for every output (a NaN score cannot be "
                                 "ranked)", WHERE)
        return (1, sign * value)

    return rank


def _profile_source(measurement: Any, base_profile: Any, profile_d_in: Any, points: int,
                    distance_type: str) -> Callable[[Any], Profile]:
    """``d_in -> the base's symsel profile`` from its map, or from ``base_profile``."""
    if base_profile is None:
        if profile_d_in is not None:
            raise ParameterError("profile_d_in", profile_d_in, "None unless base_profile is given", WHERE)
        return lambda d_in: base_profile_from_map(measurement, d_in, points)
    if callable(base_profile):
        if profile_d_in is not None:
            raise ParameterError("profile_d_in", profile_d_in, "None with a callable base_profile", WHERE)
        return lambda d_in: as_profile(base_profile(d_in), "base_profile", WHERE)
    fixed = as_profile(base_profile, "base_profile", WHERE)
    if profile_d_in is None:
        raise ParameterError("profile_d_in", None, "the largest d_in the base_profile holds for (a finite number "
                             ">= 0), required with a non-callable base_profile", WHERE)
    limit = _check_d_in(profile_d_in, distance_type)

    def at(d_in: Any) -> Profile:
        if _check_d_in(d_in, distance_type) > limit:
            raise ParameterError("d_in", d_in, f"at most profile_d_in={profile_d_in!r}, where base_profile holds",
                                 WHERE)
        return fixed

    return at
