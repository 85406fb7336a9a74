"""``jackpotd pool suspend|resume|transfer``, and docs/operations.md "A pool's life" as written.

A real signed journal with an identity: managers Dana Reyes and Lee Chen and supervisor Sam
Okafor, their key files beside it, and the approved pool ``fortune-floor`` with its table. A
pool taken out of play on a malfunction keeps what it holds (68 IAC 2-6-33) and nothing reduces
a jackpot outside a documented decision (Mich. Admin. Code R 432.1838(4)).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import msgspec
import pytest
from support.journal.journal_rig import NOTHING, pool_opened, settle, table_configured, wager
from support.ledger.approvals import PASSPHRASE, Site, key_file, now

from controller.cli import main
from controller.effects import fraction_text
from controller.events import ConfigurationApproved
from controller.ledger_journal.sqlite import Journal

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "operations.md"
POOL = "fortune-floor"
DANA, LEE, SAM = "Dana Reyes", "Lee Chen", "Sam Okafor"
FILES = {DANA: "dana.key", LEE: "lee.key", SAM: "sam.key"}
WAIT_S = 120


@dataclass
class Floor:
    """The journal, its folder (the key files) and the operators' keys."""

    folder: Path
    database: Path
    site: Site[Journal]
    capsys: pytest.CaptureFixture[str]

    def run(self, *argv: str) -> tuple[int, str, str]:
        """``jackpotd ARGV --db JOURNAL`` in process: the status, standard output and error."""
        status = main([*argv, "--db", str(self.database)])
        captured = self.capsys.readouterr()
        return status, captured.out, captured.err

    def meters(self) -> dict[str, object]:
        """The pool as `jackpotd meters --json` gives it."""
        return self.meters_of(POOL)

    def meters_of(self, pool_id: str) -> dict[str, object]:
        """A pool as `jackpotd meters --json` gives it."""
        status, out, err = self.run("meters", "--json")
        assert status == 0, err
        (pool,) = (pool for pool in json.loads(out)["pools"] if pool["pool"] == pool_id)
        return dict(pool)


