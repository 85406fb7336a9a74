"""The refusals a writer's event meets before the domain applies it, as the backends screen it.

In this order, as the append always took them: a table's word from a writer that is not the
daemon's intake on a signed journal, a signed event whose window does not hold the live clock
(:mod:`controller.journal.provenance`), and a device's event its table's enrolled agent did
not vouch for (:mod:`controller.journal.agent_word`). Each refused event is journaled as the
fault that says why. The append path takes this as its ``Screen``
(:mod:`controller.journal.domain`), so that it imports none of the rules it consults.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from controller.journal.agent_word import agent_word_refusal
from controller.journal.provenance import live_refusal, refusal

if TYPE_CHECKING:
    from controller.events import AnyEvent
    from controller.journal.provenance import Refused
    from controller.ledger.state import LedgerState


def screened(
    signed: bool,  # noqa: FBT001 - the authority as the append found it
    state: LedgerState,
    event: AnyEvent,
    origin: str | None,
    now: str | None,
) -> Refused | None:
    """The first refusal ``event`` meets (see the module docstring); None: apply it."""
    return (
        refusal(signed, event, origin)
        or live_refusal(signed, event, now)
        or agent_word_refusal(state, event)
    )
