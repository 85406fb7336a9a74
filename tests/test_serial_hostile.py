"""A device on a serial line, turned hostile or broken: poison frames and lost events.

Fault-injecting fake lines (:mod:`tests.serial_fakes`) and a real journal behind the intake;
waits are bounded and woken by the intake (docs/faults.md, "Poison messages").
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from intake import JournalIntake
from serial_fakes import FakeDevice, FakePorts
from test_serial_link import TABLE, WAIT_S, port_settings, running

from controller.journal import Journal
from controller.ports import EventNotRecordedError
from drivers.serial import protocol
from drivers.serial.link import SerialSource

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.journal import Receipt


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[Journal]:
    with Journal(tmp_path / "journal.db") as opened:
        yield opened


class FaultyIntake(JournalIntake):
    """Fails on one event as a controller bug would (the fault injected); the rest journal."""

    def __init__(self, journal: Journal, poison: str) -> None:
        super().__init__(journal)
        self.poison = poison
        self.attempts = 0

    def enqueue(self, event: AnyEvent) -> asyncio.Future[Receipt]:
        """Journal the event, unless it is the poison: that fails every time."""
        if event.event_id != self.poison:
            return super().enqueue(event)
        self.attempts += 1
        future: asyncio.Future[Receipt] = asyncio.get_running_loop().create_future()
        future.set_exception(EventNotRecordedError(f"{event.event_id}: injected fault"))
        self._changed()
        return future


def test_a_frame_that_keeps_failing_is_parked_nakked_and_the_device_moves_on(
    journal: Journal,
) -> None:
    async def scenario() -> tuple[FaultyIntake, SerialSource, list[str]]:
        intake = FaultyIntake(journal, f"{TABLE}/bets-1/1")
        ports = FakePorts()
        source = SerialSource(port_settings("fake:///table-1"), ports)
        device = FakeDevice(resend_after=0.01)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                device.attach((await ports.line(0)).device_reader, ports.lines[0].device_write)
                poisoned = await device.send("LOCK,bets-1,1,R1")
                after = await device.send("LOCK,bets-1,2,R2")
        finally:
            await device.close()
            ports.close()
        return intake, source, [poisoned, after]

    intake, source, answers = asyncio.run(scenario())
    assert answers == ["NAK,bets-1,1,dead-letter", "ACK,bets-1,2"]
    assert intake.attempts == 3  # resent twice by the device, then parked
    assert intake.reasons() == ["dead-letter"]
    assert intake.rejects[0][2].endswith("LOCK,bets-1,1,R1")  # kept whole
    assert intake.event_ids() == [f"{TABLE}/bets-1/2"]
    assert source.health.dead_letters == 1
    assert source.health.trouble is None


def test_whatever_the_decoder_raises_is_a_rejection_not_a_dead_link(
    journal: Journal, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decoder fault nobody foresaw (injected) is NAKed ``undecodable``; the link lives."""

    def broken(*_: object) -> protocol.DeviceMessage:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setitem(protocol._DECODERS, "VOID", broken)

    async def scenario() -> list[str]:
        intake = JournalIntake(journal)
        ports = FakePorts()
        source = SerialSource(port_settings("fake:///table-1"), ports)
        device = FakeDevice(resend_after=0.01)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                device.attach((await ports.line(0)).device_reader, ports.lines[0].device_write)
                return [
                    await device.send("VOID,dealer,1,R1"),
                    await device.send("LOCK,dealer,2,R1"),
                ]
        finally:
            await device.close()
            ports.close()
            assert intake.reasons() == ["undecodable"]

    assert asyncio.run(scenario()) == ["NAK,dealer,1,undecodable", "ACK,dealer,2"]


def test_a_heartbeat_says_the_last_event_the_device_sent(journal: Journal) -> None:
    async def scenario() -> list[int | None]:
        intake = JournalIntake(journal)
        ports = FakePorts()
        source = SerialSource(port_settings("fake:///table-1"), ports)
        device = FakeDevice(resend_after=0.01)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                device.attach((await ports.line(0)).device_reader, ports.lines[0].device_write)
                assert await device.send("HB,shoe-1,2147483648,41") == "ACK,shoe-1,2147483648"
                assert await device.send("HB,shoe-1,2147483649") == "ACK,shoe-1,2147483649"
                assert await device.send("HB,shoe-1,2147483650,x") == (
                    "NAK,shoe-1,2147483650,bad-last"
                )
        finally:
            await device.close()
            ports.close()
        return intake.lasts

    assert asyncio.run(scenario()) == [41, None]
