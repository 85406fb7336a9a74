"""docs/operations.md, "The evidence pack": the command as written, on this very suite.

In a folder holding the suite (tests/) and the shipped configuration (deploy/), and the JUnit
results of a real run of a few of the suite's files, the section's command writes the pack:
every clause with its tests, the results of those that ran and ``not run`` for the others,
the software's digests as the manifest computes them, and a certificate of each paytable the
shipped configuration plays, its figures the analyzer's own.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

import pytest
from support.cli.month_of_play import documented, run_line

from controller.analyzer.report import Analyzer
from controller.config.load import load_config
from controller.reports.clauses import CLAUSES

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SECTION = "### The evidence pack"
RAN = ("tests/rules/test_ranking.py", "tests/rules/test_lines.py")


def test_the_pack_as_documented(tmp_path: Path) -> None:
    (tmp_path / "tests").symlink_to(ROOT / "tests")
    (tmp_path / "deploy").symlink_to(ROOT / "deploy")
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--junitxml",
         "results.xml", *RAN],
        cwd=tmp_path, capture_output=True, check=True,
    )  # fmt: skip
    (line,) = documented(SECTION)
    result = run_line(line, tmp_path, tmp_path / "no-journal.db")
    assert result.returncode == 0, result.stderr
    pack = json.loads((tmp_path / "pack" / "evidence.json").read_text())
    assert [clause["key"] for clause in pack["clauses"]] == [clause.key for clause in CLAUSES]
    assert all(clause["tests"] for clause in pack["clauses"])
    results = {test["node"]: test["result"] for c in pack["clauses"] for test in c["tests"]}
    assert results["tests/rules/test_ranking.py::test_645a6_a_ace_is_the_highest_card"] == "passed"
    for node, value in results.items():
        assert value == ("passed" if node.split("::")[0] in RAN else "not run"), node
    assert f"{len(CLAUSES)} clauses" in result.stdout
    shipped = load_config(ROOT / "deploy" / "jackpotd.toml")
    refs = {ref.name: ref for table in shipped.tables for ref in table.paytables}
    assert sorted(p["paytable"] for p in pack["paytables"]) == sorted(refs)
    analyzer = Analyzer()
    for certificate in pack["paytables"]:
        ref = refs[certificate["paytable"]]
        assert certificate["sha256"] == hashlib.sha256(ref.text.encode()).hexdigest()
        assert Fraction(certificate["return"]) == analyzer.analyze(ref.paytable).return_
    markdown = (tmp_path / "pack" / "evidence.md").read_text()
    assert "| 58 Pa. Code § 688a.12(e) |" in markdown
    assert pack["software"]["sha256"] in markdown
