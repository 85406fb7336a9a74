"""A draw handed from one node's keeper to the next: its envelope, and each way it can lie.

docs/ha.md, "Mystery levels across a failover"; docs/security.md, "Mystery levels: the sealed
trigger". Each node has its own controller key and keeper; the keeper that draws seals the
trigger and nonce for the cluster's keepers (the sealing key they share), the journal records
the envelope, and the next leader's keeper opens it and goes on with the same trigger. The
envelope opens only with the sealing key, only for the draw it was sealed with, and only to a
trigger the draw's commitment was made over, inside the draw's range; a keeper already holding
the draw keeps its own view of the meter, so that an adoption never hides a question someone
else asked.
"""

from __future__ import annotations

import base64
import stat
from typing import TYPE_CHECKING

import msgspec
import pytest

from controller.mystery import core
from controller.mystery.core import (
    Drawn,
    DrawRequest,
    Meter,
    MysteryRefusedError,
    Sealed,
    commitment,
    reveal_holds,
    seal,
)
from controller.mystery.envelope import Envelope, SealingKey, open_envelope, seal_envelope
from controller.mystery.keeper import LocalKeeper, MysteryAlarmError, Query
from controller.mystery.store import SealedFile
from controller.security.controller_key import ControllerKey
from controller.security.sealing_key import (
    SealingKeyError,
    load_sealing_key,
    write_sealing_key,
)

if TYPE_CHECKING:
    from pathlib import Path

AT = "2026-12-01T12:00:00+00:00"
FLOOR, CEILING = 100_000, 100_400


def request(key: ControllerKey, draw: int = 1) -> DrawRequest:
    return DrawRequest("c1", "journal-a", "grand", "mystery", draw, FLOOR, CEILING, key.key_id, AT)


def query(draw: int, cents: int) -> Query:
    return Query("c1", "journal-a", "grand", "mystery", draw, Meter(cents))


def trigger_of(keeper: LocalKeeper) -> int:
    """The trigger the keeper holds sealed (the test looks inside; nobody else can)."""
    (held,) = keeper.vault.sealed.values()
    return held.trigger


def played_to_the_hit(keeper: LocalKeeper, draw: int, start: int) -> int:
    """Meters asked upward a cent at a time from ``start``: the meter that hit."""
    since = Meter(start)
    for cents in range(start, CEILING + 1):
        verdict = keeper.check(query(draw, cents), since)
        if verdict.reveal is not None:
            return verdict.reveal.trigger
        since = Meter(cents)
    raise AssertionError("the trigger was never reached")  # pragma: no cover


def first_node(sealing: SealingKey) -> tuple[ControllerKey, LocalKeeper, Drawn, Envelope]:
    """The node that draws: its key, its keeper, the draw and its envelope."""
    key = ControllerKey.generate()
    keeper = LocalKeeper(key, sealing=sealing)
    drawn = keeper.draw(request(key))
    envelope = keeper.envelope(drawn)
    assert envelope is not None
    return key, keeper, drawn, envelope


@pytest.fixture
def sealing() -> SealingKey:
    return SealingKey.generate()


def test_the_next_nodes_keeper_goes_on_with_the_trigger_the_first_drew(
    sealing: SealingKey,
) -> None:
    first_key, first, drawn, envelope = first_node(sealing)
    trigger = trigger_of(first)
    # Nothing of the trigger or the nonce is readable in what the journal records.
    recorded = msgspec.json.encode(envelope).decode()
    held = first.vault.sealed[next(iter(first.vault.sealed))]
    assert held.nonce not in recorded
    assert str(trigger) not in base64.b64decode(envelope.sealed).decode("latin-1")
    second = LocalKeeper(ControllerKey.generate(), sealing=sealing)
    second.adopt(drawn, envelope, Meter(FLOOR))
    assert trigger_of(second) == trigger
    hit = played_to_the_hit(second, 1, FLOOR)
    assert hit == trigger
    (spent,) = second.vault.sealed.values()
    assert reveal_holds(drawn, spent.reveal(), [first_key.public_key]) is None


