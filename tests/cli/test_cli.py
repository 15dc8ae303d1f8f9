"""The command line: JSON on stdout, one-line errors with a non-zero exit."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from click.testing import CliRunner

from symsel.cli import main


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_dist_json_tnb_mean_1000():
    result = run("dist", "tnb(eta=1, gamma=0.001)", "--json")
    assert result.exit_code == 0, result.output
    facts = json.loads(result.output)
    assert facts["mean"] == pytest.approx(1000, rel=1e-12)
    for key in ("mean", "variance", "p0", "expected_quantile", "pgf", "dpgf"):
        assert key in facts
    # Geometric with gamma = 1e-3: variance (1 - gamma) / gamma^2.
    assert facts["variance"] == pytest.approx(0.999 / 1e-6, rel=1e-12)


def test_dist_json_user_pgf_poisson():
    result = run("dist", "pgf(expr='exp(mu*(z-1))', mu=10)", "--json", "--candidates", "10")
    facts = json.loads(result.output)
    assert facts["mean"] == pytest.approx(10, rel=1e-14)
    assert facts["p0"] == pytest.approx(math.exp(-10), rel=1e-14)
    assert facts["success_probability"] == pytest.approx(1 - math.exp(-1), rel=1e-12)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["dist", "tnb(eta=-2, gamma=0.5)"], "parameter eta=-2"),
        (["dist", "tnbb(eta=1)"], "unknown name 'tnbb'"),
        (["dist", "poisson(mean=1"], "syntax error"),
        (["dist", "--candidates", "0.5", "poisson(mean=1)"], "parameter candidates=0.5"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(args, fragment):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    assert lines[0].startswith("symsel: error:")
    assert fragment in lines[0]
    assert "Traceback" not in result.output


def test_console_entry_point_runs_as_a_module():
    proc = subprocess.run([sys.executable, "-m", "symsel", "dist", "poisson(mean=2)", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["mean"] == pytest.approx(2)
    bad = subprocess.run([sys.executable, "-m", "symsel", "dist", "poisson(mean=-2)"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stdout == ""
    assert bad.stderr.count("\n") == 1 and "parameter mean=-2" in bad.stderr


def test_bound_all_methods_are_ordered():
    """Issue example: envelope <= fdp <= polygon <= paper < rdp for geometric(mean=30) on gaussian(sigma=4) (regions
    that shrink give bounds that shrink), and best is the envelope's 1.789124 (pinned; certified lower 1.788591)."""
    result = run("bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)", "--delta", "1e-6",
                 "--method", "all", "--json")
    assert result.exit_code == 0, result.output
    eps = {r["method"]: r["epsilon"] for r in json.loads(result.output)["results"]}
    assert set(eps) == {"paper", "polygon", "fdp", "envelope", "composition", "interval", "rdp", "rdp_lemma7", "best"}
    assert eps["envelope"] < eps["fdp"] <= eps["polygon"] <= eps["paper"] < eps["rdp"]
    assert eps["envelope"] < eps["rdp_lemma7"]
    assert eps["best"] == pytest.approx(1.789124, rel=1e-6) and eps["best"] >= 1.788591
    assert eps["interval"] >= 1.788591  # a bound valid for any law on a Gaussian base: never below the truth
    for r in json.loads(result.output)["results"]:
        assert {"method", "theorem", "epsilon", "delta", "mean_K", "certificate", "details"} <= set(r)


def test_bound_pure_tnb_paper_is_2_5():
    result = run("bound", "--dist", "tnb(eta=0.5, gamma=0.01)", "--base", "pure(eps=1)", "--delta", "0",
                 "--method", "paper", "--json")
    record = json.loads(result.output)
    assert record["epsilon"] == pytest.approx(2.5, abs=1e-12)
    assert record["mean_K"] == pytest.approx(0.5 * 0.99 / (0.01 * (1 - 0.1)), rel=1e-12)


def test_bound_reports_inapplicable_methods_with_a_reason():
    result = run("bound", "--dist", "two_point(L=10, s=0.5)", "--base", "gaussian(sigma=4)", "--delta", "1e-6",
                 "--method", "all", "--json")
    records = {r["method"]: r for r in json.loads(result.output)["results"]}
    assert records["paper"]["epsilon"] is None and "polygon" in records["paper"]["reason"]
    assert records["fdp"]["epsilon"] > 0


def test_profile_gaussian_matches_the_analytic_formula():
    """delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), mu = 1/4, written here with math.erfc."""
    result = run("profile", "gaussian(sigma=4)", "--epsilon", "1", "--json")
    record = json.loads(result.output)
    mu, eps = 0.25, 1.0
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    expected = phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2)
    assert record["delta"] == pytest.approx(expected, rel=1e-12)


