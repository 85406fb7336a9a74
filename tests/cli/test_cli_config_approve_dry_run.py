"""docs/operations.md, "Approving the configuration": the dry run as the page prints it.

The page's two command lines (``--dry-run``, then ``--key``) are run as written, on a real
journal whose manager is enrolled with a key, by the real command line in a child process: the
dry run needs no key, signs nothing and says in a few lines what the approval changes, each
pool, table and setting old → new, never the events' JSON (paytables' text and all).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from support.config_files import BASE, write
from support.ledger.approvals import PASSPHRASE, Site

from controller.ledger_journal.sqlite import Journal

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "operations.md"


def documented(flag: str) -> list[str]:
    """The section's ``config approve`` line with ``flag``, its variables and paths put in."""
    section = PAGE.read_text(encoding="utf-8").split("### Approving the configuration", 1)[1]
    (line,) = [
        line
        for line in section.split("\n### ", 1)[0].splitlines()
        if "config approve" in line and flag in line
    ]
    words = shlex.split(line, comments=True)
    assert words[:1] == ["jackpotd"], line
    return words[1:]


def jackpotd(folder: Path, words: list[str]) -> subprocess.CompletedProcess[str]:
    argv = [
        {"/etc/jackpotd/jackpotd.toml": "jackpotd.toml", "/media/dana/dana.key": "mgr.key"}.get(
            word, word
        )
        for word in words
    ] + ["--db", "journal.db"]  # the page's journal is the installed one's
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        cwd=folder, capture_output=True, text=True, timeout=60, check=False,
        env=os.environ | {"JACKPOTD_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip


def rows(folder: Path) -> int:
    with Journal(folder / "journal.db") as journal:
        return len(list(journal.rows()))


def test_the_documented_dry_run_needs_no_key_and_says_what_changes_old_to_new(
    tmp_path: Path,
) -> None:
    write(tmp_path, BASE)
    with Journal(tmp_path / "journal.db") as journal:
        site = Site.create(journal, supervisors=())
        site.key_file("mgr", tmp_path)
    before = rows(tmp_path)

    first = jackpotd(tmp_path, documented("--dry-run"))
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == [
        "jackpotd.toml: what a manager's approval changes (nothing is signed):",
        "  pool main: new: progressive-1, seed $10,000.00, progression 28%, reserve 0%, limit none",
        (
            "  table t1: new: seats 6, minimum_wager $1.00, wager_limits bonus $1.00 to "
            "$1,000.00, bonus fortune-1, progressive progressive-1, pool main, envy_minimum "
            "$5.00, envy_includes_dealer false, tax_threshold $600.00, tax_wager_multiple 300, "
            "hit_order sequential"
        ),
        "  dual_control_amount: none → $10,000.00",
        "  configuration: approved for the first time",
    ]
    assert rows(tmp_path) == before  # nothing journaled, nothing signed

    approved = jackpotd(tmp_path, documented("--key"))
    assert approved.returncode == 0, approved.stderr
    assert re.fullmatch(
        r"journaled as row \d+ \(configuration/\S+\)", approved.stdout.split("\n")[0]
    )

    changed = BASE.replace('paytable = "progressive-1"', 'paytable = "progressive-1"\n'
                           'seed = "$12,000"\nlimit = "$250,000"', 1)  # fmt: skip
    changed = changed.replace('id = "c1"', 'id = "c1"\nlockout_after = 3\n'
                              'dual_control_amount = "$5,000"')  # fmt: skip
    write(tmp_path, changed + 'minimum_wager = "$5"\nmax_payout = "$100,000"\n')
    second = jackpotd(tmp_path, documented("--dry-run"))
    assert second.returncode == 0, second.stderr
    assert second.stdout.splitlines()[1:] == [
        "  pool main: seed $10,000.00 → $12,000.00 (once its jackpot is won)",
        "  pool main: limit none → $250,000.00 (once its jackpot is won)",
        "  table t1: minimum_wager $1.00 → $5.00",
        "  table t1: wager_limits bonus $1.00 to $1,000.00 → bonus $5.00 to $1,000.00",
        "  table t1: max_payout none → $100,000.00",
        "  dual_control_amount: $10,000.00 → $5,000.00",
        "  lockout_after: 5 → 3",
    ]


def test_approving_without_a_key_or_a_dry_run_is_a_usage_error(tmp_path: Path) -> None:
    write(tmp_path, BASE)
    done = jackpotd(tmp_path, ["config", "approve", "--config", "jackpotd.toml"])
    assert done.returncode == 2
    assert "the following arguments are required: --key (or --dry-run)" in done.stderr
    assert not (tmp_path / "journal.db").exists()
