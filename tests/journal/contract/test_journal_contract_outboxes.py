"""The journal port's contract (docs/journal.md, "The port"): a property's outbox and a sink's.

Run against every backend (tests/journal/contract/conftest.py): the site messages to central in
order (a deleted one is found), and a sink's outbox keeping its messages and hit mark across
reopening.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from support.journal.journal_contract import HIT, Backend, play_hit_round
from support.journal.journal_rig import AT
from support.journal.site_outbox import play as queue_site_messages

from controller.journal import JournalError

if TYPE_CHECKING:
    from controller.ledger_journal import LedgerJournal


# --- a property's outbox to central, and a sink's outbox ---------------------------------------


def test_journal_contract_site_messages_are_given_in_order_after_the_acknowledged_one(
    backend: Backend,
) -> None:
    journal = backend.open()
    try:
        messages = [message for _, message in queue_site_messages(journal)]
        assert journal.site_messages(0, 100) == messages
        assert journal.site_messages(1, 1) == messages[1:2]
        assert journal.site_messages(len(messages), 100) == []
        # A message deleted from the outbox is found: nothing is sent.
        assert backend.intrude("DELETE FROM site_messages WHERE site_seq = 2") == 1
        with pytest.raises(JournalError):
            journal.site_messages(0, 100)
    finally:
        journal.close()


def test_journal_contract_a_sinks_outbox_keeps_its_messages_and_hit_mark_across_reopening(
    backend_journal: LedgerJournal,
) -> None:
    outbox = backend_journal.outbox("sink-a")
    try:
        assert outbox.pending() == []
        first = backend_journal.head[0]
        assert outbox.hits_stored_through() == first  # a new sink marks the journal's end
        play_hit_round(backend_journal)
        assert outbox.missed_payouts(first) == backend_journal.payouts_since(first)
        hit_seq = next(
            seq
            for seq, _, payout in backend_journal.payouts_since(first)
            if payout.payout_id == HIT
        )
        plain = outbox.add("site/sign/1", b"meter", qos=1, retain=True, created=AT)
        hit = outbox.add_hit("site/hits", b"five aces", qos=1, created=AT, seq=hit_seq)
        outbox.add_hit(
            "site/hits", b"older", qos=0, created=AT, seq=first
        )  # the mark keeps its high
        assert outbox.hits_stored_through() == hit_seq
        outbox.remove(plain)
    finally:
        outbox.close()
    other = backend_journal.outbox("sink-b")
    try:
        assert other.pending() == []  # a sink never sees another's messages
    finally:
        other.close()
    again = backend_journal.outbox("sink-a")
    try:
        pending = [(m.row_id, m.topic, m.payload, m.qos, m.retain) for m in again.pending()]
        assert pending[0] == (hit, "site/hits", b"five aces", 1, False)
        assert [m[2] for m in pending] == [b"five aces", b"older"]
        assert again.hits_stored_through() == hit_seq
    finally:
        again.close()
