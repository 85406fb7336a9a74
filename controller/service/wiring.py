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
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from controller.backoff import Backoff, keep_connected
from controller.clock import utc_now
from controller.journal.high_water import HighWaterFileError
from controller.journal.location import database
from controller.journal.postgres.fence import Fence
from controller.ledger_journal import LedgerJournal, open_sequenced
from controller.runtime.broadcast import Broadcast
from controller.runtime.central_head import central_head
from controller.runtime.checkpointing import resume_checkpoints, schedule_for
from controller.runtime.liveness import Liveness
from controller.runtime.metrics import ControllerMetrics
from controller.runtime.sequencer import Sequencer
from controller.runtime.systemd import Notifier
from controller.runtime.view import Runtime
from controller.security.signer import as_controller_key
from controller.service.drivers import build_drivers
from controller.service.head_marks import published_heads, resumed_heads
from controller.service.mystery_keeper import mystery_watch
from controller.service.operator_socket import OperatorSocket
from controller.service.standby import Promoted, Standby
from controller.service.startup_checks import (
    AuthorityPolicy,
    StartupError,
    configuration_events,
    self_check,
)
from controller.web.console import ConsoleSite
from controller.web.display import Display, serve_display
from controller.web.limits import WebLimits

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Coroutine, Sequence

    from controller.config.load import Config
    from controller.outputs import SignedHead
    from controller.ports import Sink, Source
    from controller.runtime.checkpointing import CheckpointSchedule
    from controller.security.signer import Signer

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Supervised:
    """A part of the service run by :func:`keep_connected`: restarted whenever it ends."""

    name: str
    start: Callable[[], Awaitable[None]]
    connected: bool = False
    reconnects: int = 0

    def open_session(self) -> contextlib.nullcontext[None]:
        return contextlib.nullcontext()

    async def use_session(self, _session: None) -> None:
        await self.start()
        log.warning("%s stopped; restarting", self.name)

    def session_opened(self) -> None:
        """Nothing to open: a part starts at once."""

    def failure_of(self, error: Exception, *, opened: bool) -> str:  # noqa: ARG002
        return "failed"

    def failed(self, what: str, error: Exception) -> None:
        log.error("%s %s; restarting", self.name, what, exc_info=error)


async def supervise(
    name: str, start: Callable[[], Awaitable[None]], backoff: Backoff | None = None
) -> None:
    """Run a part forever: restart it with backoff if it fails or ends, until cancelled."""
    await keep_connected(_Supervised(name, start), backoff or Backoff(initial=0.2, cap=10.0))


def _journal_takeover(journal: LedgerJournal) -> None:
    """The takeover first: the rows from here to the next are this node's (docs/ha.md)."""
    took = journal.took_over
    if took is None:
        return
    log.warning("node %s took the sequencer over at epoch %d: %s", took.node, took.epoch, took.why)
    (receipt,) = journal.append_many([took])
    if not receipt.applied:  # a takeover is a no-op to the ledger: this is a broken journal
        journal.close()
        raise StartupError(f"{journal.path}: the journal refused the takeover: {receipt.reason}")


def build_runtime(  # noqa: PLR0913 - the run, the standby and the tests each set a few
    config: Config,
    *,
    require_manifest: bool = False,
    authority: AuthorityPolicy = AuthorityPolicy(),
    key: Signer | None = None,
    promoted: Promoted | None = None,
    published: Sequence[bytes] = (),
    high_water: bool | None = None,
    central: SignedHead | None = None,
) -> Runtime:
    """Open the journal and bring it in line with the configuration.

    ``require_manifest``: refuse to start without an approved manifest (``jackpotd run``);
    without it, a journal with none only draws a warning (the demo, in-process tests).
    ``key``: the controller's signing key (else the one ``[controller] key_file`` names);
    the stored state is checked against the journal before anything builds on it
    (controller/runtime/checkpointing.py). ``high_water``: whether the controller keeps a
    high-water mark (default: when it has a key of its own, given or configured; controller/
    runtime/heads.py); ``central``: central's mark of this property, asked for before
    (controller/runtime/central_head.py). ``promoted``: the journal a standby has followed
    and now holds the fence of, checked (controller/service/standby.py); else it opens here.
    """
    checkpoints = schedule_for(config, key)
    settings = config.controller
    journal: LedgerJournal
    if promoted is None:
        journal = open_sequenced(settings.journal, Fence(settings.node, settings.lease_s))
    else:
        journal = promoted.journal
    try:
        return _assembled(
            config, journal, checkpoints, authority, promoted=promoted,
            require_manifest=require_manifest, heads_signed=key is not None if high_water is None
            else high_water, published=published, central=central,
        )  # fmt: skip
    except BaseException:
        # A start that fails closes what it opened: a connection left to the garbage collector
        # keeps a SQLite journal's write-ahead log beside it, which a file put back in its
        # place (a restore) would then take as its own.
        journal.close()
        raise


