"""The Markdown reads right on GitHub: every relative link of README.md and docs/*.md leads to a file that exists and,
with a #fragment, to a heading of it; and no math drops its braces (GitHub's Markdown eats the backslash of `\\{`
before the math is typeset, so `$\\{0, 1\\}$` shows as `{0, 1}` without braces: write `\\lbrace … \\rbrace`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "benchmarks" / "RESULTS.md"]

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"(`+)(?!`).+?(?<!`)\1(?!`)", re.S)
#: [text](target) and ![alt](target), the target up to a space (an optional "title" follows) or the closing parenthesis
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s.*)?$", re.M)


def _prose(text: str) -> str:
    """The text without fenced code blocks and inline code, where nothing is a link or math."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def github_anchor(heading: str) -> str:
    """GitHub's anchor of a heading: its text lowercased, punctuation dropped except '-' and '_', spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())  # a link in a heading anchors by its text
    text = text.lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "-_ ")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """Every anchor of a Markdown page: its headings' (duplicates numbered -1, -2, … as GitHub does) and explicit
    `<a name=…>` / `id=…` ones."""
    text = FENCE.sub("", page.read_text())
    found: set[str] = set()
    counts: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", text, re.M):
        anchor = github_anchor(heading)
        found.add(anchor if anchor not in counts else f"{anchor}-{counts[anchor]}")
        counts[anchor] = counts.get(anchor, 0) + 1
    found.update(re.findall(r"<a\s+(?:name|id)=\"([^\"]+)\"", text))
    return found


def links(page: Path) -> list[str]:
    prose = _prose(page.read_text())
    return LINK.findall(prose) + REFERENCE.findall(prose)


def _relative(target: str) -> bool:
    return not re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) and not target.startswith("//")


CASES = [(page, target) for page in PAGES for target in links(page) if _relative(target)]


def test_the_pages_have_relative_links():
    assert len(CASES) >= 20


@pytest.mark.parametrize(("page", "target"), CASES,
                         ids=[f"{page.relative_to(ROOT)}->{target}" for page, target in CASES])
def test_relative_link_resolves(page, target):
    path, _, fragment = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    assert destination.exists(), f"{page.relative_to(ROOT)}: {target} leads nowhere"
    if fragment:
        assert destination.suffix == ".md", f"{page.relative_to(ROOT)}: {target}: a #fragment on a non-Markdown file"
        assert fragment in anchors(destination), (
            f"{page.relative_to(ROOT)}: {target}: no heading of {destination.name} has the anchor #{fragment}")


@pytest.mark.parametrize("page", PAGES, ids=[str(page.relative_to(ROOT)) for page in PAGES])
def test_math_keeps_its_braces(page):
    prose = _prose(page.read_text())
    for math in re.findall(r"\$\$.+?\$\$|\$[^$\n]+?\$", prose, re.S):
        assert "\\{" not in math and "\\}" not in math, f"{page.relative_to(ROOT)}: {math!r}: write \\lbrace … \\rbrace"


def test_github_anchor_rule():
    assert github_anchor("Fixed K: the gap, and how the interval bound closes it") == (
        "fixed-k-the-gap-and-how-the-interval-bound-closes-it")
    assert github_anchor("Results (`symsel report`)") == "results-symsel-report"
    assert github_anchor("Private hyperparameter search (Optuna, `pip install 'symsel[hpo]'`)") == (
        "private-hyperparameter-search-optuna-pip-install-symselhpo")
    assert github_anchor("snake_case and-dash") == "snake_case-and-dash"
