"""A stalled signer process never stalls the daemon: it serves, journals, and signs again after.

A real ``jackpotd signer`` holds the key and ``jackpotd run`` signs its heads through it
(``[controller] signer_socket``), a simulated table playing on a pty line. The signer is
stopped with SIGSTOP, as a process swapped out or on a hung disk is: its socket still accepts,
nobody answers. While it is stopped a head falls due and its request waits for the signer's
timeout; meanwhile the daemon answers ``/healthz`` within a fraction of that timeout every time,
and keeps journaling and acknowledging the table's events (the head is signed off the event
loop and off the journal's way, controller/runtime/head_signing.py). With SIGCONT the next head
is signed, verifies under the controller's public key, and ``jackpotd verify`` accepts the run.
Every wait is bounded (controller/runtime/remote_signer.py, "Off the event loop").

A display page is open all through: its ``/events`` stream is sent every meter the table moves,
and ``/api/state`` is asked for again and again, each meter with the controller's signature.
Those signatures are awaited (controller/web/meter_signatures.py), so ``/healthz`` answers
quickly while they wait for the stopped signer, and once it is back the stream's meters are
signed again and verify under the controller's public key.
"""

from __future__ import annotations

import asyncio
import base64
import os
import re
import signal
import socket
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Final

import aiohttp
import msgspec
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from faults.test_fault_sigkill import Devices
from support.runtime.daemon_process import CHILD, ROOT, ready, signer_config
from support.runtime.floor import keep_playing, simulated, within
from support.runtime.signer_process import running

from controller.journal.high_water import head_verifies, read_high_water
from controller.meter_signature import METER_DOMAIN
from controller.security.signer import TIMEOUT_S
from drivers.simulator_links import PtyPair, SerialTableLink

if TYPE_CHECKING:
    from pathlib import Path

WAIT_S: Final = 60.0
HEALTH_S: Final = TIMEOUT_S * 3 / 4
"""How long ``/healthz`` may take while the signer is stopped: a loop blocked on the signer
takes its whole timeout (twice: the client asks again once on a kept connection), and the
requests go on all through the stall, so one of them would wait that long; the margin is for a
loaded machine."""
AFTER_STALL: Final = 30
"""Events journaled and acknowledged after a head is known to wait for the stopped signer."""
STALLED = "the signer cannot be reached"


class Page:
    """A display page left open: its ``/events`` meters, and ``/api/state`` asked for in a loop."""

    def __init__(self, session: aiohttp.ClientSession, port: int) -> None:
        self.session = session
        self.base = f"http://127.0.0.1:{port}"
        self.meters: list[dict[str, object]] = []
        self.states = 0

    async def stream(self) -> None:
        """Read the stream's meter events until cancelled."""
        async with self.session.get(f"{self.base}/events") as response:
            assert response.status == 200
            event = ""
            async for raw in response.content:
                line = raw.decode().rstrip("\n")
                if line.startswith("event: "):
                    event = line[len("event: ") :]
                elif line.startswith("data: ") and event == "meter":
                    self.meters.append(msgspec.json.decode(line[len("data: ") :]))

    async def poll_state(self) -> None:
        """Ask for the page's state again and again until cancelled (each answer bounded)."""
        while True:
            async with asyncio.timeout(WAIT_S), self.session.get(f"{self.base}/api/state") as got:
                assert got.status == 200
                await got.read()
            self.states += 1


def meter_verifies(meter: dict[str, object], public_key: str) -> bool:
    """Whether a streamed meter carries the controller's signature over its signed text."""
    signed = meter.get("signed")
    if not isinstance(signed, dict):
        return False
    key = Ed25519PublicKey.from_public_bytes(base64.b64decode(public_key))
    try:
        key.verify(base64.b64decode(signed["sig"]), METER_DOMAIN + signed["body"].encode())
    except InvalidSignature:
        return False
    return True


def web_port(config: Path) -> int:
    found = re.search(r"^port = (\d+)$", config.read_text(encoding="utf-8"), re.MULTILINE)
    assert found is not None
    return int(found.group(1))


async def healthy_within(session: aiohttp.ClientSession, url: str) -> float:
    """One ``/healthz``: 200, and how long it took (failing past :data:`HEALTH_S`)."""
    started = time.monotonic()
    try:
        async with asyncio.timeout(HEALTH_S), session.get(url) as response:
            assert response.status == 200, await response.text()
    except TimeoutError:
        pytest.fail(f"/healthz took more than {HEALTH_S:g} s: the event loop waited for the signer")
    return time.monotonic() - started