def test_profile_dpsgd_matches_dp_accounting():
    import dp_accounting
    from dp_accounting.pld import pld_privacy_accountant

    result = run("profile", "dpsgd(q=0.01, sigma=1.1, steps=1000)", "--delta", "1e-5", "--json")
    event = dp_accounting.SelfComposedDpEvent(
        dp_accounting.PoissonSampledDpEvent(0.01, dp_accounting.GaussianDpEvent(1.1)), 1000)
    accountant = pld_privacy_accountant.PLDAccountant()
    accountant.compose(event)
    assert json.loads(result.output)["epsilon"] == pytest.approx(accountant.get_epsilon(1e-5), rel=1e-9)


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)", "--delta", "2"], "parameter delta=2"),
        (["bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)", "--epsilon", "-1"], "epsilon=-1"),
        (["bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)", "--delta", "1e-6", "--method", "x"],
         "parameter method='x'"),
        (["bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=-4)", "--delta", "1e-6"], "sigma"),
        (["bound", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)"], "exactly one of --delta"),
        (["bound", "--dist", "geometric(mean=30)"], "Missing option '--base'"),
        (["profile", "gaussian(sigma=4)", "--delta", "-0.1"], "parameter delta=-0.1"),
        (["verify", "--example", "nope"], "nope"),
    ],
)
def test_more_bad_input_is_one_line(args, fragment):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0], result.output


