"""Start-up never trusts the stored state: what it checks, whichever backend holds the journal.

The materialized tables (pools, tables, live table states, open rounds, pending payouts,
operators, ``meta``) are what the controller restores from; someone who can write the file can
edit them (a meter set by hand) without touching a journal row. So before the daemon builds
on them, :func:`check_state` rebuilds the state the journal gives and compares:

1. it takes the **last checkpoint that verifies** (:mod:`.checkpoints`): signed with this
   controller's key, its stored snapshot the state it signed, and the row it covers holding the
   hash it signed. A checkpoint under this controller's key id whose signature does not verify
   is someone else's writing: the check fails. One signed with another key (before a key
   rotation) or whose snapshot was damaged is passed over for an earlier one, and said so;
2. it restores the state from that checkpoint's snapshot, and replays only the rows after the
   row it covers, checking their chain from the hash the checkpoint signed and that each gives
   its journaled outcome and effects; with no checkpoint, from the first row. Each checkpoint
   of this controller's key it meets must verify and state the hash and the state the replay
   found (a history rebuilt with the controller's checkpoints in it fails here);
3. it compares the result with the materialized state, part by part, and names every value
   that differs (:func:`controller.ledger.snapshot.differences`).

:mod:`controller.journal.state_check` walks any backend's rows through it; what it may trust
of a checkpoint, of a checkpoint it replays through and of the high-water mark is decided
here, once, on rows handed in by ``seq`` (:data:`RowAt`).

Before all that, given the controller's last signed head (its high-water mark, kept outside the
journal: :mod:`.high_water`), it refuses a journal that no longer holds that row with that hash:
rows dropped after the last checkpoint, or a row edited and the chain recomputed after it.

The work is the rows since the last checkpoint, which the controller writes every so many
rows (:mod:`controller.runtime.checkpointing`), whatever the journal's length. The rows before the
checkpoint are vouched for by its signature; ``jackpotd verify`` checks all of them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from controller.journal.chain import GENESIS, row_hash, text_digest
from controller.journal.checkpoints import KIND, Checkpointed, checkpoint_of, signed_bytes
from controller.journal.high_water import problem as behind
from controller.security.controller_key import signature_verifies

if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

    from controller.events import CheckpointRecorded
    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain, RecordedState, State
    from controller.outputs import SignedHead
    from controller.security.controller_key import ControllerKey


FORGED: Final = (
    "{where}: its signature under this controller's key does not verify: someone else wrote it"
)
REWRITTEN: Final = "{where}: row {head} does not have the hash it signed: the journal was rewritten"


@dataclass(slots=True)
class StateCheck:
    """What the start-up check found."""

    checkpoint: Checkpointed | None = None
    """The checkpoint replayed from (None: from the first row)."""
    replayed: int = 0
    """Journal rows replayed: those after the row the checkpoint covers."""
    problems: list[str] = field(default_factory=list)
    """Why the daemon must not start; empty if the stored state is the journal's."""
    notes: list[str] = field(default_factory=list)
    """Checkpoints passed over, and why (worth an operator's look, not a refusal)."""
    other_keys: dict[int, str] = field(default_factory=dict)
    """Checkpoints passed over for another key: their rows, and the key id each names."""

    def said(self) -> list[str]:
        """The notes, with the checkpoints of other keys in one line, however many they are.

        Each start of a demo on the same journal signs with a key made for that run, and a
        key rotation leaves its predecessor's checkpoints behind: one line, not one a row.
        """
        if not self.other_keys:
            return list(self.notes)
        rows = sorted(self.other_keys)
        if len(rows) == 1:
            (row,) = rows
            line = f"checkpoint at row {row}: signed by another key ({self.other_keys[row]})"
        else:
            keys = len(set(self.other_keys.values()))
            line = (
                f"{len(rows)} checkpoints (rows {rows[0]} to {rows[-1]}) signed by "
                f"{keys} other key{'s' if keys > 1 else ''}"
            )
        why = (
            "not used: the state is replayed from an earlier point instead; expected after the "
            "controller's key was rotated, and on a demo's journal (each run's key is new)"
        )
        return [f"{line}, {why}", *self.notes]

    @property
    def ok(self) -> bool:
        """Whether the stored state is the one the journal gives."""
        return not self.problems


RowAt = Callable[[int], "dict[str, Any] | None"]
"""A backend's row by its ``seq`` (canonical values, ``prev_hash`` included), None if not live."""


