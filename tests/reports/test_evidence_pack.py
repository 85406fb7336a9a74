"""The evidence pack: every clause the tests name, none left without a test, and their results.

The suite itself is read (tests/, as a lab receives it): each test named after a clause maps to
a clause of controller/reports/clauses.py and every clause there has a test. A small suite
run by pytest for real (``--junitxml``) gives each test's result: a clause is ``passed`` only
when all its tests passed, ``failed`` when one failed, and a test whose name claims a clause
the pack does not know is refused, naming it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.reports.clauses import CLAUSES, clause_of
from controller.reports.evidence import (
    FAILED,
    NOT_RUN,
    PASSED,
    EvidenceError,
    clause_evidence,
    junit_results,
)

SUITE = Path(__file__).resolve().parents[1]


def test_every_clause_the_suite_names_is_known_and_each_has_a_test() -> None:
    evidence = clause_evidence(SUITE)
    assert [item.clause for item in evidence] == list(CLAUSES)
    untested = [item.clause.citation for item in evidence if not item.tests]
    assert untested == []
    nodes = {test.node for item in evidence for test in item.tests}
    assert "tests/reports/test_evidence_pack.py::test_688a12_e_a_clause_of_this_file" in nodes


def test_688a12_e_a_clause_of_this_file() -> None:
    """Named after § 688a.12(e): the pack lists it under that clause."""
    clause = clause_of("test_688a12_e_a_clause_of_this_file")
    assert clause is not None
    assert clause.citation == "58 Pa. Code § 688a.12(e)"


def test_a_clause_is_the_longest_key_a_name_begins_with() -> None:
    assert getattr(clause_of("test_645a6_d2i_emperors_challenge"), "key", None) == "645a6_d2i"
    assert getattr(clause_of("test_645a6_d2_royal_match"), "key", None) == "645a6_d2"
    assert getattr(clause_of("test_688a1_a_player"), "key", None) == "688a1"
    assert clause_of("test_2000_nested_brackets") is None  # a number, not a clause
    assert clause_of("test_the_daemon_starts") is None


def _suite(folder: Path, body: str) -> Path:
    tests = folder / "tests"
    tests.mkdir()
    (tests / "test_small.py").write_text(body, encoding="utf-8")
    return tests


def test_the_results_of_a_real_run_give_each_clause_its_verdict(tmp_path: Path) -> None:
    tests = _suite(
        tmp_path,
        "import pytest\n\n"
        "def test_688a12_e_passes():\n    assert True\n\n"
        "def test_688a12_b_passes():\n    assert True\n\n"
        "def test_688a12_b_fails():\n    assert False\n\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_5320_8_one_case_fails(n):\n    assert n == 1\n\n"
        "class TestGrouped:\n    def test_3772_10_08_a_in_a_class(self):\n        assert True\n",
    )
    results = tmp_path / "results.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml",
         str(results), str(tests)],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    found = {item.clause.key: item for item in clause_evidence(tests, junit_results(results))}
    assert found["688a12_e"].verdict == PASSED
    assert found["688a12_b"].verdict == FAILED
    assert found["5320_8"].verdict == FAILED  # one of its two cases failed
    assert found["3772_10_08_a"].verdict == PASSED
    assert [test.node for test in found["3772_10_08_a"].tests] == [
        "tests/test_small.py::TestGrouped::test_3772_10_08_a_in_a_class"
    ]
    assert found["645a6"].verdict == "NO TEST"  # this small suite names none
    unrun = {item.clause.key: item for item in clause_evidence(tests)}
    assert unrun["688a12_e"].verdict == NOT_RUN


def test_a_test_named_after_an_unknown_clause_is_refused(tmp_path: Path) -> None:
    tests = _suite(tmp_path, "def test_688a99_z_a_made_up_clause():\n    assert True\n")
    with pytest.raises(EvidenceError, match="test_688a99_z_a_made_up_clause: names a clause"):
        clause_evidence(tests)


def test_a_results_file_that_is_no_junit_xml_is_refused(tmp_path: Path) -> None:
    (tmp_path / "results.xml").write_text("not xml <", encoding="utf-8")
    with pytest.raises(EvidenceError, match="not a JUnit XML file"):
        junit_results(tmp_path / "results.xml")
