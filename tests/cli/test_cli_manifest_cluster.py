"""One manifest approval for a cluster: each node's configuration, the same software.

A cluster's nodes run one software but each its own file (its ``node``, its addresses:
deploy/ha/), and any of them may take the sequencer over, so each must pass its start-up
self-check against the journal they share. ``jackpotd manifest approve`` takes ``--config``
once per node and journals one signed approval naming every node's digest (docs/ha.md,
"Approving a cluster"); a later approval replaces the whole set, so a node left out of it can
no longer start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import TYPE_CHECKING

from support.deploy.software_rig import ROOT, WAIT_S, write_config
from support.ledger.approvals import PASSPHRASE, Site

from controller.config.load import load_config
from controller.ledger_journal.sqlite import Journal
from controller.security.manifest import approved_configurations

if TYPE_CHECKING:
    from pathlib import Path


def jackpotd(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=ROOT,
        env=os.environ | {"JACKPOTD_PASSPHRASE": PASSPHRASE},
    )  # fmt: skip


def node_files(folder: Path, *nodes: str) -> list[Path]:
    """One site's configuration, one file per node: the same but for ``[controller] node``."""
    base = write_config(folder).read_text(encoding="utf-8")
    files = []
    for node in nodes:
        path = folder / f"{node}.toml"
        path.write_text(base.replace("[controller]\n", f'[controller]\nnode = "{node}"\n', 1))
        files.append(path)
    return files


def test_one_approval_covers_every_node_and_a_later_one_replaces_the_set(tmp_path: Path) -> None:
    node1, node2, node3 = node_files(tmp_path, "node1", "node2", "node3")
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        site = Site.create(journal)
        site.approve(load_config(node1))  # what the configuration changes (the same for all)
        key = site.key_file("mgr", tmp_path)
    db, signer = ("--db", str(database)), ("--key", str(key))

    approved = jackpotd("manifest", "approve", "--config", str(node1), "--config", str(node2),
                        "--config", str(node3), *db, *signer)  # fmt: skip
    assert approved.returncode == 0, approved.stderr
    with Journal(database) as journal:
        manifest = journal.state.manifest
    assert manifest is not None
    digests = {load_config(path).digest for path in (node1, node2, node3)}
    assert approved_configurations(manifest) == digests
    assert manifest.configuration == ",".join(sorted(digests))  # signed as one string
    for path in (node1, node2, node3):
        checked = jackpotd("manifest", "check", "--config", str(path), *db)
        assert checked.returncode == 0, (path.name, checked.stdout, checked.stderr)

    (tmp_path / "other").mkdir()
    (stranger,) = node_files(tmp_path / "other", "node4")
    refused = jackpotd("manifest", "check", "--config", str(stranger), *db)
    assert refused.returncode == 1
    assert "the configuration file differs from the approved one" in refused.stdout

    # node3 leaves the cluster: the next approval names node1 and node2 only.
    again = jackpotd("manifest", "approve", "--config", str(node1), "--config", str(node2),
                     *db, *signer)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert jackpotd("manifest", "check", "--config", str(node2), *db).returncode == 0
    left_out = jackpotd("manifest", "check", "--config", str(node3), *db)
    assert left_out.returncode == 1
    assert "the configuration file differs from the approved one" in left_out.stdout


def test_an_approval_of_several_files_without_db_opens_the_journal_the_first_names(
    tmp_path: Path,
) -> None:
    node1, node2 = node_files(tmp_path, "node1", "node2")
    database = load_config(node1).controller.journal
    with Journal(database) as journal:  # type: ignore[arg-type]
        site = Site.create(journal)
        site.approve(load_config(node1))
        key = site.key_file("mgr", tmp_path)
    approved = jackpotd("manifest", "approve", "--config", str(node1), "--config", str(node2),
                        "--key", str(key))  # fmt: skip
    assert approved.returncode == 0, approved.stderr
    with Journal(database) as journal:  # type: ignore[arg-type]
        manifest = journal.state.manifest
    assert manifest is not None
    assert approved_configurations(manifest) == {load_config(p).digest for p in (node1, node2)}
