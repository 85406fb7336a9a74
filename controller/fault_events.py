"""A supervisor's acknowledgement of the faults the controller journaled (docs/faults.md).

The controller journals every bad frame, device fault and input refused before the ledger as a
``fault`` row (:class:`controller.events.FaultRecorded`). A supervisor or a manager acknowledges
them with one signed event, :class:`FaultsAcknowledged`: every fault journaled up to and
including ``through`` (the newest one's event id), ``count`` of them, with a note saying what was
done. The ledger's rules for it are in controller/ledger/faults.py (docs/security.md,
"Acknowledging faults"). It joins the journal's tagged union in :mod:`controller.events`.
"""

from __future__ import annotations

import msgspec

from controller.event_base import Event, Signatures


class FaultsAcknowledged(Event, frozen=True, tag="faults-acknowledged"):
    """Every fault journaled up to and including ``through`` is acknowledged by ``by``.

    ``through`` is the event id of the newest fault acknowledged; ``count`` the faults this
    acknowledgement covers (those journaled since the last one, through ``through``); ``note``
    what the supervisor found or did. Signed like every operator's action, and bound to the
    newest fault (controller/ledger/binding.py): a signature made before another fault was
    journaled is stale.
    """

    through: str
    count: int
    note: str
    by: str
    signatures: Signatures = msgspec.UNSET