def head_holds(
    row_of: RowAt, event: CheckpointRecorded, archived: Collection[tuple[int, str]] = ()
) -> bool:
    """Whether the row the checkpoint covers is in the journal with the hash it signed.

    A row moved out to an archive segment holds if it is the last of one and the journal
    recorded that hash for it (``archived``: each segment's last row and hash; the live chain
    continues from it).
    """
    if event.head_seq == 0:
        return event.head_hash == GENESIS
    head = row_of(event.head_seq)
    if head is None:
        return (event.head_seq, event.head_hash) in archived
    return (
        head["hash"] == event.head_hash
        and row_hash(str(head["prev_hash"]), head) == event.head_hash
    )


def trusted_snapshot(  # noqa: PLR0913 - the domain, the rows, the snapshot, the key, the findings
    domain: Domain[State],
    row_of: RowAt,
    snapshot: StoredSnapshot,
    key: ControllerKey,
    check: StateCheck,
    *,
    archived: Collection[tuple[int, str]] = (),
) -> tuple[CheckpointRecorded, State] | None:
    """The snapshot's checkpoint and state, if they can be trusted (see the module docstring)."""
    row = row_of(snapshot.seq)
    event = checkpoint_of(str(row["event"])) if row and row["kind"] == KIND else None
    where = f"checkpoint at row {snapshot.seq}"
    if event is None:
        check.notes.append(f"snapshot of row {snapshot.seq}: that row is not a checkpoint")
        return None
    if event.key_id != key.key_id:
        check.other_keys[snapshot.seq] = event.key_id
        return None
    if not signature_verifies(key.public_key, event.signature, signed_bytes(event)):
        check.problems.append(FORGED.format(where=where))
        return None
    if not head_holds(row_of, event, archived):
        check.problems.append(REWRITTEN.format(where=where, head=event.head_seq))
        return None
    if snapshot.head_seq != event.head_seq or text_digest(snapshot.state) != event.state_digest:
        check.notes.append(f"{where}: its stored snapshot is not the state it signed, not used")
        return None
    try:
        return event, domain.state_from_text(snapshot.state)
    except ValueError as error:
        check.notes.append(f"{where}: {error}, not used")
        return None


def own_checkpoint(  # noqa: PLR0913, PLR0917 - the row, where the replay stands, how to look back
    domain: Domain[State],
    row_of: RowAt,
    row: Mapping[str, Any],
    before: tuple[int, str],
    state: State,
    key: ControllerKey,
    *,
    archived: Collection[tuple[int, str]] = (),
) -> str | None:
    """What is wrong with a checkpoint of this controller's the replay meets, if anything.

    ``before`` is the row before it (seq, hash) and ``state`` the state after that row: what
    the checkpoint, made by this controller, must have signed (a history rebuilt with the
    controller's old checkpoints in it shows here).
    """
    event = checkpoint_of(str(row["event"])) if row["kind"] == KIND else None
    if event is None or event.key_id != key.key_id:
        return None
    where, head = f"checkpoint at row {row['seq']}", event.head_seq
    if not signature_verifies(key.public_key, event.signature, signed_bytes(event)):
        return FORGED.format(where=where)
    if head == before[0]:
        if event.head_hash != before[1]:
            return REWRITTEN.format(where=where, head=head)
        if event.state_digest != domain.state_digest(state):
            return f"{where}: the state it signed is not the journal's at row {head}"
    elif not 0 <= head < before[0] or not head_holds(row_of, event, archived):
        return REWRITTEN.format(where=where, head=head)
    return None


def behind_high_water(
    row_of: RowAt, archived_through: int, high_water: SignedHead, stored: RecordedState
) -> str | None:
    """Why the journal is behind the controller's signed high-water mark; None if it is not.

    A row archived out of the live journal (at or before ``archived_through``) is vouched for
    by its sealed segment (``jackpotd verify --archives`` checks them).
    """

    def hash_of(seq: int) -> str | None:
        row = row_of(seq)
        if row is not None:
            return str(row["hash"])
        return high_water.hash if 0 < seq <= archived_through else None

    identity = stored.binding.journal if stored.binding else ""
    found = behind(high_water, hash_of, identity)
    if found and stored.binding and (high_water.seq, high_water.hash) in stored.binding.accepted:
        return None  # two managers accepted losing it (controller/ledger/restores.py)
    return found