def test_an_envelope_opens_only_with_its_key_for_its_draw_to_its_committed_trigger(
    sealing: SealingKey,
) -> None:
    key = ControllerKey.generate()
    sealed = seal(request(key), key.sign)
    envelope = seal_envelope(sealing, sealed)
    assert open_envelope(sealing, sealed.drawn, envelope) == sealed
    with pytest.raises(MysteryRefusedError, match="sealed for key"):
        open_envelope(SealingKey.generate(), sealed.drawn, envelope)
    forged_key = msgspec.structs.replace(envelope, key_id=SealingKey.generate().key_id)
    with pytest.raises(MysteryRefusedError, match="sealed for key"):
        open_envelope(sealing, sealed.drawn, forged_key)
    box = bytearray(base64.b64decode(envelope.sealed))
    box[0] ^= 1
    tampered = msgspec.structs.replace(envelope, sealed=base64.b64encode(box).decode())
    with pytest.raises(MysteryRefusedError, match="does not open with this draw"):
        open_envelope(sealing, sealed.drawn, tampered)
    # The same envelope put on another draw of the level (or any other statement) is refused.
    other = msgspec.structs.replace(sealed.drawn, draw=2)
    with pytest.raises(MysteryRefusedError, match="does not open with this draw"):
        open_envelope(sealing, other, envelope)
    not_base64 = msgspec.structs.replace(envelope, nonce="***")
    with pytest.raises(MysteryRefusedError, match="does not open with this draw"):
        open_envelope(sealing, sealed.drawn, not_base64)


def test_a_sealing_key_holder_cannot_plant_a_trigger_the_journal_did_not_commit_to(
    sealing: SealingKey,
) -> None:
    key = ControllerKey.generate()
    sealed = seal(request(key), key.sign)
    planted = Sealed(sealed.drawn, (sealed.trigger + 1 - FLOOR) % (CEILING - FLOOR) + FLOOR,
                     sealed.nonce)  # fmt: skip
    with pytest.raises(MysteryRefusedError, match="commitment was not made over"):
        open_envelope(sealing, sealed.drawn, seal_envelope(sealing, planted))
    # A draw statement committed to a trigger outside its own range is refused too.
    outside = CEILING + 5
    drawn: Drawn = msgspec.structs.replace(
        sealed.drawn, commitment=commitment(sealed.drawn.key, outside, sealed.nonce)
    )
    envelope = seal_envelope(sealing, Sealed(drawn, outside, sealed.nonce))
    with pytest.raises(MysteryRefusedError, match="outside"):
        open_envelope(sealing, drawn, envelope)


def test_a_keeper_seals_only_the_draw_it_holds_unspent(sealing: SealingKey) -> None:
    keeper_key = ControllerKey.generate()
    keeper = LocalKeeper(keeper_key, sealing=sealing)
    drawn = keeper.draw(request(keeper_key))
    other = msgspec.structs.replace(drawn, commitment="00" * 32)
    with pytest.raises(MysteryRefusedError, match="holds no draw 1"):
        keeper.envelope(other)
    played_to_the_hit(keeper, 1, FLOOR)
    with pytest.raises(MysteryRefusedError, match="spent"):
        keeper.envelope(drawn)
    alone_key = ControllerKey.generate()
    alone = LocalKeeper(alone_key)
    assert alone.envelope(alone.draw(request(alone_key))) is None


def test_a_keeper_without_the_sealing_key_refuses_another_nodes_draw(
    sealing: SealingKey,
) -> None:
    _first_key, _first, drawn, envelope = first_node(sealing)
    bare = LocalKeeper(ControllerKey.generate())
    with pytest.raises(MysteryRefusedError, match="holds no sealing key"):
        bare.adopt(drawn, envelope, Meter(FLOOR))
    assert bare.vault.sealed == {}
    with pytest.raises(MysteryRefusedError, match="is taken from its envelope"):
        bare.check(query(1, FLOOR), Meter(FLOOR))


