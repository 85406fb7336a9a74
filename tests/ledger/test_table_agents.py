"""An enrolled table's devices speak only through its agent (docs/ha.md, "Signed forwarding").

Each test is an attack by someone with valid broker credentials (docs/security.md): a forged
signature, a signature by another table's agent, a signed event replayed onto another table,
an unsigned event on an enrolled table, a revoked key, an old event sent again. Every one goes
through ``Journal.append`` on a real journal file (what the daemon's intake and every other
entry path reach), is journaled as a fault under an id of its own, and moves no meter; the
genuine agent's events are applied, under the ids the forgeries could not take.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

import msgspec
import pytest
from support.journal.journal_rig import POOL, TABLE, pool_opened, table_configured
from support.ledger.approvals import Site, now

from controller.agent_events import AgentSignature, TableAgentEnrolled, TableAgentRevoked
from controller.agent_signature import AGENT_SIGNATURE
from controller.clock import utc_iso
from controller.events import (
    BetSensed,
    BetsLocked,
    ConfigurationApproved,
    DeviceInput,
    FaultRecorded,
    decode_event,
    device_event_id,
)
from controller.ledger.table_agents import MAX_AGE, agents_of
from controller.ledger_journal.sqlite import Journal
from controller.security import keys
from controller.security.agent_key import AgentKey

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

    from controller.events import AnyEvent
    from controller.ports import Receipt

OTHER_TABLE = "T2"

Forwarded = TypeVar("Forwarded", bound=DeviceInput)
"""A device's event as its agent forwards it: signed, of the kind it was."""


def _tables() -> list[object]:
    return [
        msgspec.structs.replace(
            table_configured(f"table-{table}", table), envy_includes_dealer=False
        )
        for table in (TABLE, OTHER_TABLE)
    ]


@pytest.fixture
def agents_pit(tmp_path: Path) -> Iterator[Site]:
    """A signed journal with an identity: a manager, supervisors, one pool, two tables."""
    with Journal(tmp_path / "pit.db") as journal:
        # The table's events come in as the daemon's agent intake journals them: a signed
        # journal takes a table's word from no writer that does not name itself.
        journal.writer = f"agent table={TABLE} boot=test"
        site = Site.create(journal)
        approval = ConfigurationApproved(
            f"approval-{uuid.uuid4().hex[:8]}", now(), "digest-1",
            [pool_opened(), *_tables()], "mgr",  # type: ignore[list-item]
        )  # fmt: skip
        site.append(site.sign(approval, "mgr"))
        yield site


def enroll(site: Site, key: AgentKey, table_id: str = TABLE) -> Receipt:
    event = TableAgentEnrolled(
        f"agent-{uuid.uuid4()}", now(), table_id, key.public_key, key.key_id, "mgr"
    )
    return site.journal.append(site.sign(event, "mgr"))


@pytest.fixture
def agents(agents_pit: Site) -> dict[str, AgentKey]:
    """Each table's agent key, enrolled by the manager."""
    made = {table: AgentKey.generate(table) for table in (TABLE, OTHER_TABLE)}
    for key in made.values():
        assert (
            enroll(agents_pit, key).applied
            if key.table_id == TABLE
            else enroll(agents_pit, key, key.table_id).applied
        )
    return made


_SEQ = iter(range(1, 10_000))


def bet(table_id: str = TABLE, seat: int = 1) -> BetSensed:
    seq = next(_SEQ)
    return BetSensed(
        device_event_id(table_id, "bs-1", seq), now(), table_id, "bs-1", seq,
        seat=seat, spot="progressive", present=True, amount_cents=100,
    )  # fmt: skip


def lock(table_id: str = TABLE) -> BetsLocked:
    seq = next(_SEQ)
    return BetsLocked(
        device_event_id(table_id, "dealer", seq), now(), table_id, "dealer", seq,
        round_id=f"r-{seq}",
    )  # fmt: skip


def signed(event: Forwarded, key: AgentKey, at: str | None = None) -> Forwarded:
    signature = key.signer().signature(event, at or event.at)
    return msgspec.structs.replace(event, agent_signature=signature)


def meter(site: Site) -> object:
    return site.journal.state.pools[POOL].meter


def refused(site: Site, event: AnyEvent) -> str:
    """Append ``event``: refused, journaled as a fault of its own, the meters unchanged."""
    before = site.journal.state
    receipt = site.journal.append(event)
    assert not receipt.applied
    assert receipt.reason.startswith(AGENT_SIGNATURE), receipt.reason
    assert receipt.event_id != event.event_id  # the fault's id: the event's stays free
    row = next(row for row in site.journal.rows() if row["event_id"] == receipt.event_id)
    fault = decode_event(row["event"])
    assert isinstance(fault, FaultRecorded)
    assert fault.reason == AGENT_SIGNATURE
    after = site.journal.state
    assert (after.pools, after.rounds, after.table_states) == (
        before.pools,
        before.rounds,
        before.table_states,
    )
    return receipt.reason


def play(site: Site, key: AgentKey, table_id: str = TABLE) -> None:
    """The genuine agent's bet and lock: applied, and the meter moves."""
    before = meter(site)
    assert site.journal.append(signed(bet(table_id), key)).applied
    receipt = site.journal.append(signed(lock(table_id), key))
    assert receipt.applied, receipt.reason
    assert meter(site) != before


def test_enrolled_agent_events_are_applied_and_verify(
    agents_pit: Site, agents: dict[str, AgentKey]
) -> None:
    play(agents_pit, agents[TABLE])
    play(agents_pit, agents[OTHER_TABLE], OTHER_TABLE)
    report = agents_pit.journal.verify()
    assert report.ok, report


