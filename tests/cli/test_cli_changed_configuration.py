"""docs/operations.md, "After a change of the configuration": one order, said once, then it runs.

A site running an approved file and manifest changes the file (a table's minimum wager, which
moves money). ``jackpotd run`` refuses in one line that names both approvals in the page's
order, the configuration first; the page's commands, run as written in that order, are all
it takes: the service starts on the next try, with no second refusal.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from support.deploy.software_rig import (
    ROOT,
    WAIT_S,
    approve_manifest,
    serves_and_stops,
    write_config,
)
from support.ledger.approvals import PASSPHRASE, Site

from controller.config.load import load_config
from controller.ledger_journal.sqlite import Journal

PAGE = ROOT / "docs" / "operations.md"


def documented_steps() -> list[list[str]]:
    """The section's commands as typed, each a list of words."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("### After a change of the configuration", 1)[1].split("\n### ", 1)[0]
    blocks = [block.split("```", 1)[0] for block in section.split("```sh\n")[1:]]
    lines = [line for block in blocks if "config approve" in block or "restart" in block
             for line in block.splitlines()]  # fmt: skip
    return [shlex.split(line, comments=True) for line in lines]


def jackpotd(config: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=config.parent,
        env=os.environ | {"JACKPOTD_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip


@pytest.mark.slow
def test_a_changed_configuration_is_approved_in_one_order_named_once(tmp_path: Path) -> None:
    config = write_config(tmp_path)
    database = load_config(config).controller.journal
    assert isinstance(database, Path)  # a journal file, not a PostgreSQL URL
    with Journal(database) as journal:
        site = Site.create(journal)
        site.approve(load_config(config))
        approve_manifest(site, config)
        site.key_file("mgr", tmp_path)
    minimum = 'bonus = "fortune-1"\nminimum_wager = "$5"\n'
    config.write_text(config.read_text().replace('bonus = "fortune-1"\n', minimum))

    refused = jackpotd(config, "run", "--config", str(config))
    assert refused.returncode == 1
    where = f"--config {config} --db {database} --key KEY_FILE"
    assert refused.stderr.splitlines()[-1] == (
        "jackpotd: start-up self-check failed: the configuration file differs from the approved "
        "one (a manager approves the configuration, then what is installed: "
        f"jackpotd config approve {where}, then jackpotd manifest approve {where}; "
        "docs/operations.md)"
    )

    steps = documented_steps()
    assert [words[:1] for words in steps] == [["jackpotd"]] * 3 + [["systemctl"]]
    outputs = []
    for words in steps[:3]:  # the manager's, through the service there; on the journal here
        argv = [
            {"/etc/jackpotd/jackpotd.toml": str(config), "dana.key": "mgr.key"}.get(word, word)
            for word in words[1:]
        ] + ["--db", str(database)]
        done = jackpotd(config, *argv)
        assert done.returncode == 0, (argv, done.stderr)
        outputs.append(done.stdout)
    assert "  table T1: minimum_wager $1.00 → $5.00" in outputs[0].splitlines()
    assert outputs[1].splitlines()[-1] == (
        f"next, what is installed with this file: jackpotd manifest approve --config {config} "
        f"--db {database} --key KEY_FILE"
    )

    serves_and_stops(config, tmp_path)  # no second refusal
