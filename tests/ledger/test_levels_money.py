"""A multi-level pool's money, from the configuration to the journal (docs/paytables.md, "Levels").

One wager contributes to every level at the level's own rate; each row pays from its level's
meter and reseeds that level alone; a void takes back exactly what the wager put into each
level; and the identity of docs/money.md holds level by level, so for the pool as a whole:

    contributions + house funding + adjustments == meter + reserve + overflow + paid

The journal records each level's contributions with the wager, reads them back after a
restart, and ``verify`` replays the whole file to the same states.
"""

from __future__ import annotations

import sqlite3
import tempfile
from contextlib import closing
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.config.changes import config_events
from controller.config.load import load_config
from controller.events import (
    AnyEvent,
    PoolOpened,
    RoundSettled,
    RoundVoided,
    WagerLocked,
    encode_event,
)
from controller.ledger.apply import LedgerState, apply
from controller.ledger.levels import level_ids
from controller.ledger_journal.sqlite import Journal, verify
from controller.rules.paytable_files import parse_paytable

if TYPE_CHECKING:
    from controller.ledger.pool import Pool

AT = "2026-12-01T18:00:00Z"
PAYTABLE = """\
name = "house-levels"
title = "House levels ($5 wager)"
wager = "progressive"
source = "house rules"
joker = "semi-wild"

[progressive]
wager = "$5"
original_wager_returned = false

[[progressive.levels]]
level = "major"
meter_seed = "$1,000"
rate_of_progression = "3%"
reserve_rate = "0.5%"

[[progressive.levels]]
level = "minor"
meter_seed = "$250"
rate_of_progression = "2%"
reserve_rate = "0.25%"

[[progressive.levels]]
level = "mini"
meter_seed = "$150"
rate_of_progression = "1%"
limit = "$151"

[[lines]]
line = "seven-card-straight-flush"
outcome = "7 card straight flush"
pays = "100% of meter"
level = "major"

[[lines]]
line = "five-aces"
outcome = "Five aces"
pays = "100% of meter"
level = "minor"

[[lines]]
line = "royal-flush"
outcome = "Royal flush"
pays = "100% of meter"
level = "mini"

[[lines]]
line = "straight-flush"
outcome = "Straight flush"
pays = "$100"
"""

CONFIG = """\
[controller]
site = "lab"
id = "c1"

[[pools]]
id = "stax"
paytable = "paytables/house-levels.toml"

[[tables]]
id = "t1"
transport = "simulator"
progressive = "paytables/house-levels.toml"
pool = "stax"
"""

DEALER = ["2c", "3d", "5h", "8s", "9c", "Jd", "Kc"]
STRAIGHT_FLUSH_7 = ["7h", "8h", "9h", "Th", "Jh", "Qh", "Kh"]  # the major
FIVE_ACES = ["As", "Ad", "Ah", "Ac", "Jk", "2s", "4d"]  # the minor
NOTHING = ["2d", "5c", "8d", "Tc", "Qc", "3h", "6s"]
ROYAL = ["Ts", "Js", "Qs", "Ks", "As", "2d", "3c"]  # the mini (with no ace elsewhere)
LEVELS = ("stax.major", "stax.minor", "stax.mini")


def configured(tmp_path: Path) -> list[AnyEvent]:
    (tmp_path / "paytables").mkdir()
    (tmp_path / "paytables" / "house-levels.toml").write_text(PAYTABLE, encoding="utf-8")
    (tmp_path / "jackpotd.toml").write_text(CONFIG, encoding="utf-8")
    config = load_config(tmp_path / "jackpotd.toml")
    return list(config_events(config, LedgerState(), AT))


def wagers(round_id: str, seats: int) -> list[WagerLocked]:
    return [
        WagerLocked(f"{round_id}-w{seat}", AT, "t1", round_id, seat, "progressive", 500)
        for seat in range(1, seats + 1)
    ]


def balanced(pool: Pool) -> bool:
    return pool.money_in() == pool.money_held_or_paid()


def test_each_level_is_opened_as_a_pool_of_its_own_with_its_own_terms(tmp_path: Path) -> None:
    opened = [event for event in configured(tmp_path) if isinstance(event, PoolOpened)]
    assert [event.pool_id for event in opened] == list(LEVELS)
    assert [event.seed_cents for event in opened] == [100_000, 25_000, 15_000]
    assert [event.limit_cents for event in opened] == [None, None, 15_100]


