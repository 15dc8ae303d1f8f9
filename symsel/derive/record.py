"""The :class:`Derivation` record: the symbolic facts of a law of ``K`` (and base), each claim with its check,
rendered as JSON, LaTeX and Markdown."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


@dataclass(frozen=True)
class Derivation:
    """What :func:`symsel.derive.derive` found (strings are LaTeX unless named ``*_text``).

    ``ratio`` is ``log phi'(q) - log phi'(q')``; ``sup_location`` is where its sup over the base's
    ``(eps1, delta1)`` polygon sits (``"vertex"``, ``"start"``, ``"end"``, or ``"unknown"``) and
    ``sup_argument`` why; ``eps_hat`` is the closed-form ``eps_hat(eps, eps1, delta1)`` of docs/ratio-methods.md
    (``H_{e^eps}(A||A') <= m delta_Q(eps_hat)``) or ``None``; ``envelope`` the closed-form envelope of
    docs/envelope.md or ``None`` (the certified numeric envelope is then what ``symsel.bound`` uses).

    ``pure_dp`` is the ratio's sup over the pure ``(eps0, 0)`` region (``sup_location``, ``argument``,
    ``log_ratio`` and the selection's ``epsilon = eps0 + log R``); ``renyi`` is P&S Lemma 7's term on the
    polygon (``sup_location``, ``argument``, ``closed_form``, ``ps_closed_form`` with its ``theorem``);
    ``utility`` holds ``expected_quantile``, ``success_probability``, ``tail_bound`` (and ``tail_optimal_t``).
    Each is ``None`` when skipped (see ``notes``).
    """

    spec: str
    pgf: str
    dpgf: str
    mean: str
    variance: str
    p0: str
    p1: str
    family: str | None
    family_params: dict[str, str]
    ratio: str
    sup_location: str
    sup_argument: str
    eps_hat: str | None
    eps_hat_theorem: str | None
    envelope: str | None
    base: str | None = None
    bound: dict[str, Any] = field(default_factory=dict)
    checks: tuple[Check, ...] = ()
    notes: tuple[str, ...] = ()
    pure_dp: dict[str, Any] | None = None
    renyi: dict[str, Any] | None = None
    utility: dict[str, Any] | None = None

    @property
    def verified(self) -> bool:
        return all(c.passed for c in self.checks)

    def latex(self) -> str:
        """A LaTeX ``align*`` block with every closed form."""
        rows = [
            rf"\varphi(z) &= {self.pgf}",
            rf"\varphi'(z) &= {self.dpgf}",
            rf"m = \varphi'(1) &= {self.mean}",
            rf"\operatorname{{Var}}[K] &= {self.variance}",
            rf"P[K=0] &= {self.p0}, \quad P[K=1] = {self.p1}",
            rf"\log\frac{{\varphi'(q)}}{{\varphi'(q')}} &= {self.ratio}",
        ]
        if self.eps_hat is not None:
            rows.append(rf"\hat\varepsilon &= {self.eps_hat}")
        if self.envelope is not None:
            rows.append(rf"H(t) &= {self.envelope}")
        if self.pure_dp and self.pure_dp.get("log_ratio"):
            rows.append(rf"\log R({self.pure_dp['eps0']}) &= {self.pure_dp['log_ratio']} "
                        rf"\quad \text{{(pure-DP region, sup at the {self.pure_dp['sup_location']})}}")
        if self.renyi and self.renyi.get("closed_form"):
            rows.append(rf"{self.renyi['term']} &= {self.renyi['closed_form']}")
            if self.renyi.get("ps_closed_form"):
                rows.append(rf"\frac{{\text{{term}}}}{{\lambda-1}} &\le {self.renyi['ps_closed_form']} "
                            rf"\quad \text{{({self.renyi['theorem']})}}")
        if self.utility:
            u = self.utility
            rows += [rf"E\!\left[\tfrac{{K}}{{K+1}}\right] = 1 - \int_0^1 \varphi &= {u['expected_quantile']}",
                     rf"1 - \varphi(1 - 1/c) &= {u['success_probability']}",
                     rf"P[K \ge k] &\le {u['tail_bound']}"]
        return "\\begin{align*}\n" + " \\\\\n".join(rows) + "\n\\end{align*}"

    def markdown(self) -> str:
        """A Markdown report: the closed forms, where the sup sits and why, the bound and every check."""
        fam = "none recognized" if self.family is None else self.family + " (" + ", ".join(
            f"${k} = {v}$" for k, v in self.family_params.items()) + ")"
        lines = [f"# Derivation for `{self.spec}`" + (f" with base `{self.base}`" if self.base else ""), "",
                 f"- family: {fam}",
                 f"- $\\varphi(z) = {self.pgf}$", f"- $\\varphi'(z) = {self.dpgf}$",
                 f"- mean $m = {self.mean}$, variance ${self.variance}$",
                 f"- $P[K=0] = {self.p0}$, $P[K=1] = {self.p1}$",
                 f"- ratio $\\log\\varphi'(q) - \\log\\varphi'(q') = {self.ratio}$",
                 "- supremum over the $(\\varepsilon_1, \\delta_1)$ polygon: "
                 f"**{self.sup_location}** — {self.sup_argument}"]
        if self.eps_hat is not None:
            lines.append(f"- $\\hat\\varepsilon = {self.eps_hat}$ ({self.eps_hat_theorem});"
                         "then $H_{e^\\varepsilon}(A\\|A') \\le m\\,\\delta_Q(\\hat\\varepsilon)$")
        lines.append("- envelope $H(t)$: " + (f"${self.envelope}$" if self.envelope else
                                              "no closed form here; the certified numeric envelope is used"))
        lines += _pure_md(self.pure_dp) + _renyi_md(self.renyi) + _utility_md(self.utility)
        if self.bound:
            lines += ["", "## Bound", ""] + [f"- {k}: {v}" for k, v in self.bound.items()]
        lines += ["", "## Checks", "", "| claim | kind | agreement | passed |", "|---|---|---|---|"]
        lines += [f"| {c.claim} | {c.kind}{_label(c)} | {c.agreement:.3g} | {'yes' if c.passed else 'NO'} |"
                  for c in self.checks]
        verdict = "yes, every check passed" if self.verified else "NO — see the failed checks"
        lines += ["", "**Verified:** " + verdict]
        lines += [f"\n> {n}" for n in self.notes]
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The JSON object of ``symsel derive --json``."""
        return {"spec": self.spec, "base": self.base, "pgf": self.pgf, "dpgf": self.dpgf, "mean": self.mean,
                "variance": self.variance, "p0": self.p0, "p1": self.p1, "family": self.family,
                "family_params": self.family_params, "ratio": self.ratio, "sup_location": self.sup_location,
                "sup_argument": self.sup_argument, "eps_hat": self.eps_hat, "eps_hat_theorem": self.eps_hat_theorem,
                "envelope": self.envelope, "bound": self.bound, "latex": self.latex(),
                "pure_dp": self.pure_dp, "renyi": self.renyi, "utility": self.utility,
                "checks": [c.to_json() for c in self.checks], "verified": self.verified, "notes": list(self.notes)}


def _label(check: Check) -> str:
    if check.proof:
        return " (proof)"
    return " (numerical evidence, not a proof)" if check.kind == "sampling" else ""


def _pure_md(entry: dict[str, Any] | None) -> list[str]:
    if not entry:
        return []
    out = ["", "## Pure-DP region", "",
           f"- supremum over the $({entry['eps0']}, 0)$ region: **{entry['sup_location']}** — {entry['argument']}"]
    if entry.get("log_ratio"):
        out += [f"- $\\log R = {entry['log_ratio']}$; the selection is $({entry['epsilon']})$-DP"]
    return out


def _renyi_md(entry: dict[str, Any] | None) -> list[str]:
    if not entry:
        return []
    out = ["", "## Rényi route (P&S Lemma 7)", "",
           f"- ${entry['term']}$: sup at **{entry['sup_location']}** — {entry['argument']}"]
    if entry.get("closed_form"):
        out.append(f"- closed form: ${entry['closed_form']}$")
    if entry.get("ps_closed_form"):
        out.append(f"- {entry['theorem']}: $\\text{{term}}/(\\lambda-1) \\le {entry['ps_closed_form']}$")
    return out


def _utility_md(entry: dict[str, Any] | None) -> list[str]:
    if not entry:
        return []
    t_opt = f" (optimal $t = {entry['tail_optimal_t']}$)" if entry.get("tail_optimal_t") else ""
    return ["", "## Utility (P&S §3.6)", "",
            f"- expected quantile $1 - \\int_0^1 \\varphi = {entry['expected_quantile']}$ "
            f"({entry['expected_quantile_kind']})",
            f"- success probability $1 - \\varphi(1 - 1/c) = {entry['success_probability']}$",
            f"- tail $P[K \\ge k] \\le {entry['tail_bound']}${t_opt}"]
