"""The controller as a service: every part wired under one ``asyncio.TaskGroup``.

Start-up: open the journal (failing closed if it cannot be read), journal what the
configuration changes (new pools, queued terms, table rules), then start the sequencer, the
liveness monitor, the sources (MQTT, serial lines, simulated tables), the sinks (MQTT meter
topics, signs) and the web display, and tell systemd we are ready.

A source that fails is restarted with capped exponential backoff without taking the others
down (the transports also reconnect by themselves). On SIGTERM (or ``stop``) the service
stops the sources, journals every event already received, publishes "offline", gives the
sinks a moment to deliver it, and returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from controller.backoff import Backoff
from controller.clock import utc_now
from controller.config.approval import Approver, configuration_approval, split
from controller.config.changes import config_events
from controller.errors import ConfigurationError
from controller.events import FaultRecorded
from controller.journal import Journal
from controller.ports import ControllerUnavailableError
from controller.runtime.broadcast import Broadcast
from controller.runtime.checkpointing import resume_checkpoints, schedule_for
from controller.runtime.liveness import Liveness
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer
from controller.runtime.systemd import Notifier
from controller.runtime.view import Runtime
from controller.security.manifest import current
from controller.web.display import Display, serve_display
from drivers.simulator import ODDS_CHIPS, InProcessLink, SimulatedTable, TablePlan

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine

    from controller.config.load import Config
    from controller.events import AnyEvent
    from controller.ledger.settlement import TableRules
    from controller.ports import Sink, Source
    from controller.security.controller_key import ControllerKey
    from drivers.signs.emulator import VirtualAlphaSign

log = logging.getLogger(__name__)


class StartupError(ConfigurationError, RuntimeError):
    """The service cannot start (the configuration does not fit the journal)."""


@dataclass(slots=True)
class Simulation:
    """Simulated tables to run in-process, and when to stop."""

    rounds: int | None = None
    """Rounds per table before the simulation ends (None: forever)."""
    interval_s: float = 1.0
    hit_every: int = 0
    seed: int | None = None
    finished: asyncio.Event = field(default_factory=asyncio.Event)
    tables: list[SimulatedTable] = field(default_factory=list)
    virtual_signs: list[VirtualAlphaSign] = field(default_factory=list)
    """Emulated LED signs whose pty the configuration's [[alpha_sign]] entries open."""


async def supervise(
    name: str, start: Callable[[], Awaitable[None]], backoff: Backoff | None = None
) -> None:
    """Run a part forever: restart it with backoff if it fails, until cancelled."""
    backoff = backoff or Backoff(initial=0.2, cap=10.0)
    while True:
        try:
            await start()
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("%s failed; restarting", name)
        else:
            log.warning("%s stopped; restarting", name)
        await asyncio.sleep(backoff.next_delay())


def _self_check(config: Config, journal: Journal, *, require_manifest: bool) -> None:
    """Refuse to run software or a configuration other than the approved (docs/operations.md)."""
    approved = journal.state.manifest
    if approved is None and not require_manifest:
        log.warning("no approved manifest in the journal: run jackpotd manifest approve")
        return
    problems = (
        [f"no approved manifest in {config.controller.journal}"]
        if approved is None
        else current(config.digest).differences(approved)
    )
    if problems:
        detail = "; ".join(problems)
        journal.append(
            FaultRecorded(f"fault-{uuid.uuid4()}", utc_now(), "self-check", "manifest", detail)
        )
        journal.close()
        raise StartupError(
            f"start-up self-check failed: {detail} (a manager approves what is installed with "
            f"jackpotd manifest approve --config {config.source} --db {config.controller.journal}"
            " --key KEY_FILE; docs/operations.md)"
        )


@dataclass(frozen=True, slots=True)
class AuthorityPolicy:
    """How start-up treats the authority of the journal it opens (docs/security.md).

    ``jackpotd run`` requires signed authority: a manager enrolled with a key, and every
    change the configuration makes to pools and tables approved by a manager's signature.
    The demo brings its own manager (``approver``). In-process tests that build journals of
    their own may run a journal whose authority was never signed, as before signatures.
    """

    require_signed: bool = False
    approver: Approver | None = None


def _configuration(config: Config, journal: Journal, policy: AuthorityPolicy) -> list[AnyEvent]:
    """What start-up journals for ``config``: approved changes, and what moves no money."""
    at = utc_now()
    approver = policy.approver
    if approver is not None and not journal.state.authority.signed:
        journal.append(approver.enrollment(at))
    signed = journal.state.authority.signed
    if not signed and not policy.require_signed:
        return config_events(config, journal.state, at)  # authority never signed: as before
    if not signed:
        journal.close()
        raise StartupError(
            f"{config.controller.journal}: no operator holds a signing key; enroll a manager "
            "(jackpotd operator add) and approve the configuration (jackpotd config approve)"
        )
    _changes, others = split(config_events(config, journal.state, at))
    approval = configuration_approval(config, journal.state, at, approver.name if approver else "")
    if approval is None:
        return others
    if approver is None:
        journal.close()
        raise StartupError(
            f"{config.source}: the configuration changes {len(approval.changes)} pools or "
            "tables, or its authority settings, and no manager has approved it: "
            f"jackpotd config approve --config {config.source} --key KEY_FILE "
            f"--db {config.controller.journal}"
        )
    return [approver.sign(approval), *others]


