"""``jackpotd fault ack --db FILE``: the acknowledgement journaled on the journal itself.

While the service is stopped the signing commands write the journal directly (``--db``, or
``--direct``; controller/cli/submit.py). A journal's first acknowledgement is the one the
ledger cannot hold to the newest fault (it counted none before it: docs/security.md,
"Acknowledging faults"), so the command does: one through an older fault is refused before
anything is signed, and one through the newest is journaled with the count of every fault.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from typing import TYPE_CHECKING

from support.ledger.approvals import PASSPHRASE, Site

from controller.clock import utc_now
from controller.events import FaultRecorded
from controller.ledger.faults import register_of
from controller.ledger_journal.sqlite import Journal

if TYPE_CHECKING:
    from pathlib import Path


def jackpotd(folder: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *argv],
        env=os.environ | {"JACKPOTD_PASSPHRASE": PASSPHRASE},
        capture_output=True, text=True, timeout=60, cwd=folder, check=False,
    )  # fmt: skip


def test_a_first_acknowledgement_through_an_older_fault_is_refused_and_the_newest_taken(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        site = Site.create(journal)
        ids = [f"fault-{uuid.uuid4()}" for _ in range(3)]
        for event_id in ids:
            site.append(FaultRecorded(event_id, utc_now(), "serial:/dev/ttyUSB1", "bad-frame"))
        key = site.key_file("sup1", tmp_path)
    older = jackpotd(tmp_path, "fault", "ack", "--db", str(path), "--through", ids[1],
                     "--note", "seen", "--key", str(key))  # fmt: skip
    assert older.returncode == 1
    assert f"{ids[1]} is not the newest fault ({ids[2]} is)" in older.stderr
    listed = jackpotd(tmp_path, "faults", "--db", str(path), "--json")
    assert [fault["event_id"] for fault in json.loads(listed.stdout)["faults"]] == ids
    done = jackpotd(tmp_path, "fault", "ack", "--db", str(path), "--through", ids[2],
                    "--note", "line reseated", "--key", str(key))  # fmt: skip
    assert done.returncode == 0, done.stderr
    with Journal(path) as journal:
        register = register_of(journal.state)
    assert register is not None
    assert (register.through, register.acknowledged, register.by) == (ids[2], 3, "sup1")
    after = jackpotd(tmp_path, "faults", "--db", str(path))
    assert "no fault waiting" in after.stdout
