"""``jackpotd evidence``: the evidence pack a gaming lab reads, made from the source tree.

docs/operations.md, "The evidence pack"; the pack itself is controller/reports/evidence.py's.
It writes ``evidence.json`` (everything, exactly) and ``evidence.md`` (the same as tables) into
``--out``: each regulation clause the controller meets, the tests named after it and each
one's last result (from ``--results``, a JUnit XML file of a run of the suite), the software's
version and digests, and the analyzer's certificate of every paytable the configuration puts
in use. It exits 1 when a clause has no test or a test that proves one failed; a test that
names a clause the pack does not know is refused in one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller import __version__
from controller.analyzer.report import Analyzer
from controller.cli.common import command
from controller.config.load import load_config
from controller.files import RECORD, write_file
from controller.reports.evidence import FAILED, certificate, clause_evidence, junit_results
from controller.security.manifest import current, software_files

if TYPE_CHECKING:
    import argparse

    from controller.reports.evidence import ClauseEvidence


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``evidence`` to the command line."""
    parser = command(
        commands,
        "evidence",
        help="write the evidence pack: each clause, the tests that prove it, the digests and "
        "the paytables' certificates",
        examples=(
            "  jackpotd evidence --results results.xml --config deploy/jackpotd.toml --out pack\n"
            "  jackpotd evidence --out pack   # the clauses and their tests, no results"
        ),
    )
    parser.add_argument(
        "--tests", type=Path, default=Path("tests"), metavar="DIR", help="the suite's folder"
    )
    parser.add_argument(
        "--results",
        type=Path,
        metavar="FILE.xml",
        help="a JUnit XML file of a run of the suite (pytest --junitxml): each test's result",
    )
    parser.add_argument(
        "--config", type=Path, metavar="FILE", help="the configuration whose paytables to certify"
    )
    parser.add_argument("--out", type=Path, required=True, metavar="DIR", help="where to write")
    parser.set_defaults(run=run)


def _paytables(config: Path | None) -> list[dict[str, Any]]:
    """The certificate of every paytable the configuration's tables play, once each."""
    if config is None:
        return []
    refs = {ref.name: ref for table in load_config(config).tables for ref in table.paytables}
    analyzer = Analyzer()
    return [
        certificate(analyzer.analyze(ref.paytable), ref.text) for _, ref in sorted(refs.items())
    ]


def _markdown(document: dict[str, Any]) -> str:
    software = document["software"]
    made = (
        f"jackpotd {software['version']}, software sha256 `{software['sha256']}`; "
        f"results: {document['results'] or 'none given'}"
    )
    lines = [
        "# Evidence pack",
        "",
        made,
        "",
        "## The clauses and the tests that prove them",
        "",
        "| clause | what it asks | tests | result |",
        "|---|---|---|---|",
    ]
    for clause in document["clauses"]:
        tests = "<br>".join(f"`{test['node']}` {test['result']}" for test in clause["tests"])
        lines.append(
            f"| {clause['citation']} | {clause['asks']} | {tests or 'none'} | {clause['verdict']} |"
        )
    lines += ["", "## Paytables in use", ""]
    if not document["paytables"]:
        lines.append("No configuration was given: no paytable is certified.")
    for paytable in document["paytables"]:
        lines += [
            f"### {paytable['paytable']}: {paytable['title']}",
            "",
            f"Source: {paytable['source']}. Text sha256 `{paytable['sha256']}`. "
            f"{paytable['counted']:,} outcomes counted exactly. Return {paytable['return']}, "
            f"house edge {paytable['house_edge']}"
            + (
                f"; at the seed {paytable['return_at_seed']}, R(M) = {paytable['return_base']}"
                f" + {paytable['return_per_meter_cent']} M (M in cents)"
                if "return_at_seed" in paytable
                else ""
            )
            + ".",
            "",
        ]
    lines += ["## The software's files", "", "| sha256 | file |", "|---|---|"]
    lines += [f"| `{digest}` | {name} |" for name, digest in document["software"]["files"]]
    return "\n".join(lines) + "\n"


def _clause(evidence: ClauseEvidence) -> dict[str, Any]:
    return {
        "key": evidence.clause.key,
        "citation": evidence.clause.citation,
        "asks": evidence.clause.asks,
        "tests": [{"node": test.node, "result": test.result} for test in evidence.tests],
        "verdict": evidence.verdict,
    }


def run(args: argparse.Namespace) -> int:
    """Write the pack; exit 1 if a clause has no test or a proving test failed."""
    results = None if args.results is None else junit_results(args.results)
    clauses = clause_evidence(args.tests, results)
    manifest = current(load_config(args.config).digest if args.config else "")
    document = {
        "software": {
            "version": __version__,
            "sha256": manifest.software,
            "files": [list(entry) for entry in software_files()],
        },
        "results": None if args.results is None else str(args.results),
        "clauses": [_clause(evidence) for evidence in clauses],
        "paytables": _paytables(args.config),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    write_file(args.out / "evidence.json", json.dumps(document, indent=2).encode(), RECORD)
    write_file(args.out / "evidence.md", _markdown(document).encode(), RECORD)
    untested = [evidence.clause.citation for evidence in clauses if not evidence.tests]
    failed = [evidence.clause.citation for evidence in clauses if evidence.verdict == FAILED]
    proving = sum(len(evidence.tests) for evidence in clauses)
    print(
        f"wrote {args.out}/evidence.json and evidence.md: {len(clauses)} clauses, {proving} tests"
    )
    for citation in untested:
        print(f"no test names {citation}")
    for citation in failed:
        print(f"a test of {citation} failed")
    return 1 if untested or failed else 0
