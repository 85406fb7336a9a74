"""The console's steady load for the busy step, in a process of its own.

bench/console.py's busy step: signed actions at a steady rate, ``/console/api/state`` polled
by a number of screens, and the page itself fetched once a second, each on its own schedule
(:class:`Steady`). :class:`Load` runs them in a spawned process, handing it the tablet's
passkeys and taking them back, counters advanced, when the step ends; :meth:`Load.figures` is
what the console served over the step.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Self

import aiohttp
from common import ms, percentile
from console_rig import Tablet
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.web.authenticator import Authenticator  # the tests' software passkey

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from multiprocessing.queues import Queue
    from multiprocessing.synchronize import Event as EventType


@dataclass(frozen=True)
class Steady:
    """The busy step's console load: actions a second, screens polling, each screen's period."""

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
