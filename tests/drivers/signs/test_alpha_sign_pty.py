"""The Alpha sign sink through a real pty pair and the real pyserial / pyserial-asyncio-fast stack.

The sink opens the pty's slave by path (through a symlink, as udev names a USB adapter), with
its default opener; the test plays the sign on the master fd, read through the event loop,
and decodes every byte written with the independent decoder of
:mod:`test_alpha_protocol`: memory configuration first, then the TEXT file, then only STRING
writes for meters, hits and CLOSED. Unplugging the pty and plugging a new one behind the same
path makes the sink configure the new sign's memory again and rewrite the current meter.

Every wait is bounded with ``asyncio.timeout``; nothing sleeps to poll.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tty
from typing import TYPE_CHECKING

import msgspec
import pytest
from support.drivers.alpha_sign import (
    MEMORY,
    TEXT,
    FileEntry,
    Frame,
    FrameStream,
    TextFile,
    parse_memory,
    parse_string_file,
    parse_text_file,
)

from controller.backoff import Backoff
from controller.outputs import (
    AnyUpdate,
    ControllerUpdate,
    HitAnnouncement,
    MeterUpdate,
    TableUpdate,
)
from drivers.signs.serial_sign import AlphaSign, AlphaSignSettings, open_port

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from drivers.serial.link import ByteReader, ByteWriter

POOL = "fortune"
AT = "2025-01-01T00:00:00.000000Z"
WAIT_S = 10.0


class PtySign:
    """The sign's end of a pty pair: the master fd, decoded frame by frame as bytes arrive."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        self.stream = FrameStream()
        self.frames: asyncio.Queue[tuple[float, Frame]] = asyncio.Queue()
        self.received: list[Frame] = []
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(self.master, self._readable)
        self.open = True

    def _readable(self) -> None:
        try:
            data = os.read(self.master, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""  # EIO: nobody holds the slave open right now
        if not data:
            return
        now = self._loop.time()
        for frame in self.stream.feed(data):
            self.received.append(frame)
            self.frames.put_nowait((now, frame))

    async def next(self) -> tuple[float, Frame]:
        """The next frame the sign received, and when."""
        return await self.frames.get()

    async def string(self) -> tuple[float, str]:
        """The next frame, which must be a STRING write: when, and its text."""
        at, frame = await self.next()
        label, text = parse_string_file(frame)
        assert label == "1"
        return at, text

    async def until_text(self, text: str) -> float:
        """Read STRING writes until one shows ``text``; when it came."""
        while True:
            at, shown = await self.string()
            if shown == text:
                return at

    def unplug(self) -> None:
        """Close both ends: the sink's reads on the slave fail."""
        if self.open:
            self.open = False
            self._loop.remove_reader(self.master)
            os.close(self.master)
            os.close(self.slave)


class Updates:
    """The updates a sink consumes, fed by the test; ``end`` stops the iteration."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[AnyUpdate | None] = asyncio.Queue()
        self.sent_at: list[float] = []

    def send(self, update: AnyUpdate) -> float:
        """Hand an update to the sink; when."""
        self.queue.put_nowait(update)
        at = asyncio.get_running_loop().time()
        self.sent_at.append(at)
        return at

    def end(self) -> None:
        """No more updates: the sink's iteration ends."""
        self.queue.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[AnyUpdate]:
        while (update := await self.queue.get()) is not None:
            yield update


def settings(url: str, **fields: object) -> AlphaSignSettings:
    values: dict[str, object] = {
        "name": "pit-1",
        "url": url,
        "pool_id": POOL,
        "tables": ["T1", "T2"],
        "min_interval_s": 0.05,
        "alternate_s": 0.5,
        "configure_pause_s": 0.05,
        "jackpot_hold_s": 0.5,
        "backoff_initial_s": 0.01,
        "backoff_cap_s": 0.05,
        # Linux ptys refuse 7 data bits and parity (termios EINVAL): the test line is 8N1.
        "bytesize": 8,
        "parity": "N",
    }
    values.update(fields)
    return msgspec.convert(values, AlphaSignSettings)


def meter(cents: int) -> MeterUpdate:
    return MeterUpdate(AT, 1, POOL, cents, 0, 0, 100_000)


@contextlib.asynccontextmanager
async def running(sign: AlphaSign, updates: Updates) -> AsyncIterator[asyncio.Task[None]]:
    """Run the sink for the block; a crash of the sink surfaces when the block ends."""
    task = asyncio.create_task(sign.run(updates.__aiter__()))
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def expect_setup(pty: PtySign) -> None:
    """Memory configuration, then the TEXT file that calls the STRING file."""
    _at, memory = await pty.next()
    assert parse_memory(memory) == [
        FileEntry("A", "A", "U", 0x20, "FF00"),
        FileEntry("1", "B", "L", 0x40, "0000"),
    ]
    _at, text = await pty.next()
    assert parse_text_file(text) == TextFile("A", b"0", b"b", "1")


def assert_configured_once_then_only_string_writes(pty: PtySign, sign: AlphaSign) -> None:
    """Memory and TEXT file first, then only STRING writes; the sink counted every frame."""
    commands = [frame.command for frame in pty.received]
    assert commands[:2] == ["E", "A"]
    assert set(commands[2:]) == {"G"}
    assert all((f.type_code, f.address) == ("Z", "00") for f in pty.received)
    assert sign.frames_sent == len(pty.received)
    assert sign.configurations == 1
    assert sign.errors == 0


async def test_pty_meters_and_a_hit_are_string_writes_after_one_configuration() -> None:
    pty = PtySign()
    updates = Updates()
    latencies: list[float] = []
    sign = AlphaSign(settings(pty.path), on_latency=latencies.append)
    try:
        async with running(sign, updates), asyncio.timeout(WAIT_S):
            await expect_setup(pty)
            assert pty.stream.raw[:2] == [MEMORY, TEXT]  # byte for byte, checksums included
            assert sign.connected

            sent = updates.send(meter(1_234_567))
            at, text = await pty.string()
            assert text == "$12,345.67"
            assert at - sent < 0.25

            # A burst of meter updates: rate-limited, and the newest value arrives.
            before = len(pty.received)
            for cents in range(1_234_600, 1_235_600, 10):
                updates.send(meter(cents))
                await asyncio.sleep(0.001)  # the sequencer's pace, not a poll
            first_sent, last_sent = updates.sent_at[-100], updates.sent_at[-1]
            shown_at = await pty.until_text("$12,355.90")
            assert shown_at - last_sent < 0.25
            burst = pty.received[before:]
            assert len(burst) <= (last_sent - first_sent) / 0.05 + 2  # min_interval_s = 0.05

            # A hit: JACKPOT within a second, the meter reset behind it, then the new meter.
            hit_at = updates.send(
                HitAnnouncement(AT, 2, "p-1", POOL, "T1", 3, "royal", 500_000, False, False)
            )
            updates.send(meter(100_000))
            at, text = await pty.string()
            assert text == "JACKPOT T1 SEAT 3 $5,000.00"
            assert at - hit_at < 1.0
            at, text = await pty.string()
            assert text == "$1,000.00"
            assert at - hit_at >= 0.5 - 0.01  # jackpot_hold_s
    finally:
        pty.unplug()

    assert_configured_once_then_only_string_writes(pty, sign)
    assert sign.displayed == "$1,000.00"
    assert latencies
    assert latencies == list(sign.latencies)
    assert max(latencies) < 1.0
    assert sign.last_latency_s == latencies[-1]


async def test_pty_closed_tables_an_offline_controller_and_a_clean_end() -> None:
    pty = PtySign()
    updates = Updates()
    sign = AlphaSign(settings(pty.path))
    try:
        async with running(sign, updates) as task, asyncio.timeout(WAIT_S):
            await expect_setup(pty)
            updates.send(meter(100_000))
            assert (await pty.string())[1] == "$1,000.00"

            # A table over the sign closes, then reopens; the controller goes offline and back.
            updates.send(TableUpdate(AT, 3, "T9", online=False, reason="not over this sign"))
            updates.send(TableUpdate(AT, 3, "T2", online=False, reason="heartbeat lost"))
            assert (await pty.string())[1] == "CLOSED"
            updates.send(TableUpdate(AT, 4, "T2", online=True, reason="heartbeat"))
            assert (await pty.string())[1] == "$1,000.00"
            updates.send(ControllerUpdate(AT, 0, online=False, reason="journal unavailable"))
            assert (await pty.string())[1] == "CLOSED"
            updates.send(ControllerUpdate(AT, 0, online=True, reason="started"))
            assert (await pty.string())[1] == "$1,000.00"

            # The updates end: the sink returns once the last text is written, though the
            # rate limit held it back when they ended.
            updates.send(meter(100_123))
            updates.end()
            await pty.until_text("$1,001.23")
            await task
    finally:
        pty.unplug()

    assert_configured_once_then_only_string_writes(pty, sign)
    assert [parse_string_file(frame)[1] for frame in pty.received[2:]] == [
        "$1,000.00",
        "CLOSED",
        "$1,000.00",
        "CLOSED",
        "$1,000.00",
        "$1,001.23",
    ]
    assert sign.displayed == "$1,001.23"


async def test_pty_replug_configures_the_new_sign_and_rewrites_the_meter(tmp_path: Path) -> None:
    by_path = tmp_path / "ttySIGN"
    first = PtySign()
    by_path.symlink_to(first.path)
    updates = Updates()
    sign = AlphaSign(settings(str(by_path), type_code="f", address="1A"))
    second: PtySign | None = None
    try:
        async with running(sign, updates), asyncio.timeout(WAIT_S):
            await expect_setup(first)
            updates.send(meter(2_000_000))
            assert (await first.string())[1] == "$20,000.00"
            assert sign.connected

            # The cable is pulled; a meter update arrives while the sign is away.
            first.unplug()
            updates.send(meter(2_000_500))
            second = PtySign()
            replacement = tmp_path / "ttySIGN.new"
            replacement.symlink_to(second.path)
            replacement.replace(by_path)

            await expect_setup(second)
            assert (await second.string())[1] == "$20,005.00"
            updates.send(meter(2_000_700))
            assert (await second.string())[1] == "$20,007.00"
            assert sign.connected
    finally:
        first.unplug()
        if second is not None:
            second.unplug()

    assert second is not None
    assert [frame.command for frame in second.received] == ["E", "A", "G", "G"]
    assert {(f.type_code, f.address) for f in first.received + second.received} == {("f", "1A")}
    assert sign.reconnects == 1
    assert sign.configurations == 2
    assert sign.errors >= 1
    assert sign.last_error is not None


async def test_a_port_that_cannot_be_opened_is_retried_with_backoff(tmp_path: Path) -> None:
    missing = tmp_path / "ttyNOWHERE"
    failures: asyncio.Queue[OSError] = asyncio.Queue()

    async def opener(port: AlphaSignSettings) -> tuple[ByteReader, ByteWriter]:
        try:
            return await open_port(port)
        except OSError as error:
            failures.put_nowait(error)
            raise

    updates = Updates()
    sign = AlphaSign(settings(str(missing)), opener, backoff=Backoff(0.01, 0.02, jitter=False))
    pty: PtySign | None = None
    try:
        async with running(sign, updates), asyncio.timeout(WAIT_S):
            updates.send(meter(300))
            for _ in range(3):
                await failures.get()
            assert sign.errors >= 3
            assert not sign.connected
            assert sign.last_error is not None
            assert sign.last_error.startswith("cannot open")
            pty = PtySign()
            missing.symlink_to(pty.path)
            await expect_setup(pty)
            assert (await pty.string())[1] == "$3.00"  # kept while the port was away
    finally:
        if pty is not None:
            pty.unplug()
    assert sign.reconnects == 0  # opened once
    assert sign.configurations == 1


def test_settings_decode_from_a_configuration_section_and_refuse_bad_values() -> None:
    section: dict[str, object] = {
        "name": "pit-1",
        "url": "/dev/ttyUSB0",
        "pool_id": POOL,
        "tables": ["T1"],
    }
    decoded = msgspec.convert(section, AlphaSignSettings)
    assert decoded.address == "00"
    assert decoded.type_code == "Z"
    assert decoded.baudrate == 9600
    assert (decoded.bytesize, decoded.parity, decoded.stopbits) == (7, "E", 1)
    assert decoded.rules().tables == frozenset({"T1"})
    assert decoded.layout().string_size == 64
    refused: list[tuple[dict[str, object], str]] = [
        ({"address": "100"}, "address"),
        ({"type_code": "ZZ"}, "type code"),
        ({"min_interval_s": 2.0}, "within one second"),
        ({"closed_mode": "blink"}, "closed_mode"),
        ({"string_size": 200}, "string size"),
        ({"parity": "X"}, "parity"),
        ({"pool_id": " "}, "pool_id"),
        ({"colour": "red"}, "unknown field"),
    ]
    for bad, message in refused:
        with pytest.raises(msgspec.ValidationError, match=message):
            msgspec.convert({**section, **bad}, AlphaSignSettings)