def test_a_stopped_signer_stalls_neither_the_web_port_nor_the_journal(tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    high_water = tmp_path / "journal.db.high-water"
    with PtyPair() as line:
        config = signer_config(tmp_path, line.path)
        signer = running(tmp_path / "controller.key", tmp_path, "test")
        process = next(signer)
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(tmp_path / "notify.sock"))
        notify.settimeout(1.0)
        with log.open("w") as stderr:
            daemon = subprocess.Popen(
                [sys.executable, "-m", "controller", "run", "--config", str(config)],
                env={**CHILD, "NOTIFY_SOCKET": str(tmp_path / "notify.sock")},
                stdout=subprocess.DEVNULL, stderr=stderr, text=True, cwd=ROOT,
            )  # fmt: skip
        try:
            ready(notify, daemon)
            timings, meters = asyncio.run(
                scenario(line, process.process.pid, web_port(config), log, daemon)
            )
        finally:
            os.kill(process.process.pid, signal.SIGCONT)
            if daemon.poll() is None:
                daemon.kill()
                daemon.wait()
            notify.close()
            signer.close()
    text = log.read_text(encoding="utf-8")
    assert daemon.returncode == 0, text
    assert max(timings) < HEALTH_S, timings
    head = read_high_water(high_water)
    assert head is not None
    public_key = (tmp_path / "controller.pub").read_text(encoding="utf-8").strip()
    assert head_verifies(head, [public_key])
    assert meters, "no meter streamed once the signer was back"
    assert all(meter_verifies(meter, public_key) for meter in meters), meters
    verified = subprocess.run(
        [
            sys.executable, "-m", "controller", "verify", "--config", str(config),
            "--controller-key", str(tmp_path / "controller.pub"), "--strict",
        ],
        env=CHILD, capture_output=True, text=True, timeout=WAIT_S, cwd=ROOT, check=False,
    )  # fmt: skip
    assert verified.returncode == 0, verified.stdout + verified.stderr


async def scenario(
    line: PtyPair, signer_pid: int, port: int, log: Path, daemon: subprocess.Popen[str]
) -> tuple[list[float], list[dict[str, object]]]:
    """Play; stop the signer; check the daemon serves and journals; go on.

    The ``/healthz`` timings, and the meters the page's stream was sent after the signer was
    back (each with its signature).
    """
    reader, writer = await line.open()
    devices = Devices(SerialTableLink("T1", reader, writer))
    await devices.link.__aenter__()
    stop = asyncio.Event()
    play = asyncio.create_task(keep_playing(simulated("T1", devices, 5), stop))
    url = f"http://127.0.0.1:{port}/healthz"
    high_water = log.with_name("journal.db.high-water")
    timings: list[float] = []
    async with aiohttp.ClientSession() as session, aiohttp.ClientSession() as page_session:
        await within(_until(lambda: read_high_water(high_water) is not None), "a first head")
        page = Page(page_session, port)
        streaming = asyncio.create_task(page.stream())
        polling = asyncio.create_task(page.poll_state())
        try:
            await within(_until(lambda: page.meters and page.states), "the page's first meters")
            os.kill(signer_pid, signal.SIGSTOP)
            stalled_at = -1

            def progressed() -> bool:
                nonlocal stalled_at
                if stalled_at < 0 and STALLED in log.read_text(encoding="utf-8"):
                    stalled_at = len(devices.acked)  # a head waited out the signer's timeout
                return stalled_at >= 0 and len(devices.acked) >= stalled_at + AFTER_STALL

            async def serve_while_stalled() -> None:
                while not progressed():
                    timings.append(await healthy_within(session, url))

            await within(serve_while_stalled(), "journaling on while the signer is stopped", WAIT_S)
            stalled_head = read_high_water(high_water)
            assert stalled_head is not None
            os.kill(signer_pid, signal.SIGCONT)
            resumed = len(page.meters)

            def signed_again() -> bool:
                head = read_high_water(high_water)
                return head is not None and head.seq > stalled_head.seq

            await within(_until(signed_again), "a head signed after the signer is back")
            await within(_until(lambda: len(page.meters) > resumed), "a meter streamed after it")
            states = page.states
            await within(_until(lambda: page.states > states), "a state answered after it")
        finally:
            for task in (streaming, polling):
                task.cancel()
            ended = await asyncio.gather(streaming, polling, return_exceptions=True)
        for outcome in ended:  # an assertion the page's requests failed on
            if isinstance(outcome, Exception):
                raise outcome
        after = page.meters[resumed:]
    stop.set()
    await within(play, "the round in play to finish")
    daemon.send_signal(signal.SIGTERM)
    await within(asyncio.to_thread(daemon.wait), "the daemon to stop")
    await devices.link.close()
    line.close()  # in the loop its transports belong to
    return timings, after


async def _until(condition: object) -> None:
    """Wait until ``condition()`` holds, looking every 50 ms (the caller bounds the wait)."""
    assert callable(condition)
    while not condition():
        await asyncio.sleep(0.05)
