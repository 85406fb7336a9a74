"""A mystery level played by the daemon: drawn at once, the keeper asked after every feed.

A four-level pool whose top level is a must-hit-by level (docs/paytables.md, "Levels") runs on
simulated tables: the controller draws the level's trigger before its first wager, asks the
keeper after each event that feeds it, journals the reveal the moment a contribution reaches
it, and draws again (docs/rules.md § 10). The journal replays to the same states, and a
restart finds the open draw with its keeper (``<journal>.mystery.json``) and asks it again
without alarm.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from support.rules.mystery_paytable import FLOOR, file_paytable, simulated_table
from support.runtime.daemon import daemon
from support.runtime.floor import free_port

from controller.config.load import Config, parse_config
from controller.ledger_journal.sqlite import verify
from controller.service.demo import demo_approver
from controller.service.startup_checks import AuthorityPolicy

if TYPE_CHECKING:
    from pathlib import Path


CONFIG = (
    """
[controller]
site = "lab"
id = "lab"
journal = "{journal}"
verification_amount = "$1,000"

[simulator]
seed = 7
round_interval_s = 0.02
"""
    + FLOOR
    + simulated_table("T1")
    + simulated_table("T2")
)


def mystery_floor(tmp_path: Path) -> Config:
    file_paytable(tmp_path)
    text = CONFIG.format(journal=tmp_path / "lab.db", port=free_port())
    return parse_config(text, str(tmp_path / "jackpotd.toml"), tmp_path)


async def test_the_daemon_draws_asks_after_every_feed_and_pays_the_first_to_reach_it(
    tmp_path: Path,
) -> None:
    config = mystery_floor(tmp_path)
    policy = AuthorityPolicy(approver=demo_approver(tmp_path / "lab.db"))
    async with daemon(config, policy) as running:
        await running.until_id("mystery/stax.grand/3/revealed", "three mystery hits")
        grand = running.runtime.journal.state.pools["stax.grand"]
        assert grand.hits_count >= 3
        assert all(hit.line == "mystery-grand" for hit in grand.last_hits)
        assert all(1_000 <= hit.amount_cents < 1_200 for hit in grand.last_hits)
        await running.stop()
    report = verify(tmp_path / "lab.db")
    assert report.ok, report.problems
    assert (tmp_path / "lab.db.mystery.json").exists()
    async with daemon(mystery_floor(tmp_path), policy) as again:  # the open draw, kept
        await again.until_more(1, "a commit after the restart")
        assert again.runtime.sequencer.failed_reason is None  # the keeper answered, no alarm
        grand = again.runtime.journal.state.pools["stax.grand"]
        assert grand.draw is not None
        await again.stop()
    assert verify(tmp_path / "lab.db").ok
