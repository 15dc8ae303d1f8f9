"""Rich display in Jupyter (symsel/display.py): what a law, a derivation and a bound show, checked against values
written here (PGFs built in the test with SymPy, ε rounded up with fractions), not against the display's own code."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
import xml.etree.ElementTree as ET
from fractions import Fraction

import matplotlib
import pytest
import sympy

import symsel
from symsel.display import derivation_markdown, lower_bound_cost
from symsel.distributions import z
from symsel.errors import NotApplicableError, ParameterError

matplotlib.use("Agg")

ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")
DELTAS = (1e-3, 1e-6, 1e-10)


def six_digits(value: float, up: bool) -> Fraction:
    """``value`` rounded up (or down) to 6 significant digits, exactly (fractions)."""
    exact = Fraction(value)
    scale = Fraction(10) ** (5 - math.floor(math.log10(value)))
    rounded = math.ceil(exact * scale) if up else math.floor(exact * scale)
    return Fraction(rounded) / scale


@pytest.fixture(scope="module")
def gaussian():
    return symsel.parse_profile("gaussian(sigma=4)")


@pytest.fixture(scope="module")
def envelope(gaussian):
    return symsel.bound(symsel.geometric(mean=10), gaussian, "envelope")


# ------------------------------------------------------------------------------------ laws
@pytest.mark.parametrize(("spec", "pgf", "mean", "support", "bounded"), [
    ("pgf(expr='z*exp(mu*(z-1))', mu=3)", z * sympy.exp(3 * (z - 1)), "4", r"\lbrace 1, 2, 3, \dots \rbrace",
     "(unbounded)"),
    ("point(k=5)", z**5, "5", r"\lbrace 5 \rbrace", "(bounded: a fixed number of runs)"),
    ("binomial(n=4, p=1/2)", (z / 2 + sympy.Rational(1, 2)) ** 4, "2", r"\lbrace 0, \dots, 4 \rbrace", "(bounded)"),
    ("pgf(expr='(1+z)^2/4')", (1 + z) ** 2 / 4, "1", r"\lbrace 0, \dots, 2 \rbrace", "(bounded)"),
    ("pgf(expr='z^3*(1+z)^2/4')", z**3 * (1 + z) ** 2 / 4, "4", r"\lbrace 3, \dots, 5 \rbrace", "(bounded)"),
])
def test_law_latex_shows_pgf_mean_support_and_spec(spec, pgf, mean, support, bounded):
    law = symsel.parse_distribution(spec)
    text = law._repr_latex_()
    assert rf"\varphi(z) = \mathbb{{E}}\left[z^K\right] = {sympy.latex(pgf)}$" in text
    assert rf"\mathbb{{E}}[K] = {mean}," in text
    assert rf"K \in {support}$ {bounded}" in text
    assert f"for $K \\sim$ {law.spec}:" in text
    assert text.count("$") % 2 == 0 and r"\{" not in text and r"\}" not in text


def test_law_latex_of_a_long_pgf_is_abbreviated():
    law = symsel.parse_distribution("pmf(expr='1/1000', k_min=1, k_max=1000)")
    text = law._repr_latex_()
    assert r"\frac{z^{1000}}{1000}" in text and r"\cdots" in text and r"\text{(1000 terms)}" in text
    assert r"\mathbb{E}[K] = \frac{1001}{2}" in text
    assert len(text) < 1000


def test_law_p0_is_shown_rounded_up():
    text = symsel.parse_distribution("binomial(n=20, p=0.5)")._repr_latex_()
    assert "P[K = 0] = 9.53675e-07" in text  # 2^-20 = 9.5367431640625e-07


def test_law_repr_is_readable():
    assert repr(symsel.geometric(mean=30)) == "Distribution(geometric(mean=30))"
    assert repr(symsel.parse_distribution("point(k=10)")) == "Distribution(point(k=10))"
    unlabelled = symsel.from_pgf(z * sympy.exp(sympy.Symbol("mu") * (z - 1)), {"mu": 3})
    assert repr(unlabelled) == "Distribution(pgf(expr='z*exp(mu*(z - 1))', mu=3))"


# ------------------------------------------------------------------------------------ derivations
def test_derivation_markdown_has_the_steps_as_math():
    derivation = symsel.derive("poisson(mean=3)")
    text = derivation._repr_markdown_()
    assert text.startswith("### Derivation for `poisson(mean=3)`")
    assert f"$\\varphi(z) = {sympy.latex(sympy.exp(3 * (z - 1)))}$" in text
    assert f"$\\varphi'(z) = {sympy.latex(3 * sympy.exp(3 * (z - 1)))}$" in text
    assert "mean $m = 3$" in text
    assert "#### Checks" in text and "\n# " not in text and "\n## " not in text
    assert r"\{" not in text and r"\}" not in text


def test_derivation_markdown_writes_set_braces_as_lbrace():
    class Stub:
        def markdown(self) -> str:
            return "# Title\n\n- support $\\{1, 2\\}$\n\n## Section"

    assert derivation_markdown(Stub()) == "### Title\n\n- support $\\lbrace 1, 2\\rbrace $\n\n#### Section"


# ------------------------------------------------------------------------------------ bounds
def _table(html_text: str) -> tuple[list[list[str]], dict[str, str]]:
    root = ET.fromstring(html_text)  # well-formed: every tag closed, every text escaped
    tables = root.findall("table")
    numbers, facts = tables[0], tables[-1]  # between them: the attack-risk table (test_bound_html_risk_table)
    rows = [[td.text or "" for td in tr.findall("td")] for tr in numbers.find("tbody").findall("tr")]
    info = {tr.find("th").text: tr.find("td").text for tr in facts.find("tbody").findall("tr")}
    return rows, info


def test_bound_html_table(envelope):
    html_text = envelope._repr_html_()
    rows, info = _table(html_text)
    assert [row[0] for row in rows] == ["0.001", "1e-06", "1e-10"]
    for (_, upper), delta in zip(rows, DELTAS, strict=True):
        assert Fraction(upper) == six_digits(envelope.epsilon(delta), up=True)
    # the envelope at delta = 1e-6 is 1.5571 (README's results table); no lower bound is searched for in a display
    assert 1.5571 <= float(rows[1][1]) < 1.558
    assert "symsel.lower_bound" in info["lower bound"] and "plot(lower=True)" in info["lower bound"]
    assert info["method"] == "envelope"
    assert info["theorem"] == envelope.theorem
    assert info["certificate"].startswith("eps_shift=0.0005")
    assert not ADDRESS.search(html_text)


def _risk_rows(html_text: str) -> list[list[str]]:
    root = ET.fromstring(html_text)
    table = next(t for t in root.iter("table") if (t.findtext("caption") or "").startswith("Attack risk"))
    return [[td.text or "" for td in tr.findall("td")] for tr in table.find("tbody").findall("tr")]


def test_risk_table_against_the_gaussian_closed_form():
    """On 0.5-GDP, from its exact (ε, δ) points at δ = 1e-3, 1e-6, 1e-10: each TPR of the table is the two families'
    bound min_i min(δ_i + e^{ε_i} α, 1 − e^{−ε_i}(1 − α − δ_i)) written out here at 50 digits, rounded up, never
    below the exact curve ``Φ(μ − Φ⁻¹(1 − α))``; β is at most the exact curve; the advantage at least the exact
    ``2Φ(μ/2) − 1`` (scipy and mpmath, not the code under test)."""
    import mpmath
    from scipy.stats import norm

    from symsel.display import risk_table_html

    base = symsel.parse_profile("gdp(mu=0.5)")
    epsilons = [base.epsilon(d) for d in DELTAS]
    rows = _risk_rows("<div>" + risk_table_html(epsilons, list(DELTAS)) + "</div>")
    assert [row[0] for row in rows] == ["0.001", "0.01", "0.1", "advantage"]
    with mpmath.workdps(50):
        for (_, tpr, beta), alpha in zip(rows[:3], (1e-3, 1e-2, 1e-1), strict=True):
            exact = norm.sf(norm.isf(alpha) - 0.5)
            a = mpmath.mpf(alpha)
            implied = min(min(mpmath.mpf(d) + mpmath.exp(e) * a, 1 - mpmath.exp(-e) * (1 - a - d))
                          for e, d in zip(epsilons, DELTAS, strict=True))
            assert exact <= float(tpr) and Fraction(tpr) >= six_digits(float(implied), up=True)
            assert float(tpr) <= float(implied) * (1 + 1e-9) + 1e-6
            assert Fraction(beta) <= six_digits(1 - exact, up=False)
    assert float(rows[3][1].removeprefix("TPR − FPR ≤ ")) >= 2 * norm.cdf(0.25) - 1


def test_bound_html_risk_table(envelope):
    """A selection's table: TPR bounds increase with the FPR, each at least the FPR (a blind guess reaches it) and
    at most one; the advantage at most ``δ(0)``."""
    rows = _risk_rows(envelope._repr_html_())
    tprs = [float(row[1]) for row in rows[:3]]
    assert all(f <= t <= 1 for f, t in zip((1e-3, 1e-2, 1e-1), tprs, strict=True)) and tprs == sorted(tprs)
    assert float(rows[3][1].removeprefix("TPR − FPR ≤ ")) <= float(envelope.delta(0.0))


def test_plot_tradeoff_draws_the_curve(envelope, gaussian):
    import matplotlib.pyplot as plt
    from scipy.stats import norm

    fprs = [1e-3, 0.01, 0.1, 0.5]
    ax = envelope.plot_tradeoff(fprs=fprs)
    try:
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert set(lines) == {"envelope: certified lower bound on β", "one run of the base",
                              "blind guess (β = 1 − α)"}
        base = lines["one run of the base"].get_ydata()  # σ = 4: 0.25-GDP, closed form
        assert all(b <= norm.cdf(norm.isf(a) - 0.25) <= b + 1e-4 for a, b in zip(fprs, base, strict=True))
        assert all(s <= b for s, b in zip(lines["envelope: certified lower bound on β"].get_ydata(), base,
                                          strict=True))
    finally:
        plt.close(ax.figure)


def test_bound_html_escapes_every_text(envelope):
    hostile = dataclasses.replace(envelope, theorem="a <b> & 'c' \"d\"")
    html_text = hostile._repr_html_()
    assert "a &lt;b&gt; &amp; &#x27;c&#x27; &quot;d&quot;" in html_text
    assert "<b>" not in html_text
    assert _table(html_text)[1]["theorem"] == "a <b> & 'c' \"d\""


def test_best_certificate_is_readable(gaussian):
    best = symsel.bound(symsel.geometric(mean=10), gaussian)
    text = repr(best.certificate)
    assert text.startswith("BestCertificate({'wins_at_delta_0.001': 'envelope'")
    assert not ADDRESS.search(text) and not ADDRESS.search(str(best.certificate))
    assert _table(best._repr_html_())[1]["certificate"].startswith(
        "smallest at delta 0.001: envelope, 1e-06: envelope, 1e-10: envelope;")


def test_no_lower_bound_where_it_is_not_cheap(gaussian):
    zcdp = symsel.bound(symsel.geometric(mean=10), symsel.parse_profile("zcdp(rho=0.1)"), "rdp")
    rows, info = _table(zcdp._repr_html_())
    assert all(len(row) == 2 for row in rows)
    assert [Fraction(row[1]) for row in rows] == [six_digits(zcdp.epsilon(d), up=True) for d in DELTAS]
    assert "not computed in a display" in info["lower bound"]
    assert "no dominating pair" in lower_bound_cost(zcdp.dist, zcdp.base)
    p, q = [1 / 20] * 20, [(1 + (i % 2) / 2) / 25 for i in range(20)]  # 20 atoms
    big_pair = symsel.parse_profile(f"pair(p={p}, q={q})")
    assert "20 atoms" in lower_bound_cost(symsel.geometric(mean=10), big_pair)
    long_law = symsel.parse_distribution("beta_binomial(n=20, a=2, b=3)")
    assert "operations" in lower_bound_cost(long_law, gaussian)
    assert lower_bound_cost(symsel.geometric(mean=10), symsel.parse_profile("laplace(scale=1)")) is None


def test_an_infinite_epsilon_is_shown_as_inf():
    approx = symsel.parse_profile("approx(eps=1, delta=1e-4)")  # 10 runs leak delta ~ 1e-3 > 1e-6
    bound = symsel.bound(symsel.geometric(mean=10), approx, "envelope")
    rows, _ = _table(bound._repr_html_())
    assert rows[2][1] == "inf" and math.isinf(bound.epsilon(1e-10))


# ------------------------------------------------------------------------------------ plot
def test_plot_draws_bound_lower_bound_and_base(envelope, gaussian):
    import matplotlib.pyplot as plt

    deltas = [1e-8, 1e-6, 1e-4]
    ax = envelope.plot(deltas=deltas, lower=True)
    try:
        assert isinstance(ax, matplotlib.axes.Axes)
        assert ax.get_xscale() == "log"
        lines = {line.get_label(): line for line in ax.get_lines()}
        assert set(lines) == {"envelope: certified upper bound", "certified lower bound", "one run of the base"}
        upper = lines["envelope: certified upper bound"]
        assert list(upper.get_xdata()) == deltas
        assert list(upper.get_ydata()) == [envelope.epsilon(d) for d in deltas]
        assert all(lo <= up for lo, up in zip(lines["certified lower bound"].get_ydata(), upper.get_ydata(),
                                              strict=True))
        assert list(lines["one run of the base"].get_ydata()) == [gaussian.epsilon(d) for d in deltas]
    finally:
        plt.close(ax.figure)


def test_plot_on_given_axes_without_a_cheap_lower_bound():
    import matplotlib.pyplot as plt

    bound = symsel.bound(symsel.geometric(mean=10), symsel.parse_profile("zcdp(rho=0.1)"), "rdp")
    fig, ax = plt.subplots()
    try:
        assert bound.plot(ax, deltas=(1e-6, 1e-3)) is ax
        assert [line.get_label() for line in ax.get_lines()] == ["rdp: certified upper bound", "one run of the base"]
        with pytest.raises(NotApplicableError, match="no dominating pair"):
            bound.plot(ax, deltas=(1e-6,), lower=True)
    finally:
        plt.close(fig)


@pytest.mark.parametrize("deltas", [[], [0.0, 1e-6], [1e-6, 1.0], ["x"], 3])
def test_plot_refuses_bad_deltas(envelope, deltas):
    with pytest.raises(ParameterError, match=r"SelectionBound.plot: parameter deltas=.* allowed: .*0 < delta < 1"):
        envelope.plot(deltas=deltas)


def test_plot_without_matplotlib_names_the_extra(envelope, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)  # import matplotlib.pyplot now raises ImportError
    with pytest.raises(ImportError, match=r"symsel\[notebooks\]"):
        envelope.plot(deltas=[1e-6])


def test_a_long_closed_form_of_a_derivation_is_shown_by_its_structure_and_kept_in_full() -> None:
    """A closed form longer than about two lines (an envelope H(t) of six long pieces) is displayed as its
    outermost operation, its number of pieces and where the full form is; short ones are shown as they are; the
    record keeps every form in full, and its repr is a line or two."""
    from symsel.derive.record import Check, Derivation, Expression
    from symsel.display import DERIVATION_LATEX_MAX

    t, d1, e1 = sympy.symbols("t delta_1 varepsilon_1", positive=True)
    pieces = [sympy.Integer(0)] + [(k + 2) * sympy.exp(k * d1 - e1 / (k + 1)) * t / (1 + sympy.exp(e1 + k))
                                   + sympy.log(t + k) for k in range(6)]
    envelope = Expression(sympy.Max(*pieces))
    assert len(envelope) > 2 * DERIVATION_LATEX_MAX
    short = Expression(sympy.Rational(10, 3))
    record = Derivation(spec="point(k=3)", pgf=Expression(z**3), dpgf=Expression(3 * z**2), mean=short,
                        variance=Expression(0), p0=Expression(0), p1=Expression(0), family=None, family_params={},
                        ratio=Expression(sympy.Symbol("q")), sup_location="vertex", sup_argument="proved",
                        eps_hat=None, eps_hat_theorem=None, envelope=envelope,
                        renyi={"term": "T", "sup_location": "end", "argument": "proved", "closed_form": envelope},
                        checks=(Check("a claim", "symbolic", 0.0, True),))
    text = record._repr_markdown_()
    maths = re.findall(r"\$[^$]+\$", text)
    assert max(len(m) for m in maths) <= DERIVATION_LATEX_MAX
    assert r"\max\lbrace \ldots\rbrace" in text and "in full: .envelope" in text
    assert f"largest of {len(envelope.expr.args)} pieces" in text
    assert "in full: .renyi['closed_form']" in text
    assert "mean $m = \\frac{10}{3}$" in text  # a short form as it is
    assert record.envelope == envelope and record.envelope.expr == sympy.Max(*pieces)  # kept in full
    assert len(repr(record)) <= 240 and repr(record).startswith("Derivation(spec='point(k=3)'")
    assert "sup_location='vertex'" in repr(record) and "1 of 1 passed" in repr(record)


@pytest.mark.parametrize(("law", "base"), [("geometric(mean=3)", "gaussian(sigma=1e-3)"),
                                           ("binomial(n=1000, p=0.5)", "gaussian(sigma=4)"),
                                           ("geometric(mean=10)", "gaussian(sigma=4)")])
def test_a_display_searches_for_no_lower_bound(law, base, monkeypatch):
    """A display computes nothing costly: ``_repr_html_`` evaluates the bound at its three δ only and ``plot()`` at
    its δ only, and neither calls the lower-bound search (minutes on a tiny noise, 36 CPU-s on a million trials),
    counted by replacing it and the bound's ``epsilon``."""
    import matplotlib.pyplot as plt

    from symsel.evidence import lower

    def no_search(*args, **kwargs):
        raise AssertionError("a display searched for a lower bound")

    monkeypatch.setattr(lower, "lower_bound", no_search)
    result = symsel.bound(symsel.parse_distribution(law), symsel.parse_profile(base), "rdp")
    calls = []
    real = type(result).epsilon

    def counted(self, delta):
        calls.append(delta)
        return real(self, delta)

    monkeypatch.setattr(type(result), "epsilon", counted)
    _table(result._repr_html_())
    assert calls == list(DELTAS)
    ax = result.plot(deltas=(1e-6, 1e-3))
    plt.close(ax.figure)
    assert calls[3:] == [1e-6, 1e-3]


def test_plot_refuses_an_axes_that_is_not_one():
    b = symsel.bound(symsel.geometric(mean=3), symsel.parse_profile("gaussian(sigma=4)"))
    with pytest.raises(ParameterError, match="ax='x'"):
        b.plot(ax="x")
    with pytest.raises(ParameterError, match=r"plot_tradeoff: parameter ax='x'"):
        b.plot_tradeoff(ax="x")
