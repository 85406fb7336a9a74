"""Strict card codes on every device path (docs/faults.md, "Strict card codes").

A card is one of the 53 codes the journal writes (``As``, ``Td``, ``Jk``). A shoe that sends
``as``, ``AS``, ``10s``, `` As `` or ``A`` + long s (which Unicode upper-cases to ``AS``) is
refused by the MQTT payload decoder and the serial protocol (reason ``bad-card``), and a card
that reaches the ledger some other way (an old journal, a hand-made event) holds the round
without touching a meter. Only ``jackpotd hand`` reads codes the way people type them.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import pytest
from support.drivers.intake import JournalIntake
from support.drivers.serial_fakes import FakeDevice
from support.drivers.serial_rig import WAIT_S, PtyDevicePort, port_settings, running
from support.journal.journal_rig import POOL, TABLE, opened_journal

from controller.cli import main
from controller.effects import RoundHeld
from controller.events import BetSensed, BetsLocked, CardDealt
from controller.ledger.table_state import Phase, RoundProblem, TableState
from controller.ledger_journal.sqlite import verify
from controller.rules.cards import DECK, Card
from drivers.mqtt.json_objects import PayloadError
from drivers.mqtt.payloads import decode_table_event
from drivers.serial.link import SerialSource
from drivers.serial.protocol import ProtocolError, decode_payload

if TYPE_CHECKING:
    from pathlib import Path

    from controller.ledger_journal.sqlite import Journal

AT = "2026-11-29T15:00:00Z"
NOT_CANONICAL = [
    "as",
    "AS",
    "aS",
    "JK",
    "jk",
    "10s",
    "10S",
    " As",
    "As ",
    " As ",
    "\tAs",
    "As\n",
    "\u00a0As",  # no-break space, which str.strip() removes
    "A\u017f",  # long s: "A\u017f".upper() == "AS"
    "\uff21s",  # fullwidth A
    "\u212ad",  # Kelvin sign, lower-cases to k
    "\u0669s",  # Arabic-Indic nine
]


def card_payload(code: str, seq: int = 9) -> bytes:
    message = {"v": 1, "device": "shoe", "seq": seq, "round": "r-1", "position": 1, "card": code}
    return json.dumps(message, ensure_ascii=False).encode()


@pytest.mark.parametrize("card", DECK, ids=[card.code for card in DECK])
def test_mqtt_every_canonical_card_code_is_a_card_kept_as_sent(card: Card) -> None:
    code = card.code
    event = decode_table_event("T1", "card", card_payload(code), at=AT)
    assert isinstance(event, CardDealt)
    assert event.card == code


@pytest.mark.parametrize("code", NOT_CANONICAL)
def test_mqtt_a_card_code_in_another_case_spacing_or_unicode_form_is_refused(code: str) -> None:
    with pytest.raises(PayloadError) as refused:
        decode_table_event("T1", "card", card_payload(code), at=AT)
    assert refused.value.reason == "bad-card"
    assert "is not a card code" in refused.value.detail


def test_mqtt_a_card_code_escaped_in_json_is_refused_as_the_character_it_names() -> None:
    # "\u017f" in JSON text is the long s itself: the decoder sees "A\u017f", not an ace.
    data = b'{"v":1,"device":"shoe","seq":9,"round":"r-1","position":1,"card":"A\\u017f"}'
    with pytest.raises(PayloadError, match="bad-card"):
        decode_table_event("T1", "card", data, at=AT)


@pytest.mark.parametrize("card", DECK, ids=[card.code for card in DECK])
def test_serial_every_canonical_card_code_is_a_card_kept_as_sent(card: Card) -> None:
    code = card.code
    event = decode_payload(f"CARD,shoe,9,r-1,1,{code}", "T1", at=AT)
    assert isinstance(event, CardDealt)
    assert event.card == code


@pytest.mark.parametrize("code", NOT_CANONICAL)
def test_serial_a_card_code_in_another_case_spacing_or_unicode_form_is_refused(code: str) -> None:
    with pytest.raises(ProtocolError) as refused:
        decode_payload(f"CARD,shoe,9,r-1,1,{code}", "T1", at=AT)
    assert (refused.value.reason, refused.value.device, refused.value.seq) == (
        "bad-card",
        "shoe",
        9,
    )


def test_serial_pty_a_lower_case_or_10_card_is_nakked_and_journaled_as_a_fault(
    journal: Journal,
) -> None:
    async def scenario() -> None:
        intake = JournalIntake(journal)
        pty = PtyDevicePort()
        source = SerialSource(port_settings(pty.path))
        device = FakeDevice(resend_after=0.2)
        device.attach(pty.reader, pty.write)
        try:
            async with running(source, intake), asyncio.timeout(WAIT_S):
                assert await device.send("CARD,shoe-1,1,R1,0,As") == "ACK,shoe-1,1"
                assert await device.send("CARD,shoe-1,2,R1,0,as") == "NAK,shoe-1,2,bad-card"
                assert await device.send("CARD,shoe-1,3,R1,0,10s") == "NAK,shoe-1,3,bad-card"
                assert await device.send("CARD,shoe-1,4,R1,0, Ks") == "NAK,shoe-1,4,bad-card"
        finally:
            await device.close()
            pty.unplug()
        assert intake.reasons() == ["bad-card"] * 3
        kinds = [(row["kind"], row["event_id"]) for row in journal.rows()]
        assert kinds[0] == ("card-dealt", "T1/shoe-1/1")
        assert [kind for kind, _ in kinds[1:]] == ["fault"] * 3

    asyncio.run(scenario())


@pytest.mark.parametrize("code", NOT_CANONICAL)
def test_table_state_a_non_canonical_card_is_a_round_problem(code: str) -> None:
    state = TableState("T1").locked("R1")
    with pytest.raises(RoundProblem, match="is not a card code"):
        state.with_card(1, code, seats=6)


def test_table_state_holds_canonical_codes_only() -> None:
    state = TableState("T1").locked("R1")
    for card in DECK[:7]:
        state = state.with_card(1, card.code, seats=6)
    assert state.cards == {1: tuple(card.code for card in DECK[:7])}


@pytest.mark.parametrize("code", ["as", "10s", " As", "A\u017f"])
def test_ledger_a_journaled_non_canonical_card_holds_the_round_and_moves_no_meter(
    tmp_path: Path, code: str
) -> None:
    """A card that reaches the ledger without a driver (an old journal, a hand-made event)."""
    journal = opened_journal(tmp_path / "journal.db")
    journal.append_many(
        [
            BetSensed("T1/bets/1", AT, TABLE, "bets", 1, 1, "progressive", True),
            BetsLocked("T1/dealer/1", AT, TABLE, "dealer", 1, "R1"),
            CardDealt("T1/shoe/1", AT, TABLE, "shoe", 1, "R1", 1, "Ks"),
        ]
    )
    meter = journal.state.pools[POOL].meter
    receipt = journal.append(CardDealt("T1/shoe/2", AT, TABLE, "shoe", 2, "R1", 1, code))
    (held,) = receipt.effects
    assert isinstance(held, RoundHeld)
    assert "is not a card code" in held.reason
    assert journal.state.table_states[TABLE].phase is Phase.HELD
    assert journal.state.table_states[TABLE].cards == {1: ("Ks",)}
    assert journal.state.pools[POOL].meter == meter
    journal.close()
    assert verify(tmp_path / "journal.db").ok


def test_cli_hand_still_reads_codes_as_people_type_them(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hand", "as ks qs js 10s 2c 3d", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["cards"] == ["As", "Ks", "Qs", "Js", "Ts", "2c", "3d"]
    assert report["rank"].lower().startswith("royal")