def build_runtime(
    config: Config,
    *,
    require_manifest: bool = False,
    authority: AuthorityPolicy = AuthorityPolicy(),
    key: ControllerKey | None = None,
) -> Runtime:
    """Open the journal and bring it in line with the configuration.

    ``require_manifest``: refuse to start without an approved manifest (``jackpotd run``);
    without it, a journal with none only draws a warning (the demo, in-process tests).
    ``key``: the controller's signing key (else the one ``[controller] key_file`` names);
    the stored state is checked against the journal before anything builds on it
    (controller/runtime/checkpointing.py).
    """
    checkpoints = schedule_for(config, key)
    config.controller.journal.parent.mkdir(parents=True, exist_ok=True)
    journal = Journal(config.controller.journal)
    _self_check(config, journal, require_manifest=require_manifest)
    resume_checkpoints(journal, checkpoints, utc_now())
    events = _configuration(config, journal, authority)
    refused = [receipt for receipt in journal.append_many(events) if not receipt.applied]
    if refused:
        journal.close()
        reasons = "; ".join(f"{receipt.event_id}: {receipt.reason}" for receipt in refused)
        raise StartupError(f"{config.source}: the journal refused the configuration: {reasons}")
    broadcast = Broadcast()
    offline = {table_id for table_id, live in journal.state.table_states.items() if not live.online}
    liveness = Liveness(
        {table.table_id: table.heartbeat_timeout_s for table in config.tables},
        clock=utc_now,
        offline=offline,
    )
    sequencer = Sequencer(journal, broadcast, on_heartbeat=liveness.seen)
    sequencer.checkpoints = checkpoints
    broadcast.publish(checkpoints.updates())
    runtime = Runtime(config.controller.controller_id, journal, broadcast, sequencer, liveness)
    runtime.metrics = ControllerMetrics(journal, sequencer, liveness)
    sequencer.on_commit.append(runtime.metrics.observe)
    return runtime


def _sources(config: Config, runtime: Runtime) -> tuple[list[Source], list[Sink]]:
    sources: list[Source] = []
    sinks: list[Sink] = []
    if config.broker is not None:
        from drivers.mqtt.sink import MqttSink  # noqa: PLC0415 - only with a broker
        from drivers.mqtt.source import MqttSource  # noqa: PLC0415

        mqtt_tables = [table.table_id for table in config.tables if str(table.transport) == "mqtt"]
        source = MqttSource(config.broker, known_tables=mqtt_tables)
        sink = MqttSink(config.broker, config.controller.journal)
        sources.append(source)
        sinks.append(sink)
        if runtime.metrics is not None:
            runtime.metrics.mqtt += [source, sink]
            runtime.metrics.sources.append(source)
    for settings in config.signs:
        from drivers.signs.serial_sign import AlphaSign  # noqa: PLC0415 - only with signs

        metrics = runtime.metrics
        histogram = metrics.event_to_sign_seconds.labels(sign=settings.name) if metrics else None
        sinks.append(AlphaSign(settings, on_latency=histogram.observe if histogram else None))
    if config.serial:
        from drivers.serial.link import SerialSource  # noqa: PLC0415 - only with serial ports

        for port in config.serial:
            serial = SerialSource(port)
            sources.append(serial)
            if runtime.metrics is not None:
                runtime.metrics.serial.append(serial)
                runtime.metrics.sources.append(serial)
    return sources, sinks


def _simulated(config: Config, runtime: Runtime, simulation: Simulation) -> list[SimulatedTable]:
    settings = config.simulator
    seed = simulation.seed if simulation.seed is not None else (settings.seed if settings else None)
    rng = random.Random(seed)  # noqa: S311 - simulated players, not a shuffle for real money
    session = uuid.uuid4().hex[:8]
    tables = []
    for table in config.tables:
        if str(table.transport) != "simulator":
            continue
        rules = table.rules
        progressive = rules.progressive.progressive if rules.progressive else None
        plan = TablePlan(
            table.table_id,
            seats=rules.seats,
            bonus=rules.bonus is not None,
            ace_high=rules.ace_high is not None,
            insurance=rules.insurance is not None,
            dynasty=rules.dynasty is not None,
            progressive_wager_cents=progressive.wager_cents if progressive else None,
            occupancy=settings.occupancy if settings else 0.7,
            bet_probability=settings.bet_probability if settings else 0.6,
            bonus_amounts=_chips_within_limits(rules),
        )
        hit_every = simulation.hit_every or (settings.hit_every if settings else 0)
        link = InProcessLink(runtime.sequencer)
        table_rng = random.Random(rng.random())  # noqa: S311 - simulated players
        tables.append(SimulatedTable(plan, link, table_rng, session, hit_every))
    return tables