def test_one_wager_feeds_every_level_and_each_row_pays_from_its_own_level(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        for event in configured(tmp_path):
            assert journal.append(event).applied
        for event in wagers("r1", 3):
            assert journal.append(event).applied
        state = journal.state
        major, minor, mini = (state.pools[level] for level in LEVELS)
        assert major.meter == 100_000 + 3 * 15  # 3 % of $5, three times
        assert minor.meter == 25_000 + 3 * 10
        assert minor.reserve == Fraction(3 * 5, 4)  # 0.25 % of $5 = 1.25 cents
        assert mini.meter == 15_000 + 3 * 5
        hands = {"1": STRAIGHT_FLUSH_7, "2": FIVE_ACES, "3": NOTHING}
        settled = journal.append(RoundSettled("r1-settle", AT, "t1", "r1", DEALER, hands))
        assert settled.applied
        state = journal.state
    with closing(sqlite3.connect(path)) as raw:
        rows = raw.execute("SELECT seat, pool_id, from_meter_cents FROM payouts ORDER BY seat")
        payouts = rows.fetchall()
    paid = {level: state.pools[level] for level in LEVELS}
    assert paid["stax.major"].paid_cents == 100_045
    assert paid["stax.minor"].paid_cents == 25_030
    assert paid["stax.mini"].paid_cents == 0  # no hand took the mini: only its meter rose
    assert paid["stax.major"].meter == 100_000  # each level reseeds alone
    assert paid["stax.minor"].meter == 25_000
    assert paid["stax.mini"].meter == 15_015
    assert all(balanced(pool) for pool in paid.values())
    assert payouts == [(1, "stax.major", 100_045), (2, "stax.minor", 25_030), (3, None, 0)]
    report = verify(path)
    assert report.ok, report.problems


def test_a_void_takes_back_from_each_level_what_the_wager_put_in_after_a_restart(
    tmp_path: Path,
) -> None:
    path = tmp_path / "journal.db"
    with Journal(path) as journal:
        for event in configured(tmp_path):
            assert journal.append(event).applied
        before = {level: journal.state.pools[level] for level in LEVELS}
        for event in wagers("r1", 2):
            assert journal.append(event).applied
    with Journal(path) as journal:  # the open round's wagers read back, level by level
        (locked,) = journal.state.rounds.values()
        assert [len(wager.levels) for wager in locked] == [3, 3]
        voided = RoundVoided("r1-void", AT, "t1", "r1", "sam", "misdeal", refund_contributions=True)
        assert journal.append(voided).applied
        after = {level: journal.state.pools[level] for level in LEVELS}
    for level in LEVELS:
        assert after[level].meter == before[level].meter
        assert after[level].reserve == before[level].reserve
        assert after[level].contributions == 0
        assert balanced(after[level])
    assert verify(path).ok


def test_a_mystery_level_is_opened_with_its_ceiling_and_where_its_excess_goes(
    tmp_path: Path,
) -> None:
    (tmp_path / "paytables").mkdir()
    grand = (
        '[[progressive.levels]]\nlevel = "grand"\nmeter_seed = "$10,000"\n'
        'rate_of_progression = "1%"\nmust_hit_by = "$20,000"\npast_trigger = "next-level"\n\n'
    )
    mystery = PAYTABLE.replace("[[progressive.levels]]\n", grand + "[[progressive.levels]]\n", 1)
    (tmp_path / "paytables" / "house-levels.toml").write_text(mystery, encoding="utf-8")
    (tmp_path / "jackpotd.toml").write_text(CONFIG, encoding="utf-8")
    config = load_config(tmp_path / "jackpotd.toml")
    events = config_events(config, LedgerState(), AT)
    opened = {event.pool_id: event for event in events if isinstance(event, PoolOpened)}
    assert opened["stax.grand"].must_hit_by_cents == 2_000_000
    assert opened["stax.grand"].spill_to == "stax.major"
    assert b"must_hit_by" not in encode_event(opened["stax.major"])  # the others' text stays


HANDS = st.sampled_from([STRAIGHT_FLUSH_7, FIVE_ACES, NOTHING, ROYAL])


@settings(max_examples=25, deadline=None)
@given(rounds=st.lists(st.tuples(HANDS, HANDS, st.booleans()), min_size=1, max_size=8))
def test_money_is_conserved_to_the_cent_on_every_level_through_hits_and_voids(
    rounds: list[tuple[list[str], list[str], bool]],
) -> None:
    """Two seats a round, each hand hitting any level or none, some rounds voided."""
    state = LedgerState()
    for opening in _levelled_config():
        state, _ = apply(state, opening)
    for index, (first, second, void) in enumerate(rounds):
        round_id = f"r{index}"
        for wager in wagers(round_id, 2):
            state, _ = apply(state, wager)
        if void or set(first) & set(second):
            event: RoundSettled | RoundVoided = RoundVoided(
                f"{round_id}-void", AT, "t1", round_id, "sam", "misdeal", refund_contributions=True
            )
        else:
            hands = {"1": first, "2": second}
            event = RoundSettled(f"{round_id}-settle", AT, "t1", round_id, DEALER, hands)
        state, _ = apply(state, event)
        pools = [state.pools[level] for level in LEVELS]
        assert all(balanced(pool) for pool in pools)
        assert all(pool.meter >= pool.terms.seed_cents for pool in pools)
        assert state.pools["stax.mini"].meter <= 15_100  # its limit; the rest to its overflow
    wagered = sum(pool.wagers_cents for pool in (state.pools[level] for level in LEVELS))
    assert wagered == 3 * 500 * sum(not (void or set(a) & set(b)) for a, b, void in rounds) * 2


_CONFIG_EVENTS: list[AnyEvent] = []


def _levelled_config() -> list[AnyEvent]:
    """The configuration's events, made once (hypothesis runs the test many times)."""
    if not _CONFIG_EVENTS:
        with tempfile.TemporaryDirectory() as folder:
            _CONFIG_EVENTS.extend(configured(Path(folder)))
    return _CONFIG_EVENTS


def test_level_ids_name_each_level_under_its_pool() -> None:
    levelled = parse_paytable(PAYTABLE, "house-levels.toml")
    assert level_ids("stax", levelled) == {
        "major": "stax.major",
        "minor": "stax.minor",
        "mini": "stax.mini",
    }
    one = parse_paytable(
        PAYTABLE.split("[[progressive.levels]]", maxsplit=1)[0].replace(
            "original_wager_returned = false",
            'meter_seed = "$1,000"\nrate_of_progression = "3%"\noriginal_wager_returned = false',
        )
        + '[[lines]]\nline = "straight-flush"\noutcome = "Straight flush"\npays = "$100"\n',
        "one.toml",
    )
    assert level_ids("stax", one) == {"": "stax"}
