"""The :class:`Derivation` record: the symbolic facts of a law of ``K`` (and base), each claim with its check.

One record, three renderings: :meth:`Derivation.to_json` is the data (every closed form an :class:`Expression`,
given as ``{"latex": ..., "sympy": ...}``), and the LaTeX and Markdown reports are rendered from that JSON object
alone (:func:`render_latex`, :func:`render_markdown`), so ``symsel derive --json``, ``--latex`` and ``--markdown``
cannot disagree. :meth:`Derivation.from_json` reads the JSON back into an equal record.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import sympy

from symsel.rendering import renderer


class Expression(str):
    """A closed form as data: the string itself is its LaTeX (what the renderers print; a very long form is shown
    abbreviated there), ``expr`` the SymPy object and ``sympy`` its :func:`sympy.srepr`, which
    ``sympy.sympify`` reads back to an equal expression (symbol assumptions included: ``mu`` stays positive).

    Being a ``str``, an :class:`Expression` compares, hashes and formats as its LaTeX (``d.mean == "8"``)."""

    expr: sympy.Basic

    def __new__(cls, expr: Any, latex: str | None = None) -> Expression:
        expr = sympy.sympify(expr)
        self = super().__new__(cls, sympy.latex(expr) if latex is None else latex)
        self.expr = expr
        return self

    def __reduce__(self) -> tuple:
        return Expression, (self.expr, str(self))

    @property
    def latex(self) -> str:
        return str(self)

    @property
    def sympy(self) -> str:
        """``sympy.srepr(expr)``: ``sympy.sympify`` of it is ``expr`` again."""
        if "_srepr" not in self.__dict__:
            self.__dict__["_srepr"] = sympy.srepr(self.expr)
        return self.__dict__["_srepr"]

    def to_json(self) -> dict[str, str]:
        return {"latex": self.latex, "sympy": self.sympy}

    @classmethod
    def from_json(cls, data: dict[str, str]) -> Expression:
        return cls(sympy.sympify(data["sympy"]), data["latex"])


def is_expression_json(value: Any) -> bool:
    """Whether ``value`` is the JSON form of an :class:`Expression` (a dict with exactly ``latex`` and ``sympy``)."""
    return isinstance(value, dict) and set(value) == {"latex", "sympy"}


@dataclass(frozen=True)
class Check:
    """One claim and how it was verified.

    Attributes:
        claim: the statement checked.
        kind: ``"symbolic"`` (a SymPy identity or sign: a proof), ``"interval"`` (a sign proved by interval
            arithmetic on a numeric law: a computer-assisted proof), ``"numeric-50"`` (agreement at 50 digits
            with the numeric engine at parameter points), ``"sampling"`` (signs at sample points: numerical
            evidence, not a proof) or ``"soundness"`` (a certified lower bound from exact examples below the bound).
        agreement: the largest absolute disagreement found (``0.0`` for a symbolic identity; for soundness the
            margin bound minus lower bound, which must be ``>= 0``).
        passed: whether the claim held.
        proof: whether the check is a proof (``kind`` is ``"symbolic"`` or ``"interval"``).
    """

    claim: str
    kind: str
    agreement: float
    passed: bool

    def __post_init__(self) -> None:  # SymPy booleans and Floats from the checks become plain Python values
        object.__setattr__(self, "passed", bool(self.passed))
        object.__setattr__(self, "agreement", float(self.agreement))

    @property
    def proof(self) -> bool:
        return self.kind in ("symbolic", "interval")

    def to_json(self) -> dict[str, Any]:
        return {"claim": self.claim, "kind": self.kind, "agreement": self.agreement, "passed": self.passed,
                "proof": self.proof}


@dataclass(frozen=True, repr=False)
class Derivation:
    """What :func:`symsel.derive.derive` found. Every closed form is an :class:`Expression` (a LaTeX string that
    carries its SymPy object); other strings are prose or labels.

    ``ratio`` is ``log phi'(q) - log phi'(q')``; ``sup_location`` is where its sup over the base's
    ``(eps1, delta1)`` polygon sits (``"vertex"``, ``"start"``, ``"end"``, or ``"unknown"``) and
    ``sup_argument`` why; ``eps_hat`` is the closed-form ``eps_hat(eps, eps1, delta1)`` of docs/ratio-methods.md
    (``H_{e^eps}(A||A') <= m delta_Q(eps_hat)``) or ``None``; ``envelope`` the closed-form envelope ``H(t)`` of
    docs/envelope.md or ``None`` (the certified numeric envelope is then what ``symsel.bound`` uses).

    ``pure_dp`` is the ratio's sup over the pure ``(eps0, 0)`` region (``sup_location``, ``argument``,
    ``log_ratio`` and the selection's ``epsilon = eps0 + log R``); ``renyi`` is P&S Lemma 7's term on the
    polygon (``term``, the LaTeX name of the quantity; ``sup_location``, ``argument``, ``closed_form``,
    ``ps_closed_form`` with its ``theorem``); ``utility`` holds ``expected_quantile``, ``success_probability``,
    ``tail_bound`` (``phi(e^t) e^{-t k}``, a bound on ``P[K >= k]`` for every ``t >= 0``) and ``tail_optimal_t``.
    Each is ``None`` when skipped; ``skipped`` maps every skipped section to its reason, which depends on the
    input's size alone (never on time), in the same words on every run.
    """

    spec: str
    pgf: Expression
    dpgf: Expression
    mean: Expression
    variance: Expression
    p0: Expression
    p1: Expression
    family: str | None
    family_params: dict[str, Expression]
    ratio: Expression
    sup_location: str
    sup_argument: str
    eps_hat: Expression | None
    eps_hat_theorem: str | None
    envelope: Expression | None
    base: str | None = None
    bound: dict[str, Any] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    notes: tuple[str, ...] = ()
    pure_dp: dict[str, Any] | None = None
    renyi: dict[str, Any] | None = None
    utility: dict[str, Any] | None = None
    skipped: dict[str, str] = field(default_factory=dict)

    @property
    def verified(self) -> bool:
        return all(c.passed for c in self.checks)

    def __repr__(self) -> str:
        """A line or two: the law, where the ratio's sup sits, which sections were derived and the checks (the
        closed forms are the record's attributes, and its :meth:`markdown` report)."""
        sections = [name for name in ("envelope", "pure_dp", "renyi", "utility") if getattr(self, name)]
        passed = sum(c.passed for c in self.checks)
        base = f", base={self.base!r}" if self.base else ""
        return (f"Derivation(spec={self.spec!r}{base}, family={self.family!r}, sup_location={self.sup_location!r}, "
                f"sections={sections}, checks: {passed} of {len(self.checks)} passed)")

    def expressions(self) -> dict[str, Expression]:
        """Every closed form of the record by its JSON path (``"mean"``, ``"pure_dp.log_ratio"``, ...)."""
        out: dict[str, Expression] = {}

        def walk(value: Any, path: str) -> None:
            if isinstance(value, Expression):
                out[path] = value
            elif isinstance(value, dict):
                for k, v in value.items():
                    walk(v, f"{path}.{k}" if path else k)

        walk({f.name: getattr(self, f.name) for f in dataclasses.fields(self)}, "")
        return out

    def data(self) -> dict[str, Any]:
        """The record as JSON-ready data, without the rendered reports."""
        out = {"spec": self.spec, "base": self.base, "pgf": self.pgf, "dpgf": self.dpgf, "mean": self.mean,
               "variance": self.variance, "p0": self.p0, "p1": self.p1, "family": self.family,
               "family_params": self.family_params, "ratio": self.ratio, "sup_location": self.sup_location,
               "sup_argument": self.sup_argument, "eps_hat": self.eps_hat, "eps_hat_theorem": self.eps_hat_theorem,
               "envelope": self.envelope, "bound": self.bound, "pure_dp": self.pure_dp, "renyi": self.renyi,
               "utility": self.utility, "checks": [c.to_json() for c in self.checks], "verified": self.verified,
               "skipped": self.skipped, "notes": list(self.notes)}
        return _json_data(out)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``symsel derive --json``: :meth:`data` and its ``latex`` rendering."""
        data = self.data()
        data["latex"] = render_latex(data)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Derivation:
        """The record back from :meth:`to_json` (or ``symsel derive --json``'s output, where infinities are the
        strings ``"inf"``): every expression rebuilt by ``sympy.sympify`` of its ``sympy`` string."""
        names = {f.name for f in dataclasses.fields(cls)} - {"checks", "notes"}
        kwargs = {k: _from_json_data(v) for k, v in data.items() if k in names}
        kwargs["bound"] = {k: float(v) if v in ("inf", "-inf") else v for k, v in data["bound"].items()}
        checks = tuple(Check(c["claim"], c["kind"], float(c["agreement"]), c["passed"]) for c in data["checks"])
        return cls(**kwargs, checks=checks, notes=tuple(data["notes"]))

    def latex(self) -> str:
        """A LaTeX ``align*`` block with every closed form (:func:`render_latex` of the JSON data)."""
        return render_latex(self.data())

    def markdown(self) -> str:
        """A Markdown report: the closed forms, where the sup sits and why, the bound and every check
        (:func:`render_markdown` of the JSON data)."""
        return render_markdown(self.data())

    def _repr_markdown_(self) -> str:
        """Jupyter's ``text/markdown`` display: the :meth:`markdown` report, its set braces written
        ``\\lbrace``/``\\rbrace`` (:func:`symsel.display.derivation_markdown`, through :mod:`symsel.rendering`)."""
        return renderer().derivation_markdown(self)


def _json_data(value: Any) -> Any:
    if isinstance(value, Expression):
        return value.to_json()
    if isinstance(value, dict):
        return {k: _json_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_data(v) for v in value]
    return value


def _from_json_data(value: Any) -> Any:
    if is_expression_json(value):
        return Expression.from_json(value)
    if isinstance(value, dict):
        return {k: _from_json_data(v) for k, v in value.items()}
    return value


# ------------------------------------------------------------------------------------ renderers (of the JSON data)
def _tex(entry: Any) -> str:
    """The LaTeX of an expression's JSON form (or of an :class:`Expression`)."""
    return entry["latex"] if isinstance(entry, dict) else str(entry)


def render_latex(data: dict[str, Any]) -> str:
    """A LaTeX ``align*`` block with every closed form of a derivation's JSON data."""
    rows = [
        rf"\varphi(z) &= {_tex(data['pgf'])}",
        rf"\varphi'(z) &= {_tex(data['dpgf'])}",
        rf"m = \varphi'(1) &= {_tex(data['mean'])}",
        rf"\operatorname{{Var}}[K] &= {_tex(data['variance'])}",
        rf"P[K=0] &= {_tex(data['p0'])}, \quad P[K=1] = {_tex(data['p1'])}",
        rf"\log\frac{{\varphi'(q)}}{{\varphi'(q')}} &= {_tex(data['ratio'])}",
    ]
    if data["eps_hat"] is not None:
        rows.append(rf"\hat\varepsilon &= {_tex(data['eps_hat'])}")
    if data["envelope"] is not None:
        rows.append(rf"H(t) &= {_tex(data['envelope'])}")
    pure, renyi, util = data["pure_dp"], data["renyi"], data["utility"]
    if pure and pure.get("log_ratio"):
        rows.append(rf"\log R({_tex(pure['eps0'])}) &= {_tex(pure['log_ratio'])} "
                    rf"\quad \text{{(pure-DP region, sup at the {pure['sup_location']})}}")
    if renyi and renyi.get("closed_form"):
        rows.append(rf"{renyi['term']} &= {_tex(renyi['closed_form'])}")
        if renyi.get("ps_closed_form"):
            rows.append(rf"\frac{{\text{{term}}}}{{\lambda-1}} &\le {_tex(renyi['ps_closed_form'])} "
                        rf"\quad \text{{({renyi['theorem']})}}")
    if util:
        if util.get("expected_quantile"):
            rows.append(rf"E\!\left[\tfrac{{K}}{{K+1}}\right] = 1 - \int_0^1 \varphi &= "
                        rf"{_tex(util['expected_quantile'])}")
        rows += [rf"1 - \varphi(1 - 1/c) &= {_tex(util['success_probability'])}",
                 rf"P[K \ge k] &\le \min_{{t \ge 0}} {_tex(util['tail_bound'])}"]
    return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"


def render_markdown(data: dict[str, Any]) -> str:
    """A Markdown report of a derivation's JSON data: the closed forms, where the sup sits and why, the bound,
    every check, the skipped sections with their reasons and the notes."""
    fam = "none recognized" if data["family"] is None else data["family"] + " (" + ", ".join(
        f"${k} = {_tex(v)}$" for k, v in data["family_params"].items()) + ")"
    lines = [f"# Derivation for `{data['spec']}`" + (f" with base `{data['base']}`" if data["base"] else ""), "",
             f"- family: {fam}",
             f"- $\\varphi(z) = {_tex(data['pgf'])}$", f"- $\\varphi'(z) = {_tex(data['dpgf'])}$",
             f"- mean $m = {_tex(data['mean'])}$, variance ${_tex(data['variance'])}$",
             f"- $P[K=0] = {_tex(data['p0'])}$, $P[K=1] = {_tex(data['p1'])}$",
             f"- ratio $\\log\\varphi'(q) - \\log\\varphi'(q') = {_tex(data['ratio'])}$",
             "- supremum over the $(\\varepsilon_1, \\delta_1)$ polygon: "
             f"**{data['sup_location']}** — {data['sup_argument']}"]
    if data["eps_hat"] is not None:
        lines.append(f"- $\\hat\\varepsilon = {_tex(data['eps_hat'])}$ ({data['eps_hat_theorem']}); "
                     "then $H_{e^\\varepsilon}(A\\|A') \\le m\\,\\delta_Q(\\hat\\varepsilon)$")
    lines.append("- envelope $H(t)$: " + (f"${_tex(data['envelope'])}$" if data["envelope"] else
                                          "no closed form here; the certified numeric envelope is used"))
    lines += _pure_md(data["pure_dp"]) + _renyi_md(data["renyi"]) + _utility_md(data["utility"])
    if data["bound"]:
        lines += ["", "## Bound", ""] + [f"- {k}: {v}" for k, v in data["bound"].items()]
    lines += ["", "## Checks", "", "| claim | kind | agreement | passed |", "|---|---|---|---|"]
    lines += [f"| {c['claim']} | {c['kind']}{_label(c)} | {float(c['agreement']):.3g} | "
              f"{'yes' if c['passed'] else 'NO'} |" for c in data["checks"]]
    verdict = "yes, every check passed" if data["verified"] else "NO — see the failed checks"
    lines += ["", "**Verified:** " + verdict]
    if data["skipped"]:
        lines += ["", "## Skipped", ""] + [f"- {name}: {why}" for name, why in data["skipped"].items()]
    lines += [f"\n> {n}" for n in data["notes"]]
    return "\n".join(lines)


def _label(check: dict[str, Any]) -> str:
    if check["proof"]:
        return " (proof)"
    return " (numerical evidence, not a proof)" if check["kind"] == "sampling" else ""


def _pure_md(entry: dict[str, Any] | None) -> list[str]:
    if not entry:
        return []
    out = ["", "## Pure-DP region", "",
           f"- supremum over the $({_tex(entry['eps0'])}, 0)$ region: **{entry['sup_location']}** — "
           f"{entry['argument']}"]
    if entry.get("log_ratio"):
        out += [f"- $\\log R = {_tex(entry['log_ratio'])}$; the selection is $({_tex(entry['epsilon'])})$-DP"]
    return out


def _renyi_md(entry: dict[str, Any] | None) -> list[str]:
    if not entry:
        return []
    out = ["", "## Rényi route (P&S Lemma 7)", "",
           f"- ${entry['term']}$: sup at **{entry['sup_location']}** — {entry['argument']}"]
    if entry.get("closed_form"):
        out.append(f"- closed form: ${_tex(entry['closed_form'])}$")
    if entry.get("ps_closed_form"):
        out.append(f"- {entry['theorem']}: $\\text{{term}}/(\\lambda-1) \\le {_tex(entry['ps_closed_form'])}$")
    return out


def _utility_md(entry: dict[str, Any] | None) -> list[str]:
    if not entry:
        return []
    t_opt = f" (optimal $t = {_tex(entry['tail_optimal_t'])}$)" if entry.get("tail_optimal_t") else ""
    quantile = (f"- expected quantile $1 - \\int_0^1 \\varphi = {_tex(entry['expected_quantile'])}$ "
                f"({entry['expected_quantile_kind']})" if entry.get("expected_quantile") else
                f"- expected quantile $1 - \\int_0^1 \\varphi$: {entry['expected_quantile_kind']}")
    return ["", "## Utility (P&S §3.6)", "", quantile,
            f"- success probability $1 - \\varphi(1 - 1/c) = {_tex(entry['success_probability'])}$",
            f"- tail $P[K \\ge k] \\le \\min_{{t \\ge 0}} {_tex(entry['tail_bound'])}${t_opt}"]
