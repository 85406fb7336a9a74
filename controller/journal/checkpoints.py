"""Signed checkpoints of the journal, and the snapshots of the state they cover.

A **checkpoint** (:class:`~controller.events.CheckpointRecorded`, journaled like any event and a
no-op for the ledger) is the controller's signed statement: "row ``head_seq`` of this journal
has the hash ``head_hash``, and the ledger's state after it has the digest ``state_digest``
and these meters". The controller signs it with its own key
(:mod:`controller.security.controller_key`), which is not in the journal: someone who can write the
journal file can neither make a checkpoint that verifies nor keep the old ones verifying once they
have rebuilt the history before them (every row's hash depends on all the rows before it).

What is signed is :data:`DOMAIN` followed by the canonical JSON of the statement: the
controller's id, ``head_seq``, ``head_hash``, ``state_digest``, ``meters``, ``key_id`` and the
time ``at``, keys sorted, no spaces. The retained MQTT payload of a checkpoint carries the same
fields and the signature, so that a copy kept off the box can be checked by itself.

With each checkpoint the journal stores a **snapshot** of the state it covers (the table
``snapshots``, schema 9, in the same transaction as the checkpoint's row; the last
:data:`KEEP` are kept). Start-up restores the state from the last checkpoint that verifies and
replays only the rows after it (:mod:`controller.journal.state_trust`); ``jackpotd verify``
checks every checkpoint against a replay from empty.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import msgspec

from controller.events import CheckpointRecorded, decode_event
from controller.journal.chain import text_digest
from controller.security.controller_key import key_id, signature_verifies

if TYPE_CHECKING:
    from collections.abc import Sequence

    from controller.journal.domain import Domain, State
    from controller.security.controller_key import ControllerKey

DOMAIN: Final = b"jackpotd checkpoint v1\n"
KEEP: Final = 3
"""Snapshots kept: the last checkpoint's, and two before it in case its own is damaged."""
KIND: Final = "checkpoint"
"""The journal's ``kind`` of a checkpoint row."""

_CANONICAL: Final = msgspec.json.Encoder(order="sorted")


def signed_bytes(statement: CheckpointRecorded) -> bytes:
    """What the controller signs (see the module docstring)."""
    fields = {
        "controller": statement.controller,
        "head_seq": statement.head_seq,
        "head_hash": statement.head_hash,
        "state_digest": statement.state_digest,
        "meters": statement.meters,
        "key_id": statement.key_id,
        "at": statement.at,
    }
    return DOMAIN + _CANONICAL.encode(fields)


def signature_holds(statement: CheckpointRecorded, public_keys: Sequence[str]) -> bool | None:
    """Whether the signature verifies under the given key of its id; None if none has that id."""
    for public in public_keys:
        if key_id(public) == statement.key_id:
            return signature_verifies(public, statement.signature, signed_bytes(statement))
    return None


@dataclass(frozen=True, slots=True)
class Sealed:
    """A signed checkpoint not yet journaled, and the snapshot to store with it."""

    event: CheckpointRecorded
    snapshot: str


def seal(  # noqa: PLR0913 - the signer, the state and where it stands, and its domain
    key: ControllerKey,
    controller: str,
    state: State,
    head: tuple[int, str],
    at: str,
    *,
    domain: Domain[State],
) -> Sealed:
    """The checkpoint of ``state``, the state after row ``head`` (seq, hash), signed.

    ``domain`` writes the state's snapshot and its meters (:class:`..domain.Domain`).
    """
    text = domain.snapshot_text(state)
    meters = domain.meters(state)
    unsigned = CheckpointRecorded(
        f"checkpoint-{uuid.uuid4()}", at, controller, head[0], head[1], text_digest(text), meters,
        key.key_id, "",
    )  # fmt: skip
    event = msgspec.structs.replace(unsigned, signature=key.sign(signed_bytes(unsigned)))
    return Sealed(event, text)


@dataclass(frozen=True, slots=True)
class Checkpointed:
    """A checkpoint journaled at row ``row``."""

    row: int
    event: CheckpointRecorded


@dataclass(frozen=True, slots=True)
class StoredSnapshot:
    """A row of ``snapshots``: the checkpoint's own row, the row it covers, the state text."""

    seq: int
    head_seq: int
    state: str


def checkpoint_of(event_text: str) -> CheckpointRecorded | None:
    """The checkpoint a journal row's ``event`` holds; None if it holds something else."""
    try:
        event = decode_event(event_text)
    except (msgspec.MsgspecError, ValueError):
        return None
    return event if isinstance(event, CheckpointRecorded) else None