def test_unsigned_event_on_an_enrolled_table_is_refused(
    agents_pit: Site, agents: dict[str, AgentKey]
) -> None:
    assert "unsigned" in refused(agents_pit, bet())
    play(agents_pit, agents[TABLE])


def test_forged_signature_is_refused(agents_pit: Site, agents: dict[str, AgentKey]) -> None:
    genuine = signed(bet(seat=2), agents[TABLE])
    forged = msgspec.structs.replace(genuine, amount_cents=100_000)
    assert "does not verify" in refused(agents_pit, forged)
    stranger = AgentKey(TABLE, keys.generate())
    impostor = signed(bet(), stranger)
    assert isinstance(impostor.agent_signature, AgentSignature)
    fake_id = msgspec.structs.replace(
        impostor,
        agent_signature=msgspec.structs.replace(
            impostor.agent_signature, key_id=agents[TABLE].key_id
        ),
    )
    assert "does not verify" in refused(agents_pit, fake_id)
    assert agents_pit.journal.append(genuine).applied  # its id was not taken by the forgery


def test_signature_by_another_tables_agent_is_refused(
    agents_pit: Site, agents: dict[str, AgentKey]
) -> None:
    assert "not the table's agent key" in refused(agents_pit, signed(bet(), agents[OTHER_TABLE]))


def test_signed_event_replayed_onto_another_table_is_refused(
    agents_pit: Site, agents: dict[str, AgentKey]
) -> None:
    original = signed(bet(), agents[TABLE])
    assert agents_pit.journal.append(original).applied
    moved = msgspec.structs.replace(
        original,
        event_id=original.event_id.replace(TABLE, OTHER_TABLE, 1),
        table_id=OTHER_TABLE,
    )
    assert "not the table's agent key" in refused(agents_pit, moved)
    # Even with the other table's key id written in, the signature is over T1's event.
    assert isinstance(original.agent_signature, AgentSignature)
    relabelled = msgspec.structs.replace(
        moved,
        agent_signature=msgspec.structs.replace(
            original.agent_signature, key_id=agents[OTHER_TABLE].key_id
        ),
    )
    assert "does not verify" in refused(agents_pit, relabelled)


def test_revoked_key_is_refused_until_a_new_key(
    agents_pit: Site, agents: dict[str, AgentKey]
) -> None:
    old = agents[TABLE]
    revocation = TableAgentRevoked(
        f"agent-{uuid.uuid4()}", now(), TABLE, old.key_id, "mgr", "agent box stolen"
    )
    assert agents_pit.journal.append(agents_pit.sign(revocation, "mgr")).applied
    assert "revoked" in refused(agents_pit, signed(bet(), old))
    assert "revoked" in refused(agents_pit, bet())  # never taken unsigned again
    new = AgentKey.generate(TABLE)
    assert enroll(agents_pit, new).applied
    assert "not the table's agent key" in refused(agents_pit, signed(bet(), old))
    play(agents_pit, new)
    again = enroll(agents_pit, AgentKey(TABLE, old.private))
    assert not again.applied
    assert "is or was enrolled" in again.reason


def test_rotation_retires_the_old_key(agents_pit: Site, agents: dict[str, AgentKey]) -> None:
    new = AgentKey.generate(TABLE)
    assert enroll(agents_pit, new).applied
    assert agents_of(agents_pit.journal.state)[TABLE].key_id == new.key_id
    assert "not the table's agent key" in refused(agents_pit, signed(bet(), agents[TABLE]))
    play(agents_pit, new)


def test_an_old_signed_event_sent_again_is_refused(
    agents_pit: Site, agents: dict[str, AgentKey]
) -> None:
    long_ago = utc_iso(datetime.now(UTC) - MAX_AGE - timedelta(minutes=1))
    assert "hours before" in refused(agents_pit, signed(bet(), agents[TABLE], long_ago))
    ahead = utc_iso(datetime.now(UTC) + timedelta(minutes=10))
    assert "after the controller's time" in refused(agents_pit, signed(bet(), agents[TABLE], ahead))


def test_one_key_one_holder(agents_pit: Site, agents: dict[str, AgentKey]) -> None:
    elsewhere = enroll(agents_pit, AgentKey(OTHER_TABLE, agents[TABLE].private), OTHER_TABLE)
    assert not elsewhere.applied
    assert "the agent of table T1" in elsewhere.reason
    operators_key = enroll(agents_pit, AgentKey(TABLE, agents_pit.keys["sup1"]))
    assert not operators_key.applied
    assert "sup1" in operators_key.reason


def test_enrollment_needs_a_manager(agents_pit: Site) -> None:
    key = AgentKey.generate(TABLE)
    event = TableAgentEnrolled(f"agent-{uuid.uuid4()}", now(), TABLE, key.public_key,
                               key.key_id, "sup1")  # fmt: skip
    receipt = agents_pit.journal.append(agents_pit.sign(event, "sup1"))
    assert not receipt.applied
    assert "may not enroll" in receipt.reason
    unsigned = agents_pit.journal.append(
        msgspec.structs.replace(event, event_id="agent-unsigned", by="mgr")
    )
    assert not unsigned.applied
    assert "unsigned" in unsigned.reason


def test_tables_without_an_agent_take_unsigned_events_as_before(agents_pit: Site) -> None:
    before = meter(agents_pit)
    assert agents_pit.journal.append(bet()).applied
    assert agents_pit.journal.append(lock()).applied
    assert meter(agents_pit) != before


def test_old_journals_and_unsigned_rows_are_stored_and_hashed_as_before() -> None:
    """An event without an agent's signature encodes as it always did (no new key)."""
    event = bet()
    assert b"agent_signature" not in msgspec.json.encode(event)
    with_one = signed(event, AgentKey.generate(TABLE))
    assert isinstance(with_one.agent_signature, AgentSignature)
