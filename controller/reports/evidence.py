"""The evidence pack for a gaming lab: each clause, the tests that prove it, and their results.

Made from the source tree's tests (read, never imported or run: each ``test_*`` function of
each ``test_*.py`` under the folder, at module level or in a class, by Python's own parser),
an optional JUnit XML file of a run (``pytest --junitxml FILE``) for each test's last result,
the software manifest's digests (controller/security/manifest.py) and, for each paytable a
configuration puts in use, the analyzer's exact figures (its certificate). The clauses are
controller/reports/clauses.py's; the pack is refused (:class:`EvidenceError`) when a test
names a clause it does not know, and marks a clause no test names, so that neither goes
unseen.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from xml.etree import ElementTree as ET

from controller.errors import InputError
from controller.reports.clauses import CLAUSES, Clause, ClauseNameError, clause_of

if TYPE_CHECKING:
    from pathlib import Path

    from controller.analyzer.report import Analysis

PASSED, FAILED, SKIPPED, NOT_RUN = "passed", "failed", "skipped", "not run"


class EvidenceError(InputError):
    """The tests or the results cannot make an evidence pack; the message says which and why."""


@dataclass(frozen=True, slots=True)
class ProvingTest:
    """A test named after a clause: its node id as pytest prints it, and its last result."""

    node: str
    result: str


@dataclass(slots=True)
class ClauseEvidence:
    """One clause and the tests that prove it."""

    clause: Clause
    tests: list[ProvingTest] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """``passed`` if every test passed, ``failed`` if any failed, else what is known."""
        results = Counter(test.result for test in self.tests)
        if not self.tests:
            return "NO TEST"
        if results[FAILED]:
            return FAILED
        if results[PASSED] == len(self.tests):
            return PASSED
        return NOT_RUN if results[NOT_RUN] else SKIPPED


def _module(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def test_functions(tests: Path) -> list[tuple[str, str, str]]:
    """Each test function under ``tests``: (node id, dotted module, function name)."""
    root = tests.parent
    found: list[tuple[str, str, str]] = []
    for path in sorted(tests.rglob("test_*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        except (OSError, SyntaxError, UnicodeDecodeError) as error:
            raise EvidenceError(f"{path}: cannot be read as Python: {error}") from error
        relative = path.relative_to(root).as_posix()
        for node in tree.body:
            scoped: list[tuple[ast.stmt, str]] = [(node, "")]
            if isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
                scoped = [(item, f"{node.name}::") for item in node.body]
            for item, prefix in scoped:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    item.name.startswith("test_")
                ):
                    node_id = f"{relative}::{prefix}{item.name}"
                    found.append((node_id, _module(path, root), item.name))
    return found


def junit_results(path: Path) -> dict[tuple[str, str], str]:
    """(dotted module, function) -> its result in a JUnit XML file.

    A parametrized test's result is its worst case's: failed over skipped over passed.
    """
    try:
        # The lab's own file, from its own run of the suite; expat refuses entity expansion
        # attacks (Python 3.11's bundled expat 2.4+).
        tree = ET.parse(path)  # noqa: S314
    except (OSError, ET.ParseError) as error:
        raise EvidenceError(f"{path}: not a JUnit XML file: {error}") from error
    rank = {PASSED: 0, SKIPPED: 1, FAILED: 2}
    results: dict[tuple[str, str], str] = {}
    for case in tree.iter("testcase"):
        module = (case.get("classname") or "").split(".")
        while module and module[-1][:1].isupper():  # a test class: the module is above it
            module.pop()
        name = (case.get("name") or "").split("[", 1)[0]
        if case.find("failure") is not None or case.find("error") is not None:
            result = FAILED
        elif case.find("skipped") is not None:
            result = SKIPPED
        else:
            result = PASSED
        key = (".".join(module), name)
        if rank[result] >= rank[results.get(key, PASSED)]:
            results[key] = result
    return results


def clause_evidence(
    tests: Path, results: dict[tuple[str, str], str] | None = None
) -> list[ClauseEvidence]:
    """Every clause with the tests named after it, in the order of the registry."""
    evidence = {clause.key: ClauseEvidence(clause) for clause in CLAUSES}
    unknown: list[str] = []
    for node, module, name in test_functions(tests):
        try:
            clause = clause_of(name)
        except ClauseNameError as error:
            unknown.append(f"{node}: {error}")
            continue
        if clause is None:
            continue
        result = NOT_RUN if results is None else results.get((module, name), NOT_RUN)
        evidence[clause.key].tests.append(ProvingTest(node, result))
    if unknown:
        raise EvidenceError("; ".join(unknown))
    return list(evidence.values())


def certificate(analysis: Analysis, text: str) -> dict[str, Any]:
    """A paytable's certificate: what it is, its text's digest, and its exact figures."""
    paytable = analysis.paytable
    document: dict[str, Any] = {
        "paytable": paytable.name,
        "title": paytable.title,
        "source": paytable.source,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "counted": analysis.total,
        "return": _fraction(analysis.return_),
        "house_edge": _fraction(analysis.house_edge),
        "lines": [
            {
                "outcome": line.row.outcome,
                "count": line.count,
                "return": _fraction(line.fixed_return),
            }
            for line in analysis.lines
        ],
    }
    figures = analysis.progressive
    if figures is not None:
        break_even = figures.break_even_meter_cents
        document |= {
            "return_at_seed": _fraction(figures.return_at_seed),
            "return_base": _fraction(figures.return_base),
            "return_per_meter_cent": _fraction(figures.return_per_meter_cent),
            "break_even_meter_cents": None if break_even is None else _fraction(break_even),
        }
    return document


def _fraction(value: Any) -> str:  # noqa: ANN401 - a Fraction, as n/d
    return f"{value.numerator}/{value.denominator}" if value.denominator != 1 else str(value)
