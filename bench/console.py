"""Benchmark: the supervisors' console's cost on the display server, and the tables beside it.

docs/benchmarks.md, "The console's cost on the display server".

The daemon runs as bench/throughput.py's controller side runs it (bench/sides.py: its own
mosquitto, simulated tables on MQTT, a display on ``meter/+``, ``jackpotd run`` readied as an
operator readies it by bench/service.py), with its operator socket configured, so that the
display server serves the console (controller/web/console.py) on its localhost bind. A second
operator, a supervisor, is added with the command line as the manager was; each enrolls a
passkey at the console as a supervisor's tablet does (``/console/api/enroll``, the
registration, the manager's key file signing the enrollment through the operator socket).

The passkeys are software authenticators (tests/support/authenticator.py: ES256, the bytes a
browser hands the page, byte for byte), so every action is really signed and checked by the
ledger. The action is a meter correction of one cent to a pool's reserve (``adjust``), up then
down: it can be repeated without end, touches no meter the tables feed, and is always under
dual control, so each one is the page's whole path: a draft, two assertions, the submission
through the operator socket, three requests in all.

Three measurements, in one run, on the same daemon:

* **capacity**: no table plays; one supervisor's tablet signs actions back to back for
  ``--capacity-s``: signed actions per second, requests per second, each action's latency;
  then ``/console/api/state`` polled back to back: polls per second.
* **tables, console idle**: bench/sides.py's step at ``--rate`` events/s: table events
  journaled per second and the lock-to-meter p99 (bench/sides.py ``meter_latencies``).
* **tables, console busy**: the same step while the console takes a steady load: signed
  actions at ``--action-rate`` a second, ``/console/api/state`` polled by ``--screens``
  screens every ``--poll-s`` (the page polls), and the page itself fetched once a second.

Idle and busy take turns (``--passes`` of each, busy first in every other pass, the load
average after each pass kept beside it); the figures are the medians of the passes, and the
ratios busy/idle. The console's load runs in a process of its own, so that the load generator,
which times the tables' locks and meters, is not slowed by it. Nothing is
asserted about speed: the machine is shared (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

import aiohttp
from common import KEY_FILE, Mosquitto, machine, ms, percentile, write_results
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from service import MANAGER, PASSPHRASE, Daemon, approve_site
from sides import Controller

from controller.cli import main as jackpotd
from controller.cli.submit import SocketDesk
from controller.events import decode_event
from controller.ledger.binding import signed_by
from controller.security.keys import open_key

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.authenticator import Authenticator  # the tests' software passkey

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence
    from multiprocessing.queues import Queue
    from multiprocessing.synchronize import Event as EventType

SUPERVISOR: Final = "bench-sup"
SOCKET: Final = "operator.sock"
POOL: Final = "p1"
REASON: Final = "benchmark: a cent to the reserve and back"


class ConsoleController(Controller):
    """bench/sides.py's controller, with its operator socket and so its console."""

    def readied(self, config: Path) -> Daemon:
        """The console's socket configured, the site approved, the supervisor added."""
        text = config.read_text().replace(
            f'key_file = "{KEY_FILE}"\n', f'key_file = "{KEY_FILE}"\noperator_socket = "{SOCKET}"\n'
        )
        config.write_text(text)
        approve_site(config)
        folder = config.parent
        passphrase = str(folder / f"{MANAGER}.passphrase")
        key = str(folder / f"{SUPERVISOR}.key")
        signed = ["--key", str(folder / f"{MANAGER}.key"), "--passphrase-file", passphrase]
        for command in (
            ["operator", "key", SUPERVISOR, "--out", key, "--passphrase-file", passphrase],
            ["operator", "add", SUPERVISOR, "--role", "supervisor", "--public-key", key, *signed,
             "--db", str(self.journal)],
        ):  # fmt: skip
            log = config.with_suffix(".operator.log")
            with log.open("a", encoding="utf-8") as output, contextlib.redirect_stdout(output):
                status = jackpotd(command)
            if status != 0:
                raise RuntimeError(f"jackpotd {' '.join(command[:2])} failed")
        daemon = Daemon(config)
        daemon.approved = True
        return daemon

    @property
    def base(self) -> str:
        """The display server's address."""
        return f"http://127.0.0.1:{self.web_port}"

    @property
    def origin(self) -> str:
        """The console's origin on a localhost bind (controller/config/web_section.py)."""
        return f"http://localhost:{self.web_port}"


