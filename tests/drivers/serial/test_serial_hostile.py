"""A device on a serial line, turned hostile or broken: poison frames and lost events.

Fault-injecting fake lines (:mod:`tests.serial_fakes`) and a real journal behind the intake;
waits are bounded and woken by the intake (docs/faults.md, "Poison messages").
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from support.drivers.intake import JournalIntake, PoisonedIntake
from support.drivers.serial_fakes import FakeDevice, FakePorts
from support.drivers.serial_rig import TABLE, WAIT_S, port_settings, running

from drivers.serial import protocol
from drivers.serial.link import SerialSource

if TYPE_CHECKING:
    import pytest

    from controller.ledger_journal.sqlite import Journal


async def exchange(intake: JournalIntake, payloads: list[str]) -> tuple[SerialSource, list[str]]:
    """A fake line with one device on it: send each payload until answered; the answers."""
    ports = FakePorts()
    source = SerialSource(port_settings("fake:///table-1"), ports)
    # Resent after half a second of silence, as a device whose host stays silent: a host that
    # answers (busy machine or not) answers well within it, so each frame here is handed over
    # once per resend the test means (a poisoned one's resends), never for a slow answer.
    device = FakeDevice(resend_after=0.5)
    try:
        async with running(source, intake), asyncio.timeout(WAIT_S):
            device.attach((await ports.line(0)).device_reader, ports.lines[0].device_write)
            return source, [await device.send(payload) for payload in payloads]
    finally:
        await device.close()
        ports.close()


def test_a_frame_that_keeps_failing_is_parked_nakked_and_the_device_moves_on(
    journal: Journal,
) -> None:
    intake = PoisonedIntake(journal, f"{TABLE}/bets-1/1")
    payloads = ["LOCK,bets-1,1,R1", "LOCK,bets-1,2,R2"]
    source, answers = asyncio.run(exchange(intake, payloads))
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
    intake = JournalIntake(journal)
    _source, answers = asyncio.run(exchange(intake, ["VOID,dealer,1,R1", "LOCK,dealer,2,R1"]))
    assert answers == ["NAK,dealer,1,undecodable", "ACK,dealer,2"]
    assert intake.reasons() == ["undecodable"]


def test_a_heartbeat_says_the_last_event_the_device_sent(journal: Journal) -> None:
    intake = JournalIntake(journal)
    beats = ["HB,shoe-1,2147483648,41", "HB,shoe-1,2147483649", "HB,shoe-1,2147483650,x"]
    _source, answers = asyncio.run(exchange(intake, beats))
    assert answers == [
        "ACK,shoe-1,2147483648", "ACK,shoe-1,2147483649", "NAK,shoe-1,2147483650,bad-last",
    ]  # fmt: skip
    assert intake.lasts == [41, None]