@pytest.fixture
def pool_life_floor(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> Floor:
    database = tmp_path / "journal.db"
    with Journal(database) as journal:
        site = Site.create(journal, manager=DANA, supervisors=(SAM,))
        site.enroll(LEE, "manager", by=DANA)
        table = msgspec.structs.replace(
            table_configured(), pool_id=POOL, envy_includes_dealer=False
        )
        approval = ConfigurationApproved(
            "approval-1", now(), "digest-1", [pool_opened(pool_id=POOL), table], DANA,
            dual_control_cents=100_000,
        )  # fmt: skip
        site.append(site.sign(approval, DANA, LEE))
        round_id = f"r-{uuid.uuid4().hex[:6]}"
        site.append(site.sign(wager(f"{round_id}-w", round_id, 1), SAM))
        site.append(site.sign(settle(f"{round_id}-s", round_id, {1: NOTHING}), SAM))
    for name, file in FILES.items():
        key_file(tmp_path, name, site.keys[name]).rename(tmp_path / file)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE", PASSPHRASE)
    monkeypatch.chdir(tmp_path)
    return Floor(tmp_path, database, site, capsys)


def test_68_iac_2_6_33_a_pool_suspended_at_the_command_line_keeps_its_meters_and_refuses_wagers(
    pool_life_floor: Floor,
) -> None:
    before = pool_life_floor.meters()
    assert before["state"] == "in play"
    status, _, err = pool_life_floor.run(
        "pool", "suspend", POOL, "--reason", "table T1 removed", "--key", FILES[SAM]
    )
    assert status == 0, err
    after = pool_life_floor.meters()
    assert after["state"] == "suspended: table T1 removed"
    assert {k: v for k, v in after.items() if k != "state"} == {
        k: v for k, v in before.items() if k != "state"
    }
    with Journal(pool_life_floor.database) as journal:
        locked = pool_life_floor.site.sign(wager("r-late-w", "r-late", 2), SAM)
        receipt = journal.append(locked)
        assert not receipt.applied
        assert receipt.reason == f"pool {POOL} is suspended: table T1 removed"
    status, out, err = pool_life_floor.run("report")
    assert status == 0, err
    assert f"pool {POOL} is suspended: table T1 removed" in out
    status, out, _ = pool_life_floor.run("report", "--json")
    assert json.loads(out)["pools"][0]["state"] == "suspended: table T1 removed"


def test_r432_1838_4_a_supervisor_cannot_resume_a_suspended_pool(pool_life_floor: Floor) -> None:
    assert (
        pool_life_floor.run("pool", "suspend", POOL, "--reason", "sign dark", "--key", FILES[SAM])[
            0
        ]
        == 0
    )
    status, _, err = pool_life_floor.run(
        "pool", "resume", POOL, "--reason", "fixed", "--key", FILES[SAM]
    )
    assert status == 1
    assert "may not resume-pool" in err
    assert pool_life_floor.meters()["state"] == "suspended: sign dark"


def test_r432_1838_4_a_pools_life_of_operations_md_runs_as_written(pool_life_floor: Floor) -> None:
    section = PAGE.read_text(encoding="utf-8").split("\n### A pool's life\n", 1)[1]
    block = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.DOTALL)[0]
    script = "set -e\n" + block
    environment = os.environ | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the tests' jackpotd
        "JACKPOTD_DB": str(pool_life_floor.database),
        "JACKPOTD_OPERATOR_SOCKET": str(pool_life_floor.folder / "no-daemon.sock"),
        "JACKPOTD_PASSPHRASE": PASSPHRASE,
    }
    done = subprocess.run(  # the page's own commands, as the operators: ourselves
        ["/bin/bash", "-c", script],
        cwd=pool_life_floor.folder, env=environment, capture_output=True, text=True, timeout=WAIT_S,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "suspended: meter sign dark on T3" in " ".join(done.stdout.split())
    with Journal(pool_life_floor.database) as journal:
        kinds = [row["kind"] for row in journal.rows()][-2:]
        assert kinds == ["pool-suspended", "pool-resumed"]
        assert journal.state.pools[POOL].status == ""


ANNEX = "fortune-annex"


@pytest.fixture
def two_pools(pool_life_floor: Floor) -> Floor:
    """The floor with a second pool of the same paytable, ``fortune-annex``, and its table."""
    with Journal(pool_life_floor.database) as journal:
        pool_life_floor.site.journal = journal
        annex = msgspec.structs.replace(
            table_configured("table-2", "T2"), pool_id=ANNEX, envy_includes_dealer=False
        )
        approval = ConfigurationApproved(
            "approval-2", now(), "digest-2", [pool_opened("open-annex", ANNEX), annex], DANA,
            dual_control_cents=100_000,
        )  # fmt: skip
        pool_life_floor.site.append(pool_life_floor.site.sign(approval, DANA, LEE))
    return pool_life_floor


def test_r432_1838_4_a_transfer_of_operations_md_runs_as_written_and_the_report_balances(
    two_pools: Floor,
) -> None:
    pool_life_floor = two_pools
    with Journal(pool_life_floor.database) as journal:
        source = journal.state.pools[POOL]
        moved = source.meter + source.reserve + source.overflow
        before = journal.state.pools[ANNEX]
    section = PAGE.read_text(encoding="utf-8").split("\n### A pool's life\n", 1)[1]
    block = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.DOTALL)[1]
    environment = os.environ | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the tests' jackpotd
        "JACKPOTD_DB": str(pool_life_floor.database),
        "JACKPOTD_OPERATOR_SOCKET": str(pool_life_floor.folder / "no-daemon.sock"),
        "JACKPOTD_PASSPHRASE": PASSPHRASE,
    }
    done = subprocess.run(  # the page's own commands, as the managers: ourselves
        ["/bin/bash", "-c", "set -e\n" + block],
        cwd=pool_life_floor.folder, env=environment, capture_output=True, text=True, timeout=WAIT_S,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "transferred" in done.stdout
    with Journal(pool_life_floor.database) as journal:
        emptied, received = journal.state.pools[POOL], journal.state.pools[ANNEX]
        assert [row["kind"] for row in journal.rows()][-1] == "pool-transferred"
    assert (emptied.meter, emptied.reserve, emptied.overflow) == (Fraction(0),) * 3
    assert emptied.status_reason == f"transferred to {ANNEX}: T3 removed for good, ticket 4720"
    assert received.meter + received.reserve + received.overflow == (
        before.meter + before.reserve + before.overflow + moved
    )
    status, out, err = pool_life_floor.run("report", "--json")
    assert status == 0, err
    pools = {pool["pool"]: pool for pool in json.loads(out)["pools"]}
    assert all(pool["balanced"] for pool in pools.values())
    assert pools[POOL]["transferred"]["meter"] == fraction_text(-source.meter)
    assert pools[POOL]["state"].startswith("suspended: transferred to fortune-annex")


def test_r432_1838_4_one_manager_alone_cannot_transfer_a_pool(two_pools: Floor) -> None:
    status, _, err = two_pools.run(
        "pool", "transfer", POOL, "--to", ANNEX, "--reason", "alone", "--key", FILES[DANA]
    )
    assert status == 1
    assert "transfer-pool needs the signatures of 2 different operators" in err
    assert two_pools.meters_of(POOL)["state"] == "in play"


def test_r432_1838_4_a_retirement_of_operations_md_runs_as_written(two_pools: Floor) -> None:
    pool_life_floor = two_pools
    section = PAGE.read_text(encoding="utf-8").split("\n### A pool's life\n", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", section.split("\n### ", 1)[0], re.DOTALL)
    environment = os.environ | {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",  # the tests' jackpotd
        "JACKPOTD_DB": str(pool_life_floor.database),
        "JACKPOTD_OPERATOR_SOCKET": str(pool_life_floor.folder / "no-daemon.sock"),
        "JACKPOTD_PASSPHRASE": PASSPHRASE,
        "JACKPOTD_PASSPHRASE_1": PASSPHRASE,
        "JACKPOTD_PASSPHRASE_2": PASSPHRASE,
    }
    done = subprocess.run(  # the transfer, then the retirement, as the page gives them
        ["/bin/bash", "-c", "set -e\n" + blocks[1] + blocks[2]],
        cwd=pool_life_floor.folder, env=environment, capture_output=True, text=True, timeout=WAIT_S,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "retired: transferred: T3 removed" in " ".join(done.stdout.split())
    state = pool_life_floor.meters_of(POOL)["state"]
    assert state == "retired: transferred: T3 removed for good, ticket 4720"
    status, out, err = pool_life_floor.run("report", "--json")
    assert status == 0, err
    assert all(pool["balanced"] for pool in json.loads(out)["pools"])
    status, _, err = pool_life_floor.run(
        "pool", "suspend", POOL, "--reason", "again", "--key", FILES[SAM]
    )
    assert status == 1
    assert "is retired" in err
    status, out, err = pool_life_floor.run(
        "verify"
    )  # the journal replays to what it holds, every pool
    assert status == 0, out + err


def test_68_20_2_a_pool_retired_as_orphaned_keeps_every_cent_on_record(
    pool_life_floor: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_1", PASSPHRASE)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_2", PASSPHRASE)
    with Journal(pool_life_floor.database) as journal:
        pool = journal.state.pools[POOL]
        held = pool.meter + pool.reserve + pool.overflow
    status, _, err = pool_life_floor.run(
        "pool", "retire", POOL, "--disposition", "orphaned", "--reason", "floor closed",
        "--key", FILES[DANA], "--key", FILES[LEE],
    )  # fmt: skip
    assert status == 0, err
    assert pool_life_floor.meters()["orphaned_exact"] == fraction_text(held)
    status, out, err = pool_life_floor.run("report")
    assert status == 0, err
    assert "retired" in out
    status, out, _ = pool_life_floor.run("report", "--json")
    (document,) = json.loads(out)["pools"]
    assert document["balanced"]
    assert document["orphaned"] == fraction_text(held)


def test_r432_1838_4_under_the_michigan_profile_a_transfer_names_its_cause(
    two_pools: Floor, monkeypatch: pytest.MonkeyPatch
) -> None:
    pool_life_floor = two_pools
    with Journal(pool_life_floor.database) as journal:
        pool_life_floor.site.journal = journal
        approval = ConfigurationApproved(
            "approval-3", now(), "digest-3", [], DANA, dual_control_cents=100_000,
            jurisdiction="MI",
        )  # fmt: skip
        pool_life_floor.site.append(pool_life_floor.site.sign(approval, DANA, LEE))
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_1", PASSPHRASE)
    monkeypatch.setenv("JACKPOTD_PASSPHRASE_2", PASSPHRASE)
    transfer = ("pool", "transfer", POOL, "--to", ANNEX, "--reason", "sign controller failed")
    keys = ("--key", FILES[DANA], "--key", FILES[LEE])
    status, _, err = pool_life_floor.run(*transfer, *keys)
    assert status == 1
    assert "under the MI profile a transfer needs a documented cause" in err
    status, _, err = pool_life_floor.run(*transfer, "--cause", "malfunction", *keys)
    assert status == 0, err
    with Journal(pool_life_floor.database) as journal:
        (row,) = [row for row in journal.rows() if row["outcome"] == "applied"][-1:]
        assert row["kind"] == "pool-transferred"
        assert '"cause":"malfunction"' in str(row["event"])
