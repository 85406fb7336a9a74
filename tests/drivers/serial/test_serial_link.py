"""The serial link end to end: device frames in, journal rows and ACK/NAK out.

Three rigs, each against a real journal file (:class:`tests.intake.JournalIntake`):

* pty pairs through the real pyserial / pyserial-asyncio-fast stack: the link opens the slave
  by path with its default opener; the test plays the device on the master fd, read through
  the event loop;
* unplug and replug: the pty master is closed under the link, a new pair appears behind the
  same path (a symlink, as udev gives a USB adapter), and the frame whose ACK was lost in the
  unplug is resent and journaled once;
* fault-injecting fake lines (:mod:`tests.serial_fakes`): one byte at a time, lost and flipped
  bytes, delays, opens that fail, a cable pulled mid-stream, a controller failing closed.

Every wait is bounded with ``asyncio.timeout``; nothing sleeps to poll.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import TYPE_CHECKING

from support.drivers.intake import JournalIntake
from support.drivers.serial_fakes import FakeDevice, FakePorts, Faults, seeded
from support.drivers.serial_rig import TABLE, WAIT_S, PtyDevicePort, port_settings, running

from controller.events import decode_event
from controller.ports import ControllerUnavailableError
from drivers.serial.framing import crc16, encode_frame
from drivers.serial.link import SerialSource
from drivers.serial.protocol import Heartbeat, decode_payload

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from controller.ledger_journal.sqlite import Journal


def round_payloads(round_id: str = "R1", first_seq: int = 1) -> list[str]:
    """A whole round as the devices send it: bets, lock, 49 cards, deal complete."""
    seq = iter(range(first_seq, first_seq + 1000))
    payloads = [f"BET,bets-1,{next(seq)},{seat},progressive,1,100" for seat in range(1, 7)]
    payloads.append(f"LOCK,bets-1,{next(seq)},{round_id}")
    deck = [rank + suit for rank in "23456789TJQKA" for suit in "shdc"]
    cards = iter(deck)
    payloads += [
        f"CARD,shoe-1,{next(seq)},{round_id},{position},{next(cards)}"
        for position in range(7)
        for _ in range(7)
    ]
    payloads.append(f"DONE,shoe-1,{next(seq)},{round_id}")
    return payloads


def event_id(payload: str) -> str:
    _kind, device, seq, *_ = payload.split(",")
    return f"{TABLE}/{device}/{int(seq)}"


def assert_journaled_exactly_once(intake: JournalIntake, payloads: list[str]) -> None:
    """Every payload is in the journal once, with the fields the device sent."""
    rows = [row for row in intake.journal.rows() if row["kind"] != "fault"]
    ids = [row["event_id"] for row in rows]
    assert Counter(ids) == Counter(event_id(p) for p in payloads)
    by_id = {row["event_id"]: decode_event(row["event"]) for row in rows}
    for payload in payloads:
        journaled = by_id[event_id(payload)]
        assert journaled == decode_payload(payload, TABLE, at=journaled.at)


# --- pty pairs through the real pyserial stack ----------------------------------------------


def test_pty_frames_are_journaled_acked_and_bad_ones_answered(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        pty = PtyDevicePort()
        source = SerialSource(port_settings(pty.path))
        device = FakeDevice(resend_after=0.2)
        device.attach(pty.reader, pty.write)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                # Resent until the link has the port open: pyserial flushes input at open.
                assert await device.send("BET,bets-1,1,3,progressive,1,100") == "ACK,bets-1,1"
                assert source.connected
                assert await device.send("LOCK,bets-1,2,R1") == "ACK,bets-1,2"
                assert await device.send("CARD,shoe-1,3,R1,0,As") == "ACK,shoe-1,3"
                assert await device.send("HB,shoe-1,4") == "ACK,shoe-1,4"

                damaged = encode_frame("DONE,shoe-1,5,R1").replace(b"DONE", b"DINE")
                device.write_raw(damaged)
                assert await device.send("CARD,shoe-1,6,R1,1,Zz") == "NAK,shoe-1,6,bad-card"
                # Nothing answered the damaged frame; its resend is journaled normally.
                assert not [a for a in device.answers if a.startswith("ACK,shoe-1,5")]
                assert await device.send("DONE,shoe-1,5,R1") == "ACK,shoe-1,5"

                # A resend of a frame already acknowledged: acknowledged again, applied once.
                acks_before = device.answers.count("ACK,bets-1,1")
                assert await device.send("BET,bets-1,1,3,progressive,1,100") == "ACK,bets-1,1"
                assert device.answers.count("ACK,bets-1,1") == acks_before + 1
        finally:
            await device.close()
            pty.unplug()

        assert_journaled_exactly_once(
            intake,
            [
                "BET,bets-1,1,3,progressive,1,100",
                "LOCK,bets-1,2,R1",
                "CARD,shoe-1,3,R1,0,As",
                "DONE,shoe-1,5,R1",
            ],
        )
        assert intake.receipts[-1].event_id == "T1/bets-1/1"
        assert intake.receipts[-1].duplicate
        assert set(intake.heartbeats) == {(TABLE, "shoe-1")}
        assert intake.reasons() == ["bad-crc", "bad-card"]
        assert intake.rejects[1] == ("serial:table-1", "bad-card", "CARD,shoe-1,6,R1,1,Zz")
        assert "DINE,shoe-1,5,R1" in intake.rejects[0][2]
        assert source.errors == Counter({"bad-crc": 1, "bad-card": 1})
        faults = [row for row in journal.rows() if row["kind"] == "fault"]
        assert [row["outcome"] for row in faults] == ["applied", "applied"]
        assert all(event.at.endswith("Z") for event in intake.submitted)

    asyncio.run(scenario())


def test_pty_unplug_and_replug_resends_the_frame_in_flight(
    journal: Journal, tmp_path: Path
) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        by_path = tmp_path / "ttyTABLE"  # what udev's by-id symlink is to a USB adapter
        first = PtyDevicePort()
        by_path.symlink_to(first.path)
        source = SerialSource(port_settings(str(by_path)))
        device = FakeDevice(resend_after=0.2)
        device.attach(first.reader, first.write)
        second: PtyDevicePort | None = None
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                assert await device.send("LOCK,bets-1,1,R1") == "ACK,bets-1,1"

                # Frame 2 is journaled, then the cable is pulled before its ACK is read.
                device.detach()
                first.write(encode_frame("CARD,shoe-1,2,R1,0,Kh"))
                await intake.wait_until(lambda: "T1/shoe-1/2" in intake.event_ids())
                first.unplug()

                # A new adapter appears behind the same path; the device resends frame 2.
                second = PtyDevicePort()
                replacement = tmp_path / "ttyTABLE.new"
                replacement.symlink_to(second.path)
                replacement.replace(by_path)
                device.attach(second.reader, second.write)
                assert await device.send("CARD,shoe-1,2,R1,0,Kh") == "ACK,shoe-1,2"
                assert await device.send("CARD,shoe-1,3,R1,0,Qh") == "ACK,shoe-1,3"
                assert source.connected
        finally:
            await device.close()
            first.unplug()
            if second is not None:
                second.unplug()

        assert_journaled_exactly_once(
            intake, ["LOCK,bets-1,1,R1", "CARD,shoe-1,2,R1,0,Kh", "CARD,shoe-1,3,R1,0,Qh"]
        )
        resent = [r for r in intake.receipts if r.event_id == "T1/shoe-1/2"]
        assert not resent[0].duplicate
        assert resent[1].duplicate
        assert source.reconnects == 1
        assert source.last_error is not None

    asyncio.run(scenario())


# --- fault-injecting fake lines -------------------------------------------------------------


async def play(
    ports: FakePorts,
    intake: JournalIntake,
    payloads: list[str],
    *,
    resend_after: float,
    window: int = 1,
) -> tuple[SerialSource, FakeDevice]:
    """Run a link on fake lines and a device sending ``payloads``, ``window`` at a time."""
    source = SerialSource(port_settings("fake:///table-1"), ports)
    device = FakeDevice(resend_after=resend_after)
    try:
        async with running(source, intake), asyncio.timeout(WAIT_S):
            line = await ports.line(0)
            device.attach(line.device_reader, line.device_write)
            for start in range(0, len(payloads), window):
                batch = payloads[start : start + window]
                answers = await asyncio.gather(*(device.send(p) for p in batch))
                assert answers == [f"ACK,{p.split(',')[1]},{p.split(',')[2]}" for p in batch]
    finally:
        await device.close()
        ports.close()
    return source, device


def test_fake_one_byte_at_a_time(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        ports = FakePorts(Faults(chunk=1), Faults(chunk=1))
        payloads = round_payloads()
        source, device = await play(ports, intake, payloads, resend_after=1.0)
        assert_journaled_exactly_once(intake, payloads)
        line = ports.lines[0]
        assert line.host_reader.reads >= len(line.up.delivered)  # really one byte per read
        assert device.writes == len(payloads)  # nothing needed resending
        assert not source.errors

    asyncio.run(scenario())


def test_fake_lost_and_flipped_bytes_each_way(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        noisy = {"loss": 0.01, "corrupt": 0.003}
        ports = FakePorts(
            Faults(chunk=7, rng=seeded(1), **noisy),
            Faults(chunk=5, rng=seeded(2), **noisy),
        )
        payloads = round_payloads()
        source, device = await play(ports, intake, payloads, resend_after=0.02)
        assert_journaled_exactly_once(intake, payloads)
        # The faults really happened: resends, skipped bytes, and duplicates refused.
        assert device.writes > len(payloads)
        assert source.errors
        assert set(source.errors) <= {"bad-crc", "garbage"}
        assert any(receipt.duplicate for receipt in intake.receipts)

    asyncio.run(scenario())


def test_fake_random_delays_with_frames_in_flight(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        ports = FakePorts(
            Faults(chunk=3, max_delay=0.004, rng=seeded(3)),
            Faults(max_delay=0.004, rng=seeded(4)),
        )
        payloads = round_payloads()
        # Several frames in flight, and a resend timer shorter than some round trips.
        _source, device = await play(ports, intake, payloads, resend_after=0.008, window=4)
        assert_journaled_exactly_once(intake, payloads)
        assert device.writes > len(payloads)
        assert any(receipt.duplicate for receipt in intake.receipts)

    asyncio.run(scenario())


def test_fake_failed_opens_and_a_pulled_cable(
    journal: Journal, caplog: pytest.LogCaptureFixture
) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        ports = FakePorts(Faults(chunk=2, rng=seeded(5), loss=0.005))
        ports.failures = 3  # the adapter is not there yet
        source = SerialSource(port_settings("fake:///table-1"), ports)
        device = FakeDevice(resend_after=0.02)
        payloads = round_payloads()
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                line = await ports.line(0)
                assert ports.attempts == 4
                assert source.reconnects == 0
                device.attach(line.device_reader, line.device_write)
                for payload in payloads[:20]:
                    await device.send(payload)
                # Pulled mid-frame: half a frame is on the wire when it goes.
                device.write_raw(encode_frame(payloads[20])[:10])
                line.unplug(OSError(5, "Input/output error"))
                ports.failures = 2
                line = await ports.line(1)
                device.attach(line.device_reader, line.device_write)
                for payload in payloads[20:]:
                    await device.send(payload)
                assert source.connected
        finally:
            await device.close()
            ports.close()
        assert_journaled_exactly_once(intake, payloads)
        assert source.reconnects == 1
        assert ports.attempts == 4 + 3
        assert source.last_error is not None
        assert source.last_error.startswith("cannot open: fake:///table-1")
        assert "port failed fake:///table-1: [Errno 5] Input/output error" in caplog.text

    asyncio.run(scenario())


def test_fake_eof_is_a_failed_port(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        ports = FakePorts()
        source = SerialSource(port_settings("fake:///table-1"), ports)
        async with running(source, intake), asyncio.timeout(WAIT_S):
            (await ports.line(0)).unplug()  # EOF, as a closed pty or socket gives
            await ports.line(1)
        assert source.reconnects == 1
        assert source.last_error is not None
        assert "end of file" in source.last_error
        ports.close()

    asyncio.run(scenario())


def test_fake_nothing_acknowledged_while_the_controller_fails_closed(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        ports = FakePorts()
        source = SerialSource(port_settings("fake:///table-1"), ports)
        device = FakeDevice(resend_after=0.01)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                device.attach((await ports.line(0)).device_reader, ports.lines[0].device_write)
                intake.unavailable = True
                sending = asyncio.create_task(device.send("LOCK,bets-1,1,R1"))
                await intake.wait_submitted(3)  # the device keeps resending, unanswered
                assert device.answers == []
                assert not sending.done()
                intake.unavailable = False
                assert await sending == "ACK,bets-1,1"
        finally:
            await device.close()
            ports.close()
        assert_journaled_exactly_once(intake, ["LOCK,bets-1,1,R1"])
        assert source.unacknowledged >= 3

    asyncio.run(scenario())


class FaultsUnrecordable(JournalIntake):
    """An intake whose fault record cannot be written either."""

    async def reject(self, source: str, reason: str, detail: str = "") -> None:
        """Record, then fail closed when unavailable."""
        await super().reject(source, reason, detail)
        if self.unavailable:
            raise ControllerUnavailableError("journal unavailable (test)")


def test_fake_bad_payload_not_nakked_until_its_fault_is_recorded(journal: Journal) -> None:
    async def scenario() -> None:
        intake = FaultsUnrecordable(journal)
        intake.unavailable = True
        ports = FakePorts()
        source = SerialSource(port_settings("fake:///table-1"), ports)
        device = FakeDevice(resend_after=0.01)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                device.attach((await ports.line(0)).device_reader, ports.lines[0].device_write)
                sending = asyncio.create_task(device.send("BET,bets-1,1,0,bonus,1"))
                await intake.wait_rejects(2)
                assert device.answers == []
                intake.unavailable = False
                assert await sending == "NAK,bets-1,1,bad-seat"
        finally:
            await device.close()
            ports.close()
        assert source.errors["bad-seat"] >= 3

    asyncio.run(scenario())


def test_heartbeats_are_acked_not_journaled(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        ports = FakePorts()
        await play(ports, intake, ["HB,shoe-1,1", "HB,bets-1,1"], resend_after=1.0)
        assert intake.heartbeats == [(TABLE, "shoe-1"), (TABLE, "bets-1")]
        assert intake.event_ids() == []
        assert isinstance(decode_payload("HB,shoe-1,1", TABLE), Heartbeat)

    asyncio.run(scenario())


def test_garbage_run_is_rejected_once_and_not_answered(journal: Journal) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        ports = FakePorts(Faults(chunk=1))
        source = SerialSource(port_settings("fake:///table-1"), ports)
        device = FakeDevice(resend_after=1.0)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                device.attach((await ports.line(0)).device_reader, ports.lines[0].device_write)
                device.write_raw(b"\x00\xff line noise $$ $BET,1*zz\r\n" + b"x" * 300)
                device.write_raw(b"$" + b"y" * 300 + b"*0000\r\n")
                payload = "LOCK,bets-1,1,R1"
                device.write_raw(b"$%s*%04x\r\n" % (payload.encode(), crc16(payload.encode())))
                assert await device.next_answer() == "ACK,bets-1,1"
        finally:
            await device.close()
            ports.close()
        assert intake.reasons() == ["garbage"]
        assert source.errors == Counter({"garbage": 1})
        assert_journaled_exactly_once(intake, ["LOCK,bets-1,1,R1"])

    asyncio.run(scenario())
