"""What the ledger keeps of the faults journaled: counts and one mark, never the faults.

The faults themselves are the journal's ``fault`` rows; the ledger keeps only what a signed
acknowledgement (controller/fault_events.py) is checked against, so that its state stays small
however many faults a floor journals: how many were counted, the newest one's id, the point
acknowledged through, and who acknowledged last.

The register opens with a journal's first acknowledgement. Until then a fault is a no-op in the
ledger, as it always was, so that every journal written before acknowledgements existed replays
to the same states, snapshots and digests (the checkpoints it holds sign them). It lives in
:class:`~controller.ledger.operators.Authority`, ``UNSET`` (never encoded) while closed.
"""

from __future__ import annotations

import msgspec


class FaultRegister(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The faults counted since the register opened, and the acknowledgement they stand at.

    ``journaled`` counts the faults the first acknowledgement covered and every one journaled
    since; ``newest`` is the id of the newest of them; ``acknowledged`` how many have been
    acknowledged, through the fault ``through``, by ``by`` last. ``journaled - acknowledged``
    faults wait for a supervisor.
    """

    journaled: int
    newest: str
    acknowledged: int
    through: str
    by: str

    @property
    def waiting(self) -> int:
        """Faults journaled and not yet acknowledged."""
        return self.journaled - self.acknowledged


def fault_target(register: FaultRegister | msgspec.UnsetType) -> str:
    """What an acknowledgement acts on: the newest fault and the point acknowledged through.

    A signature names it (controller/ledger/binding.py); once another fault is journaled, or
    another acknowledgement applied, it is stale.
    """
    if isinstance(register, msgspec.UnsetType):
        return "faults/none-acknowledged"
    return (
        f"faults/newest/{register.newest}/journaled/{register.journaled}/through/{register.through}"
    )