def test_a_draw_held_already_keeps_the_view_its_keeper_answered(
    sealing: SealingKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An adoption never resets the meter a keeper was asked about: a probe stays an alarm."""
    monkeypatch.setattr(core, "draw_trigger", lambda floor, _ceiling: floor + 200)
    _first_key, _first, drawn, envelope = first_node(sealing)
    second = LocalKeeper(ControllerKey.generate(), sealing=sealing)
    second.adopt(drawn, envelope, Meter(FLOOR))
    # Someone asks the standby's keeper about a meter the daemon never had: "not yet".
    assert second.check(query(1, FLOOR + 150), Meter(FLOOR)).reveal is None
    second.adopt(drawn, envelope, Meter(FLOOR))  # taken again: held, its view kept
    with pytest.raises(MysteryAlarmError, match="below the 100150 cents already asked"):
        second.check(query(1, FLOOR + 10), Meter(FLOOR))
    # Another commitment for the draw held is someone else's draw: an alarm.
    forged = msgspec.structs.replace(drawn, commitment="11" * 32)
    with pytest.raises(MysteryAlarmError, match="another commitment"):
        second.adopt(forged, envelope, Meter(FLOOR))


def test_a_lower_draw_than_the_one_held_is_the_journal_gone_back(sealing: SealingKey) -> None:
    first_key = ControllerKey.generate()
    first = LocalKeeper(first_key, sealing=sealing)
    drawn = first.draw(request(first_key))
    first_envelope = first.envelope(drawn)
    played_to_the_hit(first, 1, FLOOR)
    second_drawn = first.draw(request(first_key, draw=2))
    second_envelope = first.envelope(second_drawn)
    assert first_envelope is not None
    assert second_envelope is not None
    other = LocalKeeper(ControllerKey.generate(), sealing=sealing)
    other.adopt(drawn, first_envelope, Meter(FLOOR))
    other.adopt(second_drawn, second_envelope, Meter(FLOOR))  # the later draw replaces it
    assert next(iter(other.vault.sealed.values())).drawn.draw == 2
    with pytest.raises(MysteryRefusedError, match="went back"):
        other.adopt(drawn, first_envelope, Meter(FLOOR))


def test_an_adopted_draw_is_kept_in_the_keepers_file_at_mode_0600(
    tmp_path: Path, sealing: SealingKey
) -> None:
    _first_key, first, drawn, envelope = first_node(sealing)
    path = tmp_path / "mystery.json"
    second = LocalKeeper(ControllerKey.generate(), SealedFile(path), sealing)
    second.adopt(drawn, envelope, Meter(FLOOR))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = LocalKeeper(second.key, SealedFile(path), sealing)  # restarted
    assert trigger_of(again) == trigger_of(first)


def test_the_sealing_key_file_is_0600_names_its_kind_and_shows_no_secret(
    tmp_path: Path, sealing: SealingKey
) -> None:
    path = tmp_path / "sealing.key"
    write_sealing_key(path, sealing)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_sealing_key(path).key_id == sealing.key_id
    assert base64.b64encode(sealing.secret).decode() not in repr(sealing)
    with pytest.raises(SealingKeyError, match="exists"):
        write_sealing_key(path, SealingKey.generate())
    path.chmod(0o644)
    with pytest.raises(SealingKeyError, match="chmod 600"):
        load_sealing_key(path)
    other = tmp_path / "controller.key"
    other.write_bytes(ControllerKey.generate().file_content())
    other.chmod(0o600)
    with pytest.raises(SealingKeyError, match="not a sealing key file"):
        load_sealing_key(other)


def test_an_envelope_is_a_struct_the_journal_encodes_canonically(sealing: SealingKey) -> None:
    key = ControllerKey.generate()
    envelope = seal_envelope(sealing, seal(request(key), key.sign))
    assert msgspec.json.decode(msgspec.json.encode(envelope), type=Envelope) == envelope
    assert envelope.key_id == sealing.key_id
