"""An enrolled table's device event refused for its agent's signature, journaled as a fault.

The ledger refuses a device event of a table with an enrolled agent that its agent did not
sign (:mod:`controller.ledger.table_agents`). Journaled as a refused row under the event's own
id, the forgery would take that id (``table/device/seq``): the genuine event, arriving after
it, would be answered as its duplicate or refused as a reuse of the id, and lost. So the
append journals a ``FaultRecorded`` instead, under an id of its own made from the refused
content (a resend of the same forgery is a duplicate of that fault), says why, and answers
the writer with the refusal: the id stays free for the table's agent, and nothing moves
(docs/ha.md, "Signed forwarding").
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

import msgspec

from controller.agent_signature import AGENT_SIGNATURE
from controller.events import FaultRecorded, encode_event
from controller.journal.provenance import Refused
from controller.ledger.table_agents import agent_refusal

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.ledger.state import LedgerState


def agent_word_refusal(state: LedgerState, event: AnyEvent) -> Refused | None:
    """The refusal of ``event`` by the ledger's rule on ``state``; None: take it."""
    reason = agent_refusal(state, event)
    if reason is None:
        return None
    content = encode_event(msgspec.structs.replace(event, at=""))
    digest = hashlib.sha256(content).hexdigest()[:16]
    table_id = str(getattr(event, "table_id", ""))
    fault = FaultRecorded(
        f"{event.event_id}#{AGENT_SIGNATURE}-{digest}",
        event.at,
        f"table {table_id}",
        AGENT_SIGNATURE,
        f"{reason}: {content.decode()[:600]}",
    )
    return Refused(fault, str(type(event).__struct_config__.tag), reason)