def _chips_within_limits(rules: TableRules) -> tuple[int, ...]:
    """The simulated players' odds chips, kept within every odds spot's limits."""
    chips = ODDS_CHIPS
    if not rules.wager_limits:
        return chips
    low = max(limits.minimum_cents for limits in rules.wager_limits.values())
    high = min(limits.maximum_cents for limits in rules.wager_limits.values())
    return tuple(chip for chip in chips if low <= chip <= high) or (low,)


async def _play(table: SimulatedTable, simulation: Simulation, heartbeat_s: float) -> None:
    """One simulated table: heartbeats, and rounds at the configured pace."""
    async with asyncio.TaskGroup() as group:
        beats = group.create_task(table.heartbeats(heartbeat_s))
        while simulation.rounds is None or table.rounds_played < simulation.rounds:
            try:
                await table.play_round()
            except ControllerUnavailableError:
                log.warning("table %s waits: the controller is failing closed", table.plan.table_id)
            await asyncio.sleep(simulation.interval_s)
        beats.cancel()
    if all(other.rounds_played >= (simulation.rounds or 0) for other in simulation.tables):
        simulation.finished.set()


async def serve(  # noqa: PLR0913 - the run, the demo and the tests each set a few
    config: Config,
    stop: asyncio.Event,
    *,
    simulation: Simulation | None = None,
    started: Callable[[Runtime, str], None] | None = None,
    require_manifest: bool = False,
    authority: AuthorityPolicy = AuthorityPolicy(),
    key: ControllerKey | None = None,
) -> Runtime:
    """Run the controller until ``stop`` is set; return its runtime (journal still open)."""
    runtime = build_runtime(config, require_manifest=require_manifest, authority=authority, key=key)
    liveness = runtime.liveness
    if liveness is None:  # pragma: no cover - build_runtime always makes one
        raise StartupError("no liveness monitor")
    sources, sinks = _sources(config, runtime)
    simulation = simulation or Simulation()
    simulation.tables = _simulated(config, runtime, simulation)
    runtime.virtual_signs = simulation.virtual_signs
    notifier = Notifier.from_environment()
    web_started = asyncio.Event()
    url = f"http://{config.web.host}:{config.web.port}/"
    async with asyncio.TaskGroup() as group:
        core: list[asyncio.Task[None]] = [
            group.create_task(runtime.sequencer.run()),
            group.create_task(runtime.sequencer.recover()),
            group.create_task(liveness.run(runtime.sequencer)),
            group.create_task(
                serve_display(
                    Display(runtime, max_streams=config.web.max_streams),
                    config.web.host,
                    config.web.port,
                    web_started,
                )
            ),
            *(group.create_task(sign.run()) for sign in simulation.virtual_signs),
        ]
        feeding = [_start(group, f"source {s.name}", _bind_source(s, runtime)) for s in sources]
        core += [_start(group, f"sink {s.name}", _bind_sink(s, runtime)) for s in sinks]
        heartbeat_s = (
            max(0.5, min(t.heartbeat_timeout_s for t in config.tables) / 3)
            if config.tables
            else 1.0
        )
        feeding += [
            group.create_task(_play(table, simulation, heartbeat_s)) for table in simulation.tables
        ]
        await web_started.wait()
        notifier.ready(f"serving {url}")
        core.append(group.create_task(notifier.watchdog()))
        if started is not None:
            started(runtime, url)
        await stop.wait()
        notifier.stopping()
        for task in feeding:
            task.cancel()
        await asyncio.gather(*feeding, return_exceptions=True)
        await runtime.sequencer.close()
        await asyncio.sleep(0.2 if sinks else 0)  # let the sinks take "offline"
        for task in core:
            task.cancel()
    return runtime


def _bind_source(source: Source, runtime: Runtime) -> Callable[[], Coroutine[None, None, None]]:
    return lambda: source.run(runtime.sequencer)


def _bind_sink(sink: Sink, runtime: Runtime) -> Callable[[], Coroutine[None, None, None]]:
    async def run() -> None:
        subscription = runtime.broadcast.subscribe()
        try:
            await sink.run(subscription)
        finally:
            subscription.close()

    return run


def _start(
    group: asyncio.TaskGroup, name: str, start: Callable[[], Awaitable[None]]
) -> asyncio.Task[None]:
    return group.create_task(supervise(name, start), name=name)


def install_signal_handlers(stop: asyncio.Event) -> None:
    """SIGTERM and SIGINT set ``stop`` (a graceful drain), once."""
    import signal  # noqa: PLC0415

    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(number, stop.set)
