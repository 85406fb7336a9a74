"""The JSON payloads the controller publishes, schema version 1: meters, hits, commands.

``meter/<pool>`` (:class:`MeterPayload`, retained), ``meter/<pool>/hit`` (:class:`HitPayload`),
``meter/<pool>/status`` (:class:`PoolStatusPayload`, retained),
``table/<tid>/cmd/state`` (:class:`TableStatePayload`), ``table/<tid>/cmd/refused``
(:class:`WagerRefusedPayload`), each carrying the time ``at``, the journal row ``seq`` of the
change and the ``epoch`` of the journal that committed it, so that a display can order them by
``(epoch, seq)`` and drop what it has already seen or what is older (a payload without
``epoch``, from a controller before it, reads as epoch 0);
``controller/<id>/checkpoint`` (:class:`CheckpointPayload`) is the controller's last signed
checkpoint, whose ``seq`` is the row it covers; ``controller/<id>/status`` is the plain string
``online`` or ``offline``. The decoders are for displays, signs and tests. What the tables send
is read by :mod:`drivers.mqtt.payloads`.

A meter, a pool status and a hit given the controller's :class:`~controller.meter_signature.
Signer` are **schema version 2**: the same fields, and ``key_id`` and ``sig``, the controller's
signature over the others (:mod:`controller.meter_signature`), which a sign station checks
before it believes their ``(epoch, seq)``; a hit names the ``controller`` that announces it as
well. Without a signer (a rig's sink) they stay version 1.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, TypeAlias

import msgspec

from controller.meter_signature import HIT_DOMAIN, METER_DOMAIN, POOL_STATUS_DOMAIN, SIGNED_VERSION
from controller.outputs import HitAnnouncement, MeterUpdate, PoolUpdate
from drivers.mqtt.json_objects import SCHEMA_VERSION, convert, decode_object
from drivers.mqtt.payloads import OFFLINE, ONLINE

if TYPE_CHECKING:
    from controller.meter_signature import Signer
    from controller.outputs import (
        CheckpointUpdate,
        ControllerUpdate,
        HeadUpdate,
        TableUpdate,
        WagerRefusal,
    )


class MeterPayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``meter/<pool>``, retained: a pool's meters as they now stand."""

    v: int
    pool: str
    meter_cents: int
    reserve_cents: int
    overflow_cents: int
    seed_cents: int
    at: str
    seq: int
    epoch: int = 0
    """The sequencer epoch of the journal that committed it (0 in a payload without one)."""
    # A pool's life (controller/outputs.py MeterUpdate): absent while the pool is in play, so
    # a pool in play's payload and its signature are unchanged (docs/mqtt.md).
    status: str | msgspec.UnsetType = msgspec.UNSET
    status_reason: str | msgspec.UnsetType = msgspec.UNSET
    transferred_in_cents: int | msgspec.UnsetType = msgspec.UNSET
    transferred_from: str | msgspec.UnsetType = msgspec.UNSET
    must_hit_by_cents: int | msgspec.UnsetType = msgspec.UNSET
    """A mystery level's ceiling; absent on every other pool (docs/mqtt.md)."""


class SignedMeterPayload(MeterPayload, frozen=True, forbid_unknown_fields=True):
    """``meter/<pool>`` of schema version 2: the meter, signed by the controller."""

    key_id: str = ""
    """The id of the controller key that signed it (controller/meter_signature.py)."""
    sig: str = ""
    """The base64 Ed25519 signature over the other fields, under :data:`METER_DOMAIN`."""


class HitPayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``meter/<pool>/hit``: a hit to show on the signs (``pool`` is null on ``meter/_/hit``)."""

    v: int
    payout: str
    pool: str | None
    table: str
    seat: int
    line: str | None
    amount_cents: int
    pending: bool
    tax_report: bool
    at: str
    seq: int
    hand: str = ""
    """The winning hand's cards (``As Ks Qs Js Ts Jk 2c``), when the controller knows them."""
    epoch: int = 0
    """The sequencer epoch of the journal that committed it (0 in a payload without one)."""


class SignedHitPayload(HitPayload, frozen=True, forbid_unknown_fields=True):
    """``meter/<pool>/hit`` of schema version 2: the hit, signed by the controller announcing it."""

    controller: str = ""
    """The id of the controller that announces it (its ``controller/<id>/status``)."""
    key_id: str = ""
    """The id of the controller key that signed it (controller/meter_signature.py)."""
    sig: str = ""
    """The base64 Ed25519 signature over the other fields, under :data:`HIT_DOMAIN`."""


class PoolStatusPayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``meter/<pool>/status``, retained: whether the pool's wagers are open, and why not.

    A property's wide-area pool closes while its link to central is cut (docs/wide-area.md);
    ``reason`` is short enough for a sign's line.
    """

    v: int
    pool: str
    open: bool
    reason: str
    at: str
    seq: int
    epoch: int = 0
    """The sequencer epoch of the journal that committed it (0 in a payload without one)."""


class SignedPoolStatusPayload(PoolStatusPayload, frozen=True, forbid_unknown_fields=True):
    """``meter/<pool>/status`` of schema version 2: the status, signed by the controller."""

    key_id: str = ""
    """The id of the controller key that signed it (controller/meter_signature.py)."""
    sig: str = ""
    """The base64 Ed25519 signature over the other fields, under :data:`POOL_STATUS_DOMAIN`."""


class WagerRefusedPayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``table/<tid>/cmd/refused``: a chip that did not become a wager at lock, and why."""

    v: int
    round: str
    seat: int
    spot: str
    amount_cents: int
    reason: str
    at: str
    seq: int
    epoch: int = 0
    """The sequencer epoch of the journal that committed it (0 in a payload without one)."""


class CheckpointPayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``controller/<id>/checkpoint``, retained: the controller's last signed checkpoint.

    Row ``seq`` of the journal has the hash ``hash``, and the state there the digest
    ``state_digest`` and these meters; ``signature`` is the controller key's (``key_id``) over
    them (controller/journal/checkpoints.py). The checkpoint itself is journaled at ``row``.
    Saved off the box, a payload is an anchor (``jackpotd verify --anchor``).
    """

    v: int
    controller: str
    seq: int
    hash: str
    row: int
    state_digest: str
    meters: dict[str, int]
    key_id: str
    signature: str
    at: str


class TableStatePayload(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``table/<tid>/cmd/state``: the controller opened or closed the table's progressive."""

    v: int
    open: bool
    reason: str
    at: str
    seq: int
    epoch: int = 0
    """The sequencer epoch of the journal that committed it (0 in a payload without one)."""


_ENCODER: Final = msgspec.json.Encoder()
SIGNED_VERSIONS: Final = (SCHEMA_VERSION, SIGNED_VERSION)
"""The versions a meter or a pool status may be: unsigned (1) or signed (2)."""


def _fields(payload: msgspec.Struct, **more: str) -> dict[str, Any]:
    """The fields of ``payload`` as version 2 signs them (with ``more``)."""
    return {**msgspec.to_builtins(payload), **more, "v": SIGNED_VERSION}


def _signed(payload: msgspec.Struct, domain: bytes, signer: Signer | None, **more: str) -> bytes:
    """The payload, or with ``signer`` the payload of version 2 it signs (with ``more``)."""
    if signer is None:
        return _ENCODER.encode(payload)
    return _ENCODER.encode(signer.signed(domain, _fields(payload, **more)))


def _meter(update: MeterUpdate) -> MeterPayload:
    return MeterPayload(
        v=SCHEMA_VERSION,
        pool=update.pool_id,
        meter_cents=update.meter_cents,
        reserve_cents=update.reserve_cents,
        overflow_cents=update.overflow_cents,
        seed_cents=update.seed_cents,
        at=update.at,
        seq=update.seq,
        epoch=update.epoch,
        status=update.status,
        status_reason=update.status_reason,
        transferred_in_cents=update.transferred_in_cents,
        transferred_from=update.transferred_from,
        must_hit_by_cents=update.must_hit_by_cents,
    )


def _hit(update: HitAnnouncement) -> HitPayload:
    return HitPayload(
        v=SCHEMA_VERSION,
        payout=update.payout_id,
        pool=update.pool_id,
        table=update.table_id,
        seat=update.seat,
        line=update.line,
        amount_cents=update.amount_cents,
        pending=update.pending,
        tax_report=update.tax_report,
        at=update.at,
        seq=update.seq,
        hand=update.hand,
        epoch=update.epoch,
    )


def _pool_status(update: PoolUpdate) -> PoolStatusPayload:
    return PoolStatusPayload(
        v=SCHEMA_VERSION,
        pool=update.pool_id,
        open=update.open,
        reason=update.reason,
        at=update.at,
        seq=update.seq,
        epoch=update.epoch,
    )


def meter_payload(update: MeterUpdate, signer: Signer | None = None) -> bytes:
    """The retained payload of ``meter/<pool>``, signed by ``signer`` if given (version 2)."""
    return _signed(_meter(update), METER_DOMAIN, signer)


def hit_payload(
    update: HitAnnouncement, signer: Signer | None = None, controller: str = ""
) -> bytes:
    """The payload of ``meter/<pool>/hit``, signed by ``signer`` for ``controller`` if given."""
    if signer is None:
        return _signed(_hit(update), HIT_DOMAIN, None)
    return _signed(_hit(update), HIT_DOMAIN, signer, controller=_announcer(controller))


def _announcer(controller: str) -> str:
    if not controller:
        raise ValueError("a signed hit names the controller that announces it")
    return controller


def pool_status_payload(update: PoolUpdate, signer: Signer | None = None) -> bytes:
    """The retained payload of ``meter/<pool>/status``, signed by ``signer`` if given."""
    return _signed(_pool_status(update), POOL_STATUS_DOMAIN, signer)


SignedUpdate: TypeAlias = MeterUpdate | PoolUpdate | HitAnnouncement
"""What the controller publishes signed: a meter, a pool status, a hit."""


