"""The simulator as a registered source: ``[simulator]`` plays the ``simulator`` tables.

Every table whose transport is ``simulator`` is played in-process, until its rounds are played
(or forever).

Each table's devices (:class:`drivers.simulator.SimulatedTable`) heartbeat and play rounds at
``round_interval_s`` through an :class:`~drivers.simulator.InProcessLink` to the intake, as a
real table's would through a broker. What a table offers (seats, spots, wager limits) comes
from its configuration, so the simulated players only make bets the table takes.
"""

from __future__ import annotations

import asyncio
import logging
import random
import uuid
from typing import TYPE_CHECKING, Any

import msgspec

from controller.plugins import DriverContext, DriverParts, DriverSpec, TableOffer
from controller.ports import ControllerUnavailableError
from controller.rules.spots import Spot
from drivers.simulator import ODDS_CHIPS, InProcessLink, SimulatedTable, TablePlan

if TYPE_CHECKING:
    from collections.abc import Mapping

    from controller.plugins import SettingsChecks
    from controller.ports import Intake

log = logging.getLogger(__name__)


class SimulatorSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The ``[simulator]`` table: how the simulated tables play (``make demo``)."""

    seed: int = 1
    round_interval_s: float = 2.0
    occupancy: float = 0.7
    bet_probability: float = 0.6
    hit_every: int = 0
    """Deal a rigged jackpot hand every N rounds (0: never); for demos only."""
    rounds: int | None = None
    """Rounds per table before the simulation finishes (None: play until stopped)."""


def check_simulator(
    raw: SimulatorSettings, checks: SettingsChecks, key: str, _written: Mapping[str, Any]
) -> SimulatorSettings:
    """Check ``[simulator]``: a pace above zero, probabilities, counts."""
    checks.positive(f"{key}.round_interval_s", raw.round_interval_s)
    for name in ("occupancy", "bet_probability"):
        if not 0 <= getattr(raw, name) <= 1:
            raise checks.fail(f"{key}.{name}", "a probability is 0 to 1")
    if raw.hit_every < 0:
        raise checks.fail(f"{key}.hit_every", "0 (off) or a number of rounds")
    if raw.rounds is not None and raw.rounds < 1:
        raise checks.fail(f"{key}.rounds", "at least 1, or left out to play until stopped")
    return raw


def chips_within(offer: TableOffer) -> tuple[int, ...]:
    """The simulated players' odds chips, kept within every odds spot's limits."""
    if offer.odds_limits_cents is None:
        return ODDS_CHIPS
    low, high = offer.odds_limits_cents
    return tuple(chip for chip in ODDS_CHIPS if low <= chip <= high) or (low,)


def plan_for(offer: TableOffer, settings: SimulatorSettings) -> TablePlan:
    """What a simulated table offers and how its players bet."""
    return TablePlan(
        offer.table_id,
        seats=offer.seats,
        bonus=Spot.BONUS in offer.spots,
        ace_high=Spot.ACE_HIGH in offer.spots,
        insurance=Spot.INSURANCE in offer.spots,
        dynasty=Spot.DYNASTY in offer.spots,
        progressive_wager_cents=offer.progressive_wager_cents,
        occupancy=settings.occupancy,
        bet_probability=settings.bet_probability,
        bonus_amounts=chips_within(offer),
    )


class SimulatorSource:
    """A :class:`controller.ports.Source` playing the simulated tables (module docstring)."""

    name = "simulator"

    def __init__(self, settings: SimulatorSettings, tables: tuple[TableOffer, ...]) -> None:
        self.settings = settings
        self.offers = tables
        self.finished = asyncio.Event()
        """Set once every table has played ``rounds`` (never without ``rounds``)."""
        self.tables: list[SimulatedTable] = []
        self.heartbeat_s = (
            max(0.5, min(offer.heartbeat_timeout_s for offer in tables) / 3) if tables else 1.0
        )

    @property
    def rounds_played(self) -> dict[str, int]:
        """Rounds each table has played."""
        return {table.plan.table_id: table.rounds_played for table in self.tables}

    async def run(self, intake: Intake) -> None:
        """Play every table until the rounds are played; heartbeats go on until cancelled."""
        rng = random.Random(self.settings.seed)  # noqa: S311 - simulated players, not a shuffle for real money
        session = uuid.uuid4().hex[:8]
        link = InProcessLink(intake)
        self.tables = [
            SimulatedTable(
                plan_for(offer, self.settings),
                link,
                random.Random(rng.random()),  # noqa: S311 - simulated players
                session,
                self.settings.hit_every,
            )
            for offer in self.offers
        ]
        async with asyncio.TaskGroup() as group:
            for table in self.tables:
                group.create_task(table.heartbeats(self.heartbeat_s))
                group.create_task(self._play(table))

    async def _play(self, table: SimulatedTable) -> None:
        rounds = self.settings.rounds
        while rounds is None or table.rounds_played < rounds:
            try:
                await table.play_round()
            except ControllerUnavailableError:
                log.warning("table %s waits: the controller is failing closed", table.plan.table_id)
            await asyncio.sleep(self.settings.round_interval_s)
        if all(other.rounds_played >= (rounds or 0) for other in self.tables):
            self.finished.set()


def build(settings: SimulatorSettings, context: DriverContext) -> DriverParts:
    """One source for all the simulated tables."""
    return DriverParts(sources=[SimulatorSource(settings, context.tables)])


def describe(simulator: SimulatorSettings) -> str:
    """How the simulated players play."""
    hits = f", a rigged hit every {simulator.hit_every} rounds" if simulator.hit_every else ""
    return (
        f"seed {simulator.seed}, a round every {simulator.round_interval_s} s, "
        f"occupancy {simulator.occupancy}, bet probability {simulator.bet_probability}{hits}"
    )


SPEC = DriverSpec(
    name="simulator",
    section="simulator",
    settings=SimulatorSettings,
    build=build,
    check=check_simulator,
    transport="simulator",
    implicit=True,
    describe=describe,
)