@dataclass
class Tablet:
    """The console's client: the page's requests, the passkeys of both signers."""

    base: str
    origin: str
    passkeys: dict[str, Authenticator] = field(default_factory=dict)
    sign: int = 1

    async def post(
        self, session: aiohttp.ClientSession, path: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """One of the page's requests: its JSON answer (a refusal raises)."""
        headers = {"Origin": self.origin}
        async with session.post(self.base + path, json=body, headers=headers) as response:
            response.raise_for_status()
            answer: dict[str, Any] = await response.json()
        if answer.get("status") == "refused":
            raise RuntimeError(f"{path}: refused: {answer.get('reason')}")
        return answer

    async def enroll(self, session: aiohttp.ClientSession, operator: str, socket: Path) -> None:
        """``operator``'s passkey registered at the page; the manager's key file signs it."""
        passkey = Authenticator()
        body = {"operator": operator, "label": f"{operator}'s tablet", "by": MANAGER}
        draft = await self.post(session, "/console/api/enroll", body)
        challenge = hashlib.sha256(base64.b64decode(draft["bytes"])).digest()
        made = passkey.register(challenge, rp_id="localhost", origin=self.origin)
        await self.post(
            session, "/console/api/register",
            {"draft": draft["draft"], "credential_id": made.credential_id,
             "attestation_object": made.attestation_object,
             "client_data_json": made.client_data_json},
        )  # fmt: skip
        async with session.get(f"{self.base}/console/api/drafts/{draft['draft']}") as response:
            event = await response.read()
        await asyncio.to_thread(_manager_signs, socket, event)
        self.passkeys[operator] = passkey

    async def action(self, session: aiohttp.ClientSession) -> None:
        """One signed meter correction: a draft, two assertions (three requests)."""
        body = {"action": "adjust", "pool_id": POOL, "account": "reserve",
                "amount_cents": self.sign, "by": MANAGER, "reason": REASON}  # fmt: skip
        draft = await self.post(session, "/console/api/draft", body)
        challenge = hashlib.sha256(base64.b64decode(draft["bytes"])).digest()
        answer: dict[str, Any] = {}
        for operator in (MANAGER, SUPERVISOR):
            assertion, signature = self.passkeys[operator].assertion(
                challenge, rp_id="localhost", origin=self.origin
            )
            answer = await self.post(
                session, "/console/api/sign",
                {"draft": draft["draft"], "credential_id": assertion.credential_id,
                 "authenticator_data": assertion.authenticator_data,
                 "client_data_json": assertion.client_data_json, "signature": signature},
            )  # fmt: skip
        if answer.get("status") != "applied":
            raise RuntimeError(f"the correction was not applied: {answer}")
        self.sign = -self.sign

    async def poll(self, session: aiohttp.ClientSession, path: str = "/console/api/state") -> None:
        """One of the page's polls (or the page itself)."""
        async with session.get(self.base + path) as response:
            response.raise_for_status()
            await response.read()


def _manager_signs(socket: Path, body: bytes) -> None:
    """The manager's key file signs the drafted enrollment and hands it in (the CLI's path)."""
    folder = socket.parent
    _, key = open_key(folder / f"{MANAGER}.key", PASSPHRASE)
    desk = SocketDesk(socket)
    event = signed_by(desk.state, decode_event(body), [(MANAGER, key)])
    receipt = desk.submit(event, "passkey enroll")
    if receipt.outcome != "applied":
        raise RuntimeError(f"the enrollment was refused: {receipt.reason}")


async def capacity(tablet: Tablet, seconds: float) -> dict[str, Any]:
    """Signed actions back to back, then state polls back to back (no table playing)."""
    latencies: list[float] = []
    async with aiohttp.ClientSession() as session:
        started = time.perf_counter()
        while time.perf_counter() - started < seconds:
            begun = time.perf_counter()
            await tablet.action(session)
            latencies.append(time.perf_counter() - begun)
        elapsed = time.perf_counter() - started
        polls = 0
        polling = time.perf_counter()
        while time.perf_counter() - polling < seconds:
            await tablet.poll(session)
            polls += 1
        polled = time.perf_counter() - polling
    return {
        "actions": len(latencies),
        "actions_per_s": round(len(latencies) / elapsed, 2),
        "requests_per_s": round(3 * len(latencies) / elapsed, 2),
        "p50_action_ms": ms(percentile(latencies, 0.50)),
        "p99_action_ms": ms(percentile(latencies, 0.99)),
        "state_polls_per_s": round(polls / polled, 2),
    }


@dataclass(frozen=True)
class Steady:
    """The busy step's console load (see the module docstring)."""

    action_rate: float
    screens: int
    poll_s: float


def _keys(tablet: Tablet) -> dict[str, tuple[bytes, bytes, int]]:
    """The passkeys as another process takes them: key (DER), credential id, sign count."""
    encoding, form = serialization.Encoding.DER, serialization.PrivateFormat.PKCS8
    none = serialization.NoEncryption()
    return {
        name: (passkey.key.private_bytes(encoding, form, none), passkey.credential_id,
               passkey.sign_count)
        for name, passkey in tablet.passkeys.items()
    }  # fmt: skip


def _passkeys(keys: dict[str, tuple[bytes, bytes, int]]) -> dict[str, Authenticator]:
    made: dict[str, Authenticator] = {}
    for name, (der, credential_id, count) in keys.items():
        key = serialization.load_der_private_key(der, None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise TypeError("a passkey's key is ECDSA P-256")
        made[name] = Authenticator(key, credential_id, count)
    return made


class Load:
    """The console's steady load, in a process of its own.

    The load generator, this process, times the tables' locks and meters: a load beside them
    in the same process would slow the timing, not the daemon.
    """

    def __init__(self, tablet: Tablet, steady: Steady) -> None:
        self.tablet = tablet
        context = multiprocessing.get_context("spawn")
        self.stop = context.Event()
        self.ready = context.Event()
        self.answer: Queue[dict[str, Any]] = context.Queue()
        self.process = context.Process(
            target=_load_process,
            args=(Handed(tablet.base, tablet.origin, _keys(tablet), tablet.sign, steady),
                  self.stop, self.ready, self.answer),
            daemon=True,
        )  # fmt: skip
        self.found: dict[str, Any] = {}

    async def __aenter__(self) -> Self:
        self.process.start()
        await asyncio.to_thread(self.ready.wait, 60)
        return self

    async def __aexit__(self, *_: object) -> None:
        self.stop.set()
        self.found = await asyncio.to_thread(self.answer.get, block=True, timeout=60)
        await asyncio.to_thread(self.process.join, 30)
        if self.found.get("error"):
            raise RuntimeError(f"the console's load stopped: {self.found['error']}")
        # The counters go on from where the load left them: the ledger refuses one that
        # goes back (a suspected clone).
        self.tablet.passkeys = _passkeys(self.found["passkeys"])
        self.tablet.sign = self.found["sign"]

    def figures(self) -> dict[str, Any]:
        """What the console served over the step."""
        seconds = max(self.found["seconds"], 1e-9)
        counts: dict[str, int] = self.found["counts"]
        requests = 3 * counts["actions"] + counts["polls"] + counts["pages"]
        return {
            "console_actions_per_s": round(counts["actions"] / seconds, 2),
            "console_requests_per_s": round(requests / seconds, 2),
            "console_p99_action_ms": ms(percentile(self.found["latencies"], 0.99)),
        } | {f"console_{name}": count for name, count in counts.items()}


@dataclass(frozen=True)
class Handed:
    """What the load's process is handed: where the console is, the passkeys, the load."""

    base: str
    origin: str
    keys: dict[str, tuple[bytes, bytes, int]]
    sign: int
    steady: Steady


KINDS: Final = ("actions", "polls", "pages")


@dataclass
class Counted:
    """What the load's process counts."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    latencies: list[float] = field(default_factory=list)


def _load_process(
    handed: Handed, stop: EventType, ready: EventType, answer: Queue[dict[str, Any]]
) -> None:
    tablet = Tablet(handed.base, handed.origin, _passkeys(handed.keys), handed.sign)
    counted = Counted()
    error = ""
    started = time.perf_counter()
    try:
        asyncio.run(_steady(tablet, handed.steady, (stop, ready), counted))
    except Exception as failed:  # noqa: BLE001 - said to the benchmark's process
        error = repr(failed)
    ready.set()
    seconds = time.perf_counter() - started
    answer.put(
        {"counts": counted.counts, "latencies": counted.latencies, "seconds": seconds,
         "passkeys": _keys(tablet), "sign": tablet.sign, "error": error}
    )  # fmt: skip


async def _steady(
    tablet: Tablet, steady: Steady, events: tuple[EventType, EventType], counted: Counted
) -> None:
    """Signed actions, state polls and page fetches, each on its own schedule, until stopped."""
    stop, ready = events
    async with aiohttp.ClientSession() as session:

        async def every(period: float, kind: str, once: Callable[[], Awaitable[None]]) -> None:
            next_at = time.perf_counter()
            while True:
                begun = time.perf_counter()
                await once()
                if kind == "actions":
                    counted.latencies.append(time.perf_counter() - begun)
                counted.counts[kind] += 1
                next_at += period
                await asyncio.sleep(max(0.0, next_at - time.perf_counter()))

        tasks = [asyncio.create_task(every(1 / steady.action_rate, "actions",
                                           lambda: tablet.action(session)))
                 for _ in range(1 if steady.action_rate > 0 else 0)]  # fmt: skip
        tasks += [
            asyncio.create_task(every(steady.poll_s, "polls", lambda: tablet.poll(session)))
            for _ in range(steady.screens)
        ]
        tasks.append(
            asyncio.create_task(every(1.0, "pages", lambda: tablet.poll(session, "/console/")))
        )
        ready.set()
        try:
            while not stop.is_set() and not any(task.done() for task in tasks):
                await asyncio.sleep(0.05)
        finally:
            for task in tasks:
                task.cancel()
            results = await asyncio.gather(*tasks, return_exceptions=True)
        for result in results:
            if isinstance(result, Exception):
                raise result


TABLE_FIGURES: Final = ("events", "delivered", "events_per_s", "kept_up", "p50_latency_ms",
                        "p99_latency_ms", "latency_samples", "cpu_ms_per_event")  # fmt: skip


async def measure(args: argparse.Namespace, directory: Path) -> dict[str, Any]:
    """Capacity, then idle and busy steps taking turns (see the module docstring)."""
    side = ConsoleController(args, directory)
    await side.start()
    try:
        tablet = Tablet(side.base, side.origin)
        socket = directory / SOCKET
        async with aiohttp.ClientSession() as session:
            for operator in (MANAGER, SUPERVISOR):
                await tablet.enroll(session, operator, socket)
        alone = await asyncio.to_thread(asyncio.run, capacity(tablet, args.capacity_s))
        print(
            f"console alone: {alone['actions_per_s']} signed actions/s "
            f"({alone['requests_per_s']} requests/s, p99 {alone['p99_action_ms']} ms an action), "
            f"{alone['state_polls_per_s']} state polls/s",
            flush=True,
        )
        passes: list[dict[str, Any]] = []
        for number in range(1, args.passes + 1):
            # Busy first in every other pass: a machine whose load rises through the run
            # (others' work) would otherwise count against the console each time.
            busy_first = number % 2 == 0
            if not busy_first:
                idle = await side.step(args.rate, args.duration)
            load = Load(tablet, Steady(args.action_rate, args.screens, args.poll_s))
            async with load:
                busy = await side.step(args.rate, args.duration)
            busy |= load.figures()
            if busy_first:
                idle = await side.step(args.rate, args.duration)
            one = {
                "pass": number,
                "order": "busy, idle" if busy_first else "idle, busy",
                "load_average": round(os.getloadavg()[0], 2),
                "idle": {name: idle[name] for name in TABLE_FIGURES},
                "busy": {name: busy[name] for name in TABLE_FIGURES}
                | {name: value for name, value in busy.items() if name.startswith("console_")},
            }
            passes.append(one)
            print(_line(one), flush=True)
        side.daemon.check()
    finally:
        await side.close()
    return {"capacity": alone, "passes": passes}


def _line(one: dict[str, Any]) -> str:
    idle, busy = one["idle"], one["busy"]
    return (
        f"pass {one['pass']}: tables {idle['events_per_s']} ev/s journaled, p99 "
        f"{idle['p99_latency_ms']} ms, console idle | {busy['events_per_s']} ev/s, p99 "
        f"{busy['p99_latency_ms']} ms, console busy ({busy['console_actions_per_s']} signed "
        f"actions/s, {busy['console_requests_per_s']} requests/s)"
    )


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return round(numerator / denominator, 3)


def _daemon_cpu(passes: Sequence[dict[str, Any]], side: str) -> float:
    """The daemon's CPU per table event (the display server, and so the console, is in it)."""
    return float(statistics.median(one[side]["cpu_ms_per_event"]["daemon"] for one in passes))


def summarize(passes: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The median of the passes, and the ratios busy over idle."""

    def median(side: str, name: str) -> float | None:
        figures = [one[side][name] for one in passes if one[side][name] is not None]
        return round(statistics.median(figures), 3) if figures else None

    idle_rate, busy_rate = median("idle", "events_per_s"), median("busy", "events_per_s")
    idle_p99, busy_p99 = median("idle", "p99_latency_ms"), median("busy", "p99_latency_ms")
    return {
        "idle_events_per_s": idle_rate,
        "busy_events_per_s": busy_rate,
        "events_per_s_ratio_busy_vs_idle": _ratio(busy_rate, idle_rate),
        "idle_p99_latency_ms": idle_p99,
        "busy_p99_latency_ms": busy_p99,
        "p99_latency_ratio_busy_vs_idle": _ratio(busy_p99, idle_p99),
        "idle_daemon_cpu_ms_per_event": _daemon_cpu(passes, "idle"),
        "busy_daemon_cpu_ms_per_event": _daemon_cpu(passes, "busy"),
        "console_actions_per_s_under_play": median("busy", "console_actions_per_s"),
        "console_requests_per_s_under_play": median("busy", "console_requests_per_s"),
        "every_event_journaled": all(
            one[side]["delivered"] == one[side]["events"]
            for one in passes
            for side in ("idle", "busy")
        ),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=500.0, help="table events/s offered")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per step")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before each step")
    parser.add_argument("--passes", type=int, default=3, help="idle and busy steps, in turn")
    parser.add_argument("--capacity-s", type=float, default=15.0, help="the console alone")
    parser.add_argument(
        "--action-rate", type=float, default=2.0, help="signed actions/s, busy (0: none)"
    )
    parser.add_argument(
        "--screens", type=int, default=4, help="console pages polling, busy (0: none)"
    )
    parser.add_argument("--poll-s", type=float, default=1.0, help="each screen's state poll")
    parser.add_argument("--tables", type=int, default=40)
    parser.add_argument("--pools", type=int, default=4)
    parser.add_argument("--occupancy", type=float, default=0.4)
    parser.add_argument("--bet-probability", type=float, default=0.9)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--workdir", type=Path, help="default: a new folder in /var/tmp")
    parser.add_argument("--output", default="console", help="bench/results/<name>.json")
    args = parser.parse_args(argv)
    args.broker_set, args.broker_dir = [], None  # bench/load.py's: the broker as it ships
    directory = args.workdir or Path(tempfile.mkdtemp(prefix="jackpotd-bench-", dir="/var/tmp"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"working in {directory}", flush=True)
    measured = asyncio.run(measure(args, directory / "controller"))
    summary = summarize(measured["passes"])
    results = {
        "benchmark": "console",
        "machine": machine()
        | {"broker": Mosquitto(directory).version(), "load_average_at_end": os.getloadavg()},
        "method": {
            "tables": args.tables,
            "pools": args.pools,
            "table_events_per_s_offered": args.rate,
            "step_duration_s": args.duration,
            "warmup_s": args.warmup,
            "passes": args.passes,
            "capacity_s": args.capacity_s,
            "action": "adjust: 1 cent to a pool's reserve and back, dual control, 2 passkeys",
            "requests_per_action": 3,
            "busy_load": {
                "signed_actions_per_s": args.action_rate,
                "screens_polling_state": args.screens,
                "poll_every_s": args.poll_s,
                "page_fetches_per_s": 1,
            },
            "latency": "progressive lock publish -> first meter/<pool> with seq >= the lock's row",
        },
        "capacity": measured["capacity"],
        "summary": summary,
        "passes": measured["passes"],
    }
    path = write_results(args.output, results)
    print(
        f"tables journaled: {summary['idle_events_per_s']} ev/s console idle, "
        f"{summary['busy_events_per_s']} ev/s console busy, ratio "
        f"{summary['events_per_s_ratio_busy_vs_idle']}; p99 lock-to-meter "
        f"{summary['idle_p99_latency_ms']} ms idle, {summary['busy_p99_latency_ms']} ms busy, "
        f"ratio {summary['p99_latency_ratio_busy_vs_idle']}"
    )
    shutil.rmtree(directory, ignore_errors=True)
    print(f"results in {path}")


if __name__ == "__main__":
    main()
