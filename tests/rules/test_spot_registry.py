"""A side bet is one entry of the spots' registry (controller/rules/spots.py).

This file adds a side bet the project does not have, "Lucky 7s", and plays it through the
ledger: configured from a TOML file (``side_bets.lucky_7s``, with its own limits), journaled
in the ``table-configured`` event (``side_bets``, its paytable whole), a chip locked as a
wager within its limits and one refused above them, a round settled and paid on the spot's
own rule, and counted in the § 688a.12(e) floor of the maximum payout. Everything about the
spot is defined here: its :class:`~controller.rules.spots.SpotSpec`, the way it pays (an
:class:`~controller.rules.spot_pays.OddsPays`: the seat's own hand, and only a hand holding a
seven) and its little paytable. It touches no file of the controller or the drivers: 0 core
files. The configuration, the event, the drivers' vocabulary (``Spot("lucky-7s")``) and the
ledger's table rules, locking and settlement iterate the registry.

A real new side bet needs about four files (docs/architecture.md, "Spots"):

1. controller/rules/spots.py: its ``SpotSpec`` in the registry (and, if no existing rule
   fits, its ``OddsPays`` in controller/rules/spot_pays.py);
2. controller/rules/paytable.py: its paytable's ``wager`` kind (controller/rules/lines.py too
   if it pays hands no line names yet);
3. its paytables (controller/paytables/, or samples/ where no regulation prints the pays);
4. its documentation: docs/rules.md and deploy/jackpotd.toml (``side_bets``).

The spots that predate the registry keep keys of their own (``bonus = ...``) and event fields
of their own, so that every event they journaled encodes, and every digest over it verifies,
as before: the last test checks that a table offering only those writes no ``side_bets``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.config_files import BASE, error_of, load

from controller.cli import pays
from controller.effects import PayoutMade, WagerRefused
from controller.events import (
    BetSensed,
    BetsLocked,
    RoundSettled,
    SpotLimits,
    TableConfigured,
    decode_event,
    encode_event,
)
from controller.journal.readonly import pay_kinds
from controller.ledger.apply import LedgerState, apply
from controller.ledger.payout_floor import most_one_player_wins
from controller.ledger.table_rules import table_rules
from controller.rules.cards import Rank
from controller.rules.paytable import Wager
from controller.rules.spot_pays import OddsPays, hand_mask, odds_pay
from controller.rules.spots import Spot, SpotSpec, registered, spec_of, spots

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.config.load import Config
    from controller.effect_base import Effect
    from controller.rules.cards import SevenCardHand
    from controller.rules.paytable import Paytable, PaytableLine

AT = "2026-12-01T00:00:00.000000Z"

LUCKY_7S_PAYTABLE = """\
name = "lucky-7s-1"
title = "Lucky 7s (a test's side bet)"
wager = "fortune-bonus"
source = "tests/rules/test_spot_registry.py"
joker = "semi-wild"

[[lines]]
line = "four-of-a-kind"
outcome = "Four of a kind"
pays = "77 to 1"

[[lines]]
line = "three-of-a-kind"
outcome = "Three of a kind"
pays = "7 to 1"
"""


def _sevens_line(
    table: Paytable, hand: SevenCardHand, _dealer: SevenCardHand
) -> PaytableLine | None:
    """Paid on the seat's own hand, and only on a hand holding a seven."""
    if all(card.rank is not Rank.SEVEN for card in hand.cards):
        return None
    return table.line_for(hand_mask(table, hand))


LUCKY_7S = SpotSpec(
    name="lucky-7s",
    key="lucky_7s",
    title="Lucky 7s",
    wagers=frozenset({Wager.FORTUNE_BONUS}),
    pays=OddsPays(_sevens_line, odds_pay),
)

CONTROLLER = """\
[controller]
site = "lab"
id = "c1"
paytable_dirs = ["paytables"]
"""
TABLE = """\
[[tables]]
id = "t1"
transport = "simulator"
bonus = "fortune-1"
minimum_wager = "$5"
side_bets = { lucky_7s = { paytable = "lucky-7s-1", maximum = "$70" } }
"""


@pytest.fixture
def lucky_7s() -> Iterator[Spot]:
    with registered(LUCKY_7S) as spot:
        yield spot


def _hits_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jackpotd")
    pays.register(parser.add_subparsers(dest="command"))
    hits: argparse.ArgumentParser = next(
        action.choices["hits"]
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
    )
    return hits


def configured(tmp_path: Path) -> Config:
    (tmp_path / "paytables").mkdir()
    (tmp_path / "paytables" / "lucky-7s-1.toml").write_text(LUCKY_7S_PAYTABLE, encoding="utf-8")
    return load(tmp_path, CONTROLLER + TABLE)