def _assembled(  # noqa: PLR0913 - build_runtime's, once its journal is open
    config: Config,
    journal: LedgerJournal,
    checkpoints: CheckpointSchedule,
    authority: AuthorityPolicy,
    *,
    promoted: Promoted | None,
    require_manifest: bool,
    heads_signed: bool,
    published: Sequence[bytes],
    central: SignedHead | None,
) -> Runtime:
    """The runtime on ``journal``: checked, its heads and checkpoints resumed, configured."""
    settings = config.controller
    _journal_takeover(journal)
    seen = None if promoted is None else promoted.seen
    self_check(config, journal, require_manifest=require_manifest, seen=seen)
    check = None if promoted is None else promoted.check
    try:
        heads = resumed_heads(
            config,
            checkpoints.key,
            configured_key=heads_signed,
            published=published,
            central=central,
        )
    except HighWaterFileError as error:
        raise StartupError(str(error)) from error
    mark = heads.last if heads is not None else None
    resume_checkpoints(journal, checkpoints, utc_now(), check, mark)
    if heads is not None:
        heads.accepted(journal.state)
    events = configuration_events(config, journal, authority)
    refused = [receipt for receipt in journal.append_many(events) if not receipt.applied]
    if refused:
        reasons = "; ".join(f"{receipt.event_id}: {receipt.reason}" for receipt in refused)
        raise StartupError(f"{config.source}: the journal refused the configuration: {reasons}")
    broadcast = Broadcast()
    offline = {table_id for table_id, live in journal.state.table_states.items() if not live.online}

    def is_open(table_id: str) -> bool:
        live = journal.state.table_states.get(table_id)
        return live is None or live.online

    liveness = Liveness(
        {table.table_id: table.heartbeat_timeout_s for table in config.tables},
        clock=utc_now,
        offline=offline,
        is_open=is_open,
    )
    sequencer = Sequencer(
        journal, broadcast, on_heartbeat=liveness.seen, commit_hang_s=settings.commit_hang_s
    )
    sequencer.on_commit.append(liveness.committed)
    sequencer.checkpoints = checkpoints
    sequencer.heads = heads
    sequencer.mystery = mystery_watch(config, journal.state, checkpoints.key)
    broadcast.publish(checkpoints.updates())
    runtime = Runtime(config.controller.controller_id, journal, broadcast, sequencer, liveness)
    runtime.metrics = ControllerMetrics(journal, sequencer, liveness)
    sequencer.on_commit.append(runtime.metrics.observe)
    return runtime


async def serve(  # noqa: PLR0913 - the run, the demo and the tests each set a few
    config: Config,
    stop: asyncio.Event,
    *,
    started: Callable[[Runtime, str], None] | None = None,
    require_manifest: bool = False,
    authority: AuthorityPolicy = AuthorityPolicy(),
    key: Signer | None = None,
) -> Runtime | None:
    """Run the controller until ``stop`` is set; return its runtime (journal still open).

    On a shared database the node first stands by until it holds the sequencer's fence
    (controller/service/standby.py); None if ``stop`` came first.
    """
    web_limits = WebLimits.of(config.web)  # refused before anything starts if too low
    notifier = Notifier.from_environment()
    promoted = None
    # A controller with a key of its own keeps a high-water mark; the demo, whose key is made
    # for each run (it brings its own manager), does not: the next run's key could not check it.
    keyed = authority.approver is None and (key is not None or bool(config.controller.key_file))
    shared = database(config.controller.journal)  # several nodes may share a database's
    if shared is not None:
        key = key or schedule_for(config).key  # the standby's check and the runtime's, one key
        standby = Standby(
            config, as_controller_key(key), stop, notifier, hash_software=require_manifest
        )
        promoted = await standby.run(shared)
        if promoted is None:
            return None
    published = await published_heads(config) if keyed else []
    central = await central_head(config, key) if keyed else None
    runtime = build_runtime(
        config,
        require_manifest=require_manifest,
        authority=authority,
        key=key,
        promoted=promoted,
        published=published,
        high_water=keyed,
        central=central,
    )
    liveness = runtime.liveness
    if liveness is None:  # pragma: no cover - build_runtime always makes one
        raise StartupError("no liveness monitor")
    parts = build_drivers(config, runtime)
    runtime.sources = parts.sources
    runtime.faces = parts.faces
    operators = _operator_socket(config, runtime)
    web_started = asyncio.Event()
    scheme = "https" if config.web.tls_cert else "http"
    url = f"{scheme}://{config.web.host}:{config.web.port}/"
    try:
        if operators is not None:
            await operators.listen()  # before READY=1: a socket that cannot be made stops it
        async with asyncio.TaskGroup() as group:
            core: list[asyncio.Task[None]] = [
                group.create_task(runtime.sequencer.run()),
                group.create_task(runtime.sequencer.recover()),
                group.create_task(liveness.run(runtime.sequencer)),
                group.create_task(
                    serve_display(
                        Display(
                            runtime,
                            max_streams=config.web.max_streams,
                            node=config.controller.node,
                            operator_socket=operators.path if operators is not None else None,
                            console_site=ConsoleSite.of(config.web),
                        ),
                        web_limits,
                        web_started,
                    )
                ),
                *(group.create_task(face.run()) for face in parts.faces),
            ]
            if operators is not None:
                core.append(group.create_task(operators.serve()))
            feeding = [
                _start(group, f"source {s.name}", _bind_source(s, runtime)) for s in parts.sources
            ]
            core += [_start(group, f"sink {s.name}", _bind_sink(s, runtime)) for s in parts.sinks]
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
            await asyncio.sleep(0.2 if parts.sinks else 0)  # let the sinks take "offline"
            for task in core:
                task.cancel()
    finally:
        if operators is not None:
            operators.close()
        for close in parts.close:
            close()
    return runtime


def _operator_socket(config: Config, runtime: Runtime) -> OperatorSocket | None:
    """The socket operators' signed actions come in on, if the configuration names one."""
    settings = config.controller
    if settings.operator_socket is None:
        return None
    return OperatorSocket(runtime, Path(settings.operator_socket), settings.operator_group)


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
