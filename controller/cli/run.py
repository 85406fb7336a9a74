"""``jackpotd run`` (the service) and ``jackpotd demo`` (the service on embedded defaults)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.cli.common import checked, command
from controller.cli.listen import Address, check_listen
from controller.config.load import load_config
from controller.journal.errors import JournalError
from controller.journal.location import journal_location, sqlite_file
from controller.ledger_journal import reach_journal, writable
from controller.money import format_cents
from controller.plugins import FiniteSource
from controller.runtime.checkpointing import controller_key
from controller.runtime.logsafe import log_handler
from controller.security.bytecode import restart_uncached, restarted, uncached
from controller.security.controller_key import ControllerKey
from controller.service.demo import (
    DEMO_MANAGER,
    DEMO_PASSPHRASE,
    demo_approver,
    demo_config,
    demo_manager_key,
)
from controller.service.startup_checks import AuthorityPolicy, StartupError
from controller.service.wiring import install_signal_handlers, serve

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from controller.config.load import Config
    from controller.journal.location import JournalLocation
    from controller.runtime.view import Runtime
    from controller.security.signer import Signer


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``run`` and ``demo``."""
    run = command(
        commands,
        "run",
        help="run the controller service",
        examples="  jackpotd run --config /etc/jackpotd/jackpotd.toml   # as systemd runs it",
    )
    run.add_argument("--config", required=True, type=Path, help="the TOML configuration")
    run.add_argument(
        "--log-level", default="INFO", type=str.upper, choices=LOG_LEVELS, help="what to log"
    )
    run.set_defaults(run=run_service, logs=True)

    demo = command(
        commands,
        "demo",
        help="run the controller with simulated tables, SQLite and the display on localhost",
        examples=(
            "  jackpotd demo                                   # until Ctrl-C; open the display\n"
            "  jackpotd demo --rounds 20 --hit-every 5         # 20 rounds a table, a summary"
        ),
    )
    demo.add_argument(
        "--rounds",
        type=checked(int, minimum=1),
        help="stop after N rounds per table and summarise (default: play until stopped)",
    )
    demo.add_argument("--tables", type=checked(int, minimum=1), default=3, help="simulated tables")
    demo.add_argument(
        "--db",
        type=_journal_location,
        default=Path("var/demo.db"),
        help="the journal file, or a postgresql:// URL (docs/ha.md)",
    )
    demo.add_argument("--host", default="127.0.0.1", help="where the display listens")
    demo.add_argument(
        "--port", type=checked(int, minimum=1, maximum=65535), default=8080, help="its port"
    )
    demo.add_argument(
        "--interval",
        type=checked(float, minimum=0, above=True),
        default=0.5,
        help="seconds between rounds",
    )
    demo.add_argument(
        "--hit-every",
        type=checked(int, minimum=0),
        default=40,
        help="deal a jackpot hand every N rounds, so that a pending jackpot shows within the "
        "first minute (0: deal fairly)",
    )
    demo.add_argument("--seed", type=int, default=1, help="the simulation's random seed")
    demo.add_argument(
        "--levels",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="one more table, on a four-level pool whose grand is a mystery level (must hit "
        "by $12,000), and a sign over it (--no-levels: the one-level pool only)",
    )
    demo.add_argument(
        "--log-level", default="WARNING", type=str.upper, choices=LOG_LEVELS, help="what to log"
    )
    demo.set_defaults(run=run_demo, logs=True)


def _journal_location(text: str) -> JournalLocation:
    """An argparse type: a journal file or a ``postgresql://`` URL; any other URL is refused."""
    try:
        return journal_location(text)
    except JournalError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _logging(level: str) -> None:
    # One line per record, input escaped: a device cannot forge log lines (docs/faults.md).
    logging.basicConfig(level=level.upper(), handlers=[log_handler(sys.stderr)])


async def _serve(
    config: Config,
    *,
    require_manifest: bool = False,
    authority: AuthorityPolicy,
    key: Signer,
    begun: Callable[[Runtime], None] | None = None,
) -> Runtime | None:
    stop = asyncio.Event()
    install_signal_handlers(stop)
    waiters: list[asyncio.Task[None]] = []

    async def stop_when_finished(sources: Sequence[FiniteSource]) -> None:
        await asyncio.gather(*(source.finished.wait() for source in sources))
        stop.set()

    def started(runtime: Runtime, url: str) -> None:
        print(
            f"jackpotd {config.controller.controller_id}: meter display and /metrics at {url}",
            flush=True,
        )
        if begun is not None:
            begun(runtime)
        # A simulation with a number of rounds ends the run once they are played.
        finite = [source for source in runtime.sources if isinstance(source, FiniteSource)]
        if any(entry.settings.rounds for entry in config.entries("simulator")):
            waiters.append(asyncio.create_task(stop_when_finished(finite)))

    try:
        return await serve(
            config,
            stop,
            started=started,
            require_manifest=require_manifest,
            authority=authority,
            key=key,
        )
    finally:
        for waiter in waiters:
            waiter.cancel()


def run_service(args: argparse.Namespace) -> int:
    """Run until SIGTERM or SIGINT; exit 0 after draining."""
    if not uncached():
        # Before anything else: the service never runs code from a bytecode cache.
        if restarted():
            raise StartupError("the interpreter reads a bytecode cache despite -X pycache_prefix")
        restart_uncached()
    _logging(args.log_level)
    config = load_config(args.config)
    key = controller_key(config)  # before anything starts: a missing key is one line
    writable(config.controller.journal)  # not a journal, unreachable: one line, before the rest
    setting = f"in {args.config}"
    web = config.web
    check_listen(Address(web.host, web.port, f"[web] host {setting}", f"[web] port {setting}"))
    # Only the demo, on its embedded defaults, runs without an approved manifest.
    signed = AuthorityPolicy(require_signed=True)
    runtime = asyncio.run(_serve(config, require_manifest=True, authority=signed, key=key))
    if runtime is not None:  # None: stopped while standing by (docs/ha.md)
        runtime.journal.close()
    return 0