def test_a_registered_spot_is_a_spot_everywhere_spots_are_named(lucky_7s: Spot) -> None:
    assert Spot("lucky-7s") is lucky_7s
    assert spots()[-1] is lucky_7s
    assert spec_of(lucky_7s) is LUCKY_7S
    assert (str(lucky_7s), f"{lucky_7s}", lucky_7s.value) == ("lucky-7s",) * 3
    assert msgspec.json.encode([lucky_7s]) == b'["lucky-7s"]'
    # hits --kind lists its pays as it lists the Fortune Bonus's: a kind of its own.
    assert pay_kinds()["lucky-7s"] == "kind = 'win' AND spot = 'lucky-7s'"
    kinds = next(action.choices for action in _hits_parser()._actions if action.dest == "kind")
    assert kinds is not None
    assert "lucky-7s" in kinds


def test_the_spot_is_configured_from_toml_and_journaled_whole(
    tmp_path: Path, lucky_7s: Spot
) -> None:
    table = configured(tmp_path).tables[0]
    event = table.event
    assert event.side_bets == {"lucky-7s": "lucky-7s-1"}
    assert event.paytables["lucky-7s-1"] == LUCKY_7S_PAYTABLE
    assert event.wager_limits == {
        "bonus": SpotLimits(500, 100_000),
        "lucky-7s": SpotLimits(500, 7_000),
    }
    replayed = decode_event(encode_event(event))
    assert isinstance(replayed, TableConfigured)
    assert replayed == event
    rules = table_rules(replayed)
    assert rules.paytable(lucky_7s) is not None
    assert list(rules.offered()) == [Spot.BONUS, lucky_7s]


def test_a_wager_on_the_spot_locks_within_its_limits_and_is_paid_on_its_rule(
    tmp_path: Path, lucky_7s: Spot
) -> None:
    state, _ = apply(LedgerState(), configured(tmp_path).tables[0].event)
    effects: list[Effect] = []
    for seq, (seat, cents) in enumerate([(1, 1_000), (2, 1_000), (3, 7_500)], start=1):
        chip = BetSensed(f"t1/s/{seq}", AT, "t1", "s", seq, seat, "lucky-7s", True, cents)
        state, more = apply(state, chip)
        effects += more
    state, more = apply(state, BetsLocked("t1/c/1", AT, "t1", "c", 1, "r1"))
    effects += more
    locked = [(w.seat, w.spot, w.amount_cents) for w in state.rounds["t1", "r1"]]
    assert locked == [(1, lucky_7s, 1_000), (2, lucky_7s, 1_000)]
    refused = [(e.seat, e.spot, e.reason) for e in effects if isinstance(e, WagerRefused)]
    assert refused == [
        (3, "lucky-7s", "the lucky-7s wager of $75.00 is above table t1's maximum of $70.00")
    ]

    hands = {
        "1": ["7s", "7h", "7d", "Kc", "9s", "4h", "2c"],  # three sevens: 7 to 1
        "2": ["Qs", "Qh", "Qd", "Kd", "9h", "4s", "2d"],  # three queens, no seven: nothing
    }
    dealer = ["As", "Ah", "8c", "8d", "5s", "3h", "Td"]
    state, settled = apply(state, RoundSettled("t1/settle", AT, "t1", "r1", dealer, hands))
    paid = {e.seat: e for e in settled if isinstance(e, PayoutMade)}
    assert (paid[1].spot, paid[1].kind, paid[1].line) == ("lucky-7s", "win", "three-of-a-kind")
    assert (paid[1].win_cents, paid[1].returned_cents) == (7_000, 1_000)
    assert (paid[2].spot, paid[2].kind, paid[2].win_cents) == ("lucky-7s", "loss", 0)


@pytest.mark.usefixtures("lucky_7s")
def test_688a12_e_the_floor_counts_the_spot_at_its_minimum(tmp_path: Path) -> None:
    event = configured(tmp_path).tables[0].event
    alone = msgspec.structs.replace(
        event,
        bonus=None,
        paytables={"lucky-7s-1": LUCKY_7S_PAYTABLE},
        wager_limits={"lucky-7s": SpotLimits(500, 7_000)},
    )
    assert most_one_player_wins(table_rules(alone), 500) == 77 * 500  # its four of a kind


def test_an_unregistered_side_bet_is_refused_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="'lucky-7s' is not a valid Spot"):
        Spot("lucky-7s")
    (tmp_path / "paytables").mkdir()
    error = error_of(tmp_path, CONTROLLER + TABLE)
    assert str(error).endswith(
        "tables[0].side_bets.lucky_7s: no side bet 'lucky_7s'; registered: none"
    )


def test_tables_of_the_spots_with_keys_of_their_own_journal_no_side_bets(
    tmp_path: Path, lucky_7s: Spot
) -> None:
    assert lucky_7s in spots()
    event = load(tmp_path, BASE).tables[0].event
    assert event.side_bets is msgspec.UNSET
    assert b"side_bets" not in encode_event(event)
    assert [str(spot) for spot in spots()] == [
        "bonus", "ace-high", "insurance", "progressive", "dynasty", "lucky-7s",
    ]  # fmt: skip
