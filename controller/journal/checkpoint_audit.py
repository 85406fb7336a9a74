"""``jackpotd verify``'s checks of the checkpoints and snapshots a journal holds.

Each checkpoint row (:mod:`controller.journal.checkpoints`) must state what the journal
really holds: the row it covers must come before it and have the hash it signed (otherwise
the history before it was rewritten), and the state the replay from empty reaches at that row
must have the digest and the meters it signed. Given the controller's public keys, its
signature must verify under the key it names; a journal that has rows and no checkpoint
signed by a key given fails too (a rebuilt journal would have dropped them). Each stored
snapshot must be the state its checkpoint signed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from controller.journal.chain import GENESIS, text_digest
from controller.journal.checkpoints import KIND, checkpoint_of, signature_holds

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from controller.events import CheckpointRecorded
    from controller.journal.checkpoints import StoredSnapshot
    from controller.journal.domain import Domain, State

VERIFIED: Final = "verified"
NOT_CHECKED: Final = "not checked"
UNKNOWN_KEY: Final = "unknown key"
BAD: Final = "does not verify"


@dataclass(frozen=True, slots=True)
class CheckpointSummary:
    """One checkpoint as verification found it."""

    row: int
    head_seq: int
    head_hash: str
    key_id: str
    at: str
    signature: str
    """:data:`VERIFIED`, :data:`NOT_CHECKED` (no key given), :data:`UNKNOWN_KEY` or :data:`BAD`."""

    def document(self) -> dict[str, Any]:
        """As ``verify --json`` prints it."""
        return {
            "row": self.row,
            "head_seq": self.head_seq,
            "head_hash": self.head_hash,
            "key_id": self.key_id,
            "at": self.at,
            "signature": self.signature,
        }


@dataclass(frozen=True, slots=True)
class AtHead:
    """The replayed state's digest and meters at a row a checkpoint covers."""

    digest: str
    meters: dict[str, int]


def at_head(domain: Domain[State], state: State) -> AtHead:
    """What a checkpoint of ``state`` must state."""
    return AtHead(domain.state_digest(state), domain.meters(state))


def checkpoints_in(rows: Iterable[Mapping[str, Any]]) -> dict[int, CheckpointRecorded]:
    """The checkpoints of the journal's rows, by row."""
    found = {}
    for row in rows:
        if row["kind"] == KIND:
            event = checkpoint_of(str(row["event"]))
            if event is not None:
                found[int(row["seq"])] = event
    return found


def _signature(event: CheckpointRecorded, keys: Sequence[str]) -> str:
    if not keys:
        return NOT_CHECKED
    holds = signature_holds(event, keys)
    return UNKNOWN_KEY if holds is None else VERIFIED if holds else BAD


def audit(
    checkpoints: Mapping[int, CheckpointRecorded],
    at_heads: Mapping[int, AtHead],
    hashes: Mapping[int, str],
    *,
    keys: Sequence[str],
    problem: Callable[[str], None],
) -> list[CheckpointSummary]:
    """Check each checkpoint (see the module docstring); return what was found, in order.

    ``hashes`` holds the hash of each row a checkpoint covers, and of the last row if any.
    """
    summaries = []
    for row, event in sorted(checkpoints.items()):
        head = event.head_seq
        if not 0 <= head < row:
            problem(f"row {row}: the checkpoint covers row {head}, which is not before it")
        else:
            found = GENESIS if head == 0 else hashes.get(head)
            if found != event.head_hash:
                problem(
                    f"row {row}: the checkpoint signed {event.head_hash[:16]}... as row {head}'s "
                    f"hash, the journal has {str(found)[:16]}...: the history before it was "
                    "rewritten"
                )
            seen = at_heads.get(head)
            if seen is not None and seen.digest != event.state_digest:
                problem(f"row {row}: the checkpoint's state differs from the replay at row {head}")
            if seen is not None and seen.meters != event.meters:
                problem(f"row {row}: the checkpoint's meters differ from the replay at row {head}")
        signature = _signature(event, keys)
        if signature == UNKNOWN_KEY:
            problem(f"row {row}: checkpoint signed by key {event.key_id}, not a key given")
        elif signature == BAD:
            problem(f"row {row}: the checkpoint's signature does not verify (key {event.key_id})")
        summaries.append(
            CheckpointSummary(row, head, event.head_hash, event.key_id, event.at, signature)
        )
    if keys and hashes and not any(summary.signature == VERIFIED for summary in summaries):
        problem("no checkpoint signed by a controller key given: the checkpoints were dropped")
    return summaries


def audit_snapshots(
    snapshots: Iterable[StoredSnapshot],
    checkpoints: Mapping[int, CheckpointRecorded],
    problem: Callable[[str], None],
) -> None:
    """Each stored snapshot must be the state its checkpoint signed."""
    for snapshot in snapshots:
        event = checkpoints.get(snapshot.seq)
        held = (snapshot.head_seq, text_digest(snapshot.state))
        if event is None:
            problem(f"snapshot of row {snapshot.seq}: that row is not a checkpoint")
        elif held != (event.head_seq, event.state_digest):
            problem(f"snapshot of row {snapshot.seq}: not the state its checkpoint signed")