@dataclass
class Start:
    """Where the journal stood when this run began: its head row and the pools' meters."""

    seq: int = 0
    meters: dict[str, int] = field(default_factory=dict)

    def take(self, runtime: Runtime) -> None:
        """Note the head and the meters (called once the service has started)."""
        self.seq = runtime.journal.head[0]
        self.meters = {
            pool_id: pool.meter_cents for pool_id, pool in runtime.journal.state.pools.items()
        }


def summary(runtime: Runtime, since: Start) -> dict[str, Any]:
    """What this demo run did, and the meters as they now stand.

    Only the journal's rows after ``since`` count (not an earlier run's on the same journal);
    each meter says what this run moved it.
    """
    made = [payout for _seq, _at, payout in runtime.journal.payouts_since(since.seq)]
    wagers = sum(1 for payout in made if payout.kind != "envy")
    hits = [
        {
            "payout_id": payout.payout_id,
            "table_id": payout.table_id,
            "seat": payout.seat,
            "line": payout.line,
            "win_cents": payout.win_cents,
        }
        for payout in made
        if payout.from_meter_cents > 0  # a jackpot: a pay from a meter (docs/operations.md)
    ]
    pools = runtime.journal.state.pools
    return {
        "rounds": {
            table_id: count
            for source in runtime.sources
            if isinstance(source, FiniteSource)
            for table_id, count in source.rounds_played.items()
        },
        "wagers": wagers,
        "pools": {pool_id: pool.meter_cents for pool_id, pool in pools.items()},
        "moved": {
            pool_id: pool.meter_cents - since.meters.get(pool_id, pool.meter_cents)
            for pool_id, pool in pools.items()
        },
        "hits": hits,
    }


def console_line(config: Config) -> str:
    """The demo's third line: where the supervisors' console is, or why it is off.

    A manager signs a passkey's enrollment the console drafted at their own account, through
    the demo's operator socket (docs/operations.md, "The supervisors' console").
    """
    web = config.web
    if not web.console_origin:
        return "supervisors' console: off (others reach this display without TLS)"
    return (
        f"supervisors' console: {web.console_origin}/console/ (a manager signs a passkey's "
        f"enrollment with: jackpotd passkey enroll --socket {config.controller.operator_socket}"
        " --draft URL --key KEY)"
    )


def run_demo(args: argparse.Namespace) -> int:
    """The controller on embedded defaults; with --rounds, stop and summarise."""
    _logging(args.log_level)
    if (file := sqlite_file(args.db)) is not None:  # a database is reached below
        writable(file)
    check_listen(Address(args.host, args.port, "--host", "--port"))
    config = demo_config(
        tables=args.tables,
        signs=("pit-sign",),
        journal=args.db,
        host=args.host,
        port=args.port,
        seed=args.seed,
        interval_s=args.interval,
        hit_every=args.hit_every,
        rounds=args.rounds,
        levels=args.levels,
    )
    reach_journal(config.controller.journal)  # before the manager's key file is made
    demo = AuthorityPolicy(approver=demo_approver(config.controller.journal))
    # Said at each start: a newcomer signs verify-hit with it (README.md, "Try the supervisors'
    # commands"); the demo's money is nobody's, so its passphrase is no secret.
    manager = demo_manager_key(config.controller.journal)
    start = Start()

    def begun(runtime: Runtime) -> None:
        # After the display's URL, which stays the first line: scripts and kiosks read it.
        print(
            f"demo manager {DEMO_MANAGER!r}: key file {manager}, passphrase {DEMO_PASSPHRASE!r}",
            flush=True,
        )
        print(console_line(config), flush=True)
        start.take(runtime)

    # The demo's checkpoints are signed with a key made for the run, in memory only.
    key = ControllerKey.generate()
    runtime = asyncio.run(_serve(config, authority=demo, key=key, begun=begun))
    if runtime is None:
        print("stopped while standing by: another node held the sequencer (docs/ha.md)")
        return 0
    report = summary(runtime, start)
    runtime.journal.close()
    rounds = ", ".join(f"{table} {count}" for table, count in report["rounds"].items())
    print(f"rounds: {sum(report['rounds'].values())} ({rounds})")
    print(f"wagers settled: {report['wagers']}")
    for pool_id, meter in report["pools"].items():
        moved = report["moved"][pool_id]
        sign = "+" if moved >= 0 else "-"
        this_run = f"{sign}{format_cents(abs(moved))} this run"
        print(f"pool {pool_id}: meter {format_cents(meter)} ({this_run})")
    print(f"progressive hits: {len(report['hits'])} (jackpots won, pays from a meter)")
    if report["hits"]:
        # Here, not with the module: the service never prints a table (it imports rich).
        from controller.cli.tables import Column, print_table  # noqa: PLC0415

        print_table(
            [Column("pay", whole=True), Column("table", whole=True),
             Column("seat", figures=True), Column("line"), Column("amount", figures=True)],
            [
                (hit["payout_id"], hit["table_id"], hit["seat"], hit["line"],
                 format_cents(hit["win_cents"]))
                for hit in report["hits"]
            ],
        )  # fmt: skip
    journal = config.controller.journal
    print(f"journal: {journal} (check it with: jackpotd verify --db {journal})")
    return 0
