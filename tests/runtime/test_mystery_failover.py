"""A mystery level across a failover: the next node goes on with the trigger the first drew.

docs/ha.md, "Mystery levels across a failover". Two nodes, each with its own controller key and
its own keeper, share one journal and one sealing key (the same file on both). Node A plays the
four-level pool of tests/support/rules/mystery_paytable.py until a draw is open and fed, and stops;
node B, which never had A's keeper file (it is removed, as on another machine), starts on the
journal with its own key, takes the open draw from the envelope the journal recorded with it,
and plays on: the level hits at exactly the trigger A's keeper sealed, and the journal
verifies. A node without the sealing key, or a draw journaled without an envelope, fails the
controller closed until a person looks (the journal's recovery probe does not reopen it): it
never pays a level on a trigger it cannot check, and never draws again over an open one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import msgspec
import pytest
from support.rules.mystery_paytable import FLOOR, file_paytable, simulated_table
from support.runtime.daemon import daemon
from support.runtime.floor import free_port, within
from support.web.display_rig import played

from controller.config.load import Config, parse_config
from controller.ledger_journal.sqlite import verify
from controller.mystery.core import Sealed
from controller.mystery.envelope import SealingKey
from controller.outputs import ControllerUpdate
from controller.security.controller_key import ControllerKey, write_key
from controller.security.sealing_key import write_sealing_key
from controller.service.demo import demo_approver
from controller.service.startup_checks import AuthorityPolicy

if TYPE_CHECKING:
    from pathlib import Path

    from support.runtime.daemon import Daemon

GRAND = "stax.grand"
ROUNDS = 6
"""Node A's rounds: six wagers of $5 a round put $3 a round on the grand, whose range is $2,
so it hits in them and leaves a later draw open."""
CONFIG = (
    """
[controller]
site = "lab"
id = "lab"
node = "{node}"
journal = "{journal}"
key_file = "{node}.key"
{sealing}
verification_amount = "$1,000"

[simulator]
seed = {seed}
round_interval_s = 0.02
{rounds}
"""
    + FLOOR
    + simulated_table("T1")
)


def node(tmp_path: Path, name: str, *, sealing: bool = True, rounds: int | None = None) -> Config:
    """Node ``name``'s configuration: its own key, the cluster's sealing key if ``sealing``.

    ``rounds``: the simulated table stops after so many, each played to its end (a round left
    in play would hold the table on the next node until a supervisor voids it).
    """
    file_paytable(tmp_path)
    if not (tmp_path / f"{name}.key").exists():
        write_key(tmp_path / f"{name}.key", ControllerKey.generate())
    if not (tmp_path / "sealing.key").exists():
        write_sealing_key(tmp_path / "sealing.key", SealingKey.generate())
    text = CONFIG.format(
        node=name, journal=tmp_path / "lab.db", port=free_port(), seed=ord(name[0]),
        sealing='sealing_key_file = "sealing.key"' if sealing else "",
        rounds="" if rounds is None else f"rounds = {rounds}",
    )  # fmt: skip
    return parse_config(text, str(tmp_path / "jackpotd.toml"), tmp_path)


async def failed_closed(running: Daemon) -> str:
    """The reason the controller went offline, waited for (bounded) on its broadcast."""
    subscription = running.runtime.broadcast.subscribe(replay=True)

    async def offline() -> str:
        async for update in subscription:
            if isinstance(update, ControllerUpdate) and not update.online:
                return update.reason
        raise AssertionError("the broadcast ended")  # pragma: no cover

    try:
        return await within(offline(), "the controller failing closed")
    finally:
        running.runtime.broadcast.unsubscribe(subscription)


async def node_a_plays_until_a_draw_is_fed(tmp_path: Path, *, sealing: bool = True) -> Sealed:
    """Node A's rounds: a hit, then a draw open; its keeper's sealed draw, the file gone."""
    policy = AuthorityPolicy(approver=demo_approver(tmp_path / "lab.db"))
    async with daemon(node(tmp_path, "a", sealing=sealing, rounds=ROUNDS), policy) as running:
        await played(running)
        await running.stop()
        grand = running.runtime.journal.state.pools[GRAND]
        assert grand.hits_count >= 1
        assert grand.draw is not None
        assert (grand.sealed is not None) == sealing  # the envelope is in the journal
    keeper_file = tmp_path / "lab.db.mystery.json"
    held = msgspec.json.decode(keeper_file.read_bytes(), type=dict[str, Sealed])
    keeper_file.unlink()  # node b's machine never had it
    (sealed,) = held.values()
    assert sealed.drawn == grand.draw  # the draw the journal holds open
    return sealed


async def test_the_node_that_takes_over_hits_at_the_trigger_the_first_node_drew(
    tmp_path: Path,
) -> None:
    sealed = await node_a_plays_until_a_draw_is_fed(tmp_path)
    number = sealed.drawn.draw
    assert number >= 2
    assert sealed.hit is None
    policy = AuthorityPolicy(approver=demo_approver(tmp_path / "lab.db"))
    async with daemon(node(tmp_path, "b"), policy) as running:
        await running.until_id(f"mystery/{GRAND}/{number}/revealed", "the draw's hit on node b")
        assert running.runtime.sequencer.failed_reason is None
        journal = running.runtime.journal
        grand = journal.state.pools[GRAND]
        watch = running.runtime.sequencer.mystery
        assert watch is not None
        assert sealed.drawn.key_id != watch.key_id  # another node's key drew it
        (hit,) = [h for h in grand.last_hits if h.hit_id.startswith(f"mystery/{GRAND}/{number}/")]
        assert hit.amount_cents == sealed.trigger  # node a's trigger, to the cent
        await running.stop()
    report = verify(tmp_path / "lab.db")
    assert report.ok, report.problems


@pytest.mark.parametrize(
    ("drawn_sealed", "taken_sealed", "why"),
    [
        (True, False, "this keeper holds no sealing key to open its envelope"),
        (False, True, "is taken from its envelope with a sealing key"),
    ],
    ids=["the next node without the key", "the draw journaled without an envelope"],
)
async def test_a_node_that_cannot_open_another_nodes_draw_fails_closed_until_a_person_looks(
    tmp_path: Path, drawn_sealed: bool, taken_sealed: bool, why: str
) -> None:
    sealed = await node_a_plays_until_a_draw_is_fed(tmp_path, sealing=drawn_sealed)
    policy = AuthorityPolicy(approver=demo_approver(tmp_path / "lab.db"))
    async with daemon(node(tmp_path, "b", sealing=taken_sealed), policy) as running:
        reason = await failed_closed(running)
        assert why in reason, reason
        sequencer = running.runtime.sequencer
        assert sequencer.until_restart  # the journal's probe does not reopen it: a person looks
        grand = running.runtime.journal.state.pools[GRAND]
        assert grand.draw is not None
        assert grand.draw == sealed.drawn  # never drawn again over the open draw
        assert not running.ids(f"mystery/{GRAND}/{sealed.drawn.draw}/revealed")
