"""The ledger as the domain the journal records: :data:`LEDGER`.

The application calls the domain; the journal only records (docs/architecture.md, "The
layers"). The sequencer hands :data:`LEDGER` to each append, and every journal is opened
with it (:mod:`controller.ledger_journal`); the journal itself knows it only as the
``Domain`` protocol of :mod:`controller.journal.domain`, which this implements structurally
(the ledger imports nothing of the journal). Its step is :func:`controller.ledger.apply.apply`
with a refusal made its reason; after a refusal, its alert on a cloned passkey is
:func:`controller.ledger.passkeys.clone_evidence`; its encoders are those of
:mod:`controller.ledger.codec`; the materialized rows are read back by
:mod:`controller.ledger.state_rows`, the snapshot a checkpoint signs is
:mod:`controller.ledger.snapshot`'s, and a replay's state is held to the stored one by
:mod:`controller.ledger.state_audit`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from controller.ledger import codec, snapshot, state_audit, state_rows
from controller.ledger import screen as screening
from controller.ledger.apply import LedgerError, LedgerState, apply
from controller.ledger.passkeys import clone_evidence

if TYPE_CHECKING:
    from controller.effects import AnyEffect
    from controller.events import AnyEvent


class LedgerDomain:
    """The ledger's step and encodings, as the journal's append asks for them."""

    __slots__ = ()

    @staticmethod
    def step(
        state: LedgerState, event: AnyEvent
    ) -> tuple[LedgerState, tuple[AnyEffect, ...], str | None]:
        """Apply ``event``: the new state, its effects, and why it is refused (None: applied).

        A refusal (:class:`LedgerError`) leaves the state as it was. Any other exception is a
        fault in the ledger itself, which the journal records as the event refused.
        """
        try:
            new_state, effects = apply(state, event)
        except LedgerError as error:
            return state, (), str(error)
        return new_state, effects, None

    @staticmethod
    def signed(state: LedgerState) -> bool:
        """Whether the journal's authority is signed (:class:`~.operators.Authority`)."""
        return state.authority.signed

    clone_evidence = staticmethod(clone_evidence)
    """The alert on a refused event whose passkey's count went back (:mod:`.passkeys`)."""

    pool_json = staticmethod(codec.pool_json)
    table_state_json = staticmethod(codec.table_state_json)
    wagers_json = staticmethod(codec.wagers_json)
    operator_row = staticmethod(codec.operator_row)
    manifest_json = staticmethod(codec.manifest_json)
    authority_json = staticmethod(codec.authority_json)
    sites_json = staticmethod(codec.sites_json)
    chain_json = staticmethod(codec.chain_json)
    binding_json = staticmethod(codec.binding_json)

    screen = staticmethod(screening.screened)
    """What a writer's event meets before it is applied (:mod:`controller.ledger.screen`)."""
    table_word = staticmethod(screening.table_word)

    empty = staticmethod(LedgerState)
    """A journal without rows holds the empty ledger."""

    state_from_rows = staticmethod(state_rows.state_from_rows)
    snapshot_text = staticmethod(snapshot.snapshot_text)
    state_from_text = staticmethod(snapshot.state_from_text)
    state_digest = staticmethod(snapshot.state_digest)
    differences = staticmethod(snapshot.differences)
    state_problems = staticmethod(state_audit.state_problems)
    unbalanced = staticmethod(state_audit.unbalanced)
    meters = staticmethod(state_audit.meters)

    @staticmethod
    def pending_rows(state: LedgerState) -> dict[str, dict[str, Any]]:
        """Each payout awaiting verification, as its ``payouts`` row holds it."""
        return {payout_id: codec.payout_row(payout) for payout_id, payout in state.pending.items()}


LEDGER: Final = LedgerDomain()
"""The ledger, as the application opens every journal with it and the sequencer hands it on."""