def test_verify_xiang_example():
    result = run("verify", "--example", "xiang-example-1", "--json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output)
    assert record["exact_epsilon"] == pytest.approx(2.96, abs=0.005)
    assert record["bounds"]["paper"] == pytest.approx(3.0, abs=1e-9)
    assert record["sound"] is True


def test_verify_selection_brackets_the_truth():
    result = run("verify", "--dist", "geometric(mean=30)", "--base", "gaussian(sigma=4)", "--delta", "1e-6", "--json")
    record = json.loads(result.output)
    assert record["monotone_order_epsilon"] < record["lower_bound"]
    assert all(v >= record["lower_bound"] for v in record["bounds"].values())
    assert record["sound"] is True and 1 <= record["ratio"] < 1.2


def test_audit_is_below_the_exact_value():
    result = run("audit", "--example", "xiang-example-1", "--delta", "0", "--trials", "200000", "--json")
    record = json.loads(result.output)
    assert 0 < record["epsilon_lower"] <= 2.9646


def test_rnm_profile_bound_is_m_times_delta_at_sensitivity_two():
    """Koskela et al. Thm 3.2: m delta(eps) with the Gaussian profile at sensitivity 2 (mu = 2/sigma),
    written here with math.erfc."""
    result = run("rnm", "--m", "100", "--base", "gaussian(sigma=4)", "--epsilon", "2", "--method", "profile",
                 "--json")
    record = json.loads(result.output)
    mu, eps = 0.5, 2.0
    phi = lambda x: 0.5 * math.erfc(-x / math.sqrt(2))  # noqa: E731
    expected = 100 * (phi(-eps / mu + mu / 2) - math.exp(eps) * phi(-eps / mu - mu / 2))
    assert record["delta"] == pytest.approx(expected, rel=1e-10)


def test_rnm_figure_1_ordering():
    result = run("rnm", "--m", "1000", "--base", "gaussian(sigma=4)", "--delta", "1e-6", "--json")
    eps = {r["method"]: r["epsilon"] for r in json.loads(result.output)["results"]}
    assert eps["profile"] < eps["rdp"] < eps["gaussian_tail"]


def test_rnm_bad_m_is_one_line():
    result = CliRunner().invoke(main, ["rnm", "--m", "0", "--base", "gaussian(sigma=4)", "--delta", "1e-6"])
    assert result.exit_code == 2 and "parameter m=0" in result.output


# ----------------------------------------------------------------------------- errors as JSON, help, the δ1 edge
def _symsel(*args):
    return subprocess.run([sys.executable, "-m", "symsel", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("args", [
    ("bound", "--dist", "poisson(mean=-1)", "--base", "gaussian(sigma=4)", "--delta", "1e-6", "--json"),
    ("bound", "--dist", "poisson(mean=1)", "--bogus", "1", "--json"),
    ("dist", "pgf(expr='1.2*z^100 - 0.2*z^101')", "--json"),
])
def test_errors_with_json_print_one_json_object_on_stdout_and_one_line_on_stderr(args):
    proc = _symsel(*args)
    assert proc.returncode == 2
    record = json.loads(proc.stdout)
    assert set(record) == {"error", "kind", "exit_status"} and record["exit_status"] == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("symsel: error: ")
    assert record["error"] in proc.stderr


def test_errors_without_json_print_nothing_on_stdout():
    proc = _symsel("bound", "--dist", "poisson(mean=-1)", "--base", "gaussian(sigma=4)", "--delta", "1e-6")
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1


def test_help_summaries_are_whole_sentences():
    """Each command's summary in `symsel --help` ends its first sentence (click cut "Xiang et al." to "(Xiang et
    al." and long summaries after 45 characters with "...")."""
    text = _symsel("--help").stdout
    commands = text[text.index("Commands:"):]
    assert "..." not in commands
    assert "Monte Carlo audit (Xiang et al. Sec. 4.1): an empirical lower bound" in " ".join(commands.split())


def test_one_run_of_an_approx_base_at_its_own_delta_is_its_own_epsilon():
    """point(1) on approx(eps=1, delta=1e-6) at δ = 1e-6 (the edge δ = m δ1; spec numbers are exact decimals, so
    δ1 is the requested δ): the selection is the base, (1, 1e-6)-DP, and every hockey-stick method answers 1 (the
    envelope to its stated rounding: its largest breakpoint carries a 1e-9 allowance), and so does the Rényi route
    (Lemma 20 spends all of δ on the base's δ1; the rest is the selection's D_∞ bound, 1 for one run)."""
    from symsel import bound, parse_distribution, parse_profile

    dist, base = parse_distribution("point(k=1)"), parse_profile("approx(eps=1, delta=1e-6)")
    for method in ("composition", "fdp", "polygon", "envelope", "rdp", "rdp_lemma7", "best"):
        assert 1.0 <= bound(dist, base, method).epsilon(1e-6) <= 1.0 + 1e-8, method


def test_bound_help_names_every_method() -> None:
    """`symsel bound --help` lists every member of symsel.METHODS under --method (and "all"), read from the registry:
    the hand-written list it replaced had left out composition and interval."""
    import re

    import symsel

    result = run("bound", "--help")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    listed = re.search(r"--method TEXT (.*?) \[default: best\]", text)
    assert listed is not None, text
    assert listed.group(1).split(" | ") == [*symsel.METHODS, "all"]


@pytest.mark.parametrize("args", [
    ("bound", "--dist", "geometric(mean=3)", "--base", "gaussian(sigma=4)", "--delta", "1e-6"),
    ("bound", "--dist", "geometric(mean=3)", "--base", "gaussian(sigma=4)", "--delta", "1e-6", "--json"),
    ("bound", "--dist", "geometric(mean=3)", "--base", "gaussian(sigma=4)", "--delta", "nan", "--json"),
    ("--help",),
])
def test_a_full_stdout_is_one_line_and_exit_2(args):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "symsel", *args], stdout=full, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("symsel: error:"), done.stderr


def test_rnm_with_a_401_digit_m_is_answered():
    result = CliRunner().invoke(main, ["rnm", "--m", "1" + "0" * 400, "--base", "gaussian(sigma=4)", "--delta",
                                       "1e-6", "--method", "profile", "--json"])
    assert result.exit_code == 0, result.output
    assert math.isfinite(json.loads(result.stdout)["epsilon"])


def test_composing_with_a_nearly_non_private_base_is_answered_by_the_pipeline():
    """A final run of gaussian(sigma=1e-3) (μ = 1000) after the search: answered by symsel.with_final_run, a finite
    certified ε that is at least the final run's own exact ε (the pipeline releases it)."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    result = CliRunner().invoke(main, ["bound", "--dist", "geometric(mean=3)", "--base", "gaussian(sigma=4)",
                                       "--delta", "1e-6", "--compose-with", "gaussian(sigma=1e-3)", "--json"])
    assert result.exit_code == 0, result.output
    composed = float(json.loads(result.stdout)["composed"]["epsilon"])
    mu = 1000.0  # the Gaussian mechanism's exact δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2), solved in log space
    log_delta = lambda eps: norm.logcdf(-eps / mu + mu / 2) + math.log1p(  # noqa: E731
        -math.exp(eps + norm.logcdf(-eps / mu - mu / 2) - norm.logcdf(-eps / mu + mu / 2)))
    own = brentq(lambda eps: log_delta(eps) - math.log(1e-6), 1.0, 1e7)
    assert own <= composed < math.inf