async def signed_payload(update: SignedUpdate, signer: Signer, controller: str) -> bytes:
    """The payload of version 2 of ``update``, its signature awaited (a signer process's).

    The same bytes as :func:`meter_payload`, :func:`pool_status_payload` and
    :func:`hit_payload` give with ``signer``; the sink awaits this one so that a signer
    process that is slow to answer holds up only what waits for its signature, never the event
    loop (controller/runtime/remote_signer.py).
    """
    match update:
        case MeterUpdate():
            domain, fields = METER_DOMAIN, _fields(_meter(update))
        case PoolUpdate():
            domain, fields = POOL_STATUS_DOMAIN, _fields(_pool_status(update))
        case _:
            domain, fields = HIT_DOMAIN, _fields(_hit(update), controller=_announcer(controller))
    return _ENCODER.encode(await signer.signed_async(domain, fields))


def table_state_payload(update: TableUpdate) -> bytes:
    """The payload of ``table/<tid>/cmd/state``."""
    return _ENCODER.encode(
        TableStatePayload(
            v=SCHEMA_VERSION,
            open=update.online,
            reason=update.reason,
            at=update.at,
            seq=update.seq,
            epoch=update.epoch,
        )
    )


def wager_refused_payload(update: WagerRefusal) -> bytes:
    """The payload of ``table/<tid>/cmd/refused``."""
    return _ENCODER.encode(
        WagerRefusedPayload(
            v=SCHEMA_VERSION,
            round=update.round_id,
            seat=update.seat,
            spot=update.spot,
            amount_cents=update.amount_cents,
            reason=update.reason,
            at=update.at,
            seq=update.seq,
            epoch=update.epoch,
        )
    )


def decode_wager_refused(data: bytes) -> WagerRefusedPayload:
    """Parse a ``table/<tid>/cmd/refused`` payload; raises PayloadError."""
    return convert(decode_object(data), WagerRefusedPayload)


def checkpoint_payload(update: CheckpointUpdate) -> bytes:
    """The retained payload of ``controller/<id>/checkpoint``."""
    checkpoint = update.checkpoint
    return _ENCODER.encode(
        CheckpointPayload(
            v=SCHEMA_VERSION,
            controller=checkpoint.controller,
            seq=checkpoint.head_seq,
            hash=checkpoint.head_hash,
            row=update.seq,
            state_digest=checkpoint.state_digest,
            meters=checkpoint.meters,
            key_id=checkpoint.key_id,
            signature=checkpoint.signature,
            at=checkpoint.at,
        )
    )


def head_payload(update: HeadUpdate) -> bytes:
    """The retained payload of ``controller/<id>/head``: the signed head itself.

    Its fields, signature included, are the high-water file's (controller/journal/high_water.py
    says what is signed), so that a copy kept off the box is checked by itself.
    """
    return _ENCODER.encode(update.head)


def decode_checkpoint(data: bytes) -> CheckpointPayload:
    """Parse a ``controller/<id>/checkpoint`` payload; raises PayloadError."""
    return convert(decode_object(data), CheckpointPayload)


def controller_status_payload(update: ControllerUpdate) -> bytes:
    """The retained payload of ``controller/<id>/status``: ``online`` or ``offline``."""
    return ONLINE if update.online else OFFLINE


def decode_pool_status(data: bytes) -> PoolStatusPayload:
    """Parse a ``meter/<pool>/status`` payload, signed or not; raises PayloadError."""
    return pool_status_of(decode_object(data, SIGNED_VERSIONS))


def pool_status_of(value: dict[str, Any]) -> PoolStatusPayload:
    """A decoded ``meter/<pool>/status`` object as its payload of its version."""
    signed = value["v"] == SIGNED_VERSION
    return convert(value, SignedPoolStatusPayload if signed else PoolStatusPayload)


def decode_meter(data: bytes) -> MeterPayload:
    """Parse a ``meter/<pool>`` payload, signed or not (displays, tests); raises PayloadError.

    Whether its signature holds is the follower's to check (controller/meter_signature.py).
    """
    return meter_of(decode_object(data, SIGNED_VERSIONS))


def meter_of(value: dict[str, Any]) -> MeterPayload:
    """A decoded ``meter/<pool>`` object as its payload of its version."""
    return convert(value, SignedMeterPayload if value["v"] == SIGNED_VERSION else MeterPayload)


def decode_hit(data: bytes) -> HitPayload:
    """Parse a ``meter/<pool>/hit`` payload, signed or not; raises PayloadError.

    Whether its signature holds is the follower's to check (drivers/mqtt/hits.py).
    """
    return hit_of(decode_object(data, SIGNED_VERSIONS))


def hit_of(value: dict[str, Any]) -> HitPayload:
    """A decoded ``meter/<pool>/hit`` object as its payload of its version."""
    return convert(value, SignedHitPayload if value["v"] == SIGNED_VERSION else HitPayload)


def decode_table_state(data: bytes) -> TableStatePayload:
    """Parse a ``table/<tid>/cmd/state`` payload; raises PayloadError."""
    return convert(decode_object(data), TableStatePayload)
